/**
 * The slice of the ext_proc messages the picker and the conformance kit use, as proto-loader
 * decodes them (`keepCase`, `oneofs`, numeric enums, bytes as Buffer).
 */

export interface HeaderValue {
  /** Absent when a peer sends a header without a name: the type says what the wire can carry. */
  key?: string;
  value?: string;
  raw_value?: Buffer | Uint8Array;
}
export interface HeaderMap {
  headers?: HeaderValue[];
}
export interface HttpHeaders {
  headers?: HeaderMap;
  end_of_stream?: boolean;
}
export interface HttpBody {
  body?: Buffer | Uint8Array;
  end_of_stream?: boolean;
}
export interface HttpTrailers {
  trailers?: HeaderMap;
}

/** google.protobuf.Value as protobuf.js bundles it (its well-known types keep camelCase names). */
export interface PbValue {
  nullValue?: number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: PbStruct;
  listValue?: { values?: PbValue[] };
  kind?: string;
}
export interface PbStruct {
  fields?: Record<string, PbValue>;
}

export interface ProcessingRequest {
  request_headers?: HttpHeaders;
  response_headers?: HttpHeaders;
  request_body?: HttpBody;
  response_body?: HttpBody;
  request_trailers?: HttpTrailers;
  response_trailers?: HttpTrailers;
  metadata_context?: { filter_metadata?: Record<string, PbStruct> };
  request?: string;
}

export interface HeaderValueOption {
  header: HeaderValue;
  /** 2 = OVERWRITE_IF_EXISTS_OR_ADD */
  append_action?: number;
}
export interface HeaderMutation {
  set_headers?: HeaderValueOption[];
  remove_headers?: string[];
}
export interface CommonResponse {
  status?: number;
  header_mutation?: HeaderMutation;
  body_mutation?: {
    body?: Buffer | Uint8Array;
    clear_body?: boolean;
    streamed_response?: { body?: Buffer | Uint8Array; end_of_stream?: boolean };
    mutation?: string;
  };
  clear_route_cache?: boolean;
}
export interface ImmediateResponse {
  status?: { code?: number };
  headers?: HeaderMutation;
  body?: Buffer | Uint8Array;
  details?: string;
}
export interface ProcessingResponse {
  request_headers?: { response?: CommonResponse };
  response_headers?: { response?: CommonResponse };
  request_body?: { response?: CommonResponse };
  response_body?: { response?: CommonResponse };
  request_trailers?: { header_mutation?: HeaderMutation };
  response_trailers?: { header_mutation?: HeaderMutation };
  immediate_response?: ImmediateResponse;
  dynamic_metadata?: PbStruct;
  response?: string;
}

export const OVERWRITE_IF_EXISTS_OR_ADD = 2;

/** Converts a plain JSON value into a google.protobuf.Value. */
export function toValue(v: unknown): PbValue {
  if (v === null || v === undefined) return { nullValue: 0 };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  return { structValue: toStruct(v as Record<string, unknown>) };
}

export function toStruct(obj: Record<string, unknown>): PbStruct {
  const fields: Record<string, PbValue> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = toValue(v);
  return { fields };
}

/** Converts a google.protobuf.Value back into plain JSON. */
export function fromValue(v: PbValue | undefined): unknown {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.numberValue !== undefined) return v.numberValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.structValue !== undefined) return fromStruct(v.structValue);
  if (v.listValue !== undefined) return (v.listValue.values ?? []).map(fromValue);
  return null;
}

export function fromStruct(s: PbStruct | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = fromValue(v);
  return out;
}

/** Header value as text: Envoy sends `raw_value` (bytes); older builds and hand-made clients send `value`. */
export function headerText(h: HeaderValue): string {
  const raw = h.raw_value;
  if (raw instanceof Uint8Array && raw.length > 0) {
    // Read in place: Buffer.from(a Uint8Array) would copy it first.
    return (Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)).toString('utf8');
  }
  return typeof h.value === 'string' ? h.value : '';
}

export function setHeader(key: string, value: string): HeaderValueOption {
  return { header: { key, raw_value: Buffer.from(value) }, append_action: OVERWRITE_IF_EXISTS_OR_ADD };
}
