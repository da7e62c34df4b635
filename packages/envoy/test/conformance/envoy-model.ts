// A model of what Envoy does with one HTTP request under a converted configuration, for checking
// the request → response expectations of the upstream conformance suites without an Envoy binary.
// It follows Envoy's documented router behaviour for the fields the converter emits: the listener
// by port, the filter chain by TLS SNI, the virtual host by Host (exact names, then the longest
// suffix wildcard, then `*`; a Host's port is ignored when the connection manager strips it or the
// route table ignores it), the first route whose match holds, then its action — a fixed answer, a
// redirect (Envoy's Utility::newUri rules), or forwarding with header changes, rewrites, weighted
// clusters and mirrors. gRPC requests (HTTP/2, content-type application/grpc) match `grpc` routes,
// and Envoy's local replies reach them as gRPC statuses. Each forwarded request is also connected
// to its cluster's endpoints as Envoy would: the cluster's codec, and its UpstreamTlsContext (SNI,
// ALPN, the default certificate validator's chain and SAN checks, with node:crypto) against what
// the endpoints serve — facts about the backends the caller gives as a World. It reads only the
// Envoy JSON, so it checks the Envoy stage's output, not the converter's intent; a field it does
// not know fails loudly rather than being ignored.
import { X509Certificate } from 'node:crypto';
import type { EnvoyConfig } from '../../src/index.js';

type Json = Record<string, any>;

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
  /** The client speaks HTTP/2 only (gRPC): with prior knowledge in cleartext, by ALPN over TLS. */
  http2?: boolean;
}

/** What an endpoint (`ip:port`) serves: the model's facts about the backends, beyond Envoy's config. */
export interface Endpoint {
  /** The endpoint speaks TLS only, presenting this PEM chain (leaf first). */
  tls?: { certificate: string };
  /** HTTP versions it serves (by ALPN over TLS); both when unset. */
  protocols?: ('http/1.1' | 'h2')[];
}

export interface World {
  endpoints?: Record<string, Endpoint>;
  /** Files Envoy reads (a system CA bundle), by path. */
  files?: Record<string, string>;
}

/** A request as it reaches a backend. */
export interface Upstream {
  /** The cluster chosen, with its weight when the route splits traffic. */
  cluster: string;
  weight: number;
  host: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The TLS server name Envoy sends, when the cluster speaks TLS. */
  sni?: string;
  /** Why Envoy cannot connect to an endpoint of the cluster: it answers 503. */
  failure?: string;
}

export type Outcome =
  | { type: 'no-listener' | 'no-chain' }
  /** The client and the listener have no HTTP version in common (an HTTP/2-only client). */
  | { type: 'connection-error'; reason: string }
  /** No virtual host or no route matched: Envoy answers 404. */
  | { type: 'not-found'; status: 404 }
  | { type: 'direct'; route: string; status: number }
  | { type: 'redirect'; route: string; status: number; location: URL }
  | {
      type: 'forward';
      route: string;
      upstreams: Upstream[];
      mirrors: string[];
      responseHeaders: { add: [string, string, string][]; remove: string[] };
      clusterNotFound?: number;
    };

const REDIRECT_STATUS: Record<string, number> = { MOVED_PERMANENTLY: 301, FOUND: 302, SEE_OTHER: 303, TEMPORARY_REDIRECT: 307, PERMANENT_REDIRECT: 308 };

function domainScore(domain: string, host: string): number {
  if (domain === host) return 3_000_000;
  if (domain === '*') return 1;
  if (domain.startsWith('*') && host.endsWith(domain.slice(1)) && host.length > domain.length - 1) return 2_000_000 + domain.length;
  if (domain.endsWith('*') && host.startsWith(domain.slice(0, -1)) && host.length > domain.length - 1) return 1_000_000 + domain.length;
  return 0;
}

function stringMatches(m: Json, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (m.exact !== undefined) return value === m.exact;
  if (m.prefix !== undefined) return value.startsWith(m.prefix);
  if (m.safe_regex) return new RegExp(`^(?:${m.safe_regex.regex})$`).test(value);
  throw new Error(`the model does not know the string match ${JSON.stringify(m)}`);
}

function splitPath(path: string): [string, string] {
  const i = path.indexOf('?');
  return i < 0 ? [path, ''] : [path.slice(0, i), path.slice(i + 1)];
}

/** Envoy's Grpc::Common::hasGrpcContentType: `application/grpc`, or `application/grpc+...`. */
function isGrpc(headers: Record<string, string>): boolean {
  const type = headers['content-type'] ?? '';
  return type === 'application/grpc' || type.startsWith('application/grpc+');
}

function routeMatches(match: Json, req: Request, headers: Record<string, string>): boolean {
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
 * Why an HTTP/2-only client cannot speak to a filter chain: over TLS, the listener must offer h2 by
 * ALPN (with none, Envoy exposes no ALPN and the client falls back to HTTP/1.1); in cleartext, the
 * connection manager must accept HTTP/2 (codec AUTO detects the prior-knowledge preface).
 */
function http2Refused(chain: Json, hcm: Json, req: Request): string | undefined {
  if (!req.http2) return undefined;
  if (chain.transport_socket) {
    const alpn: string[] = chain.transport_socket.typed_config?.common_tls_context?.alpn_protocols ?? [];
    return alpn.includes('h2') ? undefined : `the listener offers no h2 by ALPN (${JSON.stringify(alpn)})`;
  }
  return hcm.codec_type === 'AUTO' || hcm.codec_type === 'HTTP2' ? undefined : `codec_type ${hcm.codec_type} does not accept HTTP/2`;
}

/** The route table a request reaches, and the Host as the router sees it. */
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
  const hcm = chain.filters[0].typed_config;
  const h2 = http2Refused(chain, hcm, req);
  if (h2) return { type: 'connection-error', reason: h2 };
  const rc = hcm.route_config ?? (config.routes as Json[]).find((r) => r.name === hcm.rds.route_config_name);
  return { rc, hcm };
}

/** Envoy's Utility::newUri: the Location of a redirect. */
function location(r: Json, req: Request, hostHeader: string): URL {
  const scheme = r.scheme_redirect ?? (r.https_redirect ? 'https' : (req.scheme ?? 'http'));
  let host = hostHeader;
  let port = '';
  const m = /^(.*?)(:\d+)?$/.exec(host);
  if (r.port_redirect !== undefined) {
    host = m?.[1] ?? host;
    port = `:${r.port_redirect}`;
  } else if (m?.[2]) {
    // The request's port is kept unless it is the new scheme's default port.
    const requestPort = m[2];
    if ((scheme === 'http' && requestPort === ':80') || (scheme === 'https' && requestPort === ':443')) host = m[1] ?? host;
  }
  if (r.host_redirect !== undefined) host = r.host_redirect;
  const [path, query] = splitPath(req.path);
  let newPath = path;
  if (r.path_redirect !== undefined) newPath = r.path_redirect;
  else if (r.prefix_rewrite !== undefined) newPath = `${r.prefix_rewrite}${path.slice(r.matchedPrefix.length)}`;
  else if (r.regex_rewrite) newPath = path.replace(new RegExp(r.regex_rewrite.pattern.regex), r.regex_rewrite.substitution);
  const strip = r.strip_query === true;
  return new URL(`${scheme}://${host}${port}${newPath}${query && !strip && r.path_redirect?.includes('?') !== true ? `?${query}` : ''}`);
}

function applyHeaders(
  headers: Record<string, string>,
  entry: Json,
  prefix: 'request' | 'response',
  out?: { add: [string, string, string][]; remove: string[] },
): void {
  for (const h of entry[`${prefix}_headers_to_add`] ?? []) {
    const name = String(h.header.key).toLowerCase();
    const value = String(h.header.value);
    if (out) out.add.push([name, value, h.append_action]);
    else if (h.append_action === 'APPEND_IF_EXISTS_OR_ADD' && headers[name] !== undefined) headers[name] = `${headers[name]},${value}`;
    else headers[name] = value;
  }
  for (const name of entry[`${prefix}_headers_to_remove`] ?? []) {
    if (out) out.remove.push(String(name).toLowerCase());
    else delete headers[String(name).toLowerCase()];
  }
}

function matchedPrefix(match: Json, path: string): string {
  if (match.prefix !== undefined) return match.prefix;
  if (match.path_separated_prefix !== undefined) return match.path_separated_prefix;
  return path;
}

export function handle(config: EnvoyConfig, req: Request, world: World = {}): Outcome {
  const table = routeTable(config, req);
  if ('type' in table) return table;
  const { rc, hcm } = table;
  const headers: Record<string, string> = { ':method': req.method ?? 'GET' };
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
  if (!entry) return { type: 'not-found', status: 404 };
  if (entry.direct_response) return { type: 'direct', route: entry.name, status: entry.direct_response.status };
  const [path] = splitPath(req.path);
  if (entry.redirect) {
    const r = { ...entry.redirect, matchedPrefix: matchedPrefix(entry.match, path) };
    return {
      type: 'redirect',
      route: entry.name,
      status: REDIRECT_STATUS[entry.redirect.response_code ?? 'MOVED_PERMANENTLY'] ?? 301,
      location: location(r, req, host),
    };
  }
  const ra = entry.route;
  if (!ra) throw new Error(`route ${entry.name} has no action the model knows`);
  const responseHeaders = { add: [] as [string, string, string][], remove: [] as string[] };
  applyHeaders(headers, entry, 'response', responseHeaders);
  const targets: Json[] = ra.cluster ? [{ name: ra.cluster, weight: 1 }] : (ra.weighted_clusters?.clusters ?? []);
  const upstreams = targets.map((t) => {
    const h = { ...headers };
    // Route-level changes first, then the weighted cluster's own.
    applyHeaders(h, entry, 'request');
    applyHeaders(h, t, 'request');
    let upstreamPath = req.path;
    const [p, q] = splitPath(req.path);
    if (ra.prefix_rewrite !== undefined) upstreamPath = `${ra.prefix_rewrite}${p.slice(matchedPrefix(entry.match, p).length)}${q ? `?${q}` : ''}`;
    else if (ra.regex_rewrite) upstreamPath = `${p.replace(new RegExp(ra.regex_rewrite.pattern.regex), ra.regex_rewrite.substitution)}${q ? `?${q}` : ''}`;
    const upstreamHost = t.host_rewrite_literal ?? ra.host_rewrite_literal ?? host;
    const { ':method': _method, ...rest } = h;
    return { cluster: t.name, weight: t.weight, host: upstreamHost, path: upstreamPath, headers: rest, ...connect(config, t.name, world) };
  });
  const out: Outcome = {
    type: 'forward',
    route: entry.name,
    upstreams,
    mirrors: (ra.request_mirror_policies ?? []).map((m: Json) => m.cluster),
    responseHeaders,
  };
  if (ra.cluster_not_found_response_code === 'INTERNAL_SERVER_ERROR') out.clusterNotFound = 500;
  return out;
}

// ---- Upstream connections ---------------------------------------------------------------------

type Protocol = 'http/1.1' | 'h2';

/** The HTTP version a cluster speaks (its HttpProtocolOptions; HTTP/1.1 without them). */
function codecOf(cluster: Json): Protocol {
  const options = cluster.typed_extension_protocol_options as Json | undefined;
  if (!options) return 'http/1.1';
  const http = options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
  if (!http || Object.keys(options).length !== 1) throw new Error(`the model does not know the protocol options ${JSON.stringify(options)}`);
  const explicit = http.explicit_http_config as Json | undefined;
  if (explicit?.http2_protocol_options) return 'h2';
  if (explicit?.http_protocol_options) return 'http/1.1';
  throw new Error(`the model does not know the HTTP protocol options ${JSON.stringify(http)}`);
}

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
}

function only(o: Json, known: string[], what: string): void {
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new Error(`the model does not know ${what} fields ${unknown.join(', ')}`);
}

function pemCertificates(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b));
}

/** A cluster's UpstreamTlsContext, read field by field. */
function upstreamTls(socket: Json | undefined, world: World): UpstreamTls | undefined {
  if (!socket) return undefined;
  const tc = socket.typed_config as Json;
  if (socket.name !== 'envoy.transport_sockets.tls' || tc?.['@type'] !== 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext')
    throw new Error(`the model does not know the transport socket ${JSON.stringify(socket)}`);
  only(tc, ['@type', 'sni', 'common_tls_context'], 'UpstreamTlsContext');
  const common = (tc.common_tls_context ?? {}) as Json;
  only(common, ['alpn_protocols', 'validation_context'], 'CommonTlsContext');
  const tls: UpstreamTls = { alpn: common.alpn_protocols ?? [], sans: [] };
  if (tc.sni !== undefined) tls.sni = tc.sni;
  const vc = common.validation_context as Json | undefined;
  if (vc) {
    only(vc, ['trusted_ca', 'match_typed_subject_alt_names'], 'CertificateValidationContext');
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
  const negotiated = tls.alpn.find((p) => (protocols as string[]).includes(p));
  if (tls.alpn.length > 0 && !negotiated) return `no ALPN protocol in common (offered ${tls.alpn.join(',')})`;
  if (codec === 'h2' && negotiated !== 'h2') return 'HTTP/2 over TLS needs h2 negotiated by ALPN';
  return protocols.includes(codec) ? undefined : `the endpoint does not speak ${codec}`;
}

/** The SNI Envoy sends to a cluster, and why it cannot connect to one of its endpoints (if so). */
function connect(config: EnvoyConfig, clusterName: string, world: World): { sni?: string; failure?: string } {
  const cluster = (config.clusters as Json[]).find((c) => c.name === clusterName);
  if (!cluster) return {};
  const tls = upstreamTls(cluster.transport_socket, world);
  const codec = codecOf(cluster);
  const out: { sni?: string; failure?: string } = {};
  if (tls?.sni !== undefined) out.sni = tls.sni;
  for (const address of endpointsOf(config, cluster)) {
    const server = world.endpoints?.[address];
    const failure = server && connectFailure(server, codec, tls);
    if (failure) return { ...out, failure: `${address}: ${failure}` };
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
