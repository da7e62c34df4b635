// The controller's LIST rate while the API server answers every watch with 410 Gone (an etcd
// compaction storm, or a server whose watch cache is broken), printed as figures beside the aim
// (never asserted). The Controller runs here with its defaults against the in-process API server;
// the storm starts once it is ready and lasts two windows of 5 s. Aim: client-go's reflector, whose
// relists wait 0.8 s doubling to 30 s with up to 100% jitter — at most 2 LISTs per kind in the
// first 5 s (after 0.8–1.6 s and 1.6–3.2 s more), 1 in the next. Then the storm ends and the time until an EndpointSlice change reaches the
// controller's cache is printed.
// Run with `npm run bench -- --filter=@extlb/controller` from the repository root.
import { type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { Controller } from '../src/index.js';
import { loadNote, machine, ms, withTimeout } from './figures.js';

const WINDOW_MS = 5_000;
const NS = 'bench';
const slice = (ip: string): KubeObject =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  }) as KubeObject;
const objects = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: NS },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  slice('10.0.0.1'),
] as KubeObject[];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(probe: () => boolean, what: string): Promise<void> {
  await withTimeout(
    (async () => {
      while (!probe()) await sleep(10);
    })(),
    what,
  );
}

const api = await startKubeApiServer({ objects, namespaces: ['default', 'extlb-system'] });
const controller = new Controller({
  kubeConfig: api.kubeConfig(),
  identity: 'bench',
  leaseNamespace: 'extlb-system',
  xds: { host: '127.0.0.1', port: 0 },
  logger: createLogger({ level: 'silent' }),
});
await controller.start();
await until(() => controller.notReady() === undefined, 'readiness');
const kinds = new Set(api.requestsMatching({ verb: 'list' }).map((r) => r.resource)).size;

const lists = () => api.requestsMatching({ verb: 'list' });
const storm = api.faults.inject({ match: { verb: 'watch' }, gone: true, times: Number.POSITIVE_INFINITY });
const start = lists().length;
api.faults.dropWatches({ graceful: true });
const windows: { total: number; perKind: number; busiest: string }[] = [];
for (let w = 0; w < 2; w++) {
  const from = lists().length;
  await sleep(WINDOW_MS);
  const made = lists().slice(from);
  const byKind = new Map<string, number>();
  for (const r of made) byKind.set(r.resource ?? '?', (byKind.get(r.resource ?? '?') ?? 0) + 1);
  const [busiest, perKind] = [...byKind].reduce((a, b) => (b[1] > a[1] ? b : a), ['none', 0]);
  windows.push({ total: made.length, perKind, busiest });
}
storm.remove();
const relists = lists().length - start;
const changedAt = performance.now();
api.put(slice('10.0.0.2'));
await until(() => JSON.stringify(controller.informers.get('EndpointSlice', 'web-1', NS)).includes('10.0.0.2'), 'the change after the storm');
const recoveryMs = performance.now() - changedAt;

console.log(`extlb controller under a 410 storm (${machine()}; ${kinds} kinds watched; every watch answered 410 Gone)${loadNote()}`);
windows.forEach((w, i) => {
  console.log(
    `  LISTs in seconds ${i * 5}-${i * 5 + 5}: ${w.total} (${(w.total / kinds).toFixed(1)} per kind, at most ${w.perKind} for one, ${w.busiest}; aim ≤ ${i === 0 ? 2 : 1} per kind)`,
  );
});
console.log(`  ${relists} LISTs in the storm; once it is over, an EndpointSlice change is in the cache after ${ms(recoveryMs)} ms`);
await controller.stop(0);
await api.close();
