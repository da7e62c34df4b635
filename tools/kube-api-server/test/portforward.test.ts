// pods/portforward over WebSocket, driven by the real @kubernetes/client-node PortForward (and its
// WebSocketHandler where the test is about the channel bytes), to TCP servers playing the Pod's port.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createRequire } from 'node:module';
import { PortForward } from '@kubernetes/client-node';
import type { KubeApiServer, KubeObject } from '../src/index.js';
import { serve } from './helpers.js';

const pod = (name: string, phase = 'Running'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { containers: [{ name: 'c', image: 'x' }] },
  status: { phase, podIP: '127.0.0.1' },
});

/** A TCP server on loopback sending back what it reads. */
async function echoServer(t: { after: (fn: () => unknown) => void }): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  return { server, port: (server.address() as { port: number }).port };
}

/** Collects a stream's bytes; `until` resolves once they hold `n` bytes. */
function collector() {
  const stream = new PassThrough();
  let bytes = Buffer.alloc(0);
  const waiters: (() => void)[] = [];
  stream.on('data', (d: Buffer) => {
    bytes = Buffer.concat([bytes, d]);
    for (const w of waiters.splice(0)) w();
  });
  return {
    stream,
    get bytes() {
      return bytes;
    },
    async until(n: number): Promise<Buffer> {
      while (bytes.length < n) await new Promise<void>((r) => waiters.push(r));
      return bytes;
    },
  };
}

async function forwardTo(t: { after: (fn: () => unknown) => void }, target: number, extra: Partial<Parameters<typeof serve>[1]> = {}) {
  return serve(t as never, {
    objects: [pod('web'), pod('pending', 'Pending')],
    portForward: ({ port }) => ({ host: '127.0.0.1', port: port === 8080 ? target : port }),
    ...extra,
  });
}

test('PortForward: bytes both ways through the data channel, and the port header stripped', async (t) => {
  const echo = await echoServer(t);
  const api: KubeApiServer = await forwardTo(t, echo.port);
  const out = collector();
  const err = collector();
  const input = new PassThrough();
  const ws = (await new PortForward(api.kubeConfig()).portForward('default', 'web', [8080], out.stream, err.stream, input)) as any;
  assert.equal(ws.protocol, 'v4.channel.k8s.io');
  input.write('hello');
  assert.equal((await out.until(5)).toString(), 'hello');
  // Larger than a 16-bit frame length and than one TCP read: fragmented on the way in and out.
  const big = Buffer.alloc(300_000, 7);
  input.write(big);
  const all = await out.until(5 + big.length);
  assert.equal(all.length, 5 + big.length);
  assert.equal(Buffer.compare(all.subarray(5), big), 0);
  assert.deepEqual([...err.bytes], []);
  const [record] = api.requestsMatching({ resource: 'pods', subresource: 'portforward' });
  assert.deepEqual([record?.verb, record?.namespace, record?.name, record?.code, record?.query.ports], ['create', 'default', 'web', 101, '8080']);
  const closed = once(ws, 'close');
  input.end();
  await closed;
});

// The WebSocket library client-node connects with (its dependency), offering what client-node offers.
const WebSocket = createRequire(import.meta.url)('ws');
const CLIENT_NODE_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

test('PortForward: each channel first carries the port, little-endian', async (t) => {
  const echo = await echoServer(t);
  const api = await forwardTo(t, echo.port);
  const frames: [number, number[]][] = [];
  let resolveTwo: () => void;
  const two = new Promise<void>((r) => {
    resolveTwo = r;
  });
  const ws = new WebSocket(`${api.url.replace('https', 'wss')}/api/v1/namespaces/default/pods/web/portforward?ports=8080`, CLIENT_NODE_PROTOCOLS, {
    ca: api.ca,
    headers: { Authorization: 'Bearer x' },
  });
  ws.on('message', (data: Buffer) => {
    frames.push([data[0] as number, [...data.subarray(1)]]);
    if (frames.length === 2) resolveTwo();
  });
  await two;
  assert.equal(ws.protocol, 'v4.channel.k8s.io');
  assert.deepEqual(frames, [
    [0, [8080 & 0xff, 8080 >> 8]],
    [1, [8080 & 0xff, 8080 >> 8]],
  ]);
  ws.close();
});

test('PortForward: a port nothing listens on is an error on the error channel, then the end', async (t) => {
  const closedPort = await echoServer(t);
  closedPort.server.close();
  await once(closedPort.server, 'close');
  const api = await forwardTo(t, closedPort.port);
  const out = collector();
  const err = collector();
  const input = new PassThrough();
  const ws = (await new PortForward(api.kubeConfig()).portForward('default', 'web', [8080], out.stream, err.stream, input)) as any;
  await once(ws, 'close');
  assert.match(
    err.bytes.toString(),
    /^error forwarding port 8080 to pod web, uid uid-web: failed to connect to localhost:8080 inside namespace "default": connect ECONNREFUSED/,
  );
  assert.equal(out.bytes.length, 0);
});

test('PortForward: the Pod closing the connection ends the WebSocket', async (t) => {
  const server = createServer((s) => s.end('bye'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const api = await forwardTo(t, (server.address() as { port: number }).port);
  const out = collector();
  const ws = (await new PortForward(api.kubeConfig()).portForward('default', 'web', [8080], out.stream, null, new PassThrough())) as any;
  await once(ws, 'close');
  assert.equal(out.bytes.toString(), 'bye');
});

test('PortForward: refused before the upgrade: no such Pod, a Pod not running, not allowed', async (t) => {
  const api = await forwardTo(t, 1, {
    auth: { tokens: { admin: 'admin', viewer: 'viewer' }, authorize: (a) => a.user === 'admin' || a.subresource !== 'portforward' },
  });
  const pf = (token: string) => new PortForward(api.kubeConfig({ token }));
  const attempt = (token: string, name: string, ports: number[]) =>
    pf(token).portForward('default', name, ports as never, new PassThrough(), null, new PassThrough());
  // client-node rejects with the WebSocket's error event: the HTTP answer to the upgrade.
  const answered = (code: number) => (e: { message?: string }) => e.message === `Unexpected server response: ${code}`;
  await assert.rejects(attempt('admin', 'missing', [8080]), answered(404));
  await assert.rejects(attempt('admin', 'pending', [8080]), answered(400));
  await assert.rejects(attempt('viewer', 'web', [8080]), answered(403));
  const records = api.requestsMatching({ subresource: 'portforward' });
  assert.deepEqual(
    records.map((r) => [r.name, r.user, r.code]),
    [
      ['missing', 'admin', 404],
      ['pending', 'admin', 400],
      ['web', 'viewer', 403],
    ],
  );
});
