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
const FIXED32 = 5;

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint; values past 2^32 keep only their low bits, as for the lengths and flags read here. */
  varint(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError(`varint runs past the end at offset ${this.pos}`);
      const b = this.buf[this.pos++] as number;
      if (shift < 32) result |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) return result >>> 0;
    }
    throw new WireError(`varint longer than 10 bytes at offset ${this.pos}`);
  }

  /** The bounds of a length-delimited field's payload, checked against the enclosing message. */
  length(): [number, number] {
    const n = this.varint();
    const start = this.pos;
    if (n > this.end - start) throw new WireError(`a field of ${n} bytes runs past the end of its message at offset ${start}`);
    this.pos = start + n;
    return [start, start + n];
  }

  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.advance(8);
        return;
      case LENGTH:
        this.length();
        return;
      case FIXED32:
        this.advance(4);
        return;
      default:
        throw new WireError(`wire type ${wireType} is not valid at offset ${this.pos}`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw new WireError(`a fixed-size field runs past the end at offset ${this.pos}`);
    this.pos += n;
  }
}

/** Walks one message's fields, calling `field` for each; fields it does not take are skipped. */
function fields(r: Reader, start: number, end: number, field: (r: Reader, number: number, wireType: number) => boolean): void {
  const sub = new Reader(r.buf, start, end);
  while (sub.pos < sub.end) {
    const tag = sub.varint();
    const number = tag >>> 3;
    const wireType = tag & 7;
    if (number === 0) throw new WireError(`field number 0 at offset ${sub.pos}`);
    if (!field(sub, number, wireType)) sub.skip(wireType);
  }
}

function expect(wireType: number, want: number, what: string): void {
  if (wireType !== want) throw new WireError(`${what} has wire type ${wireType}, expected ${want}`);
}

const PHASE_FIELDS = ['', '', 'request_headers', 'response_headers', 'request_body', 'response_body', 'request_trailers', 'response_trailers'] as const;
const METADATA_CONTEXT = 8;

/** Decodes the parts of a ProcessingRequest the picker reads. Throws `WireError` on bytes that are no protobuf message. */
export function decodeProcessingRequest(buf: Buffer): ProcessingRequest {
  const out: ProcessingRequest = {};
  const r = new Reader(buf, 0, buf.length);
  fields(r, 0, buf.length, (f, number, wireType) => {
    if (number >= 2 && number <= 7) {
      expect(wireType, LENGTH, PHASE_FIELDS[number] as string);
      const [s, e] = f.length();
      if (number <= 3) out[PHASE_FIELDS[number] as 'request_headers'] = httpHeaders(f, s, e);
      else if (number <= 5) out[PHASE_FIELDS[number] as 'request_body'] = httpBody(f, s, e);
      else out[PHASE_FIELDS[number] as 'request_trailers'] = checked(f, s, e);
      return true;
    }
    if (number === METADATA_CONTEXT) {
      expect(wireType, LENGTH, 'metadata_context');
      const [s, e] = f.length();
      out.metadata_context = metadataContext(f, s, e);
      return true;
    }
    return false;
  });
  return out;
}

/** A message the picker does not read into: only its framing is checked. */
function checked(r: Reader, start: number, end: number): Record<string, never> {
  fields(r, start, end, () => false);
  return {};
}

function httpHeaders(r: Reader, start: number, end: number): HttpHeaders {
  const out: HttpHeaders = {};
  fields(r, start, end, (f, number, wireType) => {
    if (number === 1) {
      expect(wireType, LENGTH, 'headers');
      const [s, e] = f.length();
      const headers: HeaderValue[] = [];
      fields(f, s, e, (m, n, w) => {
        if (n !== 1) return false;
        expect(w, LENGTH, 'headers.headers');
        const [hs, he] = m.length();
        headers.push(headerValue(m, hs, he));
        return true;
      });
      out.headers = { headers };
      return true;
    }
    if (number === 3) {
      expect(wireType, VARINT, 'end_of_stream');
      out.end_of_stream = f.varint() !== 0;
      return true;
    }
    return false;
  });
  return out;
}

function headerValue(r: Reader, start: number, end: number): HeaderValue {
  const out: HeaderValue = {};
  fields(r, start, end, (f, number, wireType) => {
    if (number < 1 || number > 3) return false;
    expect(wireType, LENGTH, 'header');
    const [s, e] = f.length();
    if (number === 1) out.key = f.buf.toString('utf8', s, e);
    else if (number === 2) out.value = f.buf.toString('utf8', s, e);
    else out.raw_value = f.buf.subarray(s, e);
    return true;
  });
  return out;
}

function httpBody(r: Reader, start: number, end: number): HttpBody {
  const out: HttpBody = {};
  fields(r, start, end, (f, number, wireType) => {
    if (number === 1) {
      expect(wireType, LENGTH, 'body');
      const [s, e] = f.length();
      out.body = f.buf.subarray(s, e);
      return true;
    }
    if (number === 2) {
      expect(wireType, VARINT, 'end_of_stream');
      out.end_of_stream = f.varint() !== 0;
      return true;
    }
    return false;
  });
  return out;
}

/** The entries of the two namespaces the protocol uses; every other namespace is skipped. */
const WANTED: ReadonlyMap<string, string> = new Map([
  [EPP.subsetNamespace, EPP.subsetKey],
  [EPP.namespace, EPP.servedKey],
]);

/** A map entry (key = 1, a string; value = 2, a message): the key and the value's bounds. */
function mapEntry(r: Reader, start: number, end: number, what: string): { key: string; value: [number, number] | undefined } {
  let key = '';
  let value: [number, number] | undefined;
  fields(r, start, end, (m, n, w) => {
    if (n === 1) {
      expect(w, LENGTH, `${what} key`);
      const [ks, ke] = m.length();
      key = m.buf.toString('utf8', ks, ke);
      return true;
    }
    if (n === 2) {
      expect(w, LENGTH, `${what} value`);
      value = m.length();
      return true;
    }
    return false;
  });
  return { key, value };
}

function metadataContext(r: Reader, start: number, end: number): { filter_metadata: Record<string, PbStruct> } {
  const filter: Record<string, PbStruct> = {};
  fields(r, start, end, (f, number, wireType) => {
    if (number !== 1) return false;
    expect(wireType, LENGTH, 'filter_metadata');
    const [s, e] = f.length();
    // A later entry for a key replaces an earlier one.
    const { key, value } = mapEntry(f, s, e, 'filter_metadata');
    const wantedKey = WANTED.get(key);
    filter[key] = wantedKey !== undefined && value ? struct(f, value[0], value[1], wantedKey) : value ? checkedStruct(f, value) : {};
    return true;
  });
  return { filter_metadata: filter };
}

function checkedStruct(r: Reader, [start, end]: [number, number]): PbStruct {
  fields(r, start, end, () => false);
  return { fields: {} };
}

/** A Struct, keeping only the entry `wanted` (decoded shallowly: see `value`). */
function struct(r: Reader, start: number, end: number, wanted: string): PbStruct {
  const out: Record<string, PbValue> = {};
  fields(r, start, end, (f, number, wireType) => {
    if (number !== 1) return false;
    expect(wireType, LENGTH, 'fields');
    const [s, e] = f.length();
    const { key, value: range } = mapEntry(f, s, e, 'fields');
    if (key === wanted) out[key] = range ? value(f, range[0], range[1], 1) : {};
    return true;
  });
  return { fields: out };
}

/**
 * A google.protobuf.Value with every kind it carries (as protobuf.js leaves them), to the depth the
 * protocol's values have: a string, or a list of strings. Deeper structs and lists are checked for
 * framing and stand as empty ones, which is all `readMessage` asks of them (what kind they are).
 */
function value(r: Reader, start: number, end: number, depth: number): PbValue {
  const out: PbValue = {};
  fields(r, start, end, (f, number, wireType) => {
    switch (number) {
      case 1:
        expect(wireType, VARINT, 'null_value');
        out.nullValue = f.varint();
        return true;
      case 2:
        expect(wireType, FIXED64, 'number_value');
        if (f.end - f.pos < 8) throw new WireError('number_value runs past the end');
        out.numberValue = f.buf.readDoubleLE(f.pos);
        f.pos += 8;
        return true;
      case 3: {
        expect(wireType, LENGTH, 'string_value');
        const [s, e] = f.length();
        out.stringValue = f.buf.toString('utf8', s, e);
        return true;
      }
      case 4:
        expect(wireType, VARINT, 'bool_value');
        out.boolValue = f.varint() !== 0;
        return true;
      case 5: {
        expect(wireType, LENGTH, 'struct_value');
        const [s, e] = f.length();
        fields(f, s, e, () => false);
        out.structValue = {};
        return true;
      }
      case 6: {
        expect(wireType, LENGTH, 'list_value');
        const [s, e] = f.length();
        const values: PbValue[] = [];
        fields(f, s, e, (m, n, w) => {
          if (n !== 1) return false;
          expect(w, LENGTH, 'list_value.values');
          const [vs, ve] = m.length();
          values.push(depth > 0 ? value(m, vs, ve, depth - 1) : (checked(m, vs, ve) as PbValue));
          return true;
        });
        out.listValue = { values };
        return true;
      }
      default:
        return false;
    }
  });
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

const cat = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Where an answer to request headers names its endpoints. */
export type AnswerPlaces = 'both' | 'metadata' | 'header';

/**
 * The answer to request headers naming `value` (as `endpointAnswer` builds it): the header set
 * (or removed, when answering in metadata only), the route cache cleared, and the value in
 * `envoy.lb` dynamic metadata unless answering in the header only.
 */
export function encodeEndpointAnswer(value: string, places: AnswerPlaces): Buffer {
  const v = utf8(value);
  const mutation =
    places === 'metadata' ? ld(2, utf8(EPP.header)) : ld(1, cat(ld(1, cat(ld(1, utf8(EPP.header)), ld(3, v))), varintField(3, OVERWRITE_IF_EXISTS_OR_ADD)));
  const common = cat(ld(2, mutation), varintField(5, 1));
  const headersResponse = ld(1, ld(1, common));
  if (places === 'header') return headersResponse;
  const inner = ld(1, cat(ld(1, utf8(EPP.endpointKey)), ld(2, ld(3, v))));
  const metadata = ld(8, ld(1, cat(ld(1, utf8(EPP.namespace)), ld(2, ld(5, inner)))));
  return cat(headersResponse, metadata);
}

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
