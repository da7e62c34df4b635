// A model of what Envoy does with one HTTP request under a converted configuration, for checking
// the request → response expectations of the upstream conformance suites without an Envoy binary.
// It follows Envoy's documented router behaviour for the fields the converter emits: the listener
// by port, the filter chain by TLS SNI, the virtual host by Host (exact names, then the longest
// suffix wildcard, then `*`; a Host's port is ignored when the connection manager strips it or the
// route table ignores it), the first route whose match holds, then its action — a fixed answer, a
// redirect (Envoy's Utility::newUri rules), or forwarding with header changes, rewrites, weighted
// clusters and mirrors. It reads only the Envoy JSON, so it checks the Envoy stage's output, not
// the converter's intent; a field it does not know fails loudly rather than being ignored.
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
  /** The weighted_clusters entry as emitted, when the route splits traffic (endpoint-model.ts reads it). */
  weighted?: Json;
}

export type Outcome =
  | { type: 'no-listener' | 'no-chain' }
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
      /** The route entry and the connection manager's HTTP filters as emitted, for endpoint-model.ts. */
      entry: Json;
      httpFilters: Json[];
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

function routeMatches(match: Json, req: Request, headers: Record<string, string>): boolean {
  const [path, query] = splitPath(req.path);
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

export function handle(config: EnvoyConfig, req: Request): Outcome {
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
    const upstream: Upstream = { cluster: t.name, weight: t.weight, host: upstreamHost, path: upstreamPath, headers: rest };
    if (ra.weighted_clusters) upstream.weighted = t;
    return upstream;
  });
  const out: Outcome = {
    type: 'forward',
    route: entry.name,
    upstreams,
    mirrors: (ra.request_mirror_policies ?? []).map((m: Json) => m.cluster),
    responseHeaders,
    entry,
    httpFilters: hcm.http_filters ?? [],
  };
  if (ra.cluster_not_found_response_code === 'INTERNAL_SERVER_ERROR') out.clusterNotFound = 500;
  return out;
}

/** The clusters a forwarded request may reach, with their weights; `[]` for anything else. */
export function clustersOf(o: Outcome): [string, number][] {
  return o.type === 'forward' ? o.upstreams.map((u) => [u.cluster, u.weight]) : [];
}

/** The route a request reached, or the kind of answer it got without one. */
export function routeOf(o: Outcome): string {
  return 'route' in o ? o.route : o.type;
}
