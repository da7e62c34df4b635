// The picker's own reading and writing of ext_proc messages, held to protobuf.js: what the picker
// reads from any request is what it would read from protobuf.js's decoding of the same bytes, and
// every answer it encodes decodes, with protobuf.js, to the message it stands for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { EPP } from '@extlb/types';
import type { PbValue, ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { loadProtos } from '../src/protos.js';
import { readMessage } from '../src/requests.js';
import { GRPC_TRANSPORTS, endpointAnswer, startPicker } from '../src/server.js';
import { staticEndpoints } from '../src/pool-members.js';
import { closeClients, converse } from './helpers.js';
import { FIXED_ANSWERS, WireError, decodeProcessingRequest, encodeEndpointAnswer, encodeStreamedBody } from '../src/wire.js';

const method = loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>;
const serialize = (m: ProcessingRequest): Buffer => method.requestSerialize(m);
const decodeResponse = (b: Buffer): ProcessingResponse => method.responseDeserialize(b);
const encodeResponse = (m: ProcessingResponse): Buffer =>
  (loadProtos().extProc.Process as grpc.MethodDefinition<unknown, ProcessingResponse>).responseSerialize(m);
// protobuf.js's own decoding of a request, as the picker used to read it.
const protobufjsDecode = (b: Buffer): unknown =>
  (loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>).requestDeserialize(b);

/** What the picker reads, or the error it ends the stream with. */
function picked(raw: unknown): unknown {
  try {
    const m = readMessage(raw);
    return m.phase === 'request_body' || m.phase === 'response_body' ? { ...m, body: Buffer.from(m.body).toString('hex') } : m;
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const text = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('10.0.0.1:80', 'a,b', EPP.namespace, EPP.subsetNamespace, EPP.servedKey, EPP.subsetKey));
const value: fc.Arbitrary<PbValue> = fc.letrec<{ v: PbValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.record({ stringValue: text }),
    fc.record({ numberValue: fc.double({ noNaN: true }) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.constant({ nullValue: 0 }),
    fc.record({ listValue: fc.record({ values: fc.array(tie('v'), { maxLength: 3 }) }) }),
    fc.record({ structValue: fc.record({ fields: fc.dictionary(text, tie('v'), { maxKeys: 2 }) }) }),
  ),
})).v;
const struct = fc.record({ fields: fc.dictionary(fc.oneof(fc.constantFrom(EPP.servedKey, EPP.subsetKey), text), value, { maxKeys: 3 }) });
const metadata = fc.record({ filter_metadata: fc.dictionary(fc.oneof(fc.constantFrom(EPP.namespace, EPP.subsetNamespace), text), struct, { maxKeys: 3 }) });
const header = fc.record({ key: text, value: text, raw_value: fc.uint8Array({ maxLength: 8 }) }, { requiredKeys: [] });
const headerMap = fc.record({ headers: fc.array(header, { maxLength: 4 }) }, { requiredKeys: [] });
const body = fc.record({ body: fc.uint8Array({ maxLength: 16 }), end_of_stream: fc.boolean() }, { requiredKeys: [] });
const request: fc.Arbitrary<ProcessingRequest> = fc
  .tuple(
    fc.oneof(
      fc.record({ request_headers: fc.record({ headers: headerMap, end_of_stream: fc.boolean() }, { requiredKeys: [] }) }),
      fc.record({ response_headers: fc.record({ headers: headerMap, end_of_stream: fc.boolean() }, { requiredKeys: [] }) }),
      fc.record({ request_body: body }),
      fc.record({ response_body: body }),
      fc.record({ request_trailers: fc.record({ trailers: headerMap }, { requiredKeys: [] }) }),
      fc.constant({}),
    ),
    fc.option(metadata, { nil: undefined }),
  )
  .map(([m, metadata_context]) => (metadata_context ? { ...m, metadata_context } : m));

test('property: the picker reads from its own decoding exactly what it reads from protobuf.js decoding', () => {
  fc.assert(
    fc.property(request, (m) => {
      const bytes = serialize(m);
      assert.deepEqual(picked(decodeProcessingRequest(bytes)), picked(protobufjsDecode(bytes)));
    }),
    { numRuns: 500 },
  );
});

test('property: two phases in one message are refused alike (the bytes of two messages, concatenated)', () => {
  fc.assert(
    fc.property(request, request, (a, b) => {
      const bytes = Buffer.concat([serialize(a), serialize(b)]);
      assert.deepEqual(picked(decodeProcessingRequest(bytes)), picked(protobufjsDecode(bytes)));
    }),
    { numRuns: 300 },
  );
});

test('bytes that are not protobuf throw WireError naming the offset', () => {
  for (const bytes of [[0x12, 0x05, 0x0a], [0x12], [0x0f], [0x00, 0x01], [0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]]) {
    assert.throws(() => decodeProcessingRequest(Buffer.from(bytes)), WireError, Buffer.from(bytes).toString('hex'));
  }
  // A known field with the wrong wire type is refused too.
  assert.throws(() => decodeProcessingRequest(Buffer.from([0x10, 0x01])), /request_headers has wire type 0, expected 2/);
});

test('the encoded answers decode, with protobuf.js, to the messages they stand for', () => {
  for (const value of ['10.0.0.1:8000', '10.0.0.1:8000,[2001:db8::1]:80,10.0.0.3:1', 'x'.repeat(300), 'é'.repeat(70), 'y'.repeat(20_000)]) {
    for (const places of ['both', 'metadata', 'header'] as const) {
      assert.deepEqual(
        decodeResponse(encodeEndpointAnswer(value, places)),
        decodeResponse(encodeResponse(endpointAnswer(value, places))),
        `${value} ${places}`,
      );
    }
  }
  for (const bytes of [0, 1, 127, 128, 300, 70_000]) {
    const chunk = Buffer.alloc(bytes, 7);
    for (const path of ['request', 'response'] as const) {
      for (const end of [true, false]) {
        const response = { body_mutation: { streamed_response: { body: chunk, end_of_stream: end } } };
        const expected = path === 'request' ? { request_body: { response } } : { response_body: { response } };
        assert.deepEqual(decodeResponse(encodeStreamedBody(path, chunk, end)), decodeResponse(encodeResponse(expected)));
      }
    }
  }
  const fixed: Array<[Buffer, ProcessingResponse]> = [
    [FIXED_ANSWERS.requestBody, { request_body: { response: {} } }],
    [FIXED_ANSWERS.responseBody, { response_body: { response: {} } }],
    [FIXED_ANSWERS.responseHeaders, { response_headers: { response: {} } }],
    [FIXED_ANSWERS.requestTrailers, { request_trailers: {} }],
    [FIXED_ANSWERS.responseTrailers, { response_trailers: {} }],
  ];
  for (const [bytes, message] of fixed) assert.deepEqual(decodeResponse(bytes), decodeResponse(encodeResponse(message)));
});

// ---- bytes written field by field, with fields the picker does not know at every level ----

function varintBytes(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}
const tagOf = (field: number, wireType: number): Buffer => varintBytes(field * 8 + wireType);
const ldField = (field: number, payload: Buffer): Buffer => Buffer.concat([tagOf(field, 2), varintBytes(payload.length), payload]);
const strField = (field: number, s: string): Buffer => ldField(field, Buffer.from(s));

/** Field numbers no message on the picker's path declares, some repeated so unknown fields recur (unpacked repeated). */
const unknownNumber = fc.constantFrom(1000, 1001, 2 ** 20, 536_870_911);
/** One unknown field of any wire type: varints up to 10 bytes, fixed 64/32, bytes, a packed run of varints, a group (which protobuf.js skips). */
const unknownField: fc.Arbitrary<Buffer> = fc.letrec<{ field: Buffer }>((tie) => ({
  field: fc.oneof(
    { depthSize: 'small' },
    fc.tuple(unknownNumber, fc.oneof(fc.nat(), fc.constant(2 ** 53 - 1))).map(([n, v]) => Buffer.concat([tagOf(n, 0), varintBytes(v)])),
    fc.tuple(unknownNumber, fc.uint8Array({ minLength: 8, maxLength: 8 })).map(([n, b]) => Buffer.concat([tagOf(n, 1), b])),
    fc.tuple(unknownNumber, fc.uint8Array({ minLength: 4, maxLength: 4 })).map(([n, b]) => Buffer.concat([tagOf(n, 5), b])),
    fc.tuple(unknownNumber, fc.uint8Array({ maxLength: 12 })).map(([n, b]) => ldField(n, Buffer.from(b))),
    fc.tuple(unknownNumber, fc.array(fc.nat(), { maxLength: 4 })).map(([n, vs]) => ldField(n, Buffer.concat(vs.map(varintBytes)))),
    fc.tuple(unknownNumber, fc.array(tie('field'), { maxLength: 2 })).map(([n, inner]) => Buffer.concat([tagOf(n, 3), ...inner, tagOf(n, 4)])),
  ),
})).field;

/** A message of `known` fields with unknown ones before, between and after them. */
const withUnknowns = (known: fc.Arbitrary<Buffer[]>): fc.Arbitrary<Buffer> =>
  fc.tuple(known, fc.array(unknownField, { maxLength: 3 }), fc.nat(8)).map(([fields, unknown, at]) => {
    const out = [...fields];
    out.splice(at % (out.length + 1), 0, ...unknown);
    return Buffer.concat(out);
  });

const headerWith = (name: fc.Arbitrary<string | undefined>): fc.Arbitrary<Buffer> =>
  withUnknowns(
    fc
      .record({ key: name, value: fc.option(text, { nil: undefined }), raw: fc.option(fc.uint8Array({ maxLength: 8 }), { nil: undefined }) })
      .map(({ key, value, raw }) => [
        ...(key === undefined ? [] : [strField(1, key)]),
        ...(value === undefined ? [] : [strField(2, value)]),
        ...(raw === undefined ? [] : [ldField(3, Buffer.from(raw))]),
      ]),
  );
const headerBytes = headerWith(fc.option(text, { nil: undefined }));
const headerMapBytes = withUnknowns(fc.array(headerBytes, { maxLength: 3 }).map((hs) => hs.map((h) => ldField(1, h))));
// end_of_stream may come more than once: the last one counts.
const httpHeadersBytes = withUnknowns(
  fc
    .tuple(fc.option(headerMapBytes, { nil: undefined }), fc.array(fc.boolean(), { maxLength: 2 }))
    .map(([map, ends]) => [...(map === undefined ? [] : [ldField(1, map)]), ...ends.map((e) => Buffer.concat([tagOf(3, 0), varintBytes(e ? 1 : 0)]))]),
);
const valueBytes: fc.Arbitrary<Buffer> = withUnknowns(
  fc.oneof(
    text.map((s) => [strField(3, s)]),
    fc.array(withUnknowns(text.map((s) => [strField(3, s)])), { maxLength: 3 }).map((vs) => [ldField(6, Buffer.concat(vs.map((v) => ldField(1, v))))]),
    fc.boolean().map((b) => [Buffer.concat([tagOf(4, 0), varintBytes(b ? 1 : 0)])]),
  ),
);
const mapEntryBytes = (key: fc.Arbitrary<string>, value: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> =>
  withUnknowns(fc.tuple(key, value).map(([k, v]) => [strField(1, k), ldField(2, v)]));
const structBytes = withUnknowns(
  fc.array(mapEntryBytes(fc.constantFrom(EPP.subsetKey, EPP.servedKey, 'other'), valueBytes), { maxLength: 2 }).map((es) => es.map((e) => ldField(1, e))),
);
const metadataBytes = withUnknowns(
  fc
    .array(mapEntryBytes(fc.constantFrom(EPP.subsetNamespace, EPP.namespace, 'other'), structBytes), { maxLength: 2 })
    .map((es) => es.map((e) => ldField(1, e))),
);
/** request_headers or response_headers, with or without metadata_context, unknown fields everywhere. */
const requestBytes = withUnknowns(
  fc
    .tuple(fc.constantFrom(2, 3), httpHeadersBytes, fc.option(metadataBytes, { nil: undefined }))
    .map(([phase, headers, metadata]) => [ldField(phase, headers), ...(metadata === undefined ? [] : [ldField(8, metadata)])]),
);

test('property: fields the picker does not know (any wire type, packed or repeated, groups) are skipped at every level, as protobuf.js skips them', () => {
  fc.assert(
    fc.property(requestBytes, (bytes) => {
      assert.deepEqual(picked(decodeProcessingRequest(bytes)), picked(protobufjsDecode(bytes)));
    }),
    { numRuns: 1000 },
  );
});

/** What a decoder makes of bytes: the picker's reading, or that it refused them. */
function outcome(decode: (b: Buffer) => unknown, bytes: Buffer): unknown {
  let raw: unknown;
  try {
    raw = decode(bytes);
  } catch {
    return 'refused';
  }
  return picked(raw);
}

test('property: every truncation of a request is refused, or read, alike by both decoders', () => {
  fc.assert(
    fc.property(requestBytes, (bytes) => {
      for (let cut = 0; cut < bytes.length; cut++) {
        const prefix = bytes.subarray(0, cut);
        assert.deepEqual(outcome(decodeProcessingRequest, prefix), outcome(protobufjsDecode, prefix), `cut at ${cut} of ${bytes.toString('hex')}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('over real gRPC, on both transports: a request carrying unknown fields at every level is answered as the same request without them', async () => {
  const session = 'x-session-id';
  // The session header first (consistent-hash reads its first value), so the decision depends on what was decoded.
  const sessionRequest = fc
    .tuple(
      fc.array(headerBytes, { maxLength: 2 }),
      headerWith(fc.constant(session)),
      fc.option(metadataBytes, { nil: undefined }),
      fc.array(unknownField, { maxLength: 2 }),
    )
    .map(([others, first, metadata, unknown]) => {
      const map = Buffer.concat([first, ...others].map((h) => ldField(1, h)));
      const headersMessage = Buffer.concat([ldField(1, map), ...unknown]);
      return Buffer.concat([ldField(2, headersMessage), ...(metadata === undefined ? [] : [ldField(8, metadata)]), ...unknown]);
    });
  const pool = staticEndpoints('10.0.0.1:8000,10.0.0.2:8000,10.0.0.3:8000,[2001:db8::4]:8000');
  for (const transport of GRPC_TRANSPORTS) {
    const picker = await startPicker({ pool, strategy: 'consistent-hash', hashHeader: session, maxEndpoints: 2, transport });
    try {
      await fc.assert(
        fc.asyncProperty(sessionRequest, async (bytes) => {
          const plain = serialize(protobufjsDecode(bytes) as ProcessingRequest);
          const [withUnknown, without] = [await converse(picker.address, [bytes]), await converse(picker.address, [plain])];
          const seen = (c: typeof withUnknown) => ({ replies: c.replies, code: c.status.code, details: c.status.details });
          assert.deepEqual(seen(withUnknown), seen(without), `${transport}: ${bytes.toString('hex')}`);
        }),
        { numRuns: 60 },
      );
    } finally {
      await picker.close();
    }
  }
  closeClients();
});
