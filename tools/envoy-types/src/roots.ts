// The messages the converter's output is made of: the resources it writes, and every message it
// packs into a google.protobuf.Any (filters, load-balancing policies, transport sockets, access
// logs). The generated types are these and everything they reach; each of them is one member of
// the Any union, so an "@type" outside this list is a compile error.
export const ROOTS: readonly string[] = [
  // Resources: a bootstrap, and the xDS resources toXds writes.
  'envoy.config.bootstrap.v3.Bootstrap',
  'envoy.config.listener.v3.Listener',
  'envoy.config.route.v3.RouteConfiguration',
  'envoy.config.cluster.v3.Cluster',
  'envoy.config.endpoint.v3.ClusterLoadAssignment',
  'envoy.extensions.transport_sockets.tls.v3.Secret',
  // Network and listener filters.
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
  'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
  'envoy.extensions.filters.udp.udp_proxy.v3.Route',
  'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
  // HTTP filters and their per-route configs.
  'envoy.extensions.filters.http.router.v3.Router',
  'envoy.extensions.filters.http.cors.v3.Cors',
  'envoy.extensions.filters.http.cors.v3.CorsPolicy',
  'envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor',
  'envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
  'envoy.extensions.filters.http.header_mutation.v3.HeaderMutation',
  'envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute',
  // Load-balancing policies.
  'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost',
  'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
  'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
  'envoy.extensions.load_balancing_policies.random.v3.Random',
  'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
  'envoy.extensions.load_balancing_policies.maglev.v3.Maglev',
  // Cluster options, retries, TLS.
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  'envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
  'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
  'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
  // Access logs and stats sinks.
  'envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
  'envoy.extensions.access_loggers.stream.v3.StderrAccessLog',
  'envoy.extensions.access_loggers.file.v3.FileAccessLog',
  'envoy.config.metrics.v3.StatsdSink',
  'envoy.config.metrics.v3.DogStatsdSink',
];
