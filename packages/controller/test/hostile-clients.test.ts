// Hostile xDS clients (issue 21, items 4 and 5) over real gRPC: subscriptions past the server's
// bounds end with RESOURCE_EXHAUSTED, gzip included; client strings reach logs and statuses cut
// short with their length noted, and a refused stream gets its status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_XDS_LIMITS, SnapshotCache, TYPE_URL, XdsServer } from '../src/index.js';
import {
  AdsTestClient,
  type DeltaResponse,
  deltaRequest,
  gatewaySnapshot,
  type SotwResponse,
  sotwAnswer,
  sotwClient,
  sotwRequest,
  waitFor,
} from './helpers.js';

const GW = 'default/gw';
const NODE = { id: 'envoy-h', cluster: GW };
const MB = 1024 * 1024;

interface Logged {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

async function serve(t: { after: (fn: () => unknown) => void }) {
  const cache = new SnapshotCache();
  const logs: Logged[] = [];
  const server = new XdsServer({ cache, logger: { log: (level, msg, fields) => logs.push({ level, msg, ...(fields ? { fields } : {}) }) } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  return { cache, server, logs, address: `127.0.0.1:${port}` };
}

function client<R extends SotwResponse | DeltaResponse>(
  t: { after: (fn: () => unknown) => void },
  address: string,
  variant: 'sotw' | 'delta',
  options: grpc.ClientOptions = {},
) {
  const c = new AdsTestClient<R>(address, variant, grpc.credentials.createInsecure(), options);
  t.after(() => c.close());
  return c;
}

/** The longest string anywhere in what was logged. */
function longestLogged(logs: Logged[]): number {
  return Math.max(0, ...logs.map((l) => JSON.stringify(l).length));
}

/** The status the server ends a stream with; fails instead of hanging when it never does. */
function ended(c: AdsTestClient<SotwResponse> | AdsTestClient<DeltaResponse>, timeoutMs = 20_000): Promise<grpc.StatusObject> {
  return Promise.race([
    c.closed(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the server did not end the stream')), timeoutMs).unref()),
  ]);
}

const many = (n: number, prefix = 'default/gw/x-') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test('a SotW stream asking for more endpoint names than a type may hold ends with RESOURCE_EXHAUSTED', async (t) => {
  const { server, address } = await serve(t);
  const envoy = client<SotwResponse>(t, address, 'sotw');
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  await envoy.next();
  envoy.send(sotwRequest(TYPE_URL.endpoint, many(DEFAULT_XDS_LIMITS.maxNamesPerType + 1)));
  const status = await ended(envoy);
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(status.details, /100001 ClusterLoadAssignment names \(at most 100000 per type\)/);
  assert.equal(server.stats().streamsExhausted, 1);
});

test('a delta stream growing its subscription request by request is ended at the bound, and so is one name past its size', async (t) => {
  const { address } = await serve(t);
  const envoy = client<DeltaResponse>(t, address, 'delta');
  envoy.send(deltaRequest(TYPE_URL.endpoint, { node: NODE, subscribe: many(40_000, 'a-') }));
  envoy.send(deltaRequest(TYPE_URL.endpoint, { subscribe: many(40_000, 'b-') }));
  envoy.send(deltaRequest(TYPE_URL.endpoint, { subscribe: many(40_000, 'c-') }));
  const status = await ended(envoy);
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(status.details, /120000 ClusterLoadAssignment names/);

  const long = client<DeltaResponse>(t, address, 'delta');
  long.send(deltaRequest(TYPE_URL.route, { node: NODE, subscribe: ['r'.repeat(3000)] }));
  const longStatus = await ended(long);
  assert.equal(longStatus.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(longStatus.details, /RouteConfiguration resource name of 3000 bytes \(at most 2048\)/);

  const listed = client<DeltaResponse>(t, address, 'delta');
  const initial = Object.fromEntries(many(100_001).map((n) => [n, 'v']));
  listed.send(deltaRequest(TYPE_URL.endpoint, { node: NODE, subscribe: ['*'], initial }));
  assert.equal((await ended(listed)).code, grpc.status.RESOURCE_EXHAUSTED, 'initial_resource_versions count as held names');
});

test('a request past the receive size is refused with RESOURCE_EXHAUSTED, gzipped or not, and the server serves on', async (t) => {
  const { address } = await serve(t);
  const big = client<SotwResponse>(t, address, 'sotw');
  big.send(sotwRequest(TYPE_URL.endpoint, ['x'.repeat(9 * MB)], { node: NODE }));
  assert.equal((await ended(big)).code, grpc.status.RESOURCE_EXHAUSTED);

  // 24 MB of names in under a megabyte of gzip.
  const zipped = client<SotwResponse>(t, address, 'sotw', { 'grpc.default_compression_algorithm': 2 });
  zipped.send(sotwRequest(TYPE_URL.endpoint, many(1_000_000, 'default/gw/a-very-repetitive-cluster-name-'), { node: NODE }));
  const status = await ended(zipped);
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(status.details, /decompresses to a size larger than 8388608/);

  const envoy = sotwClient(address);
  t.after(() => envoy.close());
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  assert.equal((await envoy.next()).type_url, TYPE_URL.cluster);
});

test('a 1 MB node id is logged cut short with its length, and a refused one gets its status back', async (t) => {
  const { address, logs } = await serve(t);
  const id = 'n'.repeat(MB);
  const envoy = client<SotwResponse>(t, address, 'sotw');
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id, cluster: GW } }));
  await envoy.next();
  envoy.close();
  await waitFor(() => logs.some((l) => l.msg === 'xDS stream closed'));
  const opened = logs.find((l) => l.msg === 'xDS stream opened');
  assert.match(String(opened?.fields?.node), /… \(1048576 chars\)$/);

  const refused = client<SotwResponse>(t, address, 'sotw');
  refused.send(sotwRequest(TYPE_URL.cluster, [], { node: { id, cluster: 'not a gateway' } }));
  const status = await ended(refused);
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT, 'the refusal arrives as a status');
  assert.match(status.details, /set node.cluster/);
  assert.ok(status.details.length < 2048, `a status of ${status.details.length} chars`);
  assert.ok(longestLogged(logs) < 4096, `a log line of ${longestLogged(logs)} chars`);
});

test('unknown type URLs of 1 MB are logged cut short, each once, and a stream asking for too many is ended', async (t) => {
  const { address, logs } = await serve(t);
  const envoy = client<SotwResponse>(t, address, 'sotw');
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  await envoy.next();
  for (let i = 0; i < 20; i++) envoy.send(sotwRequest(`type.googleapis.com/${i}${'t'.repeat(MB)}`, []));
  const status = await ended(envoy);
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(status.details, /more than 16 type URLs/);
  assert.equal(logs.filter((l) => l.msg.includes('does not serve')).length, 16);
  assert.ok(longestLogged(logs) < 4096, `a log line of ${longestLogged(logs)} chars`);
});

test('a 1 MB NACK message is logged cut short and kept for the status bounded', async (t) => {
  const { server, address, logs } = await serve(t);
  const envoy = client<SotwResponse>(t, address, 'sotw');
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  const cds = await envoy.next();
  envoy.send(sotwAnswer(cds, [], 'e'.repeat(MB)));
  await waitFor(() => server.nacks(GW).length === 1);
  const [nack] = server.nacks(GW);
  assert.ok((nack?.message.length ?? 0) <= 4200, 'the message kept for the status is bounded');
  assert.match(nack?.message ?? '', /\(1048576 chars\)$/);
  assert.ok(longestLogged(logs) < 4096, `a log line of ${longestLogged(logs)} chars`);
});

test('a NACK storm is tallied into the proxy facts a few times a second, not once per NACK, and the tally is the truth', async (t) => {
  const cache = new SnapshotCache();
  const told: { at: number; proxies: number }[] = [];
  const intervalMs = 500;
  const server = new XdsServer({
    cache,
    proxyFactsIntervalMs: intervalMs,
    callbacks: { onProxyFacts: (_g, facts) => told.push({ at: performance.now(), proxies: facts?.rejected[0]?.proxies ?? 0 }) },
  });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const proxies = Array.from({ length: 30 }, () => client<SotwResponse>(t, `127.0.0.1:${port}`, 'sotw'));
  const first = await Promise.all(
    proxies.map((p, i) => {
      p.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: `envoy-${i}`, cluster: GW } }));
      return p.next();
    }),
  );
  // One NACK after another, each read by the server before the next is sent: one turn each.
  const start = performance.now();
  for (const [i, p] of proxies.entries()) {
    p.send(sotwAnswer(first[i] as SotwResponse, [], 'storm: rejected'));
    await waitFor(() => server.nacks(GW).length === i + 1);
  }
  const elapsed = performance.now() - start;
  await waitFor(() => told.at(-1)?.proxies === proxies.length);
  assert.ok(told.length <= 2 + Math.ceil(elapsed / intervalMs), `${told.length} tallies for ${proxies.length} NACKs over ${Math.round(elapsed)} ms`);
  for (let i = 1; i < told.length; i++) {
    const gap = (told[i]?.at ?? 0) - (told[i - 1]?.at ?? 0);
    assert.ok(gap >= intervalMs - 5, `tallies ${Math.round(gap)} ms apart`);
  }
  assert.deepEqual(server.rejected(GW), { rejected: [{ typeUrl: TYPE_URL.cluster, message: 'storm: rejected', proxies: proxies.length }] });
  // Every proxy ACKs a new version: the fact clears.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/other`]: ['10.0.0.9:8080'] } }));
  for (const p of proxies) p.send(sotwAnswer(await p.next()));
  await waitFor(() => told.at(-1)?.proxies === 0);
  assert.equal(server.rejected(GW), undefined);
});
