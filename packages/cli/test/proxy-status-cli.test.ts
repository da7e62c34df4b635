// `extlb proxy-status` and `extlb config-dump` against a running controller with an ADS client
// connected: the CLI lists the controller's Pods, port-forwards to each one's loopback debug port
// through the in-process API server (the real client-node PortForward over WebSocket), and shows
// the client in sync and its resources, with no byte of the Gateway's private key anywhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Controller, startDebugServer, TYPE_URL } from '@extlb/controller';
import { type KubeApiServer, type KubeObject, makeCertificate, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { parse } from 'yaml';
import { names, type SotwClient, sotwAnswer, sotwClient, sotwRequest } from '../../controller/test/helpers.js';
import { extlb, keyForms, kubeconfigFile } from './cluster-cli.js';

const GW = 'shop/edge';
const cert = makeCertificate('edge.shop.example');

function objects(): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'shop' },
      spec: {
        gatewayClassName: 'extlb',
        listeners: [{ name: 'https', port: 8443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'site' }] } }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'site', namespace: 'shop' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from(cert.cert).toString('base64'), 'tls.key': Buffer.from(cert.key).toString('base64') },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { parentRefs: [{ name: 'edge' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
    controllerPod('extlb-controller-0'),
  ];
}

function controllerPod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'extlb-system', labels: { 'app.kubernetes.io/name': 'extlb-controller' } },
    spec: { containers: [{ name: 'controller', image: 'extlb/extlb' }] },
    status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** Subscribes as Envoy does (CDS and LDS wildcard, then the EDS, RDS and SDS names) and ACKs each response. */
async function syncedProxy(client: SotwClient, controller: Controller): Promise<void> {
  client.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-0', cluster: GW } }));
  client.send(sotwRequest(TYPE_URL.listener, []));
  const seen = new Map<string, number>();
  const snapshot = () => controller.cache.getSnapshot(GW);
  const wanted = (typeUrl: string) => [
    ...(snapshot()
      ?.types.get(typeUrl as never)
      ?.resources.keys() ?? []),
  ];
  for (;;) {
    const r = await client.next(15_000);
    const first = !seen.has(r.type_url);
    seen.set(r.type_url, (seen.get(r.type_url) ?? 0) + 1);
    const subscribed = r.type_url === TYPE_URL.cluster || r.type_url === TYPE_URL.listener ? [] : wanted(r.type_url);
    client.send(sotwAnswer(r, subscribed));
    if (first && r.type_url === TYPE_URL.cluster) client.send(sotwRequest(TYPE_URL.endpoint, names(r)));
    if (first && r.type_url === TYPE_URL.listener) {
      client.send(sotwRequest(TYPE_URL.route, wanted(TYPE_URL.route)));
      client.send(sotwRequest(TYPE_URL.secret, wanted(TYPE_URL.secret)));
    }
    if (seen.size === 5 && client.pending === 0) break;
  }
  // The server reads the last ACKs after they are sent.
  const synced = () => {
    const status = controller.xds.streams(GW)[0];
    return status?.types.length === 5 && status.types.every((t) => t.ackedVersion === snapshot()?.types.get(t.typeUrl)?.version && !t.nack);
  };
  for (let i = 0; i < 500 && !synced(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(synced(), 'the proxy ACKed every type');
}

describe('extlb proxy-status and config-dump through port-forward', () => {
  let api: KubeApiServer;
  let controller: Controller;
  let debugPort = 0;
  let proxyClient: SotwClient;
  let kubeconfig: string;
  // Cleanups run once the suite is done (an after() called inside before() would run at once).
  const cleanups: (() => unknown)[] = [];
  const hooks = { after: (fn: () => unknown) => cleanups.unshift(fn) };
  after(async () => {
    for (const fn of cleanups) await fn();
  });

  before(async () => {
    api = await startKubeApiServer({
      objects: objects(),
      auth: { tokens: { admin: 'admin', viewer: 'viewer' }, authorize: (a) => a.user === 'admin' || a.subresource !== 'portforward' },
      // The kubelet dials the Pod's port on its loopback; here the one controller's debug port.
      portForward: ({ pod, port }) => ({ host: '127.0.0.1', port: pod === 'extlb-controller-0' && port === 9091 ? debugPort : port }),
    });
    hooks.after(() => api.close());
    controller = new Controller({
      kubeConfig: api.kubeConfig({ token: 'admin' }),
      identity: 'extlb-controller-0',
      leaseNamespace: 'extlb-system',
      xds: { host: '127.0.0.1', port: 0, plaintext: true },
      delayMs: 10,
      logger: createLogger({ level: 'silent' }),
      // The ADS client here is the Gateway's own Envoy: the path of teams that deploy it themselves.
      provision: { enabled: false },
    });
    const debug = await startDebugServer({ port: 0, source: controller.debugSource() });
    debugPort = debug.port;
    hooks.after(() => debug.server.close());
    const { xdsPort } = await controller.start();
    hooks.after(() => controller.stop(50));
    const client = sotwClient(`127.0.0.1:${xdsPort}`);
    proxyClient = client;
    hooks.after(() => client.close());
    for (let i = 0; i < 500 && !controller.cache.getSnapshot(GW)?.types.get(TYPE_URL.secret)?.resources.size; i++) await new Promise((r) => setTimeout(r, 20));
    await syncedProxy(client, controller);
    kubeconfig = kubeconfigFile(hooks, api, 'admin');
  });

  const outputs: string[] = [];
  after(() => {
    assert.ok(outputs.length >= 6);
    for (const text of outputs) for (const form of keyForms(cert.key)) assert.ok(!text.includes(form), 'no private-key bytes in any output');
  });

  it('proxy-status: the proxy SYNCED on every type, as a table and as JSON', async () => {
    const run = await extlb(['proxy-status', '--kubeconfig', kubeconfig]);
    outputs.push(run.stdout, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    const [head, row, ...rest] = run.stdout.trimEnd().split('\n');
    assert.deepEqual(head?.split(/\s{2,}/), ['GATEWAY', 'PROXY', 'REPLICA', 'CDS', 'EDS', 'LDS', 'RDS', 'SDS']);
    const cells = row?.split(/\s{3,}/) ?? [];
    assert.deepEqual(cells.slice(0, 3), [GW, 'envoy-0', 'extlb-controller-0']);
    assert.deepEqual(
      cells.slice(3).map((c) => c.replace(/\(.*\)/, '()')),
      ['SYNCED ()', 'SYNCED ()', 'SYNCED ()', 'SYNCED ()', 'SYNCED ()'],
    );
    assert.deepEqual(rest, []);
    const json = await extlb(['proxy-status', '--kubeconfig', kubeconfig, '-o', 'json']);
    outputs.push(json.stdout);
    const doc = JSON.parse(json.stdout);
    const [proxy] = doc.replicas[0].proxies;
    assert.equal(proxy.inSync, true);
    assert.equal(proxy.types.find((t: { type: string }) => t.type === 'secrets').acked, controller.cache.getSnapshot(GW)?.types.get(TYPE_URL.secret)?.version);
  });

  it('config-dump: the Gateway resources, the private key redacted, in YAML and JSON, one type or all', async () => {
    const yaml = await extlb(['config-dump', '--kubeconfig', kubeconfig, '--gateway', GW]);
    outputs.push(yaml.stdout, yaml.stderr);
    assert.equal(yaml.code, 0, yaml.stderr);
    const dump = parse(yaml.stdout);
    assert.equal(dump.gateway, GW);
    assert.deepEqual(Object.keys(dump.types), ['clusters', 'endpoints', 'listeners', 'routes', 'secrets']);
    assert.ok(
      dump.types.listeners.resources.some((l: { address?: { socket_address?: { port_value?: number } } }) => l.address?.socket_address?.port_value === 8443),
    );
    const [secret] = dump.types.secrets.resources;
    assert.deepEqual(secret.tls_certificate.private_key, { redacted: '[redacted]' });
    assert.match(JSON.stringify(secret.tls_certificate.certificate_chain), /BEGIN CERTIFICATE|LS0tLS1CRUdJTi/);
    const json = await extlb(['config-dump', '--kubeconfig', kubeconfig, '--gateway', GW, '--type', 'secrets', '-o', 'json']);
    outputs.push(json.stdout);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout).types), ['secrets']);
    const missing = await extlb(['config-dump', '--kubeconfig', kubeconfig, '--gateway', 'shop/none']);
    outputs.push(missing.stderr);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /serves no configuration to Gateway shop\/none/);
  });

  it('only someone RBAC lets port-forward to the controller reads them', async () => {
    const viewer = kubeconfigFile(hooks, api, 'viewer');
    const run = await extlb(['proxy-status', '--kubeconfig', viewer]);
    outputs.push(run.stdout, run.stderr);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /replica extlb-controller-0: not reachable: port-forward to pod extlb-system\/extlb-controller-0 port 9091: Unexpected server response: 403/,
    );
    const dump = await extlb(['config-dump', '--kubeconfig', viewer, '--gateway', GW]);
    assert.equal(dump.code, 1);
    assert.match(dump.stderr, /403/);
  });

  it("check's Gateway line: the Gateway's conditions and its proxy in sync", async () => {
    const gatewayLine = (out: string) => out.split('\n').find((l) => l.includes("every Gateway of extlb's classes")) ?? '';
    const run = await extlb(['check', '--kubeconfig', kubeconfig]);
    outputs.push(run.stdout);
    assert.equal(
      gatewayLine(run.stdout),
      "[ok]   every Gateway of extlb's classes is Accepted, Programmed, and has proxies in sync: 1 Gateway, each with a proxy in sync",
    );
    // This controller serves xDS in plain text: check says so.
    assert.match(run.stdout, /^\[FAIL\] the controller's xDS serving certificate is valid: extlb-controller-0: xDS is plain text/m);
    assert.equal(run.code, 1);
    // The proxy goes away: the Gateway has none.
    proxyClient.close();
    for (let i = 0; i < 200 && controller.xds.streams(GW).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const gone = await extlb(['check', '--kubeconfig', kubeconfig]);
    outputs.push(gone.stdout);
    assert.match(gatewayLine(gone.stdout), /^\[FAIL\] every Gateway .*: shop\/edge has no connected proxy$/);
  });

  it('usage errors name the flag', async () => {
    assert.equal((await extlb(['config-dump', '--kubeconfig', kubeconfig])).code, 2);
    assert.match((await extlb(['config-dump', '--gateway', 'edge'])).stderr, /--gateway must be NAMESPACE\/NAME/);
    assert.match(
      (await extlb(['config-dump', '--gateway', GW, '--type', 'pods'])).stderr,
      /--type must be one of listeners, routes, clusters, endpoints, secrets/,
    );
  });
});
