// Load rules of route configurations and SNI matches that Envoy's C++ enforces and its protos do
// not express: RE2 limits, header changes, format strings, virtual host domains, weights and
// redirect ports. The limits are those the converter's read stage checks (../limits.ts), so a
// value the converter would refuse is caught here too if it ever reached the output.
import { type JsonObject, isObject } from '../json.js';
import { MAX_PORT, MAX_WEIGHT_SUM, headerFormatProblem, isUnmodifiableHeader, regexProblem } from '../limits.js';

export type Report = (path: string, message: string) => void;

function list(v: unknown): JsonObject[] {
  return Array.isArray(v) ? (v as JsonObject[]).filter(isObject) : [];
}

/**
 * Every RE2 regex under `value`: a `safe_regex` (route, header and query matches, CORS origins) or
 * a rewrite `pattern`, both RegexMatchers. Iterative, so no nesting depth can overflow the stack.
 */
export function regexRules(value: unknown, path: string, report: Report): void {
  const stack: [unknown, string][] = [[value, path]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, p] = next;
    if (Array.isArray(v)) for (const [i, x] of v.entries()) stack.push([x, `${p}[${i}]`]);
    if (!isObject(v)) continue;
    for (const [k, x] of Object.entries(v)) {
      const at = `${p}.${k}`;
      if ((k === 'safe_regex' || k === 'pattern') && isObject(x) && typeof x.regex === 'string') {
        const problem = regexProblem(x.regex);
        if (problem) report(`${at}.regex`, problem);
      } else stack.push([x, at]);
    }
  }
}

/**
 * The header changes of one level (route configuration, virtual host, route or weighted cluster):
 * Envoy refuses to touch `host` and pseudo-headers, and a value that is not a valid format string.
 * (NUL, CR and LF in a value are the proto's HTTP_HEADER_VALUE rule, checked in proto.ts.)
 */
export function headerRules(level: JsonObject, path: string, report: Report): void {
  for (const dir of ['request', 'response']) {
    list(level[`${dir}_headers_to_add`]).forEach((h, i) => {
      const at = `${path}.${dir}_headers_to_add[${i}].header`;
      const header = isObject(h.header) ? h.header : {};
      if (typeof header.key === 'string' && isUnmodifiableHeader(header.key)) report(`${at}.key`, ':-prefixed or host headers may not be modified');
      if (typeof header.value !== 'string') return;
      const problem = headerFormatProblem(header.value);
      if (problem) report(`${at}.value`, problem);
    });
    const removed = level[`${dir}_headers_to_remove`];
    (Array.isArray(removed) ? removed : []).forEach((name, i) => {
      if (typeof name === 'string' && isUnmodifiableHeader(name))
        report(`${path}.${dir}_headers_to_remove[${i}]`, ':-prefixed or host headers may not be removed');
    });
  }
}

/**
 * Why Envoy would refuse a virtual host domain, or undefined: it must name something, hold no NUL,
 * and have at most one `*`, at its start or its end (`*.example.com`, `example.*`, `*`).
 */
export function domainProblem(domain: string): string | undefined {
  if (domain === '') return 'a virtual host domain must not be empty';
  if (domain.includes('\u0000')) return 'a virtual host domain must not contain NUL';
  const stars = domain.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !domain.startsWith('*') && !domain.endsWith('*'))) {
    return `${JSON.stringify(domain)}: a wildcard may only be the first or the last character of a virtual host domain`;
  }
  return undefined;
}

/** A route's redirect port and weighted cluster weights. */
export function routeActionRules(route: JsonObject, path: string, report: Report): void {
  const redirect = isObject(route.redirect) ? route.redirect : undefined;
  const port = redirect?.port_redirect;
  if (typeof port === 'number' && (port < 1 || port > MAX_PORT))
    report(`${path}.redirect.port_redirect`, `port_redirect ${port} is not a port (1-${MAX_PORT})`);
  const ra = isObject(route.route) ? route.route : undefined;
  if (!isObject(ra?.weighted_clusters)) return;
  const sum = list(ra.weighted_clusters.clusters).reduce((s, c) => s + (typeof c.weight === 'number' ? c.weight : 0), 0);
  if (sum <= 0) report(`${path}.route.weighted_clusters`, 'the sum of weights must be greater than 0');
  if (sum > MAX_WEIGHT_SUM) report(`${path}.route.weighted_clusters`, `the sum of weights ${sum} exceeds ${MAX_WEIGHT_SUM}`);
}

/** SNI names: exact, or a wildcard that is the whole first label (`*.example.com`). */
export function serverNameRules(match: unknown, path: string, report: Report): void {
  if (!isObject(match) || !Array.isArray(match.server_names)) return;
  match.server_names.forEach((name, i) => {
    if (typeof name === 'string' && name.includes('*') && !(name.startsWith('*.') && !name.slice(1).includes('*'))) {
      report(`${path}.server_names[${i}]`, 'partial wildcards are not supported in "server_names"');
    }
  });
}
