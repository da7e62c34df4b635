// The controller end to end, on real parts: client-node informers and writes against the
// in-process Kubernetes API server, and ADS clients built from Envoy's protos playing proxies.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { Controller, type ControllerOptions, TYPE_URL } from '../src/index.js';
import { type SotwClient, type SotwResponse, decoded, names, sotwAnswer, sotwClient, sotwRequest } from './helpers.js';

type Json = Record<string, any>;
const NS = 'shop';
const silent = createLogger({ level: 'silent' });
/** Writes an object as a controller elsewhere would (straight into the API server's store). */
const put = (api: KubeApiServer, o: Json) => api.put(o as KubeObject);
/** An object the API server holds, for assertions. */
const get = (api: KubeApiServer, apiVersion: string, kind: string, name: string, namespace?: string): Json | undefined =>
  api.get(apiVersion, kind, name, namespace) as Json | undefined;

/** A small estate: an extlb GatewayClass and Gateway, a route to a Service and one to a BackendPool with a picker. */
function estate(): Json[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'other' }, spec: { controllerName: 'example.com/other' } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: NS },
      spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'theirs', namespace: NS },
      spec: { gatewayClassName: 'other', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: NS },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/web' } }], backendRefs: [{ name: 'web', port: 80 }] }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'chat', namespace: NS },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/chat' } }], backendRefs: [{ group: 'extlb.dev', kind: 'BackendPool', name: 'llm' }] }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    slice('web-1', 'web', 'http', 8080, ['10.0.0.1', '10.0.0.2']),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'picker', namespace: NS },
      spec: { selector: { app: 'picker' }, ports: [{ name: 'grpc', port: 9002 }] },
    },
    slice('picker-1', 'picker', 'grpc', 9002, ['10.0.1.1']),
    {
      apiVersion: 'extlb.dev/v1alpha1',
      kind: 'BackendPool',
      metadata: { name: 'llm', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'llm' } },
        targetPorts: [{ number: 8000 }],
        loadBalancer: { type: 'External', external: { refs: [{ name: 'picker', port: { number: 9002 } }] } },
      },
    },
  ];
}

function slice(name: string, service: string, portName: string, port: number, addresses: string[]): Json {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: portName, port }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

const controllers: Controller[] = [];
after(async () => {
  await Promise.all(controllers.map((c) => c.stop(50).catch(() => {})));
});

async function world(objects = estate()): Promise<KubeApiServer> {
  const api = await startKubeApiServer({ objects: objects as KubeObject[], auth: { tokens: { a: 'replica-a', b: 'replica-b' } } });
  after(() => api.close());
  return api;
}

function controller(api: KubeApiServer, token = 'a', options: Partial<ControllerOptions> = {}): Controller {
  const c = new Controller({
    kubeConfig: api.kubeConfig({ token }),
    identity: `replica-${token}`,
    leaseNamespace: 'extlb-system',
    lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    xds: { host: '127.0.0.1', port: 0, plaintext: true },
    // The path of teams that deploy their own Envoy: statuses and xDS only (provision.test.ts provisions).
    provision: { enabled: false },
    delayMs: 20,
    maxDelayMs: 200,
    logger: silent,
    ...options,
  });
  controllers.push(c);
  return c;
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const node = (group: string, id = 'envoy-0') => ({ id, cluster: group });

/** A proxy that subscribes to listeners and clusters and ACKs everything it gets. */
async function proxy(port: number, group: string): Promise<{ client: SotwClient; get(type: string): Promise<SotwResponse> }> {
  const client = sotwClient(`127.0.0.1:${port}`);
  after(() => client.close());
  client.send(sotwRequest(TYPE_URL.cluster, [], { node: node(group) }));
  client.send(sotwRequest(TYPE_URL.listener, []));
  return {
    client,
    async get(type: string) {
      for (;;) {
        const r = await client.next(15_000);
        const wanted = r.type_url === type;
        // ACK, and ask for what the response names (routes of listeners, endpoints of clusters).
        if (r.type_url === TYPE_URL.cluster) client.send(sotwAnswer(r));
        if (r.type_url === TYPE_URL.listener) client.send(sotwAnswer(r));
        if (r.type_url === TYPE_URL.endpoint || r.type_url === TYPE_URL.route) client.send(sotwAnswer(r, names(r)));
        if (r.type_url === TYPE_URL.cluster) {
          const eds = decoded(r)
            .filter((c) => c.type === 'EDS')
            .map((c) => String(c.name));
          if (eds.length > 0) client.send(sotwRequest(TYPE_URL.endpoint, eds));
        }
        if (r.type_url === TYPE_URL.listener) {
          const rds = decoded(r).flatMap((l: Json) => l.filter_chains.map((fc: Json) => fc.filters[0].typed_config.rds.route_config_name));
          client.send(sotwRequest(TYPE_URL.route, rds));
        }
        if (wanted) return r;
      }
    },
  };
}

describe('extlb controller', () => {
  it('serves a Gateway its configuration over ADS, writes statuses once, and owns a shadow Service per pool', async () => {
    const api = await world();
    const c = controller(api);
    const { xdsPort } = await c.start();
    await until(() => c.notReady() === undefined, 'readiness');
    const p = await proxy(xdsPort, `${NS}/gw`);
    const clusters = decoded(await p.get(TYPE_URL.cluster)).map((x) => x.name);
    assert.deepEqual(clusters.sort(), ['bpool/shop/llm', 'picker/shop/picker:9002', 'svc/shop/web/80']);
    const endpoints = await p.get(TYPE_URL.endpoint);
    const byCluster = Object.fromEntries(
      decoded(endpoints).map((e: Json) => [
        e.cluster_name,
        (e.endpoints ?? []).flatMap((l: Json) => l.lb_endpoints.map((x: Json) => x.endpoint.address.socket_address.address)),
      ]),
    );
    assert.deepEqual(byCluster['svc/shop/web/80'], ['10.0.0.1', '10.0.0.2']);
    assert.deepEqual(byCluster['picker/shop/picker:9002'], ['10.0.1.1']);
    const routes = decoded(await p.get(TYPE_URL.route));
    assert.deepEqual(routes.flatMap((rc: Json) => rc.virtual_hosts.flatMap((vh: Json) => vh.routes.map((r: Json) => r.name))).sort(), [
      'shop/chat/rule/0/match/0',
      'shop/web/rule/0/match/0',
    ]);
    // Statuses, written by the leader through the status subresource.
    const gw = await until(
      () =>
        get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.length &&
        get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS),
      'Gateway status',
    );
    assert.equal(gw.status.conditions.find((x: Json) => x.type === 'Programmed').status, 'True');
    const route = await until(
      () =>
        get(api, 'gateway.networking.k8s.io/v1', 'HTTPRoute', 'chat', NS)?.status?.parents?.length &&
        get(api, 'gateway.networking.k8s.io/v1', 'HTTPRoute', 'chat', NS),
      'route status',
    );
    assert.equal(route.status.parents[0].controllerName, 'extlb.dev/gateway-controller');
    const gc = await until(
      () =>
        get(api, 'gateway.networking.k8s.io/v1', 'GatewayClass', 'extlb')?.status?.conditions?.length &&
        get(api, 'gateway.networking.k8s.io/v1', 'GatewayClass', 'extlb'),
      'GatewayClass status',
    );
    assert.equal(gc.status.conditions[0].type, 'Accepted');
    assert.equal(get(api, 'gateway.networking.k8s.io/v1', 'GatewayClass', 'other')?.status?.conditions, undefined, "another controller's class is left alone");
    assert.equal(get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'theirs', NS)?.status?.conditions, undefined, 'a Gateway of another class is left alone');
    // The pool's shadow Service: headless, the pool's selector and ports, owned by the pool.
    const shadow = await until(() => get(api, 'v1', 'Service', 'extlb-bpool-llm', NS), 'shadow Service');
    assert.equal(shadow.spec.clusterIP, 'None');
    assert.deepEqual(shadow.spec.selector, { app: 'llm' });
    assert.equal(shadow.metadata.ownerReferences[0].kind, 'BackendPool');
    assert.equal(shadow.metadata.ownerReferences[0].uid, get(api, 'extlb.dev/v1alpha1', 'BackendPool', 'llm', NS)?.metadata.uid);
    // Nothing changes: nothing more is written.
    await c.idle();
    const writes = () => api.requestsMatching({ subresource: 'status', verb: ['update', 'patch'] }).length;
    const before = writes();
    put(api, { ...get(api, 'v1', 'Service', 'web', NS), metadata: { ...get(api, 'v1', 'Service', 'web', NS)?.metadata, annotations: { touched: 'yes' } } });
    await until(() => c.metrics.recomputeSeconds, 'metrics');
    await new Promise((r) => setTimeout(r, 300));
    await c.idle();
    assert.equal(writes(), before, 'an unchanged status is not written again');
    assert.equal(p.client.pending, 0, 'an unchanged snapshot sends nothing');
  });

  it('an EndpointSlice change reaches the proxy as an endpoint update alone', async () => {
    const api = await world();
    const c = controller(api);
    const { xdsPort } = await c.start();
    const p = await proxy(xdsPort, `${NS}/gw`);
    await p.get(TYPE_URL.endpoint);
    await p.get(TYPE_URL.route);
    await c.idle();
    put(api, slice('web-1', 'web', 'http', 8080, ['10.0.0.1', '10.0.0.2', '10.0.0.3']));
    const update = await p.client.next(15_000);
    assert.equal(update.type_url, TYPE_URL.endpoint, 'only ClusterLoadAssignments are pushed');
    const web = decoded(update).find((e: Json) => e.cluster_name === 'svc/shop/web/80') as Json;
    assert.equal(web.endpoints[0].lb_endpoints.length, 3);
    p.client.send(sotwAnswer(update, names(update)));
    await c.idle();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(p.client.pending, 0, 'nothing else was pushed');
  });

  it('a proxy NACK makes the Gateway Programmed=False with Envoy words, and an ACK puts it back', async () => {
    const api = await world();
    const c = controller(api);
    const { xdsPort } = await c.start();
    const client = sotwClient(`127.0.0.1:${xdsPort}`);
    after(() => client.close());
    client.send(sotwRequest(TYPE_URL.cluster, [], { node: node(`${NS}/gw`) }));
    const first = await client.next();
    client.send(sotwAnswer(first, [], 'cluster bpool/shop/llm: bad config', ''));
    const programmed = () => get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.find((x: Json) => x.type === 'Programmed');
    const nacked = await until(() => (programmed()?.status === 'False' ? programmed() : undefined), 'Programmed=False');
    assert.match(nacked.message, /Envoy rejected the Cluster update: cluster bpool\/shop\/llm: bad config/);
    const counted = (await c.metrics.nacks.get()).values.reduce((n, v) => n + v.value, 0);
    assert.equal(counted, 1, 'the NACK is counted');
    // The proxy accepts a later version of the clusters: Programmed again.
    const web = get(api, 'gateway.networking.k8s.io/v1', 'HTTPRoute', 'web', NS) as Json;
    put(api, {
      ...web,
      spec: {
        ...web.spec,
        rules: [
          {
            backendRefs: [
              { name: 'web', port: 80 },
              { name: 'picker', port: 9002 },
            ],
          },
        ],
      },
    });
    for (;;) {
      const r = await client.next(15_000);
      client.send(sotwAnswer(r));
      if (r.type_url === TYPE_URL.cluster) break;
    }
    await until(() => programmed()?.status === 'True', 'Programmed=True again');
  });

  it('a NACK counts only while its stream lives: when the proxy that sent it goes, the Gateway is Programmed again', async () => {
    const api = await world();
    const c = controller(api);
    const { xdsPort } = await c.start();
    const client = sotwClient(`127.0.0.1:${xdsPort}`);
    client.send(sotwRequest(TYPE_URL.cluster, [], { node: node(`${NS}/gw`) }));
    const first = await client.next();
    client.send(sotwAnswer(first, [], 'cluster bpool/shop/llm: bad config', ''));
    const programmed = () => get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.find((x: Json) => x.type === 'Programmed');
    await until(() => programmed()?.status === 'False', 'Programmed=False');
    client.close();
    await until(() => programmed()?.status === 'True', 'Programmed=True once the NACKing proxy is gone');
  });

  // Issue 15, faults 1–4, and issue 21.6 and 21.8: the Converter composes every stage; the
  // controller only feeds it, publishes, and writes with retries.
  it('sets the first snapshot once every kind is listed, without waiting out the debounce of later changes', async () => {
    const api = await world();
    // A debounce no test waits for: only the start's own recompute can set the snapshot.
    const c = controller(api, 'a', { delayMs: 3_600_000, maxDelayMs: 3_600_000 });
    const { xdsPort } = await c.start();
    const p = await proxy(xdsPort, `${NS}/gw`);
    const listeners = await p.get(TYPE_URL.listener);
    assert.equal(names(listeners).length, 1);
    assert.ok(c.cache.getSnapshot(`${NS}/gw`));
  });

  it('converts the Gateways of the class naming its --controller-name, and writes Accepted on that class alone', async () => {
    const api = await world();
    const c = controller(api, 'a', { controllerName: 'example.com/other' });
    const { xdsPort } = await c.start();
    const p = await proxy(xdsPort, `${NS}/theirs`);
    await p.get(TYPE_URL.listener);
    assert.ok(c.cache.getSnapshot(`${NS}/theirs`), 'the Gateway of the class naming this controller is converted');
    assert.equal(c.cache.getSnapshot(`${NS}/gw`), undefined, 'the Gateway of the other class is not');
    const accepted = await until(() => get(api, 'gateway.networking.k8s.io/v1', 'GatewayClass', 'other')?.status?.conditions?.[0], 'class status');
    assert.equal(accepted.status, 'True');
    await c.idle();
    assert.equal(get(api, 'gateway.networking.k8s.io/v1', 'GatewayClass', 'extlb')?.status?.conditions, undefined, 'a class not named is not Accepted');
    assert.equal(get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions, undefined);
  });

  it('says a Gateway whose configuration is past the output limit is not Programmed', async () => {
    const api = await world();
    const c = controller(api, 'a', { maxOutputBytes: 500 });
    await c.start();
    const programmed = await until(
      () => get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.find((x: Json) => x.type === 'Programmed'),
      'Gateway status',
    );
    assert.equal(programmed.status, 'False');
    assert.equal(programmed.reason, 'Invalid');
    assert.match(programmed.message, /more than 500 bytes/);
    assert.equal(c.cache.getSnapshot(`${NS}/gw`), undefined, 'no configuration past the limit is served');
  });

  it('makes again a shadow Service someone deleted, though nothing the Converter reads changed but that Service', async () => {
    const api = await world();
    const c = controller(api);
    await c.start();
    const first = await until(() => get(api, 'v1', 'Service', 'extlb-bpool-llm', NS), 'the shadow Service');
    await until(() => c.informers.get('Service', 'extlb-bpool-llm', NS), 'the shadow Service in the cache');
    await c.idle();
    assert.equal(api.remove('v1', 'Service', 'extlb-bpool-llm', NS), true);
    const again = await until(() => {
      const s = get(api, 'v1', 'Service', 'extlb-bpool-llm', NS);
      return s && s.metadata.uid !== first.metadata.uid ? s : undefined;
    }, 'the shadow Service made again');
    assert.deepEqual(again.spec.selector, first.spec.selector);
  });

  it('a NACK changes the status alone, with no recompute, its long message cut to fit the condition', async () => {
    const api = await world();
    const c = controller(api);
    const { xdsPort } = await c.start();
    const client = sotwClient(`127.0.0.1:${xdsPort}`);
    after(() => client.close());
    client.send(sotwRequest(TYPE_URL.cluster, [], { node: node(`${NS}/gw`) }));
    const first = await client.next();
    await until(() => get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.length, 'first status');
    // The shadow Service the controller made has come back through its watch (a change of its inputs).
    await until(() => c.informers.get('Service', 'extlb-bpool-llm', NS), 'the shadow Service in the cache');
    await c.idle();
    const recomputes = async () =>
      (await c.metrics.recomputeSeconds.get()).values.filter((v) => v.metricName?.endsWith('_count')).reduce((n, v) => n + v.value, 0);
    const before = await recomputes();
    const words = `cluster bpool/shop/llm: ${'bad config '.repeat(10_000)}`;
    client.send(sotwAnswer(first, [], words, ''));
    const programmed = () => get(api, 'gateway.networking.k8s.io/v1', 'Gateway', 'gw', NS)?.status?.conditions?.find((x: Json) => x.type === 'Programmed');
    const nacked = await until(() => (programmed()?.status === 'False' ? programmed() : undefined), 'Programmed=False');
    assert.match(nacked.message, /^Envoy rejected the Cluster update: cluster bpool\/shop\/llm: bad config/);
    assert.ok(nacked.message.length <= 32768, "the message fits Gateway API's bound");
    await c.idle();
    assert.equal(await recomputes(), before, 'nothing was read or resolved again');
  });

  it('retries a status write the API server refuses until it lands, with no other change', async () => {
    const api = await world();
    const route = { group: 'gateway.networking.k8s.io', resource: 'httproutes', name: 'web', subresource: 'status' };
    const failing = api.faults.inject({ match: { ...route, verb: 'update' }, times: 2, status: { code: 500, message: 'etcd is unhappy' } });
    const conflicting = api.faults.inject({ match: { ...route, verb: 'update' }, times: 3, status: { code: 409, message: 'the object has been modified' } });
    const shadowCreate = api.faults.inject({ match: { resource: 'services', verb: 'create' }, times: 2, status: { code: 503, message: 'not now' } });
    const c = controller(api, 'a', { work: { baseDelayMs: 20 } });
    await c.start();
    const parents = await until(() => get(api, 'gateway.networking.k8s.io/v1', 'HTTPRoute', 'web', NS)?.status?.parents?.length, 'route status', 20_000);
    assert.equal(parents, 1);
    assert.equal(failing.hits, 2);
    assert.equal(conflicting.hits, 3);
    await until(() => get(api, 'v1', 'Service', 'extlb-bpool-llm', NS), 'the shadow Service, after its create failed');
    assert.equal(shadowCreate.hits, 2);
    const retries = (await c.metrics.workRetries.get()).values;
    assert.ok((retries.find((v) => v.labels.work === 'status')?.value ?? 0) >= 2, 'the status retries are counted');
    assert.ok((retries.find((v) => v.labels.work === 'shadow-service')?.value ?? 0) >= 2, 'the shadow Service retries are counted');
    await c.idle();
    assert.equal((await c.metrics.workWaiting.get()).values[0]?.value, 0, 'nothing waits once all landed');
  });
});
