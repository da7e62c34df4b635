// What the controller reads besides its kinds' informers, and what it does not read again: the
// ConfigMaps a BackendTLSPolicy names as CA bundles are watched one by one, by name, and only
// while named; a rotated CA bundle or listener certificate reaches the proxy in a new snapshot; the
// controller's own status writes coming back through its watches cause no recompute.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type KubeApiServer, type KubeObject, makeCertificate, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { Controller, TYPE_URL } from '../src/index.js';
import { decoded, type SotwClient, type SotwResponse, sotwAnswer, sotwClient, sotwRequest, until } from './helpers.js';

type Json = Record<string, any>;
type Certificate = { cert: string; key: string };
const NS = 'shop';
const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** A line from the middle of a PEM: it shows whether that certificate is in a resource, whatever the encoding around it. */
const fingerprint = (pem: string) => pem.split('\n')[3] as string;

const caMap = (name: string, pem: string): Json => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { 'ca.crt': pem } });
const tlsSecret = (cert: Certificate): Json => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'site', namespace: NS },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': b64(cert.cert), 'tls.key': b64(cert.key) },
});
const policy = (caName: string): Json => ({
  apiVersion: GW,
  kind: 'BackendTLSPolicy',
  metadata: { name: 'secure-tls', namespace: NS },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: 'secure' }],
    validation: { hostname: 'secure.shop.svc', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: caName }] },
  },
});

function estate(caA: string, site: Certificate): Json[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
    {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: NS },
      spec: {
        gatewayClassName: 'extlb',
        listeners: [{ name: 'https', port: 8443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'site' }] } }],
      },
    },
    {
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: NS },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'secure', port: 443 }] }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'secure', namespace: NS },
      spec: { selector: { app: 'secure' }, ports: [{ name: 'https', port: 443 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'secure-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'secure' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: 443 }],
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
    },
    policy('ca-a'),
    caMap('ca-a', caA),
    // Never referenced: never listed, never watched.
    caMap('unrelated', caA),
    tlsSecret(site),
  ];
}

/** Self-signed certificates, one per common name. */
const certificates = (...names: string[]): Certificate[] => names.map((n) => makeCertificate(n));

/** The API server holding the estate, with `ca` as the CA bundle of ca-a and `site` as the listener certificate. */
async function world(ca: Certificate, site: Certificate): Promise<KubeApiServer> {
  const api = await startKubeApiServer({ objects: estate(ca.cert, site) as KubeObject[], auth: { tokens: { a: 'replica-a' } } });
  after(() => api.close());
  return api;
}

async function start(api: KubeApiServer): Promise<{ c: Controller; xdsPort: number }> {
  const c = new Controller({
    kubeConfig: api.kubeConfig({ token: 'a' }),
    identity: 'solo',
    leaseNamespace: 'extlb-system',
    lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    xds: { host: '127.0.0.1', port: 0, plaintext: true },
    // Self-deployed Envoy: this test is about what the converter reads, not about provisioning.
    provision: { enabled: false },
    delayMs: 20,
    maxDelayMs: 200,
    logger: createLogger({ level: 'silent' }),
  });
  after(() => c.stop(50));
  const { xdsPort } = await c.start();
  return { c, xdsPort };
}

/** A proxy subscribed to clusters and to `type` (`names` of it; none: all) that ACKs each response, as Envoy does (CDS first). */
function subscriber(
  xdsPort: number,
  type: string,
  names: string[] = [],
): { client: SotwClient; until(what: string, match: (r: SotwResponse) => boolean): Promise<SotwResponse> } {
  const client = sotwClient(`127.0.0.1:${xdsPort}`);
  after(() => client.close());
  client.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-0', cluster: `${NS}/gw` } }));
  if (type !== TYPE_URL.cluster) client.send(sotwRequest(type, names));
  return {
    client,
    async until(what, match) {
      for (;;) {
        const r = await client.next(15_000).catch((e: Error) => {
          throw new Error(`${what}: ${e.message}`);
        });
        client.send(sotwAnswer(r, r.type_url === type ? names : []));
        if (r.type_url === type && match(r)) return r;
      }
    },
  };
}

const holds = (r: SotwResponse, pem: string) => JSON.stringify(decoded(r)).includes(fingerprint(pem));

describe('extlb controller: referenced objects', () => {
  it('watches a referenced CA bundle ConfigMap by name only, follows its rotation, and stops watching it once no longer referenced', async () => {
    const [caA, caB, caC, site] = certificates('ca-a', 'ca-b', 'ca-c', 'site') as [Certificate, Certificate, Certificate, Certificate];
    const api = await world(caA, site);
    const { xdsPort } = await start(api);
    const cds = subscriber(xdsPort, TYPE_URL.cluster);
    await cds.until('the CA bundle in the cluster', (r) => holds(r, caA.cert));
    // Listed and watched by name, in the policy's namespace; nothing else of the kind.
    await api.waitForWatches(1, { resource: 'configmaps' });
    const configMapRequests = api.requestsMatching({ resource: 'configmaps' });
    assert.ok(configMapRequests.some((r) => r.verb === 'list') && configMapRequests.some((r) => r.verb === 'watch'), 'listed, then watched');
    for (const r of configMapRequests) {
      assert.equal(r.namespace, NS, `${r.verb} ${r.path}`);
      assert.equal(r.query.fieldSelector, 'metadata.name=ca-a', `${r.verb} ${r.path}`);
    }
    // The bundle is rotated in place: the new one reaches the proxy.
    api.put(caMap('ca-a', caB.cert) as KubeObject);
    await cds.until('the rotated CA bundle', (r) => holds(r, caB.cert) && !holds(r, caA.cert));
    // The policy names another ConfigMap: that one is watched, the old one no longer.
    api.put(caMap('ca-c', caC.cert) as KubeObject);
    api.put(policy('ca-c') as KubeObject);
    await cds.until('the newly referenced CA bundle', (r) => holds(r, caC.cert));
    await until(() => {
      const fields = api
        .watches()
        .filter((w) => w.resource === 'configmaps')
        .map((w) => w.fieldSelector);
      return fields.length === 1 && fields[0] === 'metadata.name=ca-c';
    }, 'the watch of ca-a to stop and only ca-c to be watched');
  });

  it('follows the rotation of a listener certificate Secret', async () => {
    const [caA, site, renewed] = certificates('ca-a', 'site', 'site-renewed') as [Certificate, Certificate, Certificate];
    const api = await world(caA, site);
    const { xdsPort } = await start(api);
    // The listener names its certificate as an SDS Secret `namespace/name`.
    const sds = subscriber(xdsPort, TYPE_URL.secret, [`${NS}/site`]);
    await sds.until("the listener's certificate", (r) => holds(r, site.cert));
    api.put(tlsSecret(renewed) as KubeObject);
    await sds.until('the renewed certificate', (r) => holds(r, renewed.cert) && !holds(r, site.cert));
  });

  it('does not recompute for its own status writes, and does for a spec change', async () => {
    const [caA, site] = certificates('ca-a', 'site') as [Certificate, Certificate];
    const api = await world(caA, site);
    const { c } = await start(api);
    const counter = async (metric: { get(): Promise<{ values: { value: number; labels: Json; metricName?: string }[] }> }, labels: Json, name?: string) =>
      (await metric.get()).values
        .filter((v) => (name === undefined || v.metricName === name) && Object.entries(labels).every(([k, x]) => v.labels[k] === x))
        .reduce((n, v) => n + v.value, 0);
    const fullRecomputes = () => counter(c.metrics.recomputeSeconds, { kind: 'full' }, 'extlb_controller_recompute_seconds_count');
    const statusOnly = () => counter(c.metrics.informerEvents, { event: 'status-only' });
    // Every status written and seen back through the watches: the controller is at rest.
    await until(() => api.get(GW, 'HTTPRoute', 'web', NS)?.status && api.get(GW, 'BackendTLSPolicy', 'secure-tls', NS)?.status, 'statuses');
    const written = api.requestsMatching({ subresource: 'status', verb: 'update' }).length;
    await until(async () => (await statusOnly()) >= written, 'each status write seen back as a status-only update');
    await c.idle();
    const before = await fullRecomputes();
    // Another status write (a condition from someone else): seen, and no recompute.
    const route = api.get(GW, 'HTTPRoute', 'web', NS) as Json;
    const seenBefore = await statusOnly();
    const otherParent: Json = { parentRef: { name: 'x' }, controllerName: 'example.com/other', conditions: [] };
    const withOtherStatus: Json = { ...route, status: { parents: [...route.status.parents, otherParent] } };
    api.put(withOtherStatus as KubeObject);
    await until(async () => (await statusOnly()) > seenBefore, 'the status write seen');
    await c.idle();
    assert.equal(await fullRecomputes(), before, 'a status-only update recomputes nothing');
    // A spec change does.
    const withHostname: Json = { ...(api.get(GW, 'HTTPRoute', 'web', NS) as Json), spec: { ...route.spec, hostnames: ['shop.example.com'] } };
    api.put(withHostname as KubeObject);
    await until(async () => (await fullRecomputes()) > before, 'a recompute for the spec change');
  });
});
