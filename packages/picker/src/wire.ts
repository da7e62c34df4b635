/**
 * The ext_proc messages on the picker's hot path, read and written straight from and to protobuf
 * wire bytes. A decision used to pay for protobuf.js building every field of a ProcessingRequest
 * as objects (then proto-loader's conversion of them) and for the same walk in reverse on the
 * answer; the picker reads a handful of fields and writes one of a few fixed shapes.
 *
 * `decodeProcessingRequest` reads only what `readMessage` looks at — the phase, header names and
 * values, bodies and their end-of-stream flags, and the two `metadata_context` entries of the
 * protocol — into the same plain shape proto-loader gives, so `readMessage` stays the one place
 * that checks messages. Everything else is skipped by its framing, which is still checked: bytes
 * that are not protobuf throw `WireError`. The encoders write the answers as protobuf.js would;
 * `wire.test.ts` holds both directions to protobuf.js's own decoding of the same messages.
 */
import { EPP } from '@extlb/types';
import type { HeaderValue, HttpBody, HttpHeaders, PbStruct, PbValue, ProcessingRequest } from './messages.js';
import { OVERWRITE_IF_EXISTS_OR_ADD } from './messages.js';

export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

/*
 * The reader is one cursor over the message being decoded (decoding is synchronous and never
 * re-entered), and each message is a loop over its fields: no reader object, closure or bounds
 * pair is made per nested message, since a decision's garbage is a good part of its cost.
 */
let pos = 0;

/** A varint; values past 2^32 keep only their low bits, as for the lengths and flags read here. */
function varint(buf: Buffer, end: number): number {
  let result = 0;
  let shift = 0;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new WireError(`varint runs past the end at offset ${pos}`);
    const b = buf[pos++] as number;
    if (shift < 32) result |= (b & 0x7f) << shift;
    shift += 7;
    if (b < 0x80) return result >>> 0;
  }
  throw new WireError(`varint longer than 10 bytes at offset ${pos}`);
}

/** A length-delimited field's length, checked against the enclosing message; the cursor is left at its payload. Returns the payload's end. */
function lengthEnd(buf: Buffer, end: number): number {
  const n = varint(buf, end);
  if (n > end - pos) throw new WireError(`a field of ${n} bytes runs past the end of its message at offset ${pos}`);
  return pos + n;
}

function advance(n: number, end: number): void {
  if (n > end - pos) throw new WireError(`a fixed-size field runs past the end at offset ${pos}`);
  pos += n;
}

/** Skips one field's payload by its wire type; a group (long deprecated, but protobuf.js skips it) up to its end tag. */
function skip(buf: Buffer, wireType: number, end: number): void {
  switch (wireType) {
    case VARINT:
      varint(buf, end);
      return;
    case FIXED64:
      advance(8, end);
      return;
    case LENGTH:
      pos = lengthEnd(buf, end);
      return;
    case FIXED32:
      advance(4, end);
      return;
    case START_GROUP:
      for (;;) {
        const inner = varint(buf, end) & 7;
        if (inner === END_GROUP) return;
        skip(buf, inner, end);
      }
    default:
      throw new WireError(`wire type ${wireType} is not valid at offset ${pos}`);
  }
}

/** The next field's tag, checked for a field number; the cursor is left at its payload. */
function tag(buf: Buffer, end: number): number {
  const t = varint(buf, end);
  if (t >>> 3 === 0) throw new WireError(`field number 0 at offset ${pos}`);
  return t;
}

function expect(wireType: number, want: number, what: string): void {
  if (wireType !== want) throw new WireError(`${what} has wire type ${wireType}, expected ${want}`);
}

/** A length-delimited field the decoder reads into: its wire type checked, the cursor at its payload. Returns the payload's end. */
function enter(buf: Buffer, t: number, end: number, what: string): number {
  expect(t & 7, LENGTH, what);
  return lengthEnd(buf, end);
}

function flag(buf: Buffer, t: number, end: number): boolean {
  expect(t & 7, VARINT, 'end_of_stream');
  return varint(buf, end) !== 0;
}

const PHASE_FIELDS = ['', '', 'request_headers', 'response_headers', 'request_body', 'response_body', 'request_trailers', 'response_trailers'] as const;
const METADATA_CONTEXT = 8;

/** Decodes the parts of a ProcessingRequest the picker reads. Throws `WireError` on bytes that are no protobuf message. */
export function decodeProcessingRequest(buf: Buffer): ProcessingRequest {
  const out: ProcessingRequest = {};
  const end = buf.length;
  pos = 0;
  while (pos < end) {
    const t = tag(buf, end);
    const number = t >>> 3;
    if (number >= 2 && number <= 7) {
      const e = enter(buf, t, end, PHASE_FIELDS[number] as string);
      if (number <= 3) out[PHASE_FIELDS[number] as 'request_headers'] = httpHeaders(buf, e);
      else if (number <= 5) out[PHASE_FIELDS[number] as 'request_body'] = httpBody(buf, e);
      else out[PHASE_FIELDS[number] as 'request_trailers'] = checked(buf, e);
    } else if (number === METADATA_CONTEXT) {
      out.metadata_context = metadataContext(buf, enter(buf, t, end, 'metadata_context'));
    } else skip(buf, t & 7, end);
  }
  return out;
}

/** A message the picker does not read into, from the cursor to `end`: only its framing is checked. */
function checked(buf: Buffer, end: number): Record<string, never> {
  while (pos < end) skip(buf, tag(buf, end) & 7, end);
  return {};
}

function httpHeaders(buf: Buffer, end: number): HttpHeaders {
  const out: HttpHeaders = {};
  while (pos < end) {
    const t = tag(buf, end);
    const number = t >>> 3;
    if (number === 1) {
      const e = enter(buf, t, end, 'headers');
      const headers: HeaderValue[] = [];
      while (pos < e) {
        const h = tag(buf, e);
        if (h >>> 3 === 1) headers.push(headerValue(buf, enter(buf, h, e, 'headers.headers')));
        else skip(buf, h & 7, e);
      }
      out.headers = { headers };
    } else if (number === 3) out.end_of_stream = flag(buf, t, end);
    else skip(buf, t & 7, end);
  }
  return out;
}

function headerValue(buf: Buffer, end: number): HeaderValue {
  const out: HeaderValue = {};
  while (pos < end) {
    const t = tag(buf, end);
    const number = t >>> 3;
    if (number < 1 || number > 3) {
      skip(buf, t & 7, end);
      continue;
    }
    const e = enter(buf, t, end, 'header');
    if (number === 1) out.key = buf.toString('utf8', pos, e);
    else if (number === 2) out.value = buf.toString('utf8', pos, e);
    else out.raw_value = buf.subarray(pos, e);
    pos = e;
  }
  return out;
}

function httpBody(buf: Buffer, end: number): HttpBody {
  const out: HttpBody = {};
  while (pos < end) {
    const t = tag(buf, end);
    const number = t >>> 3;
    if (number === 1) {
      const e = enter(buf, t, end, 'body');
      out.body = buf.subarray(pos, e);
      pos = e;
    } else if (number === 2) {
      expect(t & 7, VARINT, 'end_of_stream');
      out.end_of_stream = varint(buf, end) !== 0;
    } else skip(buf, t & 7, end);
  }
  return out;
}

/** The entries of the two namespaces the protocol uses; every other namespace is skipped. */
const WANTED: ReadonlyMap<string, string> = new Map([
  [EPP.subsetNamespace, EPP.subsetKey],
  [EPP.namespace, EPP.servedKey],
]);

/** Where the last `mapEntry` found its value (start, end), -1 when it had none. */
let valueStart = -1;
let valueEnd = -1;

/** A map entry (key = 1, a string; value = 2, a message), from the cursor to `end`: returns the key, the value's bounds in `valueStart`/`valueEnd`. */
function mapEntry(buf: Buffer, end: number, what: string): string {
  let key = '';
  valueStart = -1;
  valueEnd = -1;
  while (pos < end) {
    const t = tag(buf, end);
    const number = t >>> 3;
    if (number === 1) {
      const e = enter(buf, t, end, `${what} key`);
      key = buf.toString('utf8', pos, e);
      pos = e;
    } else if (number === 2) {
      valueEnd = enter(buf, t, end, `${what} value`);
      valueStart = pos;
      pos = valueEnd;
    } else skip(buf, t & 7, end);
  }
  return key;
}

function metadataContext(buf: Buffer, end: number): { filter_metadata: Record<string, PbStruct> } {
  const filter: Record<string, PbStruct> = {};
  while (pos < end) {
    const t = tag(buf, end);
    if (t >>> 3 !== 1) {
      skip(buf, t & 7, end);
      continue;
    }
    const e = enter(buf, t, end, 'filter_metadata');
    // A later entry for a key replaces an earlier one.
    const key = mapEntry(buf, e, 'filter_metadata');
    const wantedKey = WANTED.get(key);
    if (valueStart < 0) filter[key] = {};
    else {
      pos = valueStart;
      filter[key] = wantedKey !== undefined ? struct(buf, valueEnd, wantedKey) : checkedStruct(buf, valueEnd);
    }
    pos = e;
  }
  return { filter_metadata: filter };
}

/** A Struct of a namespace the picker does not read: framing checked, no entries kept. */
function checkedStruct(buf: Buffer, end: number): PbStruct {
  checked(buf, end);
  return { fields: {} };
}

/** A Struct, keeping only the entry `wanted` (decoded shallowly: see `value`). */
function struct(buf: Buffer, end: number, wanted: string): PbStruct {
  const out: Record<string, PbValue> = {};
  while (pos < end) {
    const t = tag(buf, end);
    if (t >>> 3 !== 1) {
      skip(buf, t & 7, end);
      continue;
    }
    const e = enter(buf, t, end, 'fields');
    const key = mapEntry(buf, e, 'fields');
    if (key === wanted) {
      if (valueStart < 0) out[key] = {};
      else {
        pos = valueStart;
        out[key] = value(buf, valueEnd, 1);
      }
    }
    pos = e;
  }
  return { fields: out };
}

/**
 * A google.protobuf.Value with every kind it carries (as protobuf.js leaves them), to the depth the
 * protocol's values have: a string, or a list of strings. Deeper structs and lists are checked for
 * framing and stand as empty ones, which is all `readMessage` asks of them (what kind they are).
 */
function value(buf: Buffer, end: number, depth: number): PbValue {
  const out: PbValue = {};
  while (pos < end) {
    const t = tag(buf, end);
    const wireType = t & 7;
    switch (t >>> 3) {
      case 1:
        expect(wireType, VARINT, 'null_value');
        out.nullValue = varint(buf, end);
        break;
      case 2:
        expect(wireType, FIXED64, 'number_value');
        if (end - pos < 8) throw new WireError('number_value runs past the end');
        out.numberValue = buf.readDoubleLE(pos);
        pos += 8;
        break;
      case 3: {
        const e = enter(buf, t, end, 'string_value');
        out.stringValue = buf.toString('utf8', pos, e);
        pos = e;
        break;
      }
      case 4:
        expect(wireType, VARINT, 'bool_value');
        out.boolValue = varint(buf, end) !== 0;
        break;
      case 5:
        checked(buf, enter(buf, t, end, 'struct_value'));
        out.structValue = {};
        break;
      case 6: {
        const e = enter(buf, t, end, 'list_value');
        const values: PbValue[] = [];
        while (pos < e) {
          const v = tag(buf, e);
          if (v >>> 3 !== 1) {
            skip(buf, v & 7, e);
            continue;
          }
          const ve = enter(buf, v, e, 'list_value.values');
          values.push(depth > 0 ? value(buf, ve, depth - 1) : (checked(buf, ve) as PbValue));
        }
        out.listValue = { values };
        break;
      }
      default:
        skip(buf, wireType, end);
    }
  }
  return out;
}

// ---- writing ----

function varintBytes(n: number): number[] {
  const out: number[] = [];
  let v = n >>> 0;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** A length-delimited field: tag, length, payload. */
function ld(field: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | LENGTH, ...varintBytes(payload.length)]), payload]);
}

function varintField(field: number, value: number): Buffer {
  return Buffer.from([(field << 3) | VARINT, ...varintBytes(value)]);
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Where an answer to request headers names its endpoints. */
export type AnswerPlaces = 'both' | 'metadata' | 'header';

/**
 * The answer to request headers naming `value` (as `endpointAnswer` builds it): the header set
 * (or removed, when answering in metadata only), the route cache cleared, and the value in
 * `envoy.lb` dynamic metadata unless answering in the header only.
 */
export function encodeEndpointAnswer(value: string, places: AnswerPlaces): Buffer {
  const shape = ANSWER_SHAPES[places];
  const valueBytes = Buffer.byteLength(value, 'utf8');
  const out = Buffer.allocUnsafe(partsSize(shape, valueBytes));
  writeParts(out, 0, shape, value, valueBytes);
  return out;
}

/**
 * A message with one varying string, as its parts: bytes that never change (encoded once), the
 * value as a length-delimited field of the given number, or a nested message. An answer is then
 * one buffer sized and written in one pass, whatever the endpoint list: only the value and the
 * lengths around it vary. Every field number here is below 16, so each tag is one byte.
 */
type ShapePart = { bytes: Buffer } | { value: number } | { field: number; parts: ShapePart[] };

function partsSize(parts: readonly ShapePart[], valueBytes: number): number {
  let size = 0;
  for (const p of parts) {
    if ('bytes' in p) size += p.bytes.length;
    else {
      const inner = 'value' in p ? valueBytes : partsSize(p.parts, valueBytes);
      size += 1 + varintSize(inner) + inner;
    }
  }
  return size;
}

function writeParts(out: Buffer, at: number, parts: readonly ShapePart[], value: string, valueBytes: number): number {
  let pos = at;
  for (const p of parts) {
    if ('bytes' in p) {
      out.set(p.bytes, pos);
      pos += p.bytes.length;
    } else if ('value' in p) {
      out[pos++] = (p.value << 3) | LENGTH;
      pos = writeVarint(out, pos, valueBytes);
      pos += out.write(value, pos, valueBytes, 'utf8');
    } else {
      out[pos++] = (p.field << 3) | LENGTH;
      pos = writeVarint(out, pos, partsSize(p.parts, valueBytes));
      pos = writeParts(out, pos, p.parts, value, valueBytes);
    }
  }
  return pos;
}

/** The answer's shape (as `endpointAnswer` builds the message) for each choice of places. */
function answerShape(places: AnswerPlaces): ShapePart[] {
  // HeaderMutation: set_headers (1) { header (1) { key (1), raw_value (3) }, append_action (3) }, or remove_headers (2).
  const mutation: ShapePart =
    places === 'metadata'
      ? { bytes: ld(2, utf8(EPP.header)) }
      : { field: 1, parts: [{ field: 1, parts: [{ bytes: ld(1, utf8(EPP.header)) }, { value: 3 }] }, { bytes: varintField(3, OVERWRITE_IF_EXISTS_OR_ADD) }] };
  // request_headers (1) { response (1) { header_mutation (2), clear_route_cache (5) } }
  const headersResponse: ShapePart = { field: 1, parts: [{ field: 1, parts: [{ field: 2, parts: [mutation] }, { bytes: varintField(5, 1) }] }] };
  if (places === 'header') return [headersResponse];
  // dynamic_metadata (8): Struct { fields (1) { key (1): namespace, value (2): Value { struct_value (5): Struct { fields (1) { key, value: { string_value (3) } } } } } }
  const entry: ShapePart = { field: 1, parts: [{ bytes: ld(1, utf8(EPP.endpointKey)) }, { field: 2, parts: [{ value: 3 }] }] };
  const metadata: ShapePart = {
    field: 8,
    parts: [{ field: 1, parts: [{ bytes: ld(1, utf8(EPP.namespace)) }, { field: 2, parts: [{ field: 5, parts: [entry] }] }] }],
  };
  return [headersResponse, metadata];
}

const ANSWER_SHAPES: Record<AnswerPlaces, ShapePart[]> = { both: answerShape('both'), metadata: answerShape('metadata'), header: answerShape('header') };

const BODY_FIELD = { request: 3, response: 4 } as const;

/** Bytes a varint takes. */
function varintSize(n: number): number {
  let size = 1;
  for (let v = n >>> 0; v >= 0x80; v >>>= 7) size++;
  return size;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  let v = n >>> 0;
  let pos = at;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/**
 * A body chunk passed straight back as a FULL_DUPLEX_STREAMED `streamed_response`
 * (`ProcessingResponse.{request,response}_body.response.body_mutation.streamed_response`), written
 * into one buffer with a single copy of the body, since chunks can be large.
 */
export function encodeStreamedBody(path: 'request' | 'response', body: Uint8Array, endOfStream: boolean): Buffer {
  // StreamedBodyResponse { bytes body = 1; bool end_of_stream = 2 }
  const streamed = 1 + varintSize(body.length) + body.length + 2;
  // Outermost first: the phase's BodyResponse, its CommonResponse (1), body_mutation (3), streamed_response (3).
  const nesting = [BODY_FIELD[path], 1, 3, 3];
  const lengths: number[] = [];
  let inner = streamed;
  for (let i = nesting.length - 1; i >= 0; i--) {
    lengths[i] = inner;
    inner += 1 + varintSize(inner);
  }
  const out = Buffer.allocUnsafe(inner);
  let pos = 0;
  for (let i = 0; i < nesting.length; i++) {
    out[pos++] = ((nesting[i] as number) << 3) | LENGTH;
    pos = writeVarint(out, pos, lengths[i] as number);
  }
  out[pos++] = (1 << 3) | LENGTH;
  pos = writeVarint(out, pos, body.length);
  out.set(body, pos);
  pos += body.length;
  out[pos++] = (2 << 3) | VARINT;
  out[pos] = endOfStream ? 1 : 0;
  return out;
}

/** The answers that never change, encoded once. */
export const FIXED_ANSWERS = {
  /** A body chunk acknowledged without a mutation (STREAMED and BUFFERED modes). */
  requestBody: ld(3, ld(1, Buffer.alloc(0))),
  responseBody: ld(4, ld(1, Buffer.alloc(0))),
  responseHeaders: ld(2, ld(1, Buffer.alloc(0))),
  requestTrailers: ld(5, Buffer.alloc(0)),
  responseTrailers: ld(6, Buffer.alloc(0)),
} as const;
