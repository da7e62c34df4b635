// Renders an EnvoyConfig as a bootstrap (`static_resources`, routes inlined) or as xDS resource lists.
import type { EnvoyConfig } from './config.js';
import { NAME, TYPE } from './names.js';
import type { AnyOf, BootstrapV3, ClusterV3, CoreV3, ListenerV3, RouteV3, TlsV3 } from './types.js';

export interface BootstrapOptions {
  /** `host:port` of the xDS (ADS) server; required when the configuration has EDS clusters. */
  xdsServer?: string;
  /** Envoy's node id and cluster; both default to the Gateway's `namespace/name`. */
  nodeId?: string;
  nodeCluster?: string;
  adminPort?: number;
  /**
   * Mutual TLS to the xDS server with the Gateway's xDS identity: the client certificate and the
   * CA to pin come from SDS files in `dir` (the identity Secret's mount), and the server must
   * present a certificate for `serverName`. Envoy watches `dir` and picks up a renewed certificate
   * or a new CA bundle without a restart.
   */
  xdsTls?: XdsTls;
}

export interface XdsTls {
  /** Where the SDS files are: the mount of the Gateway's identity Secret. Default XDS_IDENTITY_DIR. */
  dir?: string;
  /** The DNS name the xDS server's certificate must hold (and the SNI sent). */
  serverName: string;
}

/**
 * The files of a Gateway's xDS identity, as its Secret holds them and Envoy's bootstrap reads
 * them: the certificate, key and CA bundle, and two SDS files (Envoy's DiscoveryResponse form)
 * naming them.
 */
export const XDS_IDENTITY = {
  dir: '/etc/extlb/xds',
  certificate: 'tls.crt',
  key: 'tls.key',
  ca: 'ca.crt',
  sdsCertificate: 'tls-certificate.sds.json',
  sdsValidation: 'validation-context.sds.json',
  /** The Secret names inside those files, and in the bootstrap's references to them. */
  clientSecret: 'extlb-xds-client',
  caSecret: 'extlb-xds-ca',
} as const;

/** The two SDS files of a Gateway's xDS identity, for the identity Secret mounted at `dir`. */
export function xdsIdentitySdsFiles(dir: string = XDS_IDENTITY.dir): Record<string, string> {
  const file = (name: string) => ({ filename: `${dir}/${name}` });
  const doc = (secret: TlsV3.Secret) => `${JSON.stringify({ resources: [{ '@type': TYPE.secret, ...secret }] }, null, 2)}\n`;
  return {
    [XDS_IDENTITY.sdsCertificate]: doc({
      name: XDS_IDENTITY.clientSecret,
      tls_certificate: { certificate_chain: file(XDS_IDENTITY.certificate), private_key: file(XDS_IDENTITY.key), watched_directory: { path: dir } },
    }),
    [XDS_IDENTITY.sdsValidation]: doc({
      name: XDS_IDENTITY.caSecret,
      validation_context: { trusted_ca: file(XDS_IDENTITY.ca), watched_directory: { path: dir } },
    }),
  };
}

/** The xDS cluster's TLS: the identity's certificate and the pinned CA over file-based SDS, watching the mount for Kubernetes' `..data` swaps. */
function xdsTransportSocket(tls: XdsTls): CoreV3.TransportSocket {
  const dir = tls.dir ?? XDS_IDENTITY.dir;
  const sds = (file: string): CoreV3.ConfigSource => ({
    path_config_source: { path: `${dir}/${file}`, watched_directory: { path: dir } },
    resource_api_version: 'V3',
  });
  return {
    name: NAME.tls,
    typed_config: {
      '@type': TYPE.upstreamTls,
      sni: tls.serverName,
      common_tls_context: {
        alpn_protocols: ['h2'],
        tls_certificate_sds_secret_configs: [{ name: XDS_IDENTITY.clientSecret, sds_config: sds(XDS_IDENTITY.sdsCertificate) }],
        combined_validation_context: {
          default_validation_context: { match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: tls.serverName } }] },
          validation_context_sds_secret_config: { name: XDS_IDENTITY.caSecret, sds_config: sds(XDS_IDENTITY.sdsValidation) },
        },
      },
    },
  };
}

const XDS_CLUSTER = 'extlb-xds';

/** Splits `host:port` (`[v6]:port` for IPv6); undefined when it is not one. */
export function parseHostPort(value: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  return host && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** The cluster Envoy reaches its xDS server through: gRPC, so HTTP/2. */
function xdsCluster(server: string, tls?: XdsTls): ClusterV3.Cluster {
  const hp = parseHostPort(server);
  if (!hp) throw new Error(`the xDS server must be HOST:PORT, not ${JSON.stringify(server)}`);
  const cluster: ClusterV3.Cluster = {
    name: XDS_CLUSTER,
    type: 'STRICT_DNS',
    connect_timeout: '5s',
    load_assignment: {
      cluster_name: XDS_CLUSTER,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: hp.host, port_value: hp.port } } } }] }],
    },
    typed_extension_protocol_options: {
      [NAME.httpProtocolOptions]: { '@type': TYPE.httpProtocolOptions, explicit_http_config: { http2_protocol_options: {} } },
    },
  };
  if (tls) cluster.transport_socket = xdsTransportSocket(tls);
  return cluster;
}

/** The node an ADS server knows this proxy by: `node.cluster` names the Gateway it serves. */
function node(gateway: EnvoyConfig['gateway'], options: BootstrapOptions): CoreV3.Node {
  const name = `${gateway.namespace ?? ''}/${gateway.name}`;
  return { id: options.nodeId ?? name, cluster: options.nodeCluster ?? name };
}

function admin(options: BootstrapOptions): BootstrapV3.Admin {
  return { address: { socket_address: { address: '127.0.0.1', port_value: options.adminPort ?? 9901 } } };
}

const ADS: CoreV3.ApiConfigSource = { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: XDS_CLUSTER } }] };

/**
 * The TLS certificates of a filter chain or a cluster named as static secrets: an SDS config with
 * only a name (a bootstrap may have no ADS to fetch them over).
 */
function staticSecrets<T extends { transport_socket?: CoreV3.TransportSocket }>(holder: T): T {
  const ts = holder.transport_socket;
  const tc = ts?.typed_config;
  if (!ts || !tc || (tc['@type'] !== TYPE.downstreamTls && tc['@type'] !== TYPE.upstreamTls)) return holder;
  const common = tc.common_tls_context;
  if (!common?.tls_certificate_sds_secret_configs) return holder;
  const named: TlsV3.SdsSecretConfig[] = common.tls_certificate_sds_secret_configs.map(({ sds_config: _ads, ...rest }) => rest);
  return {
    ...holder,
    transport_socket: { ...ts, typed_config: { ...tc, common_tls_context: { ...common, tls_certificate_sds_secret_configs: named } } },
  };
}

/** Replaces each HCM's `rds` with its route configuration inline, and SDS with static secrets. */
function inlineRoutes(listener: ListenerV3.Listener, routes: Map<string, RouteV3.RouteConfiguration>): ListenerV3.Listener {
  const chains = (listener.filter_chains ?? []).map(staticSecrets).map((fc) => ({
    ...fc,
    filters: (fc.filters ?? []).map((f): ListenerV3.Filter => {
      const tc = f.typed_config;
      if (f.name !== NAME.hcm || tc?.['@type'] !== TYPE.hcm || !tc.rds) return f;
      const { rds, ...rest } = tc;
      const ordered: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(rest)) {
        ordered[k] = v;
        if (k === 'codec_type') ordered.route_config = routes.get(String(rds.route_config_name));
      }
      // The same fields, the route configuration where rds was (after codec_type, as the converter writes it).
      return { name: f.name, typed_config: ordered as AnyOf<typeof TYPE.hcm> };
    }),
  }));
  return { ...listener, filter_chains: chains };
}

/**
 * A bootstrap with everything static, routes inlined, certificates as static secrets. In eds mode the endpoints still come over
 * ADS, so the bootstrap then names the xDS server and the node (it throws when no server is given:
 * that is a caller's mistake, never a default to guess).
 */
export function toBootstrap(envoy: EnvoyConfig, options: BootstrapOptions = {}): BootstrapV3.Bootstrap {
  const routes = new Map(envoy.routes.map((r) => [String(r.name), r]));
  const clusters = envoy.clusters.map(staticSecrets);
  const staticResources: BootstrapV3.Bootstrap_StaticResources = { listeners: envoy.listeners.map((l) => inlineRoutes(l, routes)), clusters };
  if (envoy.secrets.length > 0) staticResources.secrets = envoy.secrets;
  const bootstrap: BootstrapV3.Bootstrap = { admin: admin(options), static_resources: staticResources };
  if (clusters.some((c) => c.type === 'EDS')) {
    if (options.xdsServer === undefined) throw new Error('EDS clusters need an xDS server: pass xdsServer (HOST:PORT)');
    clusters.push(xdsCluster(options.xdsServer, options.xdsTls));
    bootstrap.node = node(envoy.gateway, options);
    bootstrap.dynamic_resources = { ads_config: ADS };
  }
  return bootstrap;
}

/**
 * The small bootstrap an Envoy pod starts with when an xDS server (`extlb controller`) serves it
 * everything: listeners and clusters over ADS, the rest following from them.
 */
export function adsBootstrap(gateway: EnvoyConfig['gateway'], options: BootstrapOptions & { xdsServer: string }): BootstrapV3.Bootstrap {
  return {
    node: node(gateway, options),
    admin: admin(options),
    dynamic_resources: { ads_config: ADS, lds_config: { ads: {}, resource_api_version: 'V3' }, cds_config: { ads: {}, resource_api_version: 'V3' } },
    static_resources: { clusters: [xdsCluster(options.xdsServer, options.xdsTls)] },
  };
}

/** xDS resources grouped by type, each with its `@type`, as an xDS server would send them. */
/** xDS resource lists, each resource an Any with its `@type` (a type, not an interface: it reads as a record of lists). */
export type XdsResources = {
  listeners: AnyOf<typeof TYPE.listener>[];
  routes: AnyOf<typeof TYPE.routeConfiguration>[];
  clusters: AnyOf<typeof TYPE.cluster>[];
  endpoints: AnyOf<typeof TYPE.clusterLoadAssignment>[];
  secrets: AnyOf<typeof TYPE.secret>[];
};

export function toXds(envoy: EnvoyConfig): XdsResources {
  const typed = <U extends string, R>(type: U, list: R[]) => list.map((r) => ({ '@type': type, ...r }));
  return {
    listeners: typed(TYPE.listener, envoy.listeners),
    routes: typed(TYPE.routeConfiguration, envoy.routes),
    clusters: typed(TYPE.cluster, envoy.clusters),
    endpoints: typed(TYPE.clusterLoadAssignment, envoy.endpoints),
    secrets: typed(TYPE.secret, envoy.secrets),
  };
}
