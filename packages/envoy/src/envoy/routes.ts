// IR routes to Envoy routes: matches, header and path changes, weighted clusters with the picker
// each one asks, mirrors, hash policies, and the timeouts and retries a picker's list needs.
import { literalHeaderValue } from '../limits.js';
import { compare } from '../json.js';
import type { External, HeaderModifier, Match, PathModifier, ValueMatch } from '../read/index.js';
import { type Backend, type Destination, type Forward, type Listener, type RedirectAction, type Route, composeHeaders, usesPicker } from '../resolve/index.js';
import type { BuildContext } from './context.js';
import { corsPolicy } from './cors.js';
import { envoyDuration } from './proto-duration.js';
import { extProcConfig, extProcFilterName, type TypedPerFilterConfig } from './ext-proc.js';
import { INVALID_BACKEND_CLUSTER, NAME, TYPE } from './names.js';
import type { CoreV3, MatcherV3, RouteV3 } from './types.js';

/** What a route, a virtual host or a weighted cluster changes in the headers. */
type HeaderChanges = Pick<RouteV3.Route, 'request_headers_to_add' | 'request_headers_to_remove' | 'response_headers_to_add' | 'response_headers_to_remove'>;

const REDIRECT_CODES: Record<number, RouteV3.RedirectAction_RedirectResponseCode> = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

function stringMatch(m: ValueMatch): MatcherV3.StringMatcher {
  return m.type === 'Exact' ? { exact: m.value } : { safe_regex: { regex: m.value } };
}

/**
 * Envoy's form of one route match. PathPrefix is element-wise, as path_separated_prefix is; a
 * GRPCRoute match is on the call's path and takes gRPC requests only (content-type application/grpc).
 */
function pathMatch({ type, value }: Match['path']): RouteV3.RouteMatch {
  if (type === 'Exact') return { path: value };
  if (type === 'RegularExpression') return { safe_regex: { regex: value } };
  const trimmed = value.replace(/\/+$/, '');
  return trimmed === '' ? { prefix: '/' } : { path_separated_prefix: trimmed };
}

function envoyMatch(m: Match): RouteV3.RouteMatch {
  const out = pathMatch(m.path);
  if (m.grpc) out.grpc = {};
  const headers: RouteV3.HeaderMatcher[] = m.headers.map((h) => ({ name: h.name, string_match: stringMatch(h) }));
  if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
  if (headers.length > 0) out.headers = headers;
  if (m.queryParams.length > 0) out.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q) }));
  return out;
}

function headerChanges(h: HeaderModifier | undefined, prefix: 'request' | 'response'): HeaderChanges {
  const into: HeaderChanges = {};
  if (!h) return into;
  const add: CoreV3.HeaderValueOption[] = [
    ...h.set.map((v) => ({ header: { key: v.name, value: literalHeaderValue(v.value) }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' as const })),
    ...h.add.map((v) => ({ header: { key: v.name, value: literalHeaderValue(v.value) }, append_action: 'APPEND_IF_EXISTS_OR_ADD' as const })),
  ];
  if (add.length) into[`${prefix}_headers_to_add`] = add;
  if (h.remove.length) into[`${prefix}_headers_to_remove`] = h.remove;
  return into;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * Gateway API's redirect port: the filter's port; else the default port of the scheme the filter
 * sets; else, with neither, the port of the listener the request came on when it is not its
 * scheme's default (Envoy alone would keep the Host header's port, which a client may leave out).
 */
function redirectPort(a: RedirectAction, listener: Listener): number | undefined {
  const r = a.redirect;
  if (r.port !== undefined) return r.port;
  if (r.scheme !== undefined) return DEFAULT_PORT[r.scheme];
  const scheme = listener.protocol === 'HTTPS' ? 'https' : 'http';
  return listener.port === DEFAULT_PORT[scheme] ? undefined : listener.port;
}

/**
 * A ReplacePrefixMatch as Envoy's prefix_rewrite, which puts the replacement (without trailing
 * slashes) where the matched prefix was: `/foo/bar` with `/foo` → `/xyz/` gives `/xyz/bar`. Where
 * the prefix or the replacement is the root, a prefix rewrite would leave `//rest` or drop the
 * slash, so a regex replaces the prefix and the slashes after it.
 */
function prefixRewrite(replacement: string, prefix: string): Pick<RouteV3.RouteAction, 'prefix_rewrite' | 'regex_rewrite'> {
  const trimmed = replacement.replace(/\/+$/, '');
  if (trimmed === '' || prefix === '') return { regex_rewrite: { pattern: { regex: `^${escapeRegex(prefix)}/*` }, substitution: `${trimmed}/` } };
  return { prefix_rewrite: trimmed };
}

/** A path modifier in a redirect: path_redirect, or the prefix rewrites above. */
function redirectPath(
  path: PathModifier | undefined,
  prefix: string | undefined,
): Pick<RouteV3.RedirectAction, 'path_redirect' | 'prefix_rewrite' | 'regex_rewrite'> {
  if (path?.type === 'ReplaceFullPath') return { path_redirect: path.value };
  if (path?.type === 'ReplacePrefixMatch' && prefix !== undefined) return prefixRewrite(path.value, prefix);
  return {};
}

function redirect(a: RedirectAction, listener: Listener): RouteV3.RedirectAction {
  const r = a.redirect;
  const out: RouteV3.RedirectAction = {};
  if (r.scheme) out.scheme_redirect = r.scheme;
  if (r.hostname !== undefined) out.host_redirect = r.hostname;
  const port = redirectPort(a, listener);
  if (port !== undefined) out.port_redirect = port;
  Object.assign(out, redirectPath(r.path, a.prefix));
  out.response_code = REDIRECT_CODES[r.statusCode] ?? 'FOUND';
  return out;
}

/** The rule's path rewrite on a forwarded request. */
function rewritePath(f: Forward, ra: RouteV3.RouteAction): void {
  const rw = f.rewrite;
  if (rw?.path?.type === 'ReplaceFullPath') ra.regex_rewrite = { pattern: { regex: '^/.*$' }, substitution: rw.path.value };
  else if (rw?.path?.type === 'ReplacePrefixMatch' && rw.prefix !== undefined) Object.assign(ra, prefixRewrite(rw.path.value, rw.prefix));
}

function hashPolicies(backends: Backend[]): RouteV3.RouteAction_HashPolicy[] {
  const out = new Map<string, RouteV3.RouteAction_HashPolicy>();
  for (const b of backends) {
    const ch = b.lb.consistentHash;
    if (!ch) continue;
    let policy: RouteV3.RouteAction_HashPolicy;
    // The schema requires the header or cookie of its type; without one there is nothing to hash.
    if (ch.type === 'Header') {
      if (ch.header === undefined) continue;
      policy = { header: { header_name: ch.header } };
    } else if (ch.type === 'Cookie') {
      if (ch.cookie === undefined) continue;
      policy = { cookie: { name: ch.cookie.name, ...(ch.cookie.ttlMs !== undefined ? { ttl: envoyDuration(ch.cookie.ttlMs) } : {}) } };
    } else policy = { connection_properties: { source_ip: true } };
    out.set(JSON.stringify(policy), policy);
  }
  return [...out.entries()].sort(([a], [b]) => compare(a, b)).map(([, p]) => p);
}

/**
 * Gateway API timeouts and retry (GEP-1742, GEP-1731), plus what override_host needs: each retry
 * takes the next endpoint of the picker's list, so a list of n endpoints needs n-1 retries, and a
 * per-try timeout so a slow endpoint does not use up the whole request timeout.
 */
function timeoutsAndRetries(route: Route, f: Forward, ra: RouteV3.RouteAction, externals: External[], ctx: BuildContext): void {
  const { requestMs, backendRequestMs } = f.timeouts;
  const walk = Math.max(0, ...externals.map((e) => e.maxEndpoints - 1));
  const retry = f.retry;
  if (!retry && walk === 0) {
    if (requestMs !== undefined) ra.timeout = envoyDuration(requestMs);
    else if (backendRequestMs !== undefined) ra.timeout = envoyDuration(backendRequestMs);
    if (requestMs !== undefined && backendRequestMs !== undefined) ra.retry_policy = { num_retries: 0, per_try_timeout: envoyDuration(backendRequestMs) };
    return;
  }
  const retryOn = new Set<string>();
  let codes: number[] | undefined;
  let attempts = walk;
  if (retry) {
    // GEP-1731: implementations should retry on connection errors whenever retry is set.
    for (const c of ['connect-failure', 'refused-stream', 'reset']) retryOn.add(c);
    if (retry.codes.length > 0) {
      retryOn.add('retriable-status-codes');
      codes = [...retry.codes].sort((a, b) => a - b);
    }
    attempts = Math.max(attempts, retry.attempts ?? 1);
  }
  if (walk > 0) for (const c of ['connect-failure', 'reset', '5xx']) retryOn.add(c);
  const perTry = backendRequestMs ?? (walk > 0 ? ctx.options.perTryTimeoutMs : undefined);
  let backOff: RouteV3.RetryPolicy_RetryBackOff | undefined;
  if (retry?.backoffMs !== undefined) {
    if (retry.backoffMs > 0) backOff = { base_interval: envoyDuration(retry.backoffMs) };
    else
      ctx.diags.info(
        'RetryBackoff',
        'a zero retry backoff cannot be expressed in Envoy; its default (25ms) applies',
        route.route,
        `spec.rules[${route.rule}].retry.backoff`,
      );
  }
  ra.retry_policy = {
    retry_on: [...retryOn].sort().join(','),
    num_retries: attempts,
    ...(perTry !== undefined ? { per_try_timeout: envoyDuration(perTry) } : {}),
    // Once the picker's list is used up the fallback policy picks; it should not re-pick a host
    // that already failed.
    ...(walk > 0
      ? { retry_host_predicate: [{ name: NAME.previousHosts, typed_config: { '@type': TYPE.previousHosts } }], host_selection_retry_max_attempts: '5' as const }
      : {}),
    ...(codes ? { retriable_status_codes: codes } : {}),
    ...(backOff ? { retry_back_off: backOff } : {}),
  };
  if (requestMs !== undefined) ra.timeout = envoyDuration(requestMs);
  else if (perTry !== undefined && walk > 0) ra.timeout = envoyDuration(perTry * (attempts + 1)); // room for every attempt
}

interface Entry {
  backend: Backend;
  weight: number;
  destination: Destination;
}

/**
 * Header and hostname changes of the rule and of each destination. Envoy applies a weighted
 * cluster's changes before its route's, so the route's win where both touch a header or the
 * Host; on responses that is Gateway API's order (the backendRef's, then the rule's), on requests
 * it is the reverse. So when a destination changes request headers (or the Host), every weighted
 * cluster carries the rule's and its own composed, and the route none.
 */
function headersAndHost(
  f: Forward,
  entries: Entry[],
  out: HeaderChanges,
  ra: RouteV3.RouteAction,
  clusters: RouteV3.WeightedCluster_ClusterWeight[] | undefined,
): void {
  const perRequest = clusters !== undefined && entries.some((e) => e.destination.requestHeaders !== undefined);
  const perHost = clusters !== undefined && entries.some((e) => e.destination.hostname !== undefined);
  if (!perRequest) Object.assign(out, headerChanges(f.requestHeaders, 'request'));
  Object.assign(out, headerChanges(f.responseHeaders, 'response'));
  if (!perHost && f.rewrite?.hostname !== undefined) ra.host_rewrite_literal = f.rewrite.hostname;
  entries.forEach((e, i) => {
    const c = clusters?.[i];
    if (!c) return;
    if (perRequest) Object.assign(c, headerChanges(composeHeaders(f.requestHeaders, e.destination.requestHeaders), 'request'));
    Object.assign(c, headerChanges(e.destination.responseHeaders, 'response'));
    const host = e.destination.hostname ?? f.rewrite?.hostname;
    if (perHost && host !== undefined) c.host_rewrite_literal = host;
  });
}

function hasOwnFilters(d: Destination): boolean {
  return d.requestHeaders !== undefined || d.responseHeaders !== undefined || d.hostname !== undefined;
}

function forward(route: Route, f: Forward, head: Pick<RouteV3.Route, 'name' | 'match'>, ctx: BuildContext): RouteV3.Route {
  const backends = ctx.gateway.backends;
  const entries: Entry[] = [];
  let invalidWeight = 0;
  for (const d of f.destinations) {
    const b = d.backend === undefined ? undefined : backends[d.backend];
    if (!b || d.invalid !== undefined) invalidWeight += d.weight;
    else if (d.weight > 0) entries.push({ backend: b, weight: d.weight, destination: d });
  }
  const externals = entries.filter((e) => usesPicker(e.backend));
  const first = externals[0];
  // The route level enables the first picker backend's disabled-by-default filter; each weighted
  // entry's own config, more specific, then says which picker (or none) its backend uses.
  const routeFilter = first ? extProcFilterName(first.backend, ctx) : undefined;
  let clusters: RouteV3.WeightedCluster_ClusterWeight[] | undefined;
  let ra: RouteV3.RouteAction;
  const [only] = entries;
  if (only && entries.length === 1 && invalidWeight === 0 && !hasOwnFilters(only.destination)) ra = { cluster: only.backend.key };
  else {
    clusters = entries.map((e) => {
      const c: RouteV3.WeightedCluster_ClusterWeight = { name: e.backend.key, weight: e.weight };
      if (routeFilter !== undefined) c.typed_per_filter_config = extProcConfig(e.backend, routeFilter, ctx);
      return c;
    });
    const all = [...clusters];
    if (invalidWeight > 0) {
      // The share that answers 500 asks no picker: without its own config it would inherit the
      // route's, which enables the first backend's picker.
      const invalid: RouteV3.WeightedCluster_ClusterWeight = { name: INVALID_BACKEND_CLUSTER, weight: invalidWeight };
      if (routeFilter !== undefined) invalid.typed_per_filter_config = extProcConfig(undefined, routeFilter, ctx);
      all.push(invalid);
    }
    ra = { weighted_clusters: { clusters: all } };
    if (invalidWeight > 0) ra.cluster_not_found_response_code = f.invalidStatus === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR';
  }
  const out: HeaderChanges & Pick<RouteV3.Route, 'typed_per_filter_config'> = {};
  headersAndHost(f, entries, out, ra, clusters);
  const perRoute: TypedPerFilterConfig = {};
  if (first) Object.assign(perRoute, extProcConfig(first.backend, undefined, ctx));
  if (f.cors) Object.assign(perRoute, corsPolicy(f.cors));
  if (Object.keys(perRoute).length > 0) out.typed_per_filter_config = perRoute;
  rewritePath(f, ra);
  if (f.mirrors.length > 0) {
    ra.request_mirror_policies = f.mirrors.map((m) => {
      const mirror: RouteV3.RouteAction_RequestMirrorPolicy = { cluster: m.backend };
      if (m.percent !== undefined) mirror.runtime_fraction = { default_value: { numerator: m.percent, denominator: 'HUNDRED' } };
      else if (m.fraction)
        mirror.runtime_fraction = {
          default_value: { numerator: Math.round((m.fraction.numerator * 1_000_000) / m.fraction.denominator), denominator: 'MILLION' },
        };
      return mirror;
    });
  }
  const hash = hashPolicies(entries.map((e) => e.backend));
  if (hash.length > 0) ra.hash_policy = hash;
  // A WebSocket backend needs the HTTP/1.1 upgrade let through; Envoy refuses it (403) by default.
  if (entries.some((e) => e.backend.websocket)) ra.upgrade_configs = [{ upgrade_type: 'websocket' }];
  timeoutsAndRetries(
    route,
    f,
    ra,
    externals.map((e) => e.backend.lb.external as External),
    ctx,
  );
  return { ...head, ...out, route: ra };
}

/** One Envoy route, on a listener. */
export function envoyRoute(route: Route, listener: Listener, ctx: BuildContext): RouteV3.Route {
  const head = { name: route.name, match: envoyMatch(route.match) };
  const a = route.action;
  if (a.type === 'direct') return { ...head, direct_response: { status: a.status } };
  // Envoy adds a route's response headers to its redirects too.
  if (a.type === 'redirect') return { ...head, ...headerChanges(a.responseHeaders, 'response'), redirect: redirect(a, listener) };
  return forward(route, a, head, ctx);
}
