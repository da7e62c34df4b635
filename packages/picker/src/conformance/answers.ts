/**
 * The messages the kit sends as Envoy would, and what it reads from a picker's answers. Nothing
 * here trusts the picker: an answer of any shape is described, never thrown on.
 */
import * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';
import { parseEndpointList } from '../codec.js';
import { headerText, toValue, type PbValue, type ProcessingRequest } from '../messages.js';
import type { Received } from './session.js';

/** Addresses from the documentation ranges (RFC 5737, RFC 3849): never a real pool member. */
export const FOREIGN_ENDPOINTS = ['192.0.2.1:1', '[2001:db8::1]:1'];
export const FOREIGN_CLIENT_ENDPOINT = '198.51.100.7:9';

/** What a picker said to one message. */
export interface Answer {
  received: Received;
  /** The response kind, e.g. `request_headers` or `immediate_response`. */
  kind?: string;
  status?: number;
  header?: string;
  headerAppendAction?: number;
  headerRemoved: boolean;
  metadata?: PbValue;
}

export function requestHeaders(options: { subset?: string[]; extra?: Record<string, string>; endOfStream?: boolean } = {}): ProcessingRequest {
  const headers: Record<string, string> = {
    ':method': 'POST',
    ':path': '/v1/completions',
    ':authority': 'conformance.extlb.dev',
    ':scheme': 'http',
    'content-type': 'application/json',
    ...options.extra,
  };
  const request: ProcessingRequest = {
    request_headers: {
      headers: { headers: Object.entries(headers).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) },
      end_of_stream: options.endOfStream ?? true,
    },
  };
  if (options.subset) {
    request.metadata_context = { filter_metadata: { [EPP.subsetNamespace]: { fields: { [EPP.subsetKey]: toValue(options.subset) } } } };
  }
  return request;
}

/** Response headers `200`, carrying the served endpoint in `envoy.lb` when given. */
export function responseHeaders(options: { served?: string; endOfStream?: boolean } = {}): ProcessingRequest {
  const request: ProcessingRequest = {
    response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: options.endOfStream ?? true },
  };
  if (options.served !== undefined) {
    request.metadata_context = { filter_metadata: { [EPP.namespace]: { fields: { [EPP.servedKey]: { stringValue: options.served } } } } };
  }
  return request;
}

export function analyse(received: Received): Answer {
  const answer: Answer = { received, headerRemoved: false };
  if (received.kind !== 'message') return answer;
  const m = received.message;
  answer.kind = m.response;
  if (m.immediate_response) answer.status = m.immediate_response.status?.code ?? 0;
  const mutation = m.request_headers?.response?.header_mutation;
  for (const option of mutation?.set_headers ?? []) {
    if (!option.header || (option.header.key ?? '').toLowerCase() !== EPP.header) continue;
    answer.header = headerText(option.header);
    answer.headerAppendAction = option.append_action ?? 0;
  }
  answer.headerRemoved = (mutation?.remove_headers ?? []).some((h) => h.toLowerCase() === EPP.header);
  answer.metadata = m.dynamic_metadata?.fields?.[EPP.namespace]?.structValue?.fields?.[EPP.endpointKey];
  return answer;
}

export function describe(answer: Answer): string {
  const r = answer.received;
  if (r.kind === 'timeout') return 'no answer before the deadline';
  if (r.kind === 'end') return `the stream ended with gRPC status ${grpc.status[r.code] ?? r.code}${r.details ? ` (${r.details})` : ''}`;
  if (answer.kind === 'immediate_response') return `ImmediateResponse ${answer.status}`;
  const parts = [`a ${answer.kind ?? 'empty'} response`];
  if (answer.header !== undefined) parts.push(`header "${answer.header}"`);
  if (answer.metadata !== undefined) parts.push(`metadata ${JSON.stringify(answer.metadata.stringValue ?? answer.metadata)}`);
  return parts.join(', ');
}

/** The endpoint value of an answer (metadata string first, then header), or undefined. */
export function endpointValue(answer: Answer): string | undefined {
  return answer.metadata?.stringValue ?? answer.header;
}

/** The canonical addresses an answer names, in order (spelling problems are the format rule's business). */
export function namedEndpoints(answer: Answer): string[] {
  const value = endpointValue(answer);
  return value === undefined ? [] : parseEndpointList(value).endpoints.map((e) => e.address);
}

/** How a stream ended, in words. */
export function describeEnd(end: Received): string {
  if (end.kind === 'timeout') return 'the stream was still open at the deadline';
  if (end.kind === 'message') return 'the picker kept sending';
  return `gRPC status ${grpc.status[end.code] ?? end.code}${end.details ? ` (${end.details})` : ''}`;
}
