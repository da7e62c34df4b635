/**
 * What a picker receives on an ext_proc stream, decoded and checked in one place. The picker's
 * port has no authentication, so nothing here trusts that a field is present or has the shape the
 * proto suggests: a message that does not fit becomes an `InvalidMessage` naming the field, which
 * ends its stream with INVALID_ARGUMENT, and the rest of the picker only ever sees `PickerMessage`s.
 */
import type * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';
import { headerText, type HeaderMap, type HttpBody, type PbStruct, type PbValue, type ProcessingRequest } from './messages.js';

/** A message that breaks the protocol; `message` is `field.path: reason`. */
export class InvalidMessage extends Error {
  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.name = 'InvalidMessage';
  }
}

/** Stands in for a request whose bytes are no ProcessingRequest, so decoding never throws (see `tolerantDecoding`). */
export class UndecodableRequest {
  constructor(readonly reason: string) {}
}

export const PHASES = ['request_headers', 'request_body', 'request_trailers', 'response_headers', 'response_body', 'response_trailers'] as const;
export type Phase = (typeof PHASES)[number];

/** One checked message: only what the picker reads from it. */
export type PickerMessage =
  | { phase: 'request_headers'; headers: Map<string, string[]>; subset: string[] | undefined; endOfStream: boolean }
  | { phase: 'response_headers'; served: string | undefined }
  | { phase: 'request_body' | 'response_body'; body: Buffer | Uint8Array; endOfStream: boolean }
  | { phase: 'request_trailers' | 'response_trailers' };

const SUBSET_PATH = `metadata_context.filter_metadata["${EPP.subsetNamespace}"]["${EPP.subsetKey}"]`;
const SERVED_PATH = `metadata_context.filter_metadata["${EPP.namespace}"]["${EPP.servedKey}"]`;

/** Decodes and checks one incoming message. Throws `InvalidMessage`, and nothing else, for bad input. */
export function readMessage(raw: unknown): PickerMessage {
  if (raw instanceof UndecodableRequest) throw new InvalidMessage('ProcessingRequest', `not a protobuf ProcessingRequest (${raw.reason})`);
  if (!isObject(raw)) throw new InvalidMessage('ProcessingRequest', `expected a message, got ${describeValue(raw)}`);
  const request = raw as ProcessingRequest;
  const phase = onlyPhase(request);
  switch (phase) {
    case 'request_headers':
      return {
        phase,
        headers: readHeaders(request.request_headers?.headers, 'request_headers.headers'),
        subset: readSubset(request),
        endOfStream: request.request_headers?.end_of_stream === true,
      };
    case 'response_headers':
      return { phase, served: readServed(request) };
    case 'request_body':
    case 'response_body':
      return { phase, ...readBody(request[phase] as HttpBody, phase) };
    case 'request_trailers':
    case 'response_trailers':
      return { phase };
  }
}

/** The one phase a message carries. */
function onlyPhase(request: ProcessingRequest): Phase {
  let phase: Phase | undefined;
  for (const p of PHASES) {
    if (request[p] === undefined || request[p] === null) continue;
    if (phase !== undefined) {
      const present = PHASES.filter((q) => request[q] !== undefined && request[q] !== null);
      throw new InvalidMessage('ProcessingRequest', `carries ${present.join(' and ')}; one message is one phase`);
    }
    phase = p;
  }
  if (phase === undefined) throw new InvalidMessage('ProcessingRequest', 'carries none of the request/response phases');
  return phase;
}

/** Request headers as a lower-cased name → values map (repeated headers keep every value, in order). */
function readHeaders(map: HeaderMap | undefined, path: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const list = map?.headers ?? [];
  for (let i = 0; i < list.length; i++) {
    const h = list[i];
    if (!isObject(h) || typeof h.key !== 'string' || h.key === '') throw new InvalidMessage(`${path}.headers[${i}].key`, 'the header has no name');
    const value = headerText(h);
    const name = h.key.toLowerCase();
    const values = out.get(name);
    if (values) values.push(value);
    else out.set(name, [value]);
  }
  return out;
}

function metadataValue(request: ProcessingRequest, namespace: string, key: string): PbValue | undefined {
  const ns: PbStruct | undefined = request.metadata_context?.filter_metadata?.[namespace];
  return ns?.fields?.[key] ?? undefined;
}

/** The subset hint: a list of strings or, as some data planes send it, one comma-separated string. */
function readSubset(request: ProcessingRequest): string[] | undefined {
  const value = metadataValue(request, EPP.subsetNamespace, EPP.subsetKey);
  if (value === undefined) return undefined;
  if (typeof value.stringValue === 'string') {
    return value.stringValue
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
  if (!isObject(value.listValue)) throw new InvalidMessage(SUBSET_PATH, `expected a list of "ip:port" strings, got ${describeValue(value)}`);
  const entries = value.listValue.values ?? [];
  return entries.map((v, i) => {
    if (typeof v?.stringValue !== 'string') throw new InvalidMessage(`${SUBSET_PATH}[${i}]`, `expected an "ip:port" string, got ${describeValue(v)}`);
    return v.stringValue;
  });
}

function readServed(request: ProcessingRequest): string | undefined {
  const value = metadataValue(request, EPP.namespace, EPP.servedKey);
  if (value === undefined) return undefined;
  if (typeof value.stringValue !== 'string') throw new InvalidMessage(SERVED_PATH, `expected an "ip:port" string, got ${describeValue(value)}`);
  return value.stringValue;
}

function readBody(body: HttpBody, phase: Phase): { body: Buffer | Uint8Array; endOfStream: boolean } {
  if (!isObject(body)) throw new InvalidMessage(phase, `expected an HttpBody, got ${describeValue(body)}`);
  if (body.body !== undefined && !(body.body instanceof Uint8Array))
    throw new InvalidMessage(`${phase}.body`, `expected bytes, got ${describeValue(body.body)}`);
  return { body: body.body ?? Buffer.alloc(0), endOfStream: body.end_of_stream === true };
}

const DIRECTION: Record<Phase, { direction: 'request' | 'response'; step: number }> = {
  request_headers: { direction: 'request', step: 0 },
  request_body: { direction: 'request', step: 1 },
  request_trailers: { direction: 'request', step: 2 },
  response_headers: { direction: 'response', step: 0 },
  response_body: { direction: 'response', step: 1 },
  response_trailers: { direction: 'response', step: 2 },
};
const BODY_STEP = 1;

/**
 * The order of one stream's messages, as Envoy sends them: request headers first (the picker
 * decides on them), and in each direction headers, then body chunks, then trailers, each once
 * except the chunks. The two directions may interleave: a response can start before the request
 * body ends.
 */
export class PhaseOrder {
  private readonly reached = { request: -1, response: -1 };
  private readonly last: { request?: Phase; response?: Phase } = {};

  accept(phase: Phase): void {
    if (this.reached.request < 0 && phase !== 'request_headers') {
      throw new InvalidMessage(phase, 'the stream must begin with request_headers, on which the picker decides');
    }
    const { direction, step } = DIRECTION[phase];
    const reached = this.reached[direction];
    if (step === reached && step !== BODY_STEP) throw new InvalidMessage(phase, 'received twice on one stream');
    if (step < reached) throw new InvalidMessage(phase, `received after ${this.last[direction]}`);
    this.reached[direction] = step;
    this.last[direction] = phase;
  }
}

/**
 * A copy of a service definition whose request decoding never throws: bytes that are no message
 * arrive as an `UndecodableRequest`, so the handler can end that stream with INVALID_ARGUMENT and
 * count it (gRPC itself would answer INTERNAL, unseen by the picker).
 */
export function tolerantDecoding(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const tolerant = Object.entries(definition).map(([name, method]) => {
    const decode = method.requestDeserialize;
    const requestDeserialize = (bytes: Buffer): unknown => {
      try {
        return decode(bytes);
      } catch (err) {
        return new UndecodableRequest(err instanceof Error ? err.message : String(err));
      }
    };
    return [name, { ...method, requestDeserialize }];
  });
  return Object.fromEntries(tolerant) as grpc.ServiceDefinition;
}

function isObject(v: unknown): v is Record<string, unknown> & object {
  return typeof v === 'object' && v !== null;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v !== 'object') return `a ${typeof v}`;
  const value = v as PbValue;
  if (value.numberValue !== undefined) return 'a number';
  if (value.boolValue !== undefined) return 'a bool';
  if (value.nullValue !== undefined) return 'null';
  if (value.structValue !== undefined) return 'a struct';
  if (value.listValue !== undefined) return 'a list';
  if (value.stringValue !== undefined) return 'a string';
  return 'an empty value';
}
