// A synthetic estate for one Gateway, shaped as the converter shapes its output: listeners whose
// HCMs ask for their RouteConfiguration over ADS, routes spread over the route configurations and
// pointing at EDS clusters, and each cluster's endpoints in a ClusterLoadAssignment. The bench
// takes any SnapshotResources; this stands in until resources from a test API server and the
// converter can be plugged in.
import { type SnapshotResources, TYPE_URL, type XdsResource } from '../src/index.js';

export interface EstateSize {
  routes: number;
  /** Route configurations (one listener each); the routes are spread evenly over them. */
  routeConfigs: number;
  clusters: number;
  /** Endpoints over all clusters. */
  endpoints: number;
}

const ADS = { ads: {}, resource_api_version: 'V3' };
const ROUTES_PER_VHOST = 100;

function listener(gateway: string, i: number): XdsResource {
  const name = `${gateway}/${8000 + i}`;
  return {
    '@type': TYPE_URL.listener,
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: 8000 + i } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: name.replaceAll('/', '_'),
              codec_type: 'AUTO',
              rds: { route_config_name: name, config_source: ADS },
              http_filters: [
                { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
              ],
            },
          },
        ],
      },
    ],
  };
}

export function clusterName(gateway: string, i: number): string {
  return `${gateway}/svc-${i}/80`;
}

function route(gateway: string, config: number, n: number, clusters: number, moved: number): Record<string, unknown> {
  const global = config * 1_000_000 + n + (n === 0 ? moved : 0);
  return {
    name: `rule-${n}`,
    match: { path_separated_prefix: `/app-${n}/api`, headers: [{ name: 'x-tenant', string_match: { exact: `tenant-${n % 7}` } }] },
    route: {
      cluster: clusterName(gateway, global % clusters),
      timeout: '15s',
      retry_policy: { retry_on: '5xx,connect-failure,reset', num_retries: 2, per_try_timeout: '5s' },
    },
  };
}

/** A route configuration; `moved` > 0 sends its first route to another cluster. */
export function routeConfig(gateway: string, config: number, routes: number, clusters: number, moved = 0): XdsResource {
  const vhosts: Record<string, unknown>[] = [];
  for (let start = 0; start < routes; start += ROUTES_PER_VHOST) {
    const v = start / ROUTES_PER_VHOST;
    vhosts.push({
      name: `${gateway}/${8000 + config}/host-${v}`,
      domains: [`host-${v}.example.com`],
      routes: Array.from({ length: Math.min(ROUTES_PER_VHOST, routes - start) }, (_, k) => route(gateway, config, start + k, clusters, moved)),
    });
  }
  return { '@type': TYPE_URL.route, name: `${gateway}/${8000 + config}`, virtual_hosts: vhosts };
}

export function assignment(gateway: string, i: number, endpoints: number, generation = 0): XdsResource {
  return {
    '@type': TYPE_URL.endpoint,
    cluster_name: clusterName(gateway, i),
    endpoints: [
      {
        locality: { zone: `zone-${i % 3}` },
        lb_endpoints: Array.from({ length: endpoints }, (_, k) => ({
          endpoint: { address: { socket_address: { address: `10.${(i >> 8) & 255}.${i & 255}.${k + 1}`, port_value: 8080 + generation } } },
          health_status: 'HEALTHY',
        })),
      },
    ],
  };
}

export function syntheticEstate(gateway: string, size: EstateSize): SnapshotResources {
  const perConfig = Math.ceil(size.routes / size.routeConfigs);
  const perCluster = Math.max(1, Math.round(size.endpoints / size.clusters));
  return {
    listeners: Array.from({ length: size.routeConfigs }, (_, i) => listener(gateway, i)),
    routes: Array.from({ length: size.routeConfigs }, (_, i) => routeConfig(gateway, i, Math.min(perConfig, size.routes - i * perConfig), size.clusters)),
    clusters: Array.from({ length: size.clusters }, (_, i) => ({
      '@type': TYPE_URL.cluster,
      name: clusterName(gateway, i),
      type: 'EDS',
      connect_timeout: '5s',
      eds_cluster_config: { eds_config: ADS },
      lb_policy: 'LEAST_REQUEST',
      circuit_breakers: { thresholds: [{ max_connections: 4096, max_requests: 4096 }] },
    })),
    endpoints: Array.from({ length: size.clusters }, (_, i) => assignment(gateway, i, perCluster)),
  };
}

/** The names a proxy subscribes to by name: its route configurations and its clusters' assignments. */
export function subscribedNames(snapshot: SnapshotResources): { routes: string[]; endpoints: string[] } {
  return {
    routes: (snapshot.routes ?? []).map((r) => String(r.name)),
    endpoints: (snapshot.endpoints ?? []).map((e) => String(e.cluster_name)),
  };
}
