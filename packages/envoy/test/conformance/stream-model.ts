// A model of what Envoy does with one TCP connection or UDP datagram session under a converted
// configuration, stated as Envoy documents it, for the TLSRoute, TCPRoute and UDPRoute tests:
// - The listener by port and transport: a UDP listener is one whose socket_address.protocol is
//   UDP; its udp_proxy (a listener filter: a UDP listener has no filter chains) routes each session
//   by its matcher — here only on_no_match, whose action is a udp_proxy Route naming one cluster.
// - A TCP listener's filter chain (FilterChainMatch): a chain's server_names match the TLS SNI
//   exactly, or by the longest `*.` suffix (any number of labels), ahead of a chain with no
//   server_names; SNI is known only when the listener has the tls_inspector listener filter, and
//   only when the client sent TLS. With no chain matching, Envoy closes the connection.
// - A chain's DownstreamTlsContext terminates TLS (the handshake of envoy-tls-model.ts); without
//   one, the bytes — the client's TLS included — go through untouched.
// - tcp_proxy sends the connection to `cluster`, or to one of `weighted_clusters` with the share of
//   its weight; a cluster that does not exist closes the connection. hash_policy source_ip (and
//   udp_proxy's hash_policies source_ip) gives a ring hash or Maglev cluster the client's address.
// - A cluster's UpstreamTlsContext re-encrypts towards the endpoints, with its sni.
// It reads only the Envoy JSON; a field it does not know fails loudly.
import type { EnvoyConfig } from '../../src/index.js';
import { handshake } from './envoy-tls-model.js';

type Json = Record<string, any>;

export interface Connection {
  port: number;
  transport?: 'tcp' | 'udp';
  /** The client speaks TLS, with this SNI (none: it sends no server name). */
  tls?: { sni?: string; clientCertificate?: string };
}

/** How the bytes reach the backend. */
export interface StreamUpstream {
  cluster: string;
  /** The share of connections (sessions) this cluster gets. */
  share: number;
  /** What the backend sees: the client's own TLS (passthrough, with its SNI), Envoy's TLS (with the cluster's sni), or plaintext. */
  backendTls?: { sni?: string; by: 'client' | 'envoy' };
  /** Endpoints (`ip:port`) with their weights, from the cluster's load assignment. */
  endpoints: { address: string; weight: number }[];
  /** The hash the cluster's load balancer gets: the client's address, or none. */
  hashOn?: 'source-ip';
}

export type StreamOutcome =
  | { type: 'no-listener' }
  /** No filter chain matched: Envoy closes the connection. */
  | { type: 'no-chain' }
  | { type: 'tls-failure'; reason: string }
  /** The chain is an HTTP connection manager (the HTTP model's business). */
  | { type: 'http' }
  | { type: 'forward'; upstreams: StreamUpstream[]; closed?: number };

const TYPE = 'type.googleapis.com/envoy.extensions.';
const TCP_PROXY = `${TYPE}filters.network.tcp_proxy.v3.TcpProxy`;
const UDP_PROXY = `${TYPE}filters.udp.udp_proxy.v3.UdpProxyConfig`;
const UDP_ROUTE = `${TYPE}filters.udp.udp_proxy.v3.Route`;
const TLS_INSPECTOR = `${TYPE}filters.listener.tls_inspector.v3.TlsInspector`;
const HCM = `${TYPE}filters.network.http_connection_manager.v3.HttpConnectionManager`;
const UPSTREAM_TLS = `${TYPE}transport_sockets.tls.v3.UpstreamTlsContext`;

function known(o: Json | undefined, fields: string[], what: string): void {
  for (const k of Object.keys(o ?? {})) if (!fields.includes(k)) throw new Error(`the stream model does not know ${what}.${k}`);
}

/** Envoy's server_names match: exact first, then the longest `*.` suffix; 0 when it does not match. */
function sniScore(name: string, sni: string): number {
  if (name === sni) return 1_000_000;
  if (name.startsWith('*.') && sni.endsWith(name.slice(1))) return name.length;
  return 0;
}

function endpointsOf(config: EnvoyConfig, cluster: Json): { address: string; weight: number }[] {
  const cla = cluster.load_assignment ?? (config.endpoints as Json[]).find((e) => e.cluster_name === cluster.name);
  return ((cla?.endpoints ?? []) as Json[]).flatMap((l) =>
    ((l.lb_endpoints ?? []) as Json[]).map((e) => {
      known(e, ['endpoint', 'load_balancing_weight'], 'LbEndpoint');
      const a = e.endpoint.address.socket_address;
      return { address: `${a.address}:${a.port_value}`, weight: e.load_balancing_weight ?? 1 };
    }),
  );
}

function upstream(config: EnvoyConfig, name: string, share: number, passthrough: string | undefined | null, hashed: boolean): StreamUpstream | undefined {
  const cluster = (config.clusters as Json[]).find((c) => c.name === name);
  if (!cluster) return undefined;
  const u: StreamUpstream = { cluster: name, share, endpoints: endpointsOf(config, cluster) };
  const ts = cluster.transport_socket?.typed_config as Json | undefined;
  if (ts) {
    if (ts['@type'] !== UPSTREAM_TLS) throw new Error(`the stream model does not know transport socket ${ts['@type']}`);
    u.backendTls = { by: 'envoy', ...(ts.sni ? { sni: ts.sni } : {}) };
  } else if (passthrough !== null) u.backendTls = { by: 'client', ...(passthrough ? { sni: passthrough } : {}) };
  if (hashed) u.hashOn = 'source-ip';
  return u;
}

function forward(config: EnvoyConfig, targets: { name: string; weight: number }[], passthrough: string | undefined | null, hashed: boolean): StreamOutcome {
  const total = targets.reduce((n, t) => n + t.weight, 0);
  const upstreams: StreamUpstream[] = [];
  let closed = 0;
  for (const t of targets) {
    const u = upstream(config, t.name, t.weight / total, passthrough, hashed);
    if (u) upstreams.push(u);
    else closed += t.weight / total;
  }
  return closed > 0 ? { type: 'forward', upstreams, closed } : { type: 'forward', upstreams };
}

function udp(config: EnvoyConfig, listener: Json): StreamOutcome {
  known(listener, ['name', 'address', 'listener_filters', 'filter_chains', 'udp_listener_config'], 'Listener (UDP)');
  if ((listener.filter_chains ?? []).length > 0) throw new Error('a UDP listener with filter chains: the stream model does not know them');
  const [filter, ...more] = listener.listener_filters as Json[];
  if (!filter || more.length > 0 || filter.typed_config['@type'] !== UDP_PROXY)
    throw new Error('the stream model knows a UDP listener with one udp_proxy only');
  const config_ = filter.typed_config as Json;
  known(config_, ['@type', 'stat_prefix', 'matcher', 'hash_policies'], 'UdpProxyConfig');
  known(config_.matcher, ['on_no_match'], 'Matcher');
  const action = config_.matcher.on_no_match.action.typed_config as Json;
  if (action['@type'] !== UDP_ROUTE) throw new Error(`the stream model does not know the udp_proxy action ${action['@type']}`);
  const hashed = ((config_.hash_policies ?? []) as Json[]).some((h) => h.source_ip === true);
  return forward(config, [{ name: action.cluster, weight: 1 }], null, hashed);
}

/** What Envoy does with one connection (or datagram session). */
export function connect(config: EnvoyConfig, c: Connection): StreamOutcome {
  const transport = c.transport ?? 'tcp';
  const listener = (config.listeners as Json[]).find(
    (l) => l.address.socket_address.port_value === c.port && (l.address.socket_address.protocol === 'UDP') === (transport === 'udp'),
  );
  if (!listener) return { type: 'no-listener' };
  if (transport === 'udp') return udp(config, listener);
  const filters = (listener.listener_filters ?? []) as Json[];
  for (const f of filters) if (f.typed_config?.['@type'] !== TLS_INSPECTOR) throw new Error(`the stream model does not know listener filter ${f.name}`);
  // SNI is read by tls_inspector from a TLS ClientHello, or not at all.
  const sni = filters.length > 0 ? c.tls?.sni?.toLowerCase() : undefined;
  const chains = (listener.filter_chains ?? []) as Json[];
  let best: Json | undefined;
  let bestScore = -1;
  for (const chain of chains) {
    known(chain.filter_chain_match, ['server_names'], 'FilterChainMatch');
    const names = (chain.filter_chain_match?.server_names ?? []) as string[];
    const score = names.length === 0 ? 0 : sni === undefined ? -1 : Math.max(0, ...names.map((n) => sniScore(n, sni))) || -1;
    if (score > bestScore) {
      best = chain;
      bestScore = score;
    }
  }
  if (!best || bestScore < 0) return { type: 'no-chain' };
  const [filter, ...more] = best.filters as Json[];
  if (filter?.typed_config?.['@type'] === HCM) return { type: 'http' };
  if (!filter || more.length > 0 || filter.typed_config?.['@type'] !== TCP_PROXY)
    throw new Error('the stream model knows a chain of one tcp_proxy (or an HTTP connection manager)');
  const terminating = best.transport_socket !== undefined;
  if (terminating) {
    const tls = handshake(config, best, {
      scheme: c.tls ? 'https' : 'http',
      ...(c.tls?.clientCertificate ? { clientCertificate: c.tls.clientCertificate } : {}),
    });
    if (!tls.ok) return { type: 'tls-failure', reason: tls.reason };
  }
  const tcp = filter.typed_config as Json;
  // access_log is what Envoy writes once a connection is done; it never decides where one goes.
  known(tcp, ['@type', 'stat_prefix', 'cluster', 'weighted_clusters', 'hash_policy', 'access_log'], 'TcpProxy');
  const targets: { name: string; weight: number }[] =
    tcp.cluster !== undefined
      ? [{ name: tcp.cluster, weight: 1 }]
      : (tcp.weighted_clusters.clusters as Json[]).map((w) => ({ name: w.name, weight: w.weight }));
  const hashed = ((tcp.hash_policy ?? []) as Json[]).some((h) => h.source_ip !== undefined);
  // Passed through, the backend sees the client's TLS (and its SNI); terminated, plaintext.
  const passthrough = terminating || !c.tls ? null : (c.tls.sni ?? undefined);
  return forward(config, targets, passthrough, hashed);
}
