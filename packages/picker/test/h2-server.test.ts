// The picker's own gRPC server on node:http2, spoken to by real clients: @grpc/grpc-js (as the
// conformance kit and Envoy's gRPC client would), and a raw node:http2 client for what a gRPC client
// never sends by itself (messages cut at every byte, lying length prefixes, unknown encodings, a
// stream that ends inside a message). The same conformance kit must pass on both transports.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { startPicker, type GrpcTransport, type RunningPicker } from '../src/server.js';
import { staticEndpoints } from '../src/pool-members.js';
import { loadProtos } from '../src/protos.js';
import { H2GrpcServer, parseGrpcTimeout, unaryMethod } from '../src/h2-server.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { runConformance } from '../src/conformance/kit.js';
import { RULES } from '../src/conformance/rules.js';
import { closeClients, endpointOf, extProcClient, headers, ask } from './helpers.js';

const POOL = '10.0.0.1:8000,10.0.0.2:8000,[2001:db8::3]:8000';
const PROCESS = '/envoy.service.ext_proc.v3.ExternalProcessor/Process';
const running: RunningPicker[] = [];
const sessions: ClientHttp2Session[] = [];
after(async () => {
  closeClients();
  for (const s of sessions) s.close();
  await Promise.all(running.map((p) => p.close()));
});

async function start(transport?: GrpcTransport): Promise<RunningPicker> {
  const p = await startPicker({ pool: staticEndpoints(POOL), maxEndpoints: 2, ...(transport ? { transport } : {}) });
  running.push(p);
  return p;
}

const method = (): grpc.MethodDefinition<ProcessingRequest, ProcessingResponse> =>
  loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>;

function frame(message: ProcessingRequest | Buffer, flag = 0): Buffer {
  const bytes = Buffer.isBuffer(message) ? message : method().requestSerialize(message);
  const out = Buffer.alloc(5 + bytes.length);
  out[0] = flag;
  out.writeUInt32BE(bytes.length, 1);
  bytes.copy(out, 5);
  return out;
}

interface RawReply {
  status: number | undefined;
  answers: ProcessingResponse[];
  grpcStatus: number | undefined;
  grpcMessage: string | undefined;
}

/** One stream from a raw node:http2 client: `chunks` written one DATA write each, then half-closed (unless `keepOpen`). */
function raw(address: string, chunks: Buffer[], extra: Record<string, string> = {}, keepOpen = false): Promise<RawReply> {
  const session = connect(`http://${address}`);
  sessions.push(session);
  session.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': PROCESS, 'content-type': 'application/grpc', te: 'trailers', ...extra });
    let head: IncomingHttpHeaders = {};
    let tail: IncomingHttpHeaders = {};
    const data: Buffer[] = [];
    stream.on('response', (h) => {
      head = h;
    });
    stream.on('trailers', (t) => {
      tail = t;
    });
    stream.on('data', (d: Buffer) => data.push(d));
    // The server has ended its side (a status): a client that kept its own side open lets go too.
    stream.on('end', () => stream.close());
    stream.on('error', reject);
    stream.on('close', () => {
      const body = Buffer.concat(data);
      const answers: ProcessingResponse[] = [];
      for (let at = 0; at + 5 <= body.length; ) {
        const n = body.readUInt32BE(at + 1);
        answers.push(method().responseDeserialize(body.subarray(at + 5, at + 5 + n)));
        at += 5 + n;
      }
      const trailers = { ...head, ...tail };
      const code = trailers['grpc-status'];
      const message = trailers['grpc-message'];
      resolve({
        status: head[':status'] as number | undefined,
        answers,
        grpcStatus: code === undefined ? undefined : Number(code),
        grpcMessage: typeof message === 'string' ? decodeURI(message) : undefined,
      });
    });
    (async () => {
      for (const c of chunks) {
        stream.write(c);
        // A turn of the event loop between writes, so each chunk leaves as its own DATA frame.
        await new Promise((r) => setImmediate(r));
      }
      if (!keepOpen) stream.end();
    })();
  });
}

test('messages cut at every byte, and several in one DATA frame, are read whole and answered in order', async () => {
  const p = await start();
  const bytes = Buffer.concat([
    frame(headers({}, false)),
    frame({ request_body: { body: Buffer.from('a body of some length'), end_of_stream: false } }),
    frame({ request_body: { body: Buffer.alloc(0), end_of_stream: true } }),
  ]);
  for (let cut = 1; cut < bytes.length; cut += 3) {
    const reply = await raw(p.address, [bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.equal(reply.grpcStatus, grpc.status.OK, `cut at ${cut}: ${reply.grpcMessage}`);
    assert.deepEqual(
      reply.answers.map((a) => a.response),
      ['request_headers', 'request_body', 'request_body'],
      `cut at ${cut}`,
    );
    assert.equal(endpointOf(reply.answers[0] as ProcessingResponse).metadata?.split(',').length, 2);
    assert.equal(reply.answers[1]?.request_body?.response?.body_mutation?.streamed_response?.body?.toString(), 'a body of some length');
  }
  // Byte by byte.
  const reply = await raw(
    p.address,
    [...bytes].map((b) => Buffer.from([b])),
  );
  assert.deepEqual(
    reply.answers.map((a) => a.response),
    ['request_headers', 'request_body', 'request_body'],
  );
  assert.equal(p.picker.stats().inFlight, 0);
});

test('a length prefix past the 4 MiB receive limit ends the stream with RESOURCE_EXHAUSTED at once, without waiting for the bytes', async () => {
  const p = await start();
  const prefix = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
  const reply = await raw(p.address, [prefix], {}, true);
  assert.equal(reply.grpcStatus, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(reply.grpcMessage ?? '', /larger than max \(4294967295 vs 4194304\)/);
  // A real message over the limit, from grpc-js.
  const big = await raw(p.address, [frame(headers({ 'x-big': 'x'.repeat(4 * 1024 * 1024) }))]);
  assert.equal(big.grpcStatus, grpc.status.RESOURCE_EXHAUSTED);
  assert.equal(endpointOf(await ask(extProcClient(p.address), headers())).metadata?.split(',').length, 2, 'still picking');
});

test('a stream that ends inside a message ends with INTERNAL and releases its pick', async () => {
  const p = await start();
  const whole = frame(headers({}, false));
  const reply = await raw(p.address, [whole, frame({ request_body: { body: Buffer.from('x'), end_of_stream: true } }).subarray(0, 7)]);
  assert.equal(reply.answers[0]?.response, 'request_headers');
  assert.equal(reply.grpcStatus, grpc.status.INTERNAL);
  assert.equal(reply.grpcMessage, 'the request ended inside a message');
  assert.equal(p.picker.stats().inFlight, 0);
});

test('gzip and deflate messages are read; an unknown encoding is UNIMPLEMENTED; a compressed flag without an encoding is INTERNAL', async () => {
  const p = await start();
  const gz = await raw(p.address, [frame(gzipSync(method().requestSerialize(headers())), 1)], { 'grpc-encoding': 'gzip' });
  assert.equal(gz.grpcStatus, grpc.status.OK);
  assert.equal(gz.answers[0]?.response, 'request_headers');
  // grpc-js compressing every message itself.
  const client = new (loadProtos().ExtProcClient)(p.address, grpc.credentials.createInsecure(), { 'grpc.default_compression_algorithm': 1 });
  try {
    assert.equal(endpointOf(await ask(client, headers())).metadata?.split(',').length, 2);
  } finally {
    client.close();
  }
  const br = await raw(p.address, [frame(headers())], { 'grpc-encoding': 'br' });
  assert.equal(br.grpcStatus, grpc.status.UNIMPLEMENTED);
  assert.deepEqual(br.answers, []);
  const flagged = await raw(p.address, [frame(headers(), 1)]);
  assert.equal(flagged.grpcStatus, grpc.status.INTERNAL);
  assert.match(flagged.grpcMessage ?? '', /compressed on a call without grpc-encoding/);
});

test('grpc-timeout: a stream still open at its deadline ends with DEADLINE_EXCEEDED and releases its pick', async () => {
  const p = await start();
  const reply = await raw(p.address, [frame(headers({}, false))], { 'grpc-timeout': '200m' }, true);
  assert.equal(reply.answers[0]?.response, 'request_headers');
  assert.equal(reply.grpcStatus, grpc.status.DEADLINE_EXCEEDED);
  assert.equal(p.picker.stats().inFlight, 0);
  assert.equal(parseGrpcTimeout('3S'), 3000);
  assert.equal(parseGrpcTimeout('100u'), 0.1);
  assert.equal(parseGrpcTimeout('123456789S'), undefined, 'at most 8 digits');
  assert.equal(parseGrpcTimeout('5x'), undefined);
});

test('an unknown method is UNIMPLEMENTED, a non-gRPC content type is HTTP 415, and neither disturbs the picker', async () => {
  const p = await start();
  const client = new grpc.Client(p.address, grpc.credentials.createInsecure());
  try {
    const err = await new Promise<grpc.ServiceError>((resolve) =>
      client.makeUnaryRequest(
        '/no.Such/Method',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (e) => resolve(e as grpc.ServiceError),
      ),
    );
    assert.equal(err.code, grpc.status.UNIMPLEMENTED);
    assert.match(err.details, /does not implement the method \/no\.Such\/Method/);
  } finally {
    client.close();
  }
  const json = await raw(p.address, [Buffer.from('{}')], { 'content-type': 'application/json' });
  assert.equal(json.status, 415);
  assert.equal(endpointOf(await ask(extProcClient(p.address), headers())).metadata?.split(',').length, 2);
});

test('close lets a call finish for the grace period, then cuts it', async () => {
  const server = new H2GrpcServer(
    new Map([
      [
        '/t.T/Echo',
        unaryMethod(
          (b) => b,
          (m) => m as Buffer,
          (r) => ({ response: r }),
        ),
      ],
    ]),
    100,
  );
  const port = await server.listen('127.0.0.1', 0);
  const session = connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'POST', ':path': '/t.T/Echo', 'content-type': 'application/grpc' });
  stream.on('error', () => undefined);
  stream.write(frame(Buffer.from('hi')));
  await new Promise((r) => setTimeout(r, 50));
  const started = Date.now();
  await server.close();
  assert.ok(Date.now() - started >= 90, 'waited for the grace period');
  await new Promise((r) => (stream.closed ? r(undefined) : stream.once('close', r)));
  session.destroy();
});

for (const transport of ['node-http2', 'grpc-js'] as const) {
  test(`the conformance kit passes every rule against the picker on ${transport}`, async () => {
    const p = await start(transport);
    assert.equal(p.transport, transport);
    const report = await runConformance({ target: p.address, timeoutMs: 1000 });
    assert.deepEqual(
      report.results.filter((r) => r.status !== 'pass').map((r) => `${r.id}: ${r.detail}`),
      [],
    );
    assert.deepEqual(report.summary, { passed: RULES.length, failed: 0, skipped: 0 });
  });
}
