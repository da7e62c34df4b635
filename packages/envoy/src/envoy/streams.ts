// IR streams to Envoy: a TCP port is one filter chain with tcp_proxy; a TLS port has one filter
// chain per stream, chosen by SNI (the listener's tls_inspector reads it from the ClientHello),
// passing TLS through to tcp_proxy, or terminating it first with the listener's certificates; a
// UDP port is a UDP listener whose udp_proxy sends every datagram session to one cluster. tcp_proxy
// splits connections over weighted clusters; udp_proxy routes to one cluster only, so a UDPRoute
// that splits its datagrams gets a cluster of its own holding every backend's endpoints, each
// weighted so that the backends' shares are their weights.
import type { HostPort } from '../resolve/endpoints.js';
import type { Backend, Destination, Gateway, Listener, Stream } from '../resolve/index.js';
import { assignment, backendCluster } from './clusters.js';
import { tcpAccessLog } from './access-log.js';
import type { BuildContext } from './context.js';
import { clusterStatName, INVALID_BACKEND_CLUSTER, NAME, statSegment, TYPE } from './names.js';
import { downstreamTls } from './tls.js';
import type { ClusterV3, EndpointV3, ListenerV3, TcpProxyV3, TypeV3, UdpProxyV3 } from './types.js';

/** A tcp_proxy's access_log field, absent when the log is off. */
const accessLogOf = (log: TcpProxyV3.TcpProxy['access_log'] & object) => (log.length > 0 ? { access_log: log } : {});

/** The destinations that take a share: a resolved backend with weight. */
function live(stream: Stream): { backend: string; weight: number }[] {
  return stream.destinations.flatMap((d: Destination) =>
    d.backend !== undefined && d.invalid === undefined && d.weight > 0 ? [{ backend: d.backend, weight: d.weight }] : [],
  );
}

function backendsOf(stream: Stream, ctx: Pick<BuildContext, 'gateway'>): Backend[] {
  return live(stream).flatMap((d) => ctx.gateway.backends[d.backend] ?? []);
}

/**
 * The hash a ring hash or Maglev backend needs on a connection: the client's address. A header or
 * cookie hash has nothing to read in a stream, so the connections are spread without one (said).
 */
function sourceIpHashed(stream: Stream, ctx: BuildContext): boolean {
  let hashed = false;
  for (const b of backendsOf(stream, ctx)) {
    const ch = b.lb.consistentHash;
    if (!ch) continue;
    if (ch.type === 'SourceIP') hashed = true;
    else
      ctx.diags.warning(
        'UnsupportedValue',
        `${b.key} hashes on a ${ch.type === 'Header' ? 'header' : 'cookie'}, which ${stream.route.kind} ${stream.route.namespace ?? ''}/${stream.route.name} has none of (it forwards connections, not HTTP requests); its connections are spread by the ${b.lb.type} policy without a hash`,
        b.ref,
      );
  }
  return hashed;
}

/** tcp_proxy for a stream: one cluster, or weighted clusters (an invalid share names no cluster, so its connections are closed). */
function tcpProxy(stream: Stream, ctx: BuildContext): ListenerV3.Filter {
  const shares = stream.destinations.flatMap((d) =>
    d.weight > 0 ? [{ name: d.backend !== undefined && d.invalid === undefined ? d.backend : INVALID_BACKEND_CLUSTER, weight: d.weight }] : [],
  );
  const merged = new Map<string, number>();
  for (const s of shares) merged.set(s.name, (merged.get(s.name) ?? 0) + s.weight);
  const [only] = merged.keys();
  const target: { cluster: string } | { weighted_clusters: TcpProxyV3.TcpProxy_WeightedCluster } =
    merged.size <= 1
      ? { cluster: only ?? INVALID_BACKEND_CLUSTER }
      : { weighted_clusters: { clusters: [...merged].map(([name, weight]) => ({ name, weight })) } };
  const config: TcpProxyV3.TcpProxy = { stat_prefix: statSegment(stream.name), ...target };
  if (sourceIpHashed(stream, ctx)) config.hash_policy = [{ source_ip: {} } satisfies TypeV3.HashPolicy];
  Object.assign(config, accessLogOf(tcpAccessLog(ctx, stream.name)));
  return { name: NAME.tcpProxy, typed_config: { '@type': TYPE.tcpProxy, ...config } };
}

/** The filter chain of a TCP or TLS stream. */
function streamChain(stream: Stream, ctx: BuildContext): ListenerV3.FilterChain {
  const fc: ListenerV3.FilterChain = {};
  if (stream.serverNames) fc.filter_chain_match = { server_names: stream.serverNames };
  if (stream.tls) fc.transport_socket = downstreamTls(stream.tls, ctx, 'stream');
  fc.filters = [tcpProxy(stream, ctx)];
  return fc;
}

/** The filter chains of a listener's streams, and the listener filters they need (tls_inspector, for SNI). */
export function streamChains(l: Listener, ctx: BuildContext): { chains: ListenerV3.FilterChain[]; listenerFilters: ListenerV3.ListenerFilter[] } {
  const streams = l.streams ?? [];
  const chains = streams.map((s) => streamChain(s, ctx));
  // A port with no route yet: one chain that closes every connection (Envoy needs a chain).
  if (chains.length === 0 && l.servers.length === 0)
    chains.push({
      filters: [
        {
          name: NAME.tcpProxy,
          typed_config: {
            '@type': TYPE.tcpProxy,
            stat_prefix: statSegment(l.name),
            cluster: INVALID_BACKEND_CLUSTER,
            ...accessLogOf(tcpAccessLog(ctx, l.name)),
          },
        },
      ],
    });
  const listenerFilters: ListenerV3.ListenerFilter[] = streams.some((s) => s.serverNames)
    ? [{ name: NAME.tlsInspector, typed_config: { '@type': TYPE.tlsInspector } }]
    : [];
  return { chains, listenerFilters };
}

/** A UDPRoute's own cluster when it splits datagrams over several backends. */
export function udpSplitName(stream: Stream): string {
  return `udp-split/${stream.name}`;
}

/** Every UDP stream of a Gateway that splits over several backends. */
/** The keys of the backends a split UDPRoute's assignment is made of. */
export function udpSplitBackends(stream: Stream): string[] {
  return live(stream).map((d) => d.backend);
}

export function udpSplits(gateway: Gateway): Stream[] {
  return gateway.listeners.flatMap((l) => (l.protocol === 'UDP' ? (l.streams ?? []) : [])).filter((s) => live(s).length > 1);
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The endpoints of a split UDPRoute: every backend's, each weighted so that a backend's endpoints
 * together weigh in proportion to its weight (Envoy balances over endpoint weights).
 */
export function udpSplitAssignment(stream: Stream, ctx: Pick<BuildContext, 'gateway' | 'endpoints'>): EndpointV3.ClusterLoadAssignment {
  const parts = live(stream).flatMap((d) => {
    const b = ctx.gateway.backends[d.backend];
    return b ? [{ weight: d.weight, hosts: ctx.endpoints.backend(b) }] : [];
  });
  const counts = parts.map((p) => p.hosts.length).filter((n) => n > 0);
  const lcm = counts.reduce((a, n) => (a * n) / gcd(a, n), 1);
  const lbEndpoints: EndpointV3.LbEndpoint[] = parts.flatMap((p) =>
    p.hosts.map((h: HostPort) => ({
      endpoint: { address: { socket_address: { address: h.address, port_value: h.port } } },
      load_balancing_weight: (p.weight * lcm) / p.hosts.length,
    })),
  );
  const name = udpSplitName(stream);
  return lbEndpoints.length === 0 ? assignment(name, []) : { cluster_name: name, endpoints: [{ lb_endpoints: lbEndpoints }] };
}

/** The cluster of a split UDPRoute: the first backend's settings, with the endpoints of all. */
export function udpSplitCluster(stream: Stream, ctx: BuildContext): ClusterV3.Cluster {
  const [first] = backendsOf(stream, ctx);
  const name = udpSplitName(stream);
  const base: ClusterV3.Cluster = first ? backendCluster(first, { ...ctx, diags: ctx.diags, assignments: new Map(), manifests: new Map() }) : { name };
  const { load_assignment: _, eds_cluster_config: __, transport_socket: ___, typed_extension_protocol_options: ____, alt_stat_name: _____, ...settings } = base;
  const cluster: ClusterV3.Cluster = { ...settings, name, ...clusterStatName(name) };
  if (ctx.options.endpoints === 'eds') {
    cluster.type = 'EDS';
    cluster.eds_cluster_config = { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: name };
    ctx.assignments.set(name, udpSplitAssignment(stream, ctx));
  } else {
    if (ctx.options.endpoints === 'dns')
      ctx.diags.info('StaticEndpoints', `dns mode: ${name} weighs each backend's endpoints, so they are listed statically`, ctx.gateway.ref);
    cluster.type = 'STATIC';
    cluster.load_assignment = udpSplitAssignment(stream, ctx);
  }
  return cluster;
}

/** A UDP port: a UDP listener whose udp_proxy sends every session to the stream's cluster. */
export function udpListener(l: Listener, ctx: BuildContext): ListenerV3.Listener {
  const [stream] = l.streams ?? [];
  const shares = stream ? live(stream) : [];
  const cluster = !stream || shares.length === 0 ? INVALID_BACKEND_CLUSTER : shares.length === 1 ? (shares[0]?.backend as string) : udpSplitName(stream);
  const config: UdpProxyV3.UdpProxyConfig = {
    stat_prefix: statSegment(stream?.name ?? l.name),
    matcher: { on_no_match: { action: { name: 'route', typed_config: { '@type': TYPE.udpRoute, cluster } } } },
  };
  if (stream && sourceIpHashed(stream, ctx)) config.hash_policies = [{ source_ip: true }];
  return {
    name: l.name,
    address: { socket_address: { protocol: 'UDP', address: '0.0.0.0', port_value: l.port } },
    listener_filters: [{ name: NAME.udpProxy, typed_config: { '@type': TYPE.udpProxy, ...config } }],
  };
}
