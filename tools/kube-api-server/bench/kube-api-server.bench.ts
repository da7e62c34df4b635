// How fast the test server is through the real client-node: seeding, full and chunked lists,
// reads and creates over HTTPS (beside a bare node:https server answering a fixed ConfigMap, the
// ceiling: client-node opens a new TLS connection per request), watch fan-out, and the memory a
// populated server holds. Figures only; run with `npm run bench -- --filter=@extlb/kube-api-server`
// from the repository root.
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { type KubeObject, makeCertificate, startKubeApiServer } from '../src/index.js';

const OBJECTS = 10_000;
const CREATES = 300;
const READS = 300;
const WATCHERS = 10;
const WRITES = 2_000;

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { key: name.repeat(4) },
});

function line(what: string, count: number, ms: number, unit = 'objects'): void {
  console.log(
    `${what.padEnd(44)} ${String(count).padStart(6)} ${unit} in ${ms.toFixed(0).padStart(6)} ms  ${((count / ms) * 1000).toFixed(0).padStart(8)} ${unit}/s`,
  );
}

async function time<T>(run: () => Promise<T> | T): Promise<[T, number]> {
  const start = performance.now();
  const value = await run();
  return [value, performance.now() - start];
}

globalThis.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const api = await startKubeApiServer({ bookmarkIntervalMs: 0 });
const core = api.kubeConfig().makeApiClient(CoreV1Api);

const [, seedMs] = await time(() => {
  for (let i = 0; i < OBJECTS; i++) api.put(configMap(`cm-${String(i).padStart(5, '0')}`));
});
line('seed (put, no HTTP)', OBJECTS, seedMs);
globalThis.gc?.();
console.log(`heap with ${OBJECTS} objects and their history: ${((process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024).toFixed(1)} MiB`);

const [full, fullMs] = await time(() => core.listNamespacedConfigMap({ namespace: 'default' }));
line('list, one response', full.items.length, fullMs);

const [pages, chunkedMs] = await time(async () => {
  let items = 0;
  let token: string | undefined;
  do {
    const page = await core.listNamespacedConfigMap({ namespace: 'default', limit: 500, ...(token ? { _continue: token } : {}) });
    items += page.items.length;
    token = page.metadata?._continue;
  } while (token);
  return items;
});
line('list, limit=500 pages', pages, chunkedMs);

async function reads(client: CoreV1Api): Promise<number> {
  const [, ms] = await time(async () => {
    for (let i = 0; i < READS; i++) await client.readNamespacedConfigMap({ namespace: 'default', name: 'cm-00001' });
  });
  return ms;
}
const tls = makeCertificate();
const fixed = JSON.stringify({ ...configMap('cm-00001'), metadata: { name: 'cm-00001', namespace: 'default', resourceVersion: '1' } });
const bare = createServer(tls, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(fixed));
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareConfig = new KubeConfig();
bareConfig.loadFromClusterAndUser(
  { name: 'bare', server: `https://127.0.0.1:${(bare.address() as AddressInfo).port}`, caData: Buffer.from(tls.cert).toString('base64'), skipTLSVerify: false },
  { name: 'bench', token: 'x' },
);
const readMs = await reads(core);
const bareMs = await reads(bareConfig.makeApiClient(CoreV1Api));
bare.close();
line('read over HTTPS, one at a time', READS, readMs, 'requests');
line('  bare node:https, fixed answer (ceiling)', READS, bareMs, 'requests');
console.log(`  ratio server/bare: ${(readMs / bareMs).toFixed(2)}`);

const [, createMs] = await time(async () => {
  for (let i = 0; i < CREATES; i++)
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `new-${i}` }, data: { key: 'value' } } });
});
line('create over HTTPS, one at a time', CREATES, createMs, 'requests');

const from = api.resourceVersion;
const last = String(Number(from) + WRITES);
let pending = WATCHERS;
let allSeen: () => void = () => {};
const seen = new Promise<void>((resolve) => {
  allSeen = resolve;
});
const controllers = await Promise.all(
  Array.from({ length: WATCHERS }, () =>
    new Watch(api.kubeConfig()).watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: from },
      (_type, obj: { metadata: { resourceVersion: string } }) => {
        if (obj.metadata.resourceVersion === last && --pending === 0) allSeen();
      },
      () => {},
    ),
  ),
);
await api.waitForWatches(WATCHERS);
const [, fanOutMs] = await time(async () => {
  for (let i = 0; i < WRITES; i++) api.put(configMap(`cm-${String(i % OBJECTS).padStart(5, '0')}-${i}`));
  await seen;
});
line(`watch fan-out to ${WATCHERS} watchers`, WRITES * WATCHERS, fanOutMs, 'events');
for (const c of controllers) c.abort();
await api.close();
