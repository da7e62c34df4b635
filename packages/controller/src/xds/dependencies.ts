// What a listener or route needs in place on the proxy before it may go out (make before break):
// the clusters it sends traffic to. Envoy answers 503 for a route whose cluster is unknown or still
// warming (an EDS cluster warms until its ClusterLoadAssignment arrives), so a resource naming a new
// cluster waits until that cluster and its endpoints have reached the proxy.
import { isJsonObject, type JsonObject } from './proto-json.js';

/** Keys whose string value names a cluster: route actions, mirrors, tcp_proxy, gRPC services, HTTP URIs. */
const CLUSTER_KEYS = new Set(['cluster', 'cluster_name', 'clusterName']);
const WEIGHTED_KEYS = new Set(['weighted_clusters', 'weightedClusters']);

/**
 * Every name a listener or RouteConfiguration uses as a cluster. It may name more than clusters of
 * the snapshot (a cluster of the bootstrap, say); only those in the snapshot are waited for.
 */
export function clustersNamedBy(resource: unknown): string[] {
  const names = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    // A snapshot's resources are the converter's output, never deep; the bound only keeps a hostile shape from the stack.
    if (depth > 200) return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1);
      return;
    }
    if (!isJsonObject(value)) return;
    for (const [key, v] of Object.entries(value)) {
      if (CLUSTER_KEYS.has(key) && typeof v === 'string' && v !== '') names.add(v);
      else if (WEIGHTED_KEYS.has(key) && isJsonObject(v) && Array.isArray(v.clusters)) {
        for (const c of v.clusters) if (isJsonObject(c) && typeof c.name === 'string') names.add(c.name);
        visit(v, depth + 1);
      } else visit(v, depth + 1);
    }
  };
  visit(resource, 0);
  return [...names];
}

function field(o: JsonObject, snake: string): unknown {
  if (Object.hasOwn(o, snake)) return o[snake];
  return o[snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())];
}

/** The ClusterLoadAssignment an EDS cluster warms on over ADS, or undefined for any other cluster. */
export function edsNameOf(cluster: JsonObject): string | undefined {
  const type = field(cluster, 'type');
  const eds = field(cluster, 'eds_cluster_config');
  if ((type !== 'EDS' && type !== 3) || !isJsonObject(eds)) return undefined;
  const source = field(eds, 'eds_config');
  if (!isJsonObject(source) || field(source, 'ads') === undefined) return undefined;
  const serviceName = field(eds, 'service_name');
  return typeof serviceName === 'string' && serviceName !== '' ? serviceName : String(field(cluster, 'name'));
}
