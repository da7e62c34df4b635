// The reference picker's gRPC port has no authentication: whoever reaches it can send any bytes,
// any field shapes and any message order. None of it may end the process or make it hold memory
// it does not need; a bad message ends its own stream with INVALID_ARGUMENT and is counted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { startPicker, type RunningPicker } from '../src/server.js';
import { staticEndpoints } from '../src/pool-members.js';
import { parseEndpointList } from '../src/codec.js';
import type { HeaderValue, PbValue, ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { responseHeaders } from '../src/conformance/answers.js';
import { ask, closeClients, converse, endpointOf, ending, exchange, extProcClient, headers } from './helpers.js';

const POOL = ['10.0.0.1:8000', '10.0.0.2:8000', '[2001:db8::3]:8000'];
const FOREIGN = ['192.0.2.1:1', '[2001:db8::99]:80', '198.51.100.7:9'];

const running: RunningPicker[] = [];
after(async () => {
  closeClients();
  await Promise.all(running.map((p) => p.close()));
});
async function start(options: Partial<Parameters<typeof startPicker>[0]> = {}): Promise<RunningPicker> {
  const p = await startPicker({ pool: staticEndpoints(POOL), maxEndpoints: 2, ...options });
  running.push(p);
  return p;
}

test('a request header without a name ends only its stream, with INVALID_ARGUMENT, and is counted; the picker keeps serving', async () => {
  const p = await start();
  const client = extProcClient(p.address);
  const nameless: HeaderValue = { raw_value: Buffer.from('x') };
  const bad = await exchange(client, [{ request_headers: { headers: { headers: [{ key: ':path', raw_value: Buffer.from('/') }, nameless] } } }], 1);
  assert.equal(bad.answers.length, 0);
  assert.deepEqual(ending(bad.last), ['INVALID_ARGUMENT', 'request_headers.headers.headers[1].key: the header has no name']);
  assert.equal(p.picker.stats().invalidMessages, 1);
  await stillPicking(p);
});

test('bytes that are no ProcessingRequest end their stream with INVALID_ARGUMENT, and are counted', async () => {
  const p = await start();
  const { replies, status } = await converse(p.address, [Buffer.from([0x12, 0x05, 0x0a])]);
  assert.deepEqual(replies, []);
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
  assert.match(status.details, /^ProcessingRequest: not a protobuf ProcessingRequest \(/);
  assert.equal(p.picker.stats().invalidMessages, 1);
});

test('served values that are not pool members are ignored and counted; only members are kept', async () => {
  const p = await start();
  const client = extProcClient(p.address);
  // Distinct, large, never members: a picker that keeps each one grows without bound.
  const strangers = [...Array.from({ length: 300 }, (_, i) => `${i}:${'9'.repeat(16 * 1024)}`), ...FOREIGN, ' 10.0.0.1:8000', '10.0.0.01:8000'];
  for (const value of [...strangers, POOL[0] as string, POOL[1] as string, POOL[0] as string]) {
    const { answers, session } = await exchange(client, [headers({}, false), responseHeaders({ served: value })], 2);
    session.finish();
    session.cancel();
    assert.equal(answers[1]?.response, 'response_headers', 'the response path is answered either way');
  }
  const stats = p.picker.stats();
  assert.deepEqual(stats.served, { '10.0.0.1:8000': 2, '10.0.0.2:8000': 1 });
  assert.equal(stats.ignoredServed, strangers.length);
});

/** The picker still answers a plain request with pool members only. */
async function stillPicking(p: RunningPicker): Promise<void> {
  const names = named(await ask(extProcClient(p.address), headers()));
  assert.ok(names.length > 0 && names.every((e) => POOL.includes(e)), `still picking: ${names.join(',')}`);
}

// ---- fuzzing the stream over real gRPC ----

/** One stream: every message sent (structured, or raw bytes as a frame), half-closed, read to its status. */
const PHASES = ['request_headers', 'request_body', 'request_trailers', 'response_headers', 'response_body', 'response_trailers'] as const;

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...POOL, ...FOREIGN, '', ' ', '10.0.0.1', '[::1', ':8000', `${POOL[0]},${FOREIGN[0]}`));
const pbValue: fc.Arbitrary<PbValue> = fc.letrec<{ value: PbValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: text }),
    fc.record({ numberValue: fc.double({ noNaN: true }) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.constant({ nullValue: 0 }),
    fc.constant({}),
    fc.record({ listValue: fc.record({ values: fc.array(tie('value'), { maxLength: 4 }) }) }),
    fc.record({ structValue: fc.record({ fields: fc.dictionary(text, tie('value'), { maxKeys: 3 }) }) }),
  ),
})).value;
const struct = (keys: string[]) => fc.record({ fields: fc.dictionary(fc.oneof(fc.constantFrom(...keys), text), pbValue, { maxKeys: 3 }) });
const metadataContext = fc.record({
  filter_metadata: fc.dictionary(
    fc.oneof(fc.constantFrom('envoy.lb', 'envoy.lb.subset_hint'), text),
    struct(['x-gateway-destination-endpoint-served', 'x-gateway-destination-endpoint-subset', 'x-gateway-destination-endpoint']),
    { maxKeys: 3 },
  ),
});
const headerValue = fc.record(
  {
    key: fc.oneof(text, fc.constantFrom(':path', 'x-gateway-destination-endpoint', 'x-session-id', 'X-Gateway-Destination-Endpoint')),
    value: text,
    raw_value: fc.uint8Array({ maxLength: 16 }),
  },
  { requiredKeys: [] },
);
const headerMap = fc.record({ headers: fc.array(headerValue, { maxLength: 5 }) }, { requiredKeys: [] });
const body = fc.record({ body: fc.uint8Array({ maxLength: 32 }), end_of_stream: fc.boolean() }, { requiredKeys: [] });
const phaseMessage: fc.Arbitrary<ProcessingRequest> = fc.oneof(
  fc.record({ request_headers: fc.record({ headers: headerMap, end_of_stream: fc.boolean() }, { requiredKeys: [] }) }),
  fc.record({ response_headers: fc.record({ headers: headerMap, end_of_stream: fc.boolean() }, { requiredKeys: [] }) }),
  fc.record({ request_body: body }),
  fc.record({ response_body: body }),
  fc.record({ request_trailers: fc.record({ trailers: headerMap }, { requiredKeys: [] }) }),
  fc.record({ response_trailers: fc.record({ trailers: headerMap }, { requiredKeys: [] }) }),
  fc.constant({}),
);
const message = fc
  .tuple(phaseMessage, fc.option(metadataContext, { nil: undefined }))
  .map(([m, metadata_context]) => (metadata_context ? { ...m, metadata_context } : m));

function phaseOf(m: ProcessingRequest): string | undefined {
  return PHASES.find((p) => m[p] !== undefined);
}

/** Every endpoint an answer names; header and metadata must agree. */
function named(r: ProcessingResponse): string[] {
  const { header, metadata } = endpointOf(r);
  if (header !== undefined && metadata !== undefined) assert.equal(header, metadata, 'header and metadata agree');
  const value = metadata ?? header;
  if (value === undefined) return [];
  const { endpoints, errors } = parseEndpointList(value, { strict: true });
  assert.deepEqual(errors, [], value);
  return endpoints.map((e) => e.address);
}

/** What holds whatever was sent: a protocol answer per message in order, or INVALID_ARGUMENT; never a foreign endpoint. */
function checkStream(sent: Array<ProcessingRequest | Uint8Array>, replies: ProcessingResponse[], status: grpc.StatusObject): void {
  assert.ok(status.code === grpc.status.OK || status.code === grpc.status.INVALID_ARGUMENT, `stream ended with ${grpc.status[status.code]}: ${status.details}`);
  assert.ok(replies.length <= sent.length);
  replies.forEach((reply, i) => {
    const m = sent[i] as ProcessingRequest | Uint8Array;
    if (reply.response === 'immediate_response') {
      assert.ok([503, 429].includes(reply.immediate_response?.status?.code ?? 0), JSON.stringify(reply.immediate_response));
      assert.equal(i, replies.length - 1, 'nothing follows an ImmediateResponse');
      assert.equal(status.code, grpc.status.OK);
    } else if (!(m instanceof Uint8Array)) assert.equal(reply.response, phaseOf(m), `answer ${i} answers message ${i}`);
    for (const e of named(reply)) assert.ok(POOL.includes(e), `${e} is not a pool member`);
  });
  const last = replies.at(-1);
  if (status.code === grpc.status.OK && last?.response !== 'immediate_response') assert.equal(replies.length, sent.length, 'every message answered');
  if (status.code === grpc.status.INVALID_ARGUMENT) assert.ok(status.details.length > 0);
}

const FUZZ = { numRuns: 150, interruptAfterTimeLimit: 20_000, markInterruptAsFailure: false } as const;

test('fuzz: arbitrary message shapes and orders never end the process, never name a foreign endpoint', async () => {
  const p = await start({ strategy: 'consistent-hash', hashHeader: 'x-session-id', maxInFlight: 1000 });
  await fc.assert(
    fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 8 }), async (sent) => {
      const { replies, status } = await converse(p.address, sent);
      checkStream(sent, replies, status);
    }),
    FUZZ,
  );
  // Each conversation waited for its status, which is sent after the pick is released.
  assert.equal(p.picker.stats().inFlight, 0, 'every stream released its pick');
  await stillPicking(p);
});

test('fuzz: raw bytes between messages never end the process', async () => {
  const p = await start();
  const frame = fc.oneof(message, fc.uint8Array({ maxLength: 48 }));
  await fc.assert(
    fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 6 }), async (sent) => {
      const { replies, status } = await converse(p.address, sent);
      checkStream(sent, replies, status);
    }),
    FUZZ,
  );
  await stillPicking(p);
});

const endpointList = fc.subarray([...POOL, ...FOREIGN, '10.0.0.1']);
const wellFormedExchange: fc.Arbitrary<ProcessingRequest[]> = fc
  .record({
    subset: fc.option(
      fc.oneof(
        endpointList,
        endpointList.map((l) => l.join(',')),
      ),
      { nil: undefined },
    ),
    requestChunks: fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength: 3 }),
    requestTrailers: fc.boolean(),
    respond: fc.boolean(),
    served: fc.option(fc.constantFrom(...POOL, ...FOREIGN), { nil: undefined }),
    responseChunks: fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength: 3 }),
    responseTrailers: fc.boolean(),
  })
  .map((x) => {
    const request = [headers({}, x.requestChunks.length === 0 && !x.requestTrailers, x.subset), ...streamed('request', x.requestChunks, x.requestTrailers)];
    if (!x.respond) return request;
    const respondHeaders = responseHeaders({
      ...(x.served === undefined ? {} : { served: x.served }),
      endOfStream: x.responseChunks.length === 0 && !x.responseTrailers,
    });
    return [...request, respondHeaders, ...streamed('response', x.responseChunks, x.responseTrailers)];
  });

/** A body as Envoy streams it, then trailers if any: the last chunk ends the stream only when no trailers follow. */
function streamed(path: 'request' | 'response', chunks: Uint8Array[], trailers: boolean): ProcessingRequest[] {
  const body = chunks.map((b, i): ProcessingRequest => ({ [`${path}_body`]: { body: b, end_of_stream: !trailers && i === chunks.length - 1 } }));
  return trailers ? [...body, { [`${path}_trailers`]: { trailers: { headers: [] } } }] : body;
}

test('fuzz: every well-formed exchange, as Envoy sends it, is answered in full', async () => {
  const p = await start();
  await fc.assert(
    fc.asyncProperty(wellFormedExchange, async (sent) => {
      const { replies, status } = await converse(p.address, sent);
      assert.equal(status.code, grpc.status.OK, status.details);
      checkStream(sent, replies, status);
    }),
    FUZZ,
  );
});
