// Renders an EnvoyConfig as a bootstrap (`static_resources`, routes inlined) or as xDS resource lists.
import type { EnvoyConfig } from './convert.js';
import { NAME, TYPE } from './envoy-names.js';
import { isObject, type Json } from './read.js';

export interface BootstrapOptions {
  /** `host:port` of the xDS server that serves ClusterLoadAssignments in eds mode. */
  xdsServer?: string;
  adminPort?: number;
}

/** Replaces each HCM's `rds` with its route configuration inline. */
function inlineRoutes(listener: Json, routes: Map<string, Json>): Json {
  const chains = (listener.filter_chains as Json[]).map((fc) => ({
    ...fc,
    filters: (fc.filters as Json[]).map((f) => {
      const tc = f.typed_config;
      if (f.name !== NAME.hcm || !isObject(tc) || !isObject(tc.rds)) return f;
      const { rds, ...rest } = tc;
      const ordered: Json = {};
      for (const [k, v] of Object.entries(rest)) {
        ordered[k] = v;
        if (k === 'codec_type') ordered.route_config = routes.get(String(rds.route_config_name));
      }
      return { ...f, typed_config: ordered };
    }),
  }));
  return { ...listener, filter_chains: chains };
}

export function toBootstrap(envoy: EnvoyConfig, options: BootstrapOptions = {}): Json {
  const routes = new Map(envoy.routes.map((r) => [String(r.name), r]));
  const clusters = [...envoy.clusters];
  const bootstrap: Json = {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: options.adminPort ?? 9901 } } },
    static_resources: { listeners: envoy.listeners.map((l) => inlineRoutes(l, routes)), clusters },
  };
  if (clusters.some((c) => c.type === 'EDS')) {
    const [host = 'extlb-xds', port = '18000'] = (options.xdsServer ?? 'extlb-xds:18000').split(':');
    clusters.push({
      name: 'extlb-xds',
      type: 'STRICT_DNS',
      connect_timeout: '5s',
      load_assignment: {
        cluster_name: 'extlb-xds',
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: Number(port) } } } }] }],
      },
      typed_extension_protocol_options: {
        [NAME.httpProtocolOptions]: { '@type': TYPE.httpProtocolOptions, explicit_http_config: { http2_protocol_options: {} } },
      },
    });
    bootstrap.dynamic_resources = {
      ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'extlb-xds' } }] },
    };
  }
  return bootstrap;
}

/** xDS resources grouped by type, each with its `@type`, as an xDS server would send them. */
export function toXds(envoy: EnvoyConfig): Json {
  const typed = (type: string, list: Json[]) => list.map((r) => ({ '@type': type, ...r }));
  return {
    listeners: typed(TYPE.listener, envoy.listeners),
    routes: typed(TYPE.routeConfiguration, envoy.routes),
    clusters: typed(TYPE.cluster, envoy.clusters),
    endpoints: typed(TYPE.clusterLoadAssignment, envoy.endpoints),
  };
}
