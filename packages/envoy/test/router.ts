// Where a request goes in a converted configuration, decided the way Envoy's router decides it:
// the listener by port, the filter chain by TLS SNI, the virtual host by Host (exact names, then
// the longest suffix wildcard, then `*`), then the first route whose match holds. Tests use it to
// check request → backend expectations of the conformance suites without an Envoy binary; it
// reads only the Envoy JSON, so it checks the last stage's output, not the converter's intent.
import type { EnvoyConfig } from '../src/index.js';

type Json = Record<string, any>;

export interface Request {
  port: number;
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  /** TLS server name; HTTPS listeners choose their filter chain by it. */
  sni?: string;
}

export type Outcome =
  | { type: 'no-listener' }
  | { type: 'no-chain' }
  /** No virtual host or no route matched: Envoy answers 404. */
  | { type: 'not-found' }
  | { type: 'route'; route: string; entry: Json };

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
  return false;
}

function routeMatches(match: Json, req: Request): boolean {
  const [path = '', query = ''] = req.path.split('?');
  if (match.path !== undefined && path !== match.path) return false;
  if (match.prefix !== undefined && !path.startsWith(match.prefix)) return false;
  if (match.path_separated_prefix !== undefined) {
    const p = match.path_separated_prefix as string;
    if (!(path === p || path.startsWith(`${p}/`))) return false;
  }
  if (match.safe_regex && !new RegExp(`^(?:${match.safe_regex.regex})$`).test(path)) return false;
  const headers: Record<string, string> = { ':method': req.method ?? 'GET' };
  for (const [k, v] of Object.entries(req.headers ?? {})) headers[k.toLowerCase()] = v;
  for (const h of match.headers ?? []) if (!stringMatches(h.string_match, headers[h.name])) return false;
  const params = new URLSearchParams(query);
  for (const q of match.query_parameters ?? []) if (!stringMatches(q.string_match, params.get(q.name) ?? undefined)) return false;
  return true;
}

function hcmOf(chain: Json): Json {
  return chain.filters[0].typed_config;
}

export function route(config: EnvoyConfig, req: Request): Outcome {
  const listener = (config.listeners as Json[]).find((l) => l.address.socket_address.port_value === req.port);
  if (!listener) return { type: 'no-listener' };
  const chains = listener.filter_chains as Json[];
  const chain =
    chains.find((c) => req.sni !== undefined && (c.filter_chain_match?.server_names ?? []).some((n: string) => domainScore(n, req.sni as string) > 1)) ??
    chains.find((c) => !c.filter_chain_match);
  if (!chain) return { type: 'no-chain' };
  const hcm = hcmOf(chain);
  const rc = (config.routes as Json[]).find((r) => r.name === hcm.rds.route_config_name) as Json;
  let host = req.host.toLowerCase();
  if (hcm.strip_any_host_port || rc.ignore_port_in_host_matching) host = host.replace(/:\d+$/, '');
  let best: Json | undefined;
  let bestScore = 0;
  for (const vh of rc.virtual_hosts as Json[]) {
    for (const d of vh.domains as string[]) {
      const score = domainScore(d.toLowerCase(), host);
      if (score > bestScore) {
        best = vh;
        bestScore = score;
      }
    }
  }
  const entry = (best?.routes as Json[] | undefined)?.find((r) => routeMatches(r.match, req));
  return entry ? { type: 'route', route: entry.name, entry } : { type: 'not-found' };
}

/** The clusters a routed request may reach, with their weights; `[]` for a redirect or fixed answer. */
export function clustersOf(o: Outcome): [string, number][] {
  if (o.type !== 'route' || !o.entry.route) return [];
  const ra = o.entry.route;
  if (ra.cluster) return [[ra.cluster, 1]];
  return (ra.weighted_clusters?.clusters ?? []).map((c: Json) => [c.name, c.weight]);
}
