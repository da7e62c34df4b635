// Fleet sync (issue 19) and stream floods (issue 21, item 9) over real gRPC and raw HTTP/2: proxies
// in the same state are sent the same bytes, a client that stops reading is held to a bounded queue
// and counted behind while the others are served, and a connection opening and resetting streams
// faster than its rate is refused with RESOURCE_EXHAUSTED without holding up anyone.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { envoyProtos, type ResponseInfo, SnapshotCache, TYPE_URL, XdsServer } from '../src/index.js';
import { adsStream, bigSnapshot, framedRequest, gatewaySnapshot, names, sotwAnswer, sotwClient, sotwRequest, waitFor } from './helpers.js';

const GW = 'default/gw';

test('a client that stops reading is held to a bounded queue and counted behind; the others get every version meanwhile', async (t) => {
  const cache = new SnapshotCache();
  const sent: [number, ResponseInfo][] = [];
  const server = new XdsServer({ cache, limits: { maxQueuedBytes: 1024 * 1024 }, callbacks: { onResponse: (s, r) => sent.push([s.id, r]) } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, bigSnapshot(GW, 1000, 'v0'));
  // The slow proxy: a raw HTTP/2 stream that reads nothing after its request, so flow control
  // (a 64 KiB window) holds what the server writes.
  const { session, stream: slowStream } = rawStream(port, 'slow');
  slowStream.pause();
  const fast = sotwClient(`127.0.0.1:${port}`);
  t.after(() => {
    session.destroy();
    fast.close();
  });
  fast.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'fast', cluster: GW } }));
  const first = await fast.next();
  fast.send(sotwAnswer(first));
  await waitFor(() => server.streams(GW).length === 2);
  for (let v = 1; v <= 8; v++) {
    cache.setSnapshot(GW, bigSnapshot(GW, 1000, `v${v}`));
    const cds = await fast.next();
    assert.equal(cds.version_info, cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.version, `the fast proxy has version ${v}`);
    fast.send(sotwAnswer(cds));
  }
  await waitFor(() => server.stats().streamsBehind === 1);
  const slowId = server.streams(GW).find((s) => s.node.id === 'slow')?.id;
  const toSlow = sent.filter(([id]) => id === slowId);
  const queued = toSlow.slice(1).reduce((n, [, r]) => n + r.bytes, 0);
  assert.ok(toSlow.length < 9, `the slow proxy was written ${toSlow.length - 1} of 8 versions, not all`);
  assert.ok(queued <= 1024 * 1024 + 3 * 2_200_000, `at most the bound and one response past it are queued (${queued} bytes)`);

  // It reads again: everything it was written drains, and the last is the newest version.
  slowStream.resume();
  await waitFor(() => server.stats().streamsBehind === 0);
  const newest = cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.version;
  await waitFor(() => sent.filter(([id]) => id === slowId).at(-1)?.[1].version === newest);
});

test('proxies in the same state are sent the same bytes, encoded once', async (t) => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, bigSnapshot(GW, 200, 'v0'));
  const clients = Array.from({ length: 5 }, () => sotwClient(`127.0.0.1:${port}`));
  t.after(() => {
    for (const c of clients) c.close();
  });
  clients.forEach((c, i) => {
    c.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: `envoy-${i}`, cluster: GW } }));
  });
  const responses = await Promise.all(clients.map((c) => c.next()));
  const bodies = responses.map((r) => JSON.stringify({ ...r, nonce: undefined }));
  assert.equal(new Set(bodies).size, 1, 'one response but for its nonce');
  assert.deepEqual(names(responses[0] as never).length, 200);
});

/** A raw HTTP/2 ADS stream for wildcard CDS, on a connection with `window` bytes of HTTP/2 window. */
function rawStream(port: number, id: string, window = 65535): { session: http2.ClientHttp2Session; stream: http2.ClientHttp2Stream } {
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: window } });
  session.on('error', () => {});
  const stream = adsStream(session);
  stream.write(framedRequest(id));
  return { session, stream };
}

/** The gRPC messages in `bytes`, each checked to be whole (its 5-byte prefix, uncompressed, and that many bytes). */
function grpcMessages(bytes: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    assert.ok(at + 5 <= bytes.length, 'a whole prefix');
    assert.equal(bytes[at], 0, 'not compressed');
    const length = bytes.readUInt32BE(at + 1);
    assert.ok(at + 5 + length <= bytes.length, `a whole message of ${length} bytes at ${at}`);
    messages.push(bytes.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return messages;
}

test('responses reach HTTP/2 as whole gRPC messages, each with its own nonce, then the trailers', async (t) => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  cache.setSnapshot(GW, bigSnapshot(GW, 300, 'v0'));
  // A small window: every response crosses many DATA frames and window updates.
  const { session, stream } = rawStream(port, 'raw', 16 * 1024);
  t.after(() => session.destroy());
  const chunks: Buffer[] = [];
  stream.on('data', (b: Buffer) => chunks.push(b));
  const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.on('trailers', resolve));
  await waitFor(() => server.stats().responses === 1);
  cache.setSnapshot(GW, bigSnapshot(GW, 300, 'v1'));
  const v1 = cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.version;
  await waitFor(() => server.stats().responses === 2);
  await server.stop({ graceMs: 2000 });
  assert.equal((await trailers)['grpc-status'], String(grpc.status.UNAVAILABLE), 'the status comes after the responses');
  const type = envoyProtos().lookupType('envoy.service.discovery.v3.DiscoveryResponse');
  const responses = grpcMessages(Buffer.concat(chunks)).map(
    (m) => type.toObject(type.decode(m)) as { version_info: string; nonce: string; resources: unknown[] },
  );
  assert.deepEqual(
    responses.map((r) => [r.nonce, r.resources.length]),
    [
      ['1', 300],
      ['2', 300],
    ],
  );
  assert.equal(responses[1]?.version_info, v1);
});

test('a body queued for many streams that do not read is held once, not once per stream', async (t) => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, bigSnapshot(GW, 1000, 'v0'));
  // The body is encoded for a first reader, so what follows is only what the stalled streams add.
  const first = sotwClient(`127.0.0.1:${port}`);
  t.after(() => first.close());
  first.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'first', cluster: GW } }));
  const body = (await first.next()) as { resources?: unknown[] };
  assert.equal(body.resources?.length, 1000);
  const size = server.stats().responseBytes;
  const before = process.memoryUsage().arrayBuffers;
  // Twenty proxies on their own connections, reading nothing: each one's 64 KiB window lets a
  // sliver out and the server holds the rest of the response.
  const stalled = Array.from({ length: 20 }, (_, i) => rawStream(port, `stalled-${i}`));
  t.after(() => {
    for (const s of stalled) s.session.destroy();
  });
  for (const s of stalled) s.stream.pause();
  await waitFor(() => server.stats().responses === 21);
  const held = process.memoryUsage().arrayBuffers - before;
  assert.ok(held < 5 * size, `20 streams hold ${(held / 1e6).toFixed(1)} MB of a ${(size / 1e6).toFixed(1)} MB response queued (less than 5 copies)`);
});

test('a connection opening and resetting streams in a flood is refused past its rate, and a healthy proxy is served on', async (t) => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const healthy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => healthy.close());
  healthy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'healthy', cluster: GW } }));
  healthy.send(sotwAnswer(await healthy.next()));

  // Real HTTP/2 frames: HEADERS and a DATA frame per stream, then RST_STREAM, 2,000 times on one connection.
  const session = http2.connect(`http://127.0.0.1:${port}`);
  t.after(() => session.destroy());
  session.on('error', () => {});
  const statuses = new Map<string, number>();
  const request = framedRequest('flood');
  await new Promise<void>((resolve) => session.once('connect', () => resolve()));
  /** One stream: HEADERS, DATA, and RST_STREAM as soon as the server answers. */
  let cut = false;
  const cycle = () =>
    new Promise<void>((resolve) => {
      if (session.destroyed || session.closed) {
        // Node's HTTP/2 server ends a session that resets streams too fast (rapid reset): also a refusal.
        cut = true;
        resolve();
        return;
      }
      const stream = adsStream(session);
      stream.on('response', (h) => {
        if (h['grpc-status'] !== undefined) statuses.set(String(h['grpc-status']), (statuses.get(String(h['grpc-status'])) ?? 0) + 1);
        stream.close(http2.constants.NGHTTP2_CANCEL);
      });
      stream.on('close', () => resolve());
      stream.write(request);
    });
  // Sixteen at a time, the most the server lets one connection have open.
  const flood = Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 125 && !cut; i++) await cycle();
  });
  // While it runs, the healthy proxy gets an update.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/backend`]: ['10.0.0.1:8080'], [`${GW}/more`]: ['10.0.0.2:8080'] } }));
  const update = await healthy.next();
  assert.deepEqual(names(update), [`${GW}/backend`, `${GW}/more`], 'the healthy proxy gets the new clusters during the flood');
  await Promise.all(flood);
  const stats = server.stats();
  assert.ok(stats.streamsRateLimited > 0, 'streams past the rate were refused');
  assert.ok(stats.streamsOpened <= 1 + 10 + 5 * 20, `few streams of the flood got as far as naming a node (${stats.streamsOpened})`);
  assert.ok((statuses.get(String(grpc.status.RESOURCE_EXHAUSTED)) ?? 0) > 0, `refused with RESOURCE_EXHAUSTED: ${JSON.stringify([...statuses])}`);
  assert.equal(healthy.status, undefined, 'the healthy stream is still up');
});
