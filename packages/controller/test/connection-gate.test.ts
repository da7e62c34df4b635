// Issue 21, item 9, at the server's door, in real HTTP/2 frames: a stream past its connection's
// rate is answered RESOURCE_EXHAUSTED before gRPC builds a call for it; a connection whose streams
// keep being refused by its own rate is closed with GOAWAY ENHANCE_YOUR_CALM, and new connections
// from its address wait before the TLS handshake until the hold ends, while a proxy already
// connected from that address is served on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { makeCertificate } from '@extlb/kube-api-server';
import { SnapshotCache, TYPE_URL, XdsServer } from '../src/index.js';
import { adsStream, framedRequest, gatewaySnapshot, names, sotwAnswer, sotwClient, sotwRequest, waitFor } from './helpers.js';

const GW = 'default/gw';
/** One stream's answer: its response headers, or how it ended without any. */
function openStream(session: http2.ClientHttp2Session, id: string): Promise<{ status?: string; reset?: number }> {
  return new Promise((resolve) => {
    const stream = adsStream(session);
    stream.on('response', (h) => resolve({ status: h['grpc-status'] === undefined ? undefined : String(h['grpc-status']) }));
    stream.on('close', () => resolve({ reset: stream.rstCode }));
    stream.write(framedRequest(id, GW));
  });
}

function connected(session: http2.ClientHttp2Session): Promise<void> {
  return new Promise((resolve, reject) => {
    session.once('remoteSettings', () => resolve());
    session.once('close', () => reject(new Error('the session closed before the server spoke')));
  });
}

test('streams past their connection rate are refused with RESOURCE_EXHAUSTED before gRPC builds a call for them', async (t) => {
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  let calls = 0;
  // A server interceptor sees every call grpc-js builds.
  const counting: grpc.ServerInterceptor = (_method, call) => {
    calls++;
    return new grpc.ServerInterceptingCall(call);
  };
  const server = new XdsServer({
    cache,
    limits: { streamBurst: 4, streamsPerSecond: 0.001, maxRefusedStreamsPerConnection: 1000 },
    grpcOptions: { interceptors: [counting] },
  });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  t.after(() => session.destroy());
  await connected(session);
  const answers = [];
  for (let i = 0; i < 12; i++) answers.push(await openStream(session, `s${i}`));
  const refused = answers.filter((a) => a.status === String(grpc.status.RESOURCE_EXHAUSTED));
  assert.equal(refused.length, 8, `8 of 12 streams past the burst of 4 are refused: ${JSON.stringify(answers)}`);
  assert.deepEqual(answers.slice(0, 4), Array(4).fill({ status: undefined }), 'the first four are answered as gRPC streams');
  assert.equal(calls, 4, 'grpc-js built a call for the admitted streams only');
  assert.equal(server.stats().streamsRateLimited, 8);
  await waitFor(() => server.streams(GW).length === 4);
});

test('a connection whose streams keep being refused by its own rate is closed with GOAWAY ENHANCE_YOUR_CALM; new connections from its address wait before TLS until the hold ends', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-gate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [certFile, keyFile] = [join(dir, 'tls.crt'), join(dir, 'tls.key')];
  const certificate = makeCertificate('127.0.0.1');
  writeFileSync(certFile, certificate.cert);
  writeFileSync(keyFile, certificate.key);
  const ca = Buffer.from(certificate.cert);
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const holdMs = 3000;
  const server = new XdsServer({ cache, limits: { streamBurst: 2, streamsPerSecond: 0.001, maxRefusedStreamsPerConnection: 3, addressHoldMs: holdMs } });
  const { port } = await server.start({ tls: { certFile, keyFile } });
  t.after(() => server.stop({ graceMs: 100 }));
  const address = `127.0.0.1:${port}`;

  // A proxy from the same address, connected before, and a flooding connection.
  const healthy = sotwClient(address, grpc.credentials.createSsl(ca));
  t.after(() => healthy.close());
  healthy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'healthy', cluster: GW } }));
  healthy.send(sotwAnswer(await healthy.next()));
  const flood = http2.connect(`https://${address}`, { ca });
  flood.on('error', () => {});
  t.after(() => flood.destroy());
  const goaway = new Promise<number | 'closed without GOAWAY'>((resolve) => {
    flood.once('goaway', (code) => resolve(code));
    flood.once('close', () => resolve('closed without GOAWAY'));
  });
  await connected(flood);
  const answers = [];
  for (let i = 0; i < 10 && !flood.closed && !flood.destroyed; i++) answers.push(await openStream(flood, `flood-${i}`));
  assert.ok(flood.closed || flood.destroyed, `the server closed the flooding connection: ${JSON.stringify(answers)}`);
  assert.equal(await goaway, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 'the flood gets GOAWAY ENHANCE_YOUR_CALM');
  assert.equal(
    answers.filter((a) => a.status === String(grpc.status.RESOURCE_EXHAUSTED)).length,
    4,
    `2 admitted, 4 refused, then closed: ${JSON.stringify(answers)}`,
  );
  assert.equal(server.stats().connectionsClosed, 1);

  // A new connection from that address is held: accepted, but not read, so no TLS handshake.
  const again = http2.connect(`https://${address}`, { ca });
  again.on('error', () => {});
  t.after(() => again.destroy());
  let handshaken = false;
  again.socket.once('secureConnect', () => {
    handshaken = true;
  });
  const spoke = connected(again);
  await waitFor(() => server.stats().connectionsHeld === 1);
  assert.equal(handshaken, false, 'no TLS handshake while the address is held');

  // The proxy already connected from that address is served on.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/backend`]: ['10.0.0.1:8080'], [`${GW}/more`]: ['10.0.0.2:8080'] } }));
  assert.deepEqual(names(await healthy.next()), [`${GW}/backend`, `${GW}/more`]);
  assert.equal(healthy.status, undefined);

  // When the hold ends, the waiting connection goes on: handshake, settings, a stream served.
  await spoke;
  assert.equal(handshaken, true);
  assert.deepEqual(await openStream(again, 'after-hold'), { status: undefined });
});
