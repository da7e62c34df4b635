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
import { endpointAnswer } from '../src/server.js';
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
  for (const value of ['10.0.0.1:8000', '10.0.0.1:8000,[2001:db8::1]:80,10.0.0.3:1', 'x'.repeat(300)]) {
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
