/**
 * The picker conformance kit: drives any endpoint picker over ext_proc gRPC the way Envoy does
 * and checks each rule of the Endpoint Picker Protocol, reporting pass, fail, or skip with the
 * reason.
 */
import * as grpc from '@grpc/grpc-js';
import {
  DESTINATION_ENDPOINT_KEY,
  DESTINATION_ENDPOINT_SERVED_KEY,
  DESTINATION_ENDPOINT_SUBSET_KEY,
  LB_METADATA_NAMESPACE,
  SUBSET_HINT_NAMESPACE,
  describeError,
  parseEndpointList,
} from '../codec.js';
import { HEALTH_SERVICES, SERVING_STATUS } from '../health.js';
import { headerText, toValue, type PbStruct, type PbValue, type ProcessingRequest } from '../messages.js';
import { loadProtos } from '../protos.js';
import { ExtProcSession, type Received } from './session.js';
import { RULES, type RuleId } from './rules.js';

export type RuleStatus = 'pass' | 'fail' | 'skip';

export interface RuleResult {
  id: RuleId;
  title: string;
  requirement: string;
  status: RuleStatus;
  detail: string;
}

export interface ConformanceReport {
  picker: string;
  startedAt: string;
  durationMs: number;
  summary: { passed: number; failed: number; skipped: number };
  results: RuleResult[];
}

export interface ConformanceOptions {
  /** The picker's `host:port`. */
  target: string;
  /** The picker's endpoints, if known; otherwise the kit learns them from its answers. */
  endpoints?: readonly string[];
  /** Longest wait for any single answer. Default 2000 ms. */
  timeoutMs?: number;
  /** Plain requests sent to learn the picker's endpoints and check its answers. Default 12. */
  samples?: number;
}

/** Addresses from the documentation ranges (RFC 5737, RFC 3849): never a real picker endpoint. */
const FOREIGN_ENDPOINTS = ['192.0.2.1:1', '[2001:db8::1]:1'];
const FOREIGN_CLIENT_ENDPOINT = '198.51.100.7:9';
const APPEND_ACTION_NAMES = ['APPEND_IF_EXISTS_OR_ADD', 'ADD_IF_ABSENT', 'OVERWRITE_IF_EXISTS_OR_ADD', 'OVERWRITE_IF_EXISTS'];

/** What a picker said to one request's headers. */
interface Answer {
  received: Received;
  /** The response kind, e.g. `request_headers` or `immediate_response`. */
  kind?: string;
  status?: number;
  header?: string;
  headerAppendAction?: number;
  headerRemoved: boolean;
  metadata?: PbValue;
}

function requestHeaders(options: { subset?: string[]; extra?: Record<string, string>; endOfStream?: boolean }): ProcessingRequest {
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
    request.metadata_context = {
      filter_metadata: { [SUBSET_HINT_NAMESPACE]: { fields: { [DESTINATION_ENDPOINT_SUBSET_KEY]: toValue(options.subset) } } },
    };
  }
  return request;
}

function analyse(received: Received): Answer {
  const answer: Answer = { received, headerRemoved: false };
  if (received.kind !== 'message') return answer;
  const m = received.message;
  answer.kind = m.response;
  if (m.immediate_response) answer.status = m.immediate_response.status?.code ?? 0;
  const mutation = m.request_headers?.response?.header_mutation;
  for (const option of mutation?.set_headers ?? []) {
    if (option.header.key.toLowerCase() !== DESTINATION_ENDPOINT_KEY) continue;
    answer.header = headerText(option.header);
    answer.headerAppendAction = option.append_action ?? 0;
  }
  answer.headerRemoved = (mutation?.remove_headers ?? []).some((h) => h.toLowerCase() === DESTINATION_ENDPOINT_KEY);
  const ns: PbStruct | undefined = m.dynamic_metadata?.fields?.[LB_METADATA_NAMESPACE]?.structValue;
  answer.metadata = ns?.fields?.[DESTINATION_ENDPOINT_KEY];
  return answer;
}

function describe(answer: Answer): string {
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
function endpointValue(answer: Answer): string | undefined {
  return answer.metadata?.stringValue ?? answer.header;
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 2000;
  const protos = loadProtos();
  const client = new protos.ExtProcClient(options.target, grpc.credentials.createInsecure());
  const healthClient = new protos.HealthClient(options.target, grpc.credentials.createInsecure());
  const results = new Map<RuleId, { status: RuleStatus; detail: string }>();
  const set = (id: RuleId, status: RuleStatus, detail: string): void => {
    results.set(id, { status, detail });
  };

  /** One request: send the headers, read the answer, then close the stream as Envoy does. */
  const ask = async (request: ProcessingRequest): Promise<Answer> => {
    const session = new ExtProcSession(client, timeoutMs);
    session.send(request);
    const answer = analyse(await session.next());
    session.finish();
    if (answer.received.kind === 'message') await drain(session);
    session.cancel();
    return answer;
  };

  try {
    const first = await ask(requestHeaders({}));
    const answersHeaders = first.kind === 'request_headers' || first.kind === 'immediate_response';
    set(
      'ext-proc.answers',
      answersHeaders ? 'pass' : 'fail',
      answersHeaders ? describe(first) : `expected a request_headers or immediate_response answer, got ${describe(first)}`,
    );
    if (!answersHeaders) {
      for (const rule of RULES)
        if (!results.has(rule.id) && rule.id !== 'health.services') set(rule.id, 'skip', 'the picker does not answer ext_proc request headers');
    } else {
      await checkAnswers(first);
    }
    await checkHealth();
  } finally {
    client.close();
    healthClient.close();
  }

  async function checkAnswers(first: Answer): Promise<void> {
    const samples = [first];
    for (let i = 1; i < (options.samples ?? 12); i++) samples.push(await ask(requestHeaders({})));
    const named = samples.filter((a) => a.kind === 'request_headers');
    const refused = samples.filter((a) => a.kind !== 'request_headers');
    if (named.length === 0) {
      const why = `every plain request was answered with ${describe(refused[0] as Answer)}: the picker has no ready endpoint to test with`;
      for (const id of [
        'endpoint.present',
        'endpoint.format',
        'endpoint.agree',
        'endpoint.ordered-list',
        'endpoint.client-header-ignored',
        'subset.respected',
        'served.accepted',
        'streaming.full-duplex',
      ] as const) {
        set(id, 'skip', why);
      }
      await checkSubset503([]);
      return;
    }

    const missing = named.filter((a) => a.header === undefined && a.metadata === undefined);
    set(
      'endpoint.present',
      missing.length === 0 ? 'pass' : 'fail',
      missing.length === 0
        ? `${named.length} of ${samples.length} plain requests named endpoints${refused.length ? `; ${refused.length} were refused (${describe(refused[0] as Answer)})` : ''}`
        : `${missing.length} of ${named.length} request_headers answers named no endpoint in the header or in envoy.lb metadata`,
    );

    const formatProblems: string[] = [];
    const orderProblems: string[] = [];
    const agreeProblems: string[] = [];
    const learned = new Set(options.endpoints ? parseEndpointList(options.endpoints.join(',')).endpoints.map((e) => e.address) : []);
    let longest = 0;
    for (const a of named) {
      const values: Array<[string, string]> = [];
      if (a.metadata !== undefined) {
        if (typeof a.metadata.stringValue === 'string') values.push(['metadata', a.metadata.stringValue]);
        else formatProblems.push(`metadata value is ${a.metadata.kind ?? 'not a string'}, not a string: Envoy treats it as absent`);
      }
      if (a.header !== undefined) values.push(['header', a.header]);
      for (const [where, value] of values) {
        const { endpoints, errors } = parseEndpointList(value, { strict: true });
        for (const e of errors) {
          const text = `${where} "${value}": ${describeError(e)}`;
          if (/duplicate|empty entry|entries/.test(e.reason)) orderProblems.push(text);
          else formatProblems.push(text);
        }
        longest = Math.max(longest, endpoints.length);
        if (!options.endpoints) for (const e of endpoints) learned.add(e.address);
      }
      if (a.header !== undefined && typeof a.metadata?.stringValue === 'string' && a.header !== a.metadata.stringValue) {
        agreeProblems.push(`header "${a.header}" but metadata "${a.metadata.stringValue}"`);
      }
    }
    set(
      'endpoint.format',
      formatProblems.length === 0 ? 'pass' : 'fail',
      formatProblems.length === 0 ? `all answers well formed; endpoints seen: ${[...learned].join(', ')}` : unique(formatProblems).join('; '),
    );
    const both = named.filter((a) => a.header !== undefined && a.metadata !== undefined).length;
    set(
      'endpoint.agree',
      agreeProblems.length > 0 ? 'fail' : both === 0 ? 'skip' : 'pass',
      agreeProblems.length > 0
        ? unique(agreeProblems).join('; ')
        : both === 0
          ? 'the picker answers in only one place, so there is nothing to compare'
          : `${both} answers carried both, with equal values`,
    );
    set(
      'endpoint.ordered-list',
      orderProblems.length === 0 ? 'pass' : 'fail',
      orderProblems.length === 0 ? `lists of up to ${longest} endpoint(s), no empty or repeated entries` : unique(orderProblems).join('; '),
    );

    const spoof = await ask(requestHeaders({ extra: { [DESTINATION_ENDPOINT_KEY]: FOREIGN_CLIENT_ENDPOINT } }));
    set('endpoint.client-header-ignored', ...clientHeaderVerdict(spoof));

    await checkSubsets([...learned]);
    await checkSubset503([...learned]);
    await checkServed();
    await checkStreaming();
  }

  function clientHeaderVerdict(a: Answer): [RuleStatus, string] {
    if (a.kind !== 'request_headers') return ['skip', `the picker answered the request carrying a client header with ${describe(a)}`];
    const value = endpointValue(a) ?? '';
    if (value.includes(FOREIGN_CLIENT_ENDPOINT) || (a.header ?? '').includes(FOREIGN_CLIENT_ENDPOINT)) {
      return ['fail', `the client sent ${DESTINATION_ENDPOINT_KEY}: ${FOREIGN_CLIENT_ENDPOINT} and the picker's answer repeats it`];
    }
    if (a.header !== undefined && a.headerAppendAction !== 2 && a.headerAppendAction !== 3) {
      const action = APPEND_ACTION_NAMES[a.headerAppendAction ?? 0] ?? String(a.headerAppendAction);
      return ['fail', `the header is set with append_action ${action}, not OVERWRITE_IF_EXISTS_OR_ADD, so a client-sent value may survive beside the picker's`];
    }
    if (a.header !== undefined) return ['pass', 'the picker overwrites the header'];
    if (a.headerRemoved) return ['pass', 'the picker removes the header and answers in metadata'];
    return ['pass', 'the picker answers in metadata only; the proxy must not read the header (or must strip it)'];
  }

  async function checkSubsets(learned: string[]): Promise<void> {
    if (learned.length === 0) return set('subset.respected', 'skip', 'no endpoint of the picker is known, so no subset can be offered');
    const subsets = learned.slice(0, 4).map((e) => [e]);
    if (learned.length >= 2) subsets.push(learned.slice(-2));
    const problems: string[] = [];
    for (const subset of subsets) {
      for (let i = 0; i < 2; i++) {
        const a = await ask(requestHeaders({ subset }));
        if (a.kind !== 'request_headers') {
          problems.push(`subset [${subset.join(', ')}] was answered with ${describe(a)}`);
          break;
        }
        const value = endpointValue(a);
        const named = value === undefined ? [] : parseEndpointList(value).endpoints.map((e) => e.address);
        const outside = named.filter((e) => !subset.includes(e));
        if (named.length === 0) problems.push(`subset [${subset.join(', ')}] was answered without an endpoint`);
        else if (outside.length > 0) problems.push(`subset [${subset.join(', ')}] was answered with ${outside.join(', ')}`);
      }
    }
    set(
      'subset.respected',
      problems.length === 0 ? 'pass' : 'fail',
      problems.length === 0 ? `${subsets.length} subsets offered, every answer stayed inside them` : unique(problems).join('; '),
    );
  }

  async function checkSubset503(learned: string[]): Promise<void> {
    const verdict = (a: Answer): [RuleStatus, string] =>
      a.kind === 'immediate_response' && a.status === 503 ? ['pass', 'ImmediateResponse 503'] : ['fail', `expected ImmediateResponse 503, got ${describe(a)}`];
    set('subset.empty-503', ...verdict(await ask(requestHeaders({ subset: [] }))));
    const foreign = FOREIGN_ENDPOINTS.filter((e) => !learned.includes(e));
    const [status, detail] = verdict(await ask(requestHeaders({ subset: foreign })));
    set('subset.ineligible-503', status, `subset [${foreign.join(', ')}]: ${detail}`);
  }

  async function checkServed(): Promise<void> {
    const session = new ExtProcSession(client, timeoutMs);
    try {
      session.send(requestHeaders({}));
      const a = analyse(await session.next());
      const value = endpointValue(a);
      if (a.kind !== 'request_headers' || value === undefined) {
        return set('served.accepted', 'skip', `the request was answered with ${describe(a)}, so there is no response path`);
      }
      const served = parseEndpointList(value).endpoints[0]?.address ?? value;
      session.send({
        response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: true },
        metadata_context: { filter_metadata: { [LB_METADATA_NAMESPACE]: { fields: { [DESTINATION_ENDPOINT_SERVED_KEY]: { stringValue: served } } } } },
      });
      const r = analyse(await session.next());
      if (r.kind !== 'response_headers')
        return set('served.accepted', 'fail', `response headers carrying ${DESTINATION_ENDPOINT_SERVED_KEY}=${served} were answered with ${describe(r)}`);
      session.finish();
      const end = await drain(session);
      if (end.kind === 'end' && end.code !== grpc.status.OK) {
        return set(
          'served.accepted',
          'fail',
          `after the response path the stream ended with gRPC status ${grpc.status[end.code] ?? end.code} (${end.details})`,
        );
      }
      set('served.accepted', 'pass', `response headers with ${DESTINATION_ENDPOINT_SERVED_KEY}=${served} answered, stream closed cleanly`);
    } finally {
      session.cancel();
    }
  }

  async function checkStreaming(): Promise<void> {
    const problems: string[] = [];
    // Variant 1: body in two chunks, then trailers (Envoy requires trailers SEND with FULL_DUPLEX_STREAMED).
    const chunks = [Buffer.from('{"model":"conformance",'), Buffer.from('"prompt":"hello"}')];
    problems.push(
      ...(await streamExchange(
        [
          requestHeaders({ endOfStream: false }),
          ...chunks.map((body) => ({ request_body: { body, end_of_stream: false } })),
          { request_trailers: { trailers: { headers: [{ key: 'x-trailer', raw_value: Buffer.from('1') }] } } },
        ],
        { phase: 'request', body: Buffer.concat(chunks), trailers: true },
      )),
    );
    // Variant 2: a request body ending the stream, then a streamed response body.
    const session = new ExtProcSession(client, timeoutMs);
    try {
      const reqBody = Buffer.from('{"prompt":"again"}');
      session.send(requestHeaders({ endOfStream: false }));
      session.send({ request_body: { body: reqBody, end_of_stream: true } });
      problems.push(...(await collect(session, 'request', reqBody, false)));
      const respBody = Buffer.from('{"choices":[]}');
      session.send({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: false } });
      session.send({ response_body: { body: respBody, end_of_stream: true } });
      problems.push(...(await collect(session, 'response', respBody, false)));
      session.finish();
      await drain(session);
    } finally {
      session.cancel();
    }
    set(
      'streaming.full-duplex',
      problems.length === 0 ? 'pass' : 'fail',
      problems.length === 0 ? 'bodies echoed as streamed responses in order, trailers answered, on both paths' : unique(problems).join('; '),
    );
  }

  async function streamExchange(messages: ProcessingRequest[], expect: { phase: 'request'; body: Buffer; trailers: boolean }): Promise<string[]> {
    const session = new ExtProcSession(client, timeoutMs);
    try {
      // Full duplex: Envoy sends body chunks as they arrive, without waiting for the header answer.
      for (const m of messages) session.send(m);
      const problems = await collect(session, expect.phase, expect.body, expect.trailers);
      session.finish();
      await drain(session);
      return problems;
    } finally {
      session.cancel();
    }
  }

  /** Reads one direction's answers: headers first, then streamed body pieces, then (optionally) trailers. */
  async function collect(session: ExtProcSession, phase: 'request' | 'response', body: Buffer, trailers: boolean): Promise<string[]> {
    const headersKind = `${phase}_headers`;
    const bodyKind = `${phase}_body` as const;
    const problems: string[] = [];
    const got: Buffer[] = [];
    let sawHeaders = false;
    let sawEnd = false;
    for (;;) {
      const r = await session.next();
      const a = analyse(r);
      if (r.kind !== 'message') {
        problems.push(
          `${phase} path: waiting for ${!sawHeaders ? 'the headers answer' : !sawEnd ? 'the rest of the body' : 'the trailers answer'}, got ${describe(a)}`,
        );
        return problems;
      }
      const m = r.message;
      if (m.response === headersKind) {
        if (sawHeaders) problems.push(`${phase} path: headers answered twice`);
        sawHeaders = true;
        if (phase === 'request' && endpointValue(a) === undefined) problems.push('request path: the headers answer names no endpoint');
      } else if (m.response === bodyKind) {
        if (!sawHeaders) problems.push(`${phase} path: a body answer came before the headers answer`);
        const streamed = m[bodyKind]?.response?.body_mutation?.streamed_response;
        if (!streamed) {
          problems.push(
            `${phase} path: body answered without streamed_response (Envoy: "spurious message: Normal body mutation response is received while body_mode_ is FULL_DUPLEX_STREAMED")`,
          );
          return problems;
        }
        got.push(Buffer.from(streamed.body ?? []));
        if (streamed.end_of_stream) sawEnd = true;
      } else if (m.response === `${phase}_trailers`) {
        if (!trailers) problems.push(`${phase} path: trailers answered but none were sent`);
        break;
      } else {
        problems.push(`${phase} path: unexpected ${describe(a)}`);
        return problems;
      }
      if (!trailers && sawEnd) break;
    }
    if (!Buffer.concat(got).equals(body))
      problems.push(`${phase} path: the body came back as ${JSON.stringify(Buffer.concat(got).toString())}, not ${JSON.stringify(body.toString())}`);
    return problems;
  }

  async function checkHealth(): Promise<void> {
    const problems: string[] = [];
    for (const service of HEALTH_SERVICES) {
      const result = await new Promise<{ status?: number; error?: grpc.ServiceError }>((resolve) => {
        const check = (healthClient as unknown as Record<string, (...a: unknown[]) => void>).Check as (...a: unknown[]) => void;
        check.call(healthClient, { service }, { deadline: Date.now() + timeoutMs }, (error: grpc.ServiceError | null, res?: { status?: number | string }) => {
          resolve(error ? { error } : { status: Number(res?.status ?? 0) });
        });
      });
      if (result.error) problems.push(`${service}: ${grpc.status[result.error.code] ?? result.error.code} (${result.error.details})`);
      else if (result.status !== SERVING_STATUS.SERVING) problems.push(`${service}: status ${result.status}, not SERVING`);
    }
    set('health.services', problems.length === 0 ? 'pass' : 'fail', problems.length === 0 ? `${HEALTH_SERVICES.join(', ')}: SERVING` : problems.join('; '));
  }

  const ordered: RuleResult[] = RULES.map((rule) => {
    const r = results.get(rule.id) ?? { status: 'skip' as const, detail: 'not reached' };
    return { id: rule.id, title: rule.title, requirement: rule.requirement, status: r.status, detail: r.detail };
  });
  return {
    picker: options.target,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    summary: {
      passed: ordered.filter((r) => r.status === 'pass').length,
      failed: ordered.filter((r) => r.status === 'fail').length,
      skipped: ordered.filter((r) => r.status === 'skip').length,
    },
    results: ordered,
  };
}

/** Reads until the stream ends (or the deadline passes), returning how it ended. */
async function drain(session: ExtProcSession): Promise<Received> {
  for (;;) {
    const r = await session.next();
    if (r.kind !== 'message') return r;
  }
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
