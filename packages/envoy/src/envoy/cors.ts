// Gateway API's CORS filter as Envoy's CORS filter: one filter in the connection manager, which
// does nothing on its own, and a CorsPolicy per route that has the filter.
import type { Cors } from '../resolve/index.js';
import { NAME, TYPE } from './names.js';
import type { AnyOf, HcmV3, MatcherV3 } from './types.js';

const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A matcher for one allowed origin. `*` alone allows every origin (Envoy's own wildcard). Otherwise
 * the scheme must be the same, a leading `*.` in the host stands for one or more labels, and an
 * origin without a port means the scheme's default one, which browsers leave out of `Origin`.
 * Browsers send scheme and host in lower case, so the pattern is lower-cased too.
 */
function originMatcher(origin: string): MatcherV3.StringMatcher {
  if (origin === '*') return { exact: '*' };
  const m = /^(https?):\/\/(.+?)(?::(\d+))?$/.exec(origin.toLowerCase());
  const [, scheme = 'http', host = '', port] = m ?? [];
  const hostPattern = host === '*' ? '[^/:]+' : host.startsWith('*.') ? `[^/:]+\\.${escapeRegex(host.slice(2))}` : escapeRegex(host);
  const defaultPort = DEFAULT_PORT[scheme] as string;
  const portPattern = port === undefined || port === defaultPort ? `(:${defaultPort})?` : `:${port}`;
  return { safe_regex: { regex: `${scheme}://${hostPattern}${portPattern}` } };
}

/**
 * The route's CorsPolicy. Preflights from origins that are not allowed are answered by Envoy (200,
 * with no Access-Control-Allow-Origin) rather than sent to the backend, as Gateway API asks.
 */
export function corsPolicy(cors: Cors): { [NAME.cors]: AnyOf<typeof TYPE.corsPolicy> } {
  const policy: AnyOf<typeof TYPE.corsPolicy> = { '@type': TYPE.corsPolicy, allow_origin_string_match: cors.allowOrigins.map(originMatcher) };
  // A lone `*` makes Envoy echo the request's method or headers: what Gateway API requires when
  // credentials are allowed, and allows otherwise.
  if (cors.allowMethods.length > 0) policy.allow_methods = cors.allowMethods.join(', ');
  if (cors.allowHeaders.length > 0) policy.allow_headers = cors.allowHeaders.join(', ');
  if (cors.exposeHeaders.length > 0) policy.expose_headers = cors.exposeHeaders.join(', ');
  policy.max_age = String(cors.maxAgeSeconds);
  if (cors.allowCredentials) policy.allow_credentials = true;
  policy.forward_not_matching_preflights = false;
  return { [NAME.cors]: policy };
}

/** The connection manager's CORS filter; it acts only where a route has a CorsPolicy. */
export function corsFilter(): HcmV3.HttpFilter {
  return { name: NAME.cors, typed_config: { '@type': TYPE.cors } };
}
