// Envoy extension names and type URLs the converter emits, in one place.
const T = 'type.googleapis.com/';

export const TYPE = {
  hcm: `${T}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  tcpProxy: `${T}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  udpProxy: `${T}envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig`,
  udpRoute: `${T}envoy.extensions.filters.udp.udp_proxy.v3.Route`,
  tlsInspector: `${T}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  router: `${T}envoy.extensions.filters.http.router.v3.Router`,
  cors: `${T}envoy.extensions.filters.http.cors.v3.Cors`,
  corsPolicy: `${T}envoy.extensions.filters.http.cors.v3.CorsPolicy`,
  extProc: `${T}envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor`,
  extProcPerRoute: `${T}envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute`,
  headerMutation: `${T}envoy.extensions.filters.http.header_mutation.v3.HeaderMutation`,
  overrideHost: `${T}envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost`,
  roundRobin: `${T}envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin`,
  leastRequest: `${T}envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest`,
  random: `${T}envoy.extensions.load_balancing_policies.random.v3.Random`,
  ringHash: `${T}envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash`,
  maglev: `${T}envoy.extensions.load_balancing_policies.maglev.v3.Maglev`,
  httpProtocolOptions: `${T}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  previousHosts: `${T}envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate`,
  downstreamTls: `${T}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  secret: `${T}envoy.extensions.transport_sockets.tls.v3.Secret`,
  upstreamTls: `${T}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  listener: `${T}envoy.config.listener.v3.Listener`,
  routeConfiguration: `${T}envoy.config.route.v3.RouteConfiguration`,
  cluster: `${T}envoy.config.cluster.v3.Cluster`,
  clusterLoadAssignment: `${T}envoy.config.endpoint.v3.ClusterLoadAssignment`,
} as const;

export const NAME = {
  hcm: 'envoy.filters.network.http_connection_manager',
  tcpProxy: 'envoy.filters.network.tcp_proxy',
  udpProxy: 'envoy.filters.udp_listener.udp_proxy',
  tlsInspector: 'envoy.filters.listener.tls_inspector',
  router: 'envoy.filters.http.router',
  cors: 'envoy.filters.http.cors',
  extProc: 'envoy.filters.http.ext_proc',
  headerMutation: 'envoy.filters.http.header_mutation',
  overrideHost: 'envoy.load_balancing_policies.override_host',
  roundRobin: 'envoy.load_balancing_policies.round_robin',
  leastRequest: 'envoy.load_balancing_policies.least_request',
  random: 'envoy.load_balancing_policies.random',
  ringHash: 'envoy.load_balancing_policies.ring_hash',
  maglev: 'envoy.load_balancing_policies.maglev',
  httpProtocolOptions: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  previousHosts: 'envoy.retry_host_predicates.previous_hosts',
  tls: 'envoy.transport_sockets.tls',
} as const;

/** A weighted_clusters entry that names no cluster, so Envoy answers 500 for its share. */
export const INVALID_BACKEND_CLUSTER = 'extlb-invalid-backend';

/**
 * A name as one segment of an Envoy stat name. Envoy splits stat names on dots and its default
 * tag extractors take one segment as a tag value (`cluster.$.**`, `http.$.**`, `tcp.$.**`; a tag
 * value is `[^.]+`), so a dot would cut a listener's or cluster's name short in its metrics. Other
 * characters than letters, digits, `_` and `-` become `_` too.
 */
export function statSegment(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** A cluster's alt_stat_name when its name would not be one stat segment (it has a dot). */
export function clusterStatName(name: string): { alt_stat_name: string } | undefined {
  return name.includes('.') ? { alt_stat_name: name.replace(/\./g, '_') } : undefined;
}
