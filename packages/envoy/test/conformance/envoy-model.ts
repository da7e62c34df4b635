// A model of what Envoy does with one HTTP request under a converted configuration, for checking
// the request → response expectations of the upstream conformance suites without an Envoy binary.
// It follows Envoy's documented router behaviour for the fields the converter emits: the listener
// by port, the filter chain by TLS SNI, its TLS handshake (envoy-tls-model.ts), the codec (HTTP/1.1,
// or HTTP/2: by prior knowledge in cleartext, by ALPN over TLS), the virtual host by Host (exact
// names, then the longest suffix wildcard, then `*`; a Host's port is ignored when the connection
// manager strips it or the route table ignores it), the first route whose match holds (gRPC
// requests — HTTP/2, content-type application/grpc — match `grpc` routes), upgrades (403 when
// neither the connection manager nor the route allows one), the CORS filter, then the route's
// action — a fixed answer, a redirect (Envoy's newUri rules), or forwarding: the weighted cluster,
// header changes (a weighted cluster's before its route's, each level removing before adding),
// host and path rewrites, mirrors, the connection to the cluster's endpoints (its codec, and its
// UpstreamTlsContext: SNI, ALPN, the default certificate validator's chain and SAN checks, with
// node:crypto, against what the endpoints serve — facts the caller gives as a World — and the
// client certificate it presents from its SDS secret when an endpoint asks for one), and the
// exchange with the backend under the route's timeout and retry policy, then response header
// changes and CORS headers. Envoy's local replies reach gRPC clients as gRPC statuses. It reads
// only the Envoy JSON, so it checks the Envoy stage's output, not the converter's intent; a field
// or filter it does not know fails loudly rather than being ignored.
import { X509Certificate } from 'node:crypto';
import type { EnvoyConfig } from '../../src/index.js';
import { parseProtoDuration } from '../../src/proto/index.js';
import { handshake } from './envoy-tls-model.js';

type Json = Record<string, any>;
type Headers = Record<string, string>;

export interface Request {
  /** The listener port the client connects to. */
  port: number;
  /** The Host header, as sent (a port is kept). */
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  scheme?: 'http' | 'https';
  /** TLS server name; HTTPS listeners choose their filter chain by it. */
  sni?: string;
  /** How the client speaks: HTTP/1.1 (the default), or HTTP/2 only — by prior knowledge in cleartext, by ALPN over TLS. */
  protocol?: 'HTTP/1.1' | 'HTTP/2';
  /** The protocol an HTTP/1.1 `Upgrade` header asks for, e.g. `websocket`. */
  upgrade?: string;
  /** The certificate (PEM) the client presents in the TLS handshake. */
  clientCertificate?: string;
}

/** What an endpoint (`ip:port`) serves: the model's facts about the backends, beyond Envoy's config. */
export interface Endpoint {
  /** The endpoint speaks TLS only, presenting this PEM chain (leaf first). */
  tls?: { certificate: string; clients?: ClientVerification };
  /** HTTP versions it serves (by ALPN over TLS); both when unset. */
  protocols?: ('http/1.1' | 'h2')[];
}

/**
 * An endpoint that asks for a client certificate and checks it against the CAs of `ca` (PEM): a
 * certificate they did not issue fails the handshake; none at all fails it only when `required`
 * (the suite's echo backend verifies a certificate only if one is given).
 */
export interface ClientVerification {
  ca: string;
  required?: boolean;
}

export interface World {
  endpoints?: Record<string, Endpoint>;
  /** Files Envoy reads (a system CA bundle), by path. */
  files?: Record<string, string>;
}

export interface Response {
  status: number;
  /** Lower-case names; repeated headers joined with `,`. */
  headers: Headers;
}

/** What a backend does with one attempt: an answer after `delayMs`, or a connection reset. */
export type BackendReply = { status: number; headers?: Headers; delayMs?: number } | { reset: true; delayMs?: number };

/** A backend: its reply to the `attempt`-th try (from 0) of a request as it reaches the backend. */
export type BackendModel = (request: Upstream, attempt: number) => BackendReply;

/** A copy of a request sent to a mirror cluster; Envoy does not wait for its answer. */
export interface Mirror {
  cluster: string;
  /** The share of requests mirrored, 0..1. */
  fraction: number;
  host: string;
  path: string;
  headers: Headers;
}

/** A request as it reaches a backend, and what the client gets back when it goes there. */
export interface Upstream {
  /** The cluster chosen, with its weight when the route splits traffic. */
  cluster: string;
  weight: number;
  host: string;
  path: string;
  /** Lower-case names. */
  headers: Headers;
  /** The protocol Envoy speaks to the cluster. */
  protocol: 'HTTP/1.1' | 'HTTP/2';
  /** The upgrade Envoy forwards, when the client asked for one and the route allows it. */
  upgrade?: string;
  /** The TLS server name Envoy sends, when the cluster speaks TLS. */
  sni?: string;
  /** The certificates (PEM, leaf first) Envoy presented to an endpoint that asked for them, as the echo backend reports them. */
  peerCertificates?: string[];
  /** Why Envoy cannot connect to an endpoint of the cluster: the client gets 503. */
  failure?: string;
  mirrors: Mirror[];
  /** The answer the client gets: after timeouts, retries, response header changes and CORS. */
  response: Response;
  /** How many times Envoy sent the request to the cluster (0 when the cluster does not exist). */
  attempts: number;
  /** The weighted_clusters entry as emitted, when the route splits traffic (endpoint-model.ts reads it). */
  weighted?: Json;
}

export type Outcome =
  | { type: 'no-listener' | 'no-chain' }
  /** The client and the listener have no HTTP version in common. */
  | { type: 'protocol-error'; reason: string }
  /** The TLS handshake failed (or one side did not speak TLS): no HTTP request is made. */
  | { type: 'tls-failure'; reason: string }
  /** No virtual host or no route matched: Envoy answers 404. */
  | { type: 'not-found'; status: 404 }
  /** An answer Envoy makes itself: a direct response, a refused upgrade, a CORS preflight. */
  | { type: 'direct'; route: string; status: number; headers: Headers }
  /** `location` parsed (a URL drops a scheme's default port); `headers.location` as Envoy writes it. */
  | { type: 'redirect'; route: string; status: number; location: URL; headers: Headers }
  | {
      type: 'forward';
      route: string;
      /** One per cluster the route may choose. */
      upstreams: Upstream[];
      clusterNotFound?: number;
      /** The route entry and the connection manager's HTTP filters as emitted, for endpoint-model.ts. */
      entry: Json;
      httpFilters: Json[];
    };

const REDIRECT_STATUS: Record<string, number> = { MOVED_PERMANENTLY: 301, FOUND: 302, SEE_OTHER: 303, TEMPORARY_REDIRECT: 307, PERMANENT_REDIRECT: 308 };
const CLUSTER_NOT_FOUND: Record<string, number> = { SERVICE_UNAVAILABLE: 503, NOT_FOUND: 404, INTERNAL_SERVER_ERROR: 500 };
const TYPE = 'type.googleapis.com/envoy.extensions.';
const HCM = `${TYPE}filters.network.http_connection_manager.v3.HttpConnectionManager`;
const FILTER = {
  router: `${TYPE}filters.http.router.v3.Router`,
  cors: `${TYPE}filters.http.cors.v3.Cors`,
  corsPolicy: `${TYPE}filters.http.cors.v3.CorsPolicy`,
  extProc: `${TYPE}filters.http.ext_proc.v3.ExternalProcessor`,
  extProcPerRoute: `${TYPE}filters.http.ext_proc.v3.ExtProcPerRoute`,
  headerMutation: `${TYPE}filters.http.header_mutation.v3.HeaderMutation`,
};
/** Envoy's route timeout when a route sets none. */
const DEFAULT_ROUTE_TIMEOUT_MS = 15_000;

/** Fails on a field the model does not know, so nothing in the output is silently ignored. */
function known(o: Json | undefined, fields: string[], what: string): void {
  for (const k of Object.keys(o ?? {})) if (!fields.includes(k)) throw new Error(`the model does not know ${what}.${k}`);
}

function ms(duration: string): number {
  const d = parseProtoDuration(duration);
  if (!d || 'range' in d || d.seconds < 0) throw new Error(`the model does not know the duration ${duration}`);
  return d.seconds * 1000 + d.nanos / 1_000_000;
}

function domainScore(domain: string, host: string): number {
  if (domain === host) return 3_000_000;
  if (domain === '*') return 1;
  if (domain.startsWith('*') && host.endsWith(domain.slice(1)) && host.length > domain.length - 1) return 2_000_000 + domain.length;
  if (domain.endsWith('*') && host.startsWith(domain.slice(0, -1)) && host.length > domain.length - 1) return 1_000_000 + domain.length;
  return 0;
}

function stringMatches(m: Json, value: string | undefined): boolean {
  if (value === undefined) return false;
  known(m, ['exact', 'prefix', 'suffix', 'contains', 'safe_regex', 'ignore_case'], 'StringMatcher');
  const v = m.ignore_case ? value.toLowerCase() : value;
  const want = (s: string) => (m.ignore_case ? s.toLowerCase() : s);
  if (m.exact !== undefined) return v === want(m.exact);
  if (m.prefix !== undefined) return v.startsWith(want(m.prefix));
  if (m.suffix !== undefined) return v.endsWith(want(m.suffix));
  if (m.contains !== undefined) return v.includes(want(m.contains));
  if (m.safe_regex) return new RegExp(`^(?:${m.safe_regex.regex})$`).test(value);
  throw new Error(`the model does not know the string match ${JSON.stringify(m)}`);
}

function splitPath(path: string): [string, string] {
  const i = path.indexOf('?');
  return i < 0 ? [path, ''] : [path.slice(0, i), path.slice(i + 1)];
}

/** Envoy's Grpc::Common::hasGrpcContentType: `application/grpc`, or `application/grpc+...`. */
function isGrpc(headers: Headers): boolean {
  const type = headers['content-type'] ?? '';
  return type === 'application/grpc' || type.startsWith('application/grpc+');
}

function routeMatches(match: Json, req: Request, headers: Headers): boolean {
  const [path, query] = splitPath(req.path);
  if (match.grpc !== undefined) {
    if (Object.keys(match.grpc).length > 0) throw new Error(`the model does not know the gRPC match options ${JSON.stringify(match.grpc)}`);
    if (!isGrpc(headers)) return false;
  }
  if (match.path !== undefined && path !== match.path) return false;
  if (match.prefix !== undefined && !path.startsWith(match.prefix)) return false;
  if (match.path_separated_prefix !== undefined) {
    const p = match.path_separated_prefix as string;
    if (!(path === p || path.startsWith(`${p}/`))) return false;
  }
  if (match.safe_regex && !new RegExp(`^(?:${match.safe_regex.regex})$`).test(path)) return false;
  for (const h of match.headers ?? []) if (!stringMatches(h.string_match, headers[h.name])) return false;
  const params = new URLSearchParams(query);
  for (const q of match.query_parameters ?? []) if (!stringMatches(q.string_match, params.get(q.name) ?? undefined)) return false;
  return true;
}

/**
 * Why the client cannot speak to a filter chain: HTTP/2 over TLS needs h2 offered by ALPN (with
 * none, Envoy offers no ALPN and the client falls back to HTTP/1.1, which an HTTP/2-only client
 * cannot); in cleartext the codec must take the client's protocol (AUTO tells them apart by the
 * connection preface).
 */
function protocolRefused(chain: Json, hcm: Json, req: Request): string | undefined {
  const codec = hcm.codec_type ?? 'AUTO';
  if (req.protocol !== 'HTTP/2') return codec === 'HTTP2' ? 'the connection manager speaks HTTP/2 only' : undefined;
  if (chain.transport_socket) {
    const alpn: string[] = chain.transport_socket.typed_config?.common_tls_context?.alpn_protocols ?? [];
    return alpn.includes('h2') ? undefined : `the listener offers no h2 by ALPN (${JSON.stringify(alpn)})`;
  }
  return codec === 'HTTP1' ? 'codec_type HTTP1 does not accept HTTP/2' : undefined;
}

/** The route table a request reaches, and the connection manager that serves it. */
function routeTable(config: EnvoyConfig, req: Request): { rc: Json; hcm: Json } | Outcome {
  const listener = (config.listeners as Json[]).find((l) => l.address.socket_address.port_value === req.port);
  if (!listener) return { type: 'no-listener' };
  const chains = listener.filter_chains as Json[];
  const sni = req.sni?.toLowerCase();
  const scored = chains
    .map((c) => ({
      c,
      score: Math.max(0, ...((c.filter_chain_match?.server_names ?? []) as string[]).map((n) => (sni === undefined ? 0 : domainScore(n, sni)))),
    }))
    .filter((x) => x.score > 1 || !x.c.filter_chain_match)
    .sort((a, b) => b.score - a.score);
  const chain = scored[0]?.c;
  if (!chain) return { type: 'no-chain' };
  const tls = handshake(config, chain, req);
  if (!tls.ok) return { type: 'tls-failure', reason: tls.reason };
  const hcm = chain.filters[0].typed_config;
  // A chain of a TLSRoute (tcp_proxy) forwards the connection whole: stream-model.ts follows it.
  if (hcm?.['@type'] !== HCM) return { type: 'protocol-error', reason: `the filter chain is ${chain.filters[0].name}, not an HTTP connection manager` };
  const refused = protocolRefused(chain, hcm, req);
  if (refused) return { type: 'protocol-error', reason: refused };
  for (const f of hcm.http_filters as Json[]) {
    if (!Object.values(FILTER).includes(f.typed_config?.['@type'])) throw new Error(`the model does not know the HTTP filter ${f.name}`);
  }
  const rc = hcm.route_config ?? (config.routes as Json[]).find((r) => r.name === hcm.rds.route_config_name);
  return { rc, hcm };
}

/**
 * Envoy's newUri: the Location of a redirect. The scheme is the filter's or the request's; a
 * Host port is dropped when a port is set, or when the scheme changes from the one the request
 * came with (x-forwarded-proto, the connection's own scheme here) and the port is that scheme's
 * default.
 */
function location(r: Json, req: Request, hostHeader: string, matchedPrefix: string): string {
  known(
    r,
    ['scheme_redirect', 'https_redirect', 'host_redirect', 'port_redirect', 'path_redirect', 'prefix_rewrite', 'regex_rewrite', 'response_code', 'strip_query'],
    'RedirectAction',
  );
  const requestScheme = req.scheme ?? 'http';
  const scheme = r.scheme_redirect ?? (r.https_redirect ? 'https' : requestScheme);
  const port = r.port_redirect !== undefined ? `:${r.port_redirect}` : '';
  let host = hostHeader;
  const m = /^(.*?)(:\d+)?$/.exec(hostHeader);
  if (r.host_redirect !== undefined) host = r.host_redirect;
  else if (m?.[2]) {
    const requestPort = m[2];
    const dropsDefault = scheme !== requestScheme && requestPort === (requestScheme === 'https' ? ':443' : ':80');
    if (port !== '' || dropsDefault) host = m[1] ?? host;
  }
  const [path, query] = splitPath(req.path);
  let newPath = path;
  if (r.path_redirect !== undefined) newPath = r.path_redirect;
  else if (r.prefix_rewrite !== undefined) newPath = `${r.prefix_rewrite}${path.slice(matchedPrefix.length)}`;
  else if (r.regex_rewrite) newPath = path.replace(new RegExp(r.regex_rewrite.pattern.regex), r.regex_rewrite.substitution);
  if (!newPath.startsWith('/')) newPath = `/${newPath}`;
  const keepQuery = query !== '' && r.strip_query !== true && r.path_redirect?.includes('?') !== true;
  return `${scheme}://${host}${port}${newPath}${keepQuery ? `?${query}` : ''}`;
}

/** One level of header changes (Envoy's HeaderParser): removals first, then additions in order. */
function applyHeaders(headers: Headers, level: Json | undefined, prefix: 'request' | 'response'): void {
  if (!level) return;
  for (const name of level[`${prefix}_headers_to_remove`] ?? []) delete headers[String(name).toLowerCase()];
  for (const h of level[`${prefix}_headers_to_add`] ?? []) {
    known(h, ['header', 'append_action'], 'HeaderValueOption');
    const name = String(h.header.key).toLowerCase();
    const value = String(h.header.value);
    const action = h.append_action ?? 'APPEND_IF_EXISTS_OR_ADD';
    const exists = headers[name] !== undefined;
    if (action === 'APPEND_IF_EXISTS_OR_ADD') headers[name] = exists ? `${headers[name]},${value}` : value;
    else if (action === 'OVERWRITE_IF_EXISTS_OR_ADD') headers[name] = value;
    else if (action === 'ADD_IF_ABSENT') headers[name] = exists ? (headers[name] as string) : value;
    else if (action === 'OVERWRITE_IF_EXISTS') {
      if (exists) headers[name] = value;
    } else throw new Error(`the model does not know the append action ${action}`);
  }
}

function matchedPrefix(match: Json, path: string): string {
  if (match.prefix !== undefined) return match.prefix;
  if (match.path_separated_prefix !== undefined) return match.path_separated_prefix;
  return path;
}

/** The typed_per_filter_config entries of the levels a request passed, most specific first. */
function perFilterConfigs(levels: (Json | undefined)[], type: string): Json[] {
  return levels.flatMap((l) => Object.values((l?.typed_per_filter_config ?? {}) as Record<string, Json>).filter((c) => c['@type'] === type));
}

/** Envoy's CORS filter for one request: a preflight answer, or the headers to set on the response. */
class Cors {
  private latchedOrigin: string | undefined;
  private corsRequest = false;

  constructor(private readonly policies: Json[]) {
    for (const p of policies)
      known(
        p,
        [
          '@type',
          'allow_origin_string_match',
          'allow_methods',
          'allow_headers',
          'expose_headers',
          'max_age',
          'allow_credentials',
          'forward_not_matching_preflights',
        ],
        'CorsPolicy',
      );
  }

  /** The first policy, most specific first, that sets a field. */
  private first<T>(field: string, fallback: T): T {
    for (const p of this.policies) {
      const v = p[field];
      if (v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)) return (typeof v === 'object' && 'value' in v ? v.value : v) as T;
    }
    return fallback;
  }

  /** decodeHeaders: the preflight answer, or undefined when the request goes on. */
  decode(headers: Headers): Response | undefined {
    if (this.policies.length === 0) return undefined;
    const origin = headers.origin;
    if (!origin) return undefined;
    const allowed = this.first<Json[]>('allow_origin_string_match', []).some((m) => stringMatches(m, '*') || stringMatches(m, origin));
    if (allowed) this.latchedOrigin = origin;
    this.corsRequest = true;
    if (headers[':method'] !== 'OPTIONS' || !headers['access-control-request-method']) return undefined;
    if (!allowed && this.first('forward_not_matching_preflights', true)) return undefined;
    const out: Headers = {};
    if (allowed) out['access-control-allow-origin'] = origin;
    if (this.first('allow_credentials', false)) out['access-control-allow-credentials'] = 'true';
    const methods = this.first('allow_methods', '');
    if (methods) out['access-control-allow-methods'] = methods === '*' ? headers['access-control-request-method'] : methods;
    const allowHeaders = this.first('allow_headers', '');
    if (allowHeaders) out['access-control-allow-headers'] = allowHeaders === '*' ? (headers['access-control-request-headers'] ?? '') : allowHeaders;
    const maxAge = this.first('max_age', '');
    if (maxAge) out['access-control-max-age'] = maxAge;
    const response = { status: 200, headers: out };
    this.encode(response.headers); // the filter's own answer passes its encoder too
    return response;
  }

  /** encodeHeaders: the CORS headers of a response to an allowed origin. */
  encode(headers: Headers): void {
    if (!this.corsRequest || this.latchedOrigin === undefined) return;
    headers['access-control-allow-origin'] = this.latchedOrigin;
    if (this.first('allow_credentials', false)) headers['access-control-allow-credentials'] = 'true';
    const expose = this.first('expose_headers', '');
    if (expose) headers['access-control-expose-headers'] = expose;
  }
}

/** The upstream protocol of a cluster, from its HttpProtocolOptions. */
function clusterProtocol(cluster: Json, downstream: Request['protocol']): Upstream['protocol'] {
  const all = cluster.typed_extension_protocol_options as Json | undefined;
  const options = all?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
  if (!options) return 'HTTP/1.1';
  if (Object.keys(all as Json).length !== 1) throw new Error(`the model does not know the protocol options ${JSON.stringify(all)}`);
  known(options, ['@type', 'explicit_http_config', 'use_downstream_protocol_config'], 'HttpProtocolOptions');
  if (options.use_downstream_protocol_config) return downstream === 'HTTP/2' ? 'HTTP/2' : 'HTTP/1.1';
  return options.explicit_http_config?.http2_protocol_options ? 'HTTP/2' : 'HTTP/1.1';
}

type TryResult = { status: number; headers: Headers } | 'reset' | 'per-try-timeout';

/** Envoy's retry_on conditions for one try's result. */
function retriable(result: TryResult, policy: Json): boolean {
  const on = String(policy.retry_on ?? '').split(',');
  for (const c of on) {
    if (!['5xx', 'gateway-error', 'reset', 'connect-failure', 'refused-stream', 'retriable-status-codes', ''].includes(c))
      throw new Error(`the model does not know retry_on ${c}`);
  }
  if (typeof result === 'string') return on.includes('5xx') || on.includes('gateway-error') || on.includes('reset');
  if (on.includes('5xx') && result.status >= 500) return true;
  if (on.includes('gateway-error') && [502, 503, 504].includes(result.status)) return true;
  return on.includes('retriable-status-codes') && ((policy.retriable_status_codes ?? []) as number[]).includes(result.status);
}

/**
 * The exchange with a cluster under the route's timeout (the whole exchange, 15s unless set, 0
 * for none) and retry policy (per-try timeout, conditions, number of retries). Backoff between
 * tries is random in Envoy and counted as no time here.
 */
function exchange(ra: Json, request: Upstream, backend: BackendModel): { response: Response; attempts: number } {
  const route = ra.timeout === undefined ? DEFAULT_ROUTE_TIMEOUT_MS : ms(ra.timeout) || Number.POSITIVE_INFINITY;
  const policy = ra.retry_policy as Json | undefined;
  known(
    policy,
    ['retry_on', 'num_retries', 'per_try_timeout', 'retry_host_predicate', 'host_selection_retry_max_attempts', 'retriable_status_codes', 'retry_back_off'],
    'RetryPolicy',
  );
  const perTry = policy?.per_try_timeout ? ms(policy.per_try_timeout) || Number.POSITIVE_INFINITY : Number.POSITIVE_INFINITY;
  const retries = policy ? (policy.num_retries ?? 1) : 0;
  let elapsed = 0;
  for (let attempt = 0; ; attempt++) {
    const reply = backend(request, attempt);
    const delay = reply.delayMs ?? 0;
    let result: TryResult;
    if (perTry < route - elapsed && delay >= perTry) {
      elapsed += perTry;
      result = 'per-try-timeout';
    } else if (delay >= route - elapsed) return { response: { status: 504, headers: {} }, attempts: attempt + 1 };
    else {
      elapsed += delay;
      result = 'reset' in reply ? 'reset' : { status: reply.status, headers: { ...(reply.headers ?? {}) } };
    }
    if (attempt < retries && policy && retriable(result, policy)) continue;
    const response = result === 'per-try-timeout' ? { status: 504, headers: {} } : result === 'reset' ? { status: 503, headers: {} } : result;
    return { response, attempts: attempt + 1 };
  }
}

/** Whether the connection manager or the route lets a request upgrade to `type`. */
function upgradeAllowed(type: string, hcm: Json, ra: Json): boolean {
  const find = (configs: Json[] | undefined) => configs?.find((c) => String(c.upgrade_type).toLowerCase() === type.toLowerCase());
  for (const c of [...(hcm.upgrade_configs ?? []), ...(ra.upgrade_configs ?? [])]) known(c, ['upgrade_type', 'enabled'], 'UpgradeConfig');
  const onRoute = find(ra.upgrade_configs);
  if (onRoute) return onRoute.enabled !== false;
  const onHcm = find(hcm.upgrade_configs);
  return onHcm !== undefined && onHcm.enabled !== false;
}

const ROUTE_FIELDS = [
  'name',
  'match',
  'route',
  'redirect',
  'direct_response',
  'request_headers_to_add',
  'request_headers_to_remove',
  'response_headers_to_add',
  'response_headers_to_remove',
  'typed_per_filter_config',
];
const ACTION_FIELDS = [
  'cluster',
  'weighted_clusters',
  'cluster_not_found_response_code',
  'prefix_rewrite',
  'regex_rewrite',
  'host_rewrite_literal',
  'timeout',
  'retry_policy',
  'request_mirror_policies',
  // Chooses a host inside the cluster: no effect on where or how a request is answered here.
  'hash_policy',
  'upgrade_configs',
];
const CLUSTER_WEIGHT_FIELDS = [
  'name',
  'weight',
  'request_headers_to_add',
  'request_headers_to_remove',
  'response_headers_to_add',
  'response_headers_to_remove',
  'host_rewrite_literal',
  'typed_per_filter_config',
];

function fractionOf(f: Json | undefined): number {
  if (!f) return 1;
  const denominators: Record<string, number> = { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 };
  return (f.default_value?.numerator ?? 0) / (denominators[f.default_value?.denominator ?? 'HUNDRED'] ?? 100);
}

/** The default backend: answers 200 at once. */
const OK: BackendModel = () => ({ status: 200 });

export function handle(config: EnvoyConfig, req: Request, backend: BackendModel = OK, world: World = {}): Outcome {
  const table = routeTable(config, req);
  if ('type' in table) return table;
  const { rc, hcm } = table;
  const headers: Headers = { ':method': req.method ?? 'GET' };
  for (const [k, v] of Object.entries(req.headers ?? {})) headers[k.toLowerCase()] = v;
  let host = req.host.toLowerCase();
  const hostForMatching = hcm.strip_any_host_port || rc.ignore_port_in_host_matching ? host.replace(/:\d+$/, '') : host;
  if (hcm.strip_any_host_port) host = hostForMatching;
  let best: Json | undefined;
  let bestScore = 0;
  for (const vh of rc.virtual_hosts as Json[]) {
    for (const d of vh.domains as string[]) {
      const score = domainScore(d.toLowerCase(), hostForMatching);
      if (score > bestScore) {
        best = vh;
        bestScore = score;
      }
    }
  }
  const entry = (best?.routes as Json[] | undefined)?.find((r) => routeMatches(r.match, req, headers));
  if (entry) known(entry, ROUTE_FIELDS, 'Route');
  if (entry?.route) known(entry.route, ACTION_FIELDS, 'RouteAction');
  // The connection manager refuses an upgrade that neither it nor the route (if any) allows.
  if (req.upgrade !== undefined && !upgradeAllowed(req.upgrade, hcm, entry?.route ?? {})) {
    return { type: 'direct', route: entry?.name ?? '', status: 403, headers: {} };
  }
  if (!entry) return { type: 'not-found', status: 404 };
  const finish = (response: Response) => {
    applyHeaders(response.headers, entry, 'response');
    return response.headers;
  };
  if (entry.direct_response) return { type: 'direct', route: entry.name, status: entry.direct_response.status, headers: finish({ status: 0, headers: {} }) };
  const [path, query] = splitPath(req.path);
  if (entry.redirect) {
    const status = REDIRECT_STATUS[entry.redirect.response_code ?? 'MOVED_PERMANENTLY'] ?? 301;
    const loc = location(entry.redirect, req, host, matchedPrefix(entry.match, path));
    return { type: 'redirect', route: entry.name, status, location: new URL(loc), headers: { location: loc, ...finish({ status, headers: {} }) } };
  }
  const ra = entry.route;
  if (!ra) throw new Error(`route ${entry.name} has no action the model knows`);
  const targets: Json[] = ra.cluster ? [{ name: ra.cluster, weight: 1 }] : (ra.weighted_clusters?.clusters ?? []);
  for (const t of targets) {
    known(t, CLUSTER_WEIGHT_FIELDS, 'WeightedCluster.ClusterWeight');
    if (perFilterConfigs([t], FILTER.corsPolicy).length > 0) throw new Error('the model does not know a CORS policy on a weighted cluster');
  }
  // The CORS filter runs before the router: a preflight it answers never reaches a cluster.
  const cors = new Cors(perFilterConfigs([entry, best], FILTER.corsPolicy));
  const preflight = cors.decode(headers);
  if (preflight) return { type: 'direct', route: entry.name, ...preflight };
  const notFound = CLUSTER_NOT_FOUND[ra.cluster_not_found_response_code ?? 'SERVICE_UNAVAILABLE'] ?? 503;
  const upstreams = targets.map((t): Upstream => {
    const h = { ...headers };
    // The weighted cluster's changes first, then its route's, which win where both set a header.
    applyHeaders(h, t, 'request');
    let upstreamHost = t.host_rewrite_literal ?? host;
    applyHeaders(h, entry, 'request');
    upstreamHost = ra.host_rewrite_literal ?? upstreamHost;
    let upstreamPath = req.path;
    if (ra.prefix_rewrite !== undefined) upstreamPath = `${ra.prefix_rewrite}${path.slice(matchedPrefix(entry.match, path).length)}${query ? `?${query}` : ''}`;
    else if (ra.regex_rewrite)
      upstreamPath = `${path.replace(new RegExp(ra.regex_rewrite.pattern.regex), ra.regex_rewrite.substitution)}${query ? `?${query}` : ''}`;
    const { ':method': _method, ...rest } = h;
    const cluster = (config.clusters as Json[]).find((c) => c.name === t.name);
    const upstream: Upstream = {
      cluster: t.name,
      weight: t.weight,
      host: upstreamHost,
      path: upstreamPath,
      headers: rest,
      protocol: cluster ? clusterProtocol(cluster, req.protocol) : 'HTTP/1.1',
      mirrors: [],
      response: { status: 0, headers: {} },
      attempts: 0,
    };
    if (req.upgrade !== undefined) upstream.upgrade = req.upgrade;
    if (ra.weighted_clusters) upstream.weighted = t;
    const connection = cluster ? connect(config, cluster, upstream.protocol, world) : {};
    if (connection.sni !== undefined) upstream.sni = connection.sni;
    if (connection.peerCertificates !== undefined) upstream.peerCertificates = connection.peerCertificates;
    if (!cluster) {
      upstream.response = { status: notFound, headers: {} };
    } else if (connection.failure !== undefined) {
      // Envoy answers 503 when it cannot connect (retries would meet the same endpoints).
      upstream.failure = connection.failure;
      upstream.response = { status: 503, headers: {} };
      upstream.attempts = 1;
    } else {
      upstream.mirrors = ((ra.request_mirror_policies ?? []) as Json[]).map((m) => {
        known(m, ['cluster', 'runtime_fraction'], 'RequestMirrorPolicy');
        return {
          cluster: m.cluster,
          fraction: fractionOf(m.runtime_fraction),
          host: upstreamHost.replace(/^([^:]*)/, '$1-shadow'),
          path: upstreamPath,
          headers: rest,
        };
      });
      const { response, attempts } = exchange(ra, upstream, backend);
      upstream.response = response;
      upstream.attempts = attempts;
    }
    applyHeaders(upstream.response.headers, t, 'response');
    applyHeaders(upstream.response.headers, entry, 'response');
    cors.encode(upstream.response.headers);
    return upstream;
  });
  const out: Outcome = { type: 'forward', route: entry.name, upstreams, entry, httpFilters: hcm.http_filters ?? [] };
  if (ra.cluster_not_found_response_code === 'INTERNAL_SERVER_ERROR') out.clusterNotFound = 500;
  return out;
}

// ---- Upstream connections ---------------------------------------------------------------------

type Protocol = 'http/1.1' | 'h2';

/** The `ip:port` endpoints of a cluster the model can see (static and EDS); DNS names resolve elsewhere. */
function endpointsOf(config: EnvoyConfig, cluster: Json): string[] {
  const assignment =
    cluster.type === 'EDS'
      ? (config.endpoints as Json[]).find((e) => e.cluster_name === (cluster.eds_cluster_config?.service_name ?? cluster.name))
      : cluster.type === 'STATIC'
        ? cluster.load_assignment
        : undefined;
  return ((assignment?.endpoints ?? []) as Json[]).flatMap((l) =>
    (l.lb_endpoints as Json[]).map((e) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}`),
  );
}

interface UpstreamTls {
  sni?: string;
  alpn: string[];
  /** Trust anchors; undefined: no validation context, so Envoy accepts any certificate. */
  trusted?: X509Certificate[];
  sans: Json[];
  /** The client certificate chain (PEM) of the SDS secret the context names, if any. */
  clientCertificate?: string;
}

function pemCertificates(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b));
}

/** A cluster's UpstreamTlsContext, read field by field. */
function upstreamTls(config: EnvoyConfig, socket: Json | undefined, world: World): UpstreamTls | undefined {
  if (!socket) return undefined;
  const tc = socket.typed_config as Json;
  if (socket.name !== 'envoy.transport_sockets.tls' || tc?.['@type'] !== 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext')
    throw new Error(`the model does not know the transport socket ${JSON.stringify(socket)}`);
  known(tc, ['@type', 'sni', 'common_tls_context'], 'UpstreamTlsContext');
  const common = (tc.common_tls_context ?? {}) as Json;
  known(common, ['alpn_protocols', 'tls_certificate_sds_secret_configs', 'validation_context'], 'CommonTlsContext');
  const tls: UpstreamTls = { alpn: common.alpn_protocols ?? [], sans: [] };
  if (tc.sni !== undefined) tls.sni = tc.sni;
  const sds = (common.tls_certificate_sds_secret_configs ?? []) as Json[];
  // Envoy's client contexts take one certificate at most.
  if (sds.length > 1) throw new Error('Multiple TLS certificates are not supported for client contexts');
  for (const c of sds) {
    known(c, ['name', 'sds_config'], 'SdsSecretConfig');
    const secret = (config.secrets as Json[]).find((x) => x.name === c.name);
    if (!secret) throw new Error(`secret ${c.name} is not in the configuration; Envoy would not load it`);
    known(secret, ['name', 'tls_certificate'], 'Secret');
    known(secret.tls_certificate, ['certificate_chain', 'private_key'], 'TlsCertificate');
    tls.clientCertificate = secret.tls_certificate.certificate_chain.inline_string;
  }
  const vc = common.validation_context as Json | undefined;
  if (vc) {
    known(vc, ['trusted_ca', 'match_typed_subject_alt_names'], 'CertificateValidationContext');
    tls.sans = vc.match_typed_subject_alt_names ?? [];
    const ca = vc.trusted_ca as Json | undefined;
    if (ca?.inline_string !== undefined) tls.trusted = pemCertificates(ca.inline_string);
    else if (ca?.filename !== undefined) {
      const file = world.files?.[ca.filename];
      if (file === undefined) throw new Error(`the model has no file ${ca.filename}`);
      tls.trusted = pemCertificates(file);
    } else if (tls.sans.length > 0) throw new Error('Envoy refuses SAN matching without trusted_ca');
  }
  return tls;
}

/** Envoy's Utility::dnsNameMatch: a certificate name with a `*` in its first label matches that one label. */
function dnsNameMatch(name: string, pattern: string): boolean {
  const [n, p] = [name.toLowerCase(), pattern.toLowerCase()];
  if (n === p) return true;
  const cut = (s: string) => [s.slice(0, s.indexOf('.')), s.slice(s.indexOf('.') + 1)];
  if (!n.includes('.') || !p.includes('.')) return false;
  const [nLabel, nRest] = cut(n) as [string, string];
  const [pLabel, pRest] = cut(p) as [string, string];
  if (!pLabel.includes('*') || pRest.includes('*') || pLabel.startsWith('xn--') || nRest !== pRest) return false;
  if (pLabel === '*') return true;
  const stars = pLabel.split('*');
  return stars.length === 2 && pLabel.length <= nLabel.length + 1 && nLabel.startsWith(stars[0] as string) && nLabel.endsWith(stars[1] as string);
}

/** A certificate's SANs of one type, from node's `DNS:a, URI:b` form. */
function sansOf(cert: X509Certificate, type: 'DNS' | 'URI'): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith(`${type}:`))
    .map((s) => s.slice(type.length + 1));
}

function sanMatches(cert: X509Certificate, matcher: Json): boolean {
  const type = matcher.san_type as string;
  if (type !== 'DNS' && type !== 'URI') throw new Error(`the model does not know the SAN type ${type}`);
  const m = matcher.matcher as Json;
  return sansOf(cert, type).some((san) => (type === 'DNS' && m.exact !== undefined ? dnsNameMatch(m.exact, san) : stringMatches(m, san)));
}

/** OpenSSL's chain building with X509_V_FLAG_PARTIAL_CHAIN (Envoy's default): any trusted certificate is an anchor. */
function chainFailure(chain: X509Certificate[], trusted: X509Certificate[]): string | undefined {
  const now = Date.now();
  let cert = chain[0];
  for (let depth = 0; cert && depth < 10; depth++) {
    if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now) return `certificate ${cert.subject} is not valid now`;
    const current = cert;
    if (trusted.some((t) => t.fingerprint256 === current.fingerprint256)) return undefined;
    const issuedBy = (i: X509Certificate) => i.ca && current.checkIssued(i) && current.verify(i.publicKey);
    if (trusted.some(issuedBy)) return undefined;
    cert = chain.slice(1).find(issuedBy);
  }
  return 'certificate verify failed: unable to get local issuer certificate';
}

/**
 * The endpoint's check of the client certificate Envoy presents when asked (`clients`): why it
 * fails the handshake, if it does.
 */
function clientFailure(clients: ClientVerification, presented: X509Certificate[]): string | undefined {
  if (presented.length === 0) return clients.required ? 'the endpoint requires a client certificate and Envoy presents none' : undefined;
  const failure = chainFailure(presented, pemCertificates(clients.ca));
  return failure && `the endpoint refuses Envoy's client certificate: ${failure}`;
}

/** Why a connection to an endpoint fails, as Envoy would find it; undefined when it works. */
function connectFailure(server: Endpoint, codec: Protocol, tls: UpstreamTls | undefined): string | undefined {
  const protocols = server.protocols ?? ['http/1.1', 'h2'];
  if (!server.tls) {
    if (tls) return 'the endpoint does not speak TLS, so the handshake fails';
    return protocols.includes(codec) ? undefined : `the endpoint does not speak ${codec}`;
  }
  if (!tls) return 'the endpoint speaks TLS only and resets a cleartext connection';
  const chain = pemCertificates(server.tls.certificate);
  if (tls.trusted) {
    const failure = chainFailure(chain, tls.trusted);
    if (failure) return failure;
  }
  const leaf = chain[0] as X509Certificate;
  if (tls.sans.length > 0 && !tls.sans.some((m) => sanMatches(leaf, m)))
    return `the certificate's names (${leaf.subjectAltName}) match no match_typed_subject_alt_names entry`;
  if (server.tls.clients) {
    const failure = clientFailure(server.tls.clients, pemCertificates(tls.clientCertificate ?? ''));
    if (failure) return failure;
  }
  const negotiated = tls.alpn.find((p) => (protocols as string[]).includes(p));
  if (tls.alpn.length > 0 && !negotiated) return `no ALPN protocol in common (offered ${tls.alpn.join(',')})`;
  if (codec === 'h2' && negotiated !== 'h2') return 'HTTP/2 over TLS needs h2 negotiated by ALPN';
  return protocols.includes(codec) ? undefined : `the endpoint does not speak ${codec}`;
}

interface Connection {
  sni?: string;
  /** What the endpoints that ask for a client certificate were shown (the same from every endpoint). */
  peerCertificates?: string[];
  failure?: string;
}

/**
 * The SNI Envoy sends to a cluster, the client certificate its endpoints see, and why it cannot
 * connect to one of them (if so).
 */
function connect(config: EnvoyConfig, cluster: Json, protocol: Upstream['protocol'], world: World): Connection {
  const tls = upstreamTls(config, cluster.transport_socket, world);
  const codec: Protocol = protocol === 'HTTP/2' ? 'h2' : 'http/1.1';
  const out: Connection = {};
  if (tls?.sni !== undefined) out.sni = tls.sni;
  for (const address of endpointsOf(config, cluster)) {
    const server = world.endpoints?.[address];
    const failure = server && connectFailure(server, codec, tls);
    if (failure) return { ...out, failure: `${address}: ${failure}` };
    // A Go TLS server reports each certificate of the chain it was shown, PEM-encoded again.
    if (server?.tls?.clients) out.peerCertificates = pemCertificates(tls?.clientCertificate ?? '').map((c) => c.toString());
  }
  return out;
}

/** Envoy's Grpc::Utility::httpToGrpcStatus, for its local replies to gRPC requests. */
function grpcOfHttp(status: number): number {
  const map: Record<number, number> = { 400: 13, 401: 16, 403: 7, 404: 12, 429: 14, 502: 14, 503: 14, 504: 14 };
  return map[status] ?? 2;
}

/**
 * The gRPC status a gRPC client gets: OK when the request reaches a backend (which answers it),
 * else Envoy's local reply as a status (no route: UNIMPLEMENTED; a 503: UNAVAILABLE; a 500: UNKNOWN).
 */
export function grpcStatus(o: Outcome): number {
  if (o.type === 'forward') return o.upstreams.some((u) => u.failure !== undefined) ? grpcOfHttp(503) : 0;
  if (o.type === 'not-found' || o.type === 'direct') return grpcOfHttp(o.status);
  throw new Error(`a gRPC client gets no status from ${JSON.stringify(o)}`);
}

/** The clusters a forwarded request may reach, with their weights; `[]` for anything else. */
export function clustersOf(o: Outcome): [string, number][] {
  return o.type === 'forward' ? o.upstreams.map((u) => [u.cluster, u.weight]) : [];
}

/** The route a request reached, or the kind of answer it got without one. */
export function routeOf(o: Outcome): string {
  return 'route' in o ? o.route : o.type;
}

/**
 * The hosts a cluster sends to, as Envoy knows them: a STATIC cluster's load_assignment, or an EDS
 * cluster's ClusterLoadAssignment. DNS-resolved clusters name no address here, so they fail loudly.
 */
export function clusterHosts(config: EnvoyConfig, name: string): { address: string; port: number }[] {
  const cluster = (config.clusters as Json[]).find((c) => c.name === name);
  if (!cluster) throw new Error(`no cluster ${name}`);
  let assignment: Json | undefined;
  if (cluster.type === 'STATIC') assignment = cluster.load_assignment;
  else if (cluster.type === 'EDS') assignment = (config.endpoints as Json[]).find((a) => a.cluster_name === (cluster.eds_cluster_config?.service_name ?? name));
  else throw new Error(`the model cannot list the hosts of a ${cluster.type} cluster (${name})`);
  return ((assignment?.endpoints ?? []) as Json[]).flatMap((locality) =>
    (locality.lb_endpoints as Json[]).map((e) => ({ address: e.endpoint.address.socket_address.address, port: e.endpoint.address.socket_address.port_value })),
  );
}
