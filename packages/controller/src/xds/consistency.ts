// A snapshot must hold what its listeners and clusters ask for over ADS: Envoy warms a listener
// until its RouteConfiguration arrives, an EDS cluster until its ClusterLoadAssignment does, and
// either until its SDS secrets do, so a missing one stalls the proxy instead of failing loudly.
// go-control-plane checks the same (`Snapshot.Consistent`); this also keeps TLS private keys out
// of listeners and clusters, since they must travel as Secrets over SDS.
import { isJsonObject, type JsonObject } from './proto-json.js';
import type { ResourceKind } from './resource-types.js';

export interface SnapshotIssue {
  /** The list the resource is in, as `SnapshotResources` names it. */
  kind: ResourceKind;
  /** The resource's name ('' when it has none). */
  name: string;
  /** The field path inside the resource. */
  path: string;
  message: string;
}

/** Where a resource is first asked for. */
type Referrer = Omit<SnapshotIssue, 'message'>;

/** Names the listeners and clusters ask for over ADS, each with its first referrer. */
export interface References {
  routes: Map<string, Referrer>;
  endpoints: Map<string, Referrer>;
  secrets: Map<string, Referrer>;
}

export function emptyReferences(): References {
  return { routes: new Map(), endpoints: new Map(), secrets: new Map() };
}

/** Reads a field written in either proto3 JSON spelling (`route_config_name` or `routeConfigName`). */
function get(o: JsonObject, snake: string): unknown {
  if (Object.hasOwn(o, snake)) return o[snake];
  return o[snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())];
}

/** A ConfigSource that points at the ADS stream (`ads: {}`), i.e. at this server. */
function isAds(source: unknown): boolean {
  return isJsonObject(source) && get(source, 'ads') !== undefined;
}

function pathOf(stack: readonly (string | number)[]): string {
  return stack.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : p ? `${p}.${k}` : k), '');
}

const SDS_CONFIG_KEY = /(?:_sds_secret_configs?|SdsSecretConfigs?)$/;
const INLINE_KEY = new Set(['inline_bytes', 'inlineBytes', 'inline_string', 'inlineString']);

/**
 * Walks one listener or cluster, recording the RouteConfigurations and Secrets it asks for over
 * ADS and reporting private keys written inline.
 */
export function collectReferences(kind: ResourceKind, name: string, resource: JsonObject, refs: References, issues: SnapshotIssue[]): void {
  const stack: (string | number)[] = [];
  const note = (map: Map<string, Referrer>, ref: string) => {
    if (!map.has(ref)) map.set(ref, { kind, name, path: pathOf(stack) });
  };
  const sdsConfigs = (value: unknown) => {
    for (const c of Array.isArray(value) ? value : [value]) {
      if (!isJsonObject(c)) continue;
      const ref = get(c, 'name');
      if (typeof ref === 'string' && isAds(get(c, 'sds_config'))) note(refs.secrets, ref);
    }
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        stack.push(i);
        visit(item);
        stack.pop();
      });
      return;
    }
    if (!isJsonObject(value)) return;
    for (const [key, v] of Object.entries(value)) {
      stack.push(key);
      if (key === 'rds' && isJsonObject(v)) {
        const ref = get(v, 'route_config_name');
        if (typeof ref === 'string' && isAds(get(v, 'config_source'))) note(refs.routes, ref);
      } else if (SDS_CONFIG_KEY.test(key)) {
        sdsConfigs(v);
      } else if ((key === 'private_key' || key === 'privateKey') && isJsonObject(v) && Object.keys(v).some((k) => INLINE_KEY.has(k))) {
        issues.push({ kind, name, path: pathOf(stack), message: 'a TLS private key must reach Envoy over SDS (a Secret), never inline' });
      }
      visit(v);
      stack.pop();
    }
  };
  visit(resource);
  if (kind === 'clusters') {
    const type = get(resource, 'type');
    const eds = get(resource, 'eds_cluster_config');
    if ((type === 'EDS' || type === 3) && isJsonObject(eds) && isAds(get(eds, 'eds_config'))) {
      const serviceName = get(eds, 'service_name');
      stack.push('eds_cluster_config');
      note(refs.endpoints, typeof serviceName === 'string' && serviceName !== '' ? serviceName : name);
      stack.pop();
    }
  }
}

/** Reports every reference that names a resource the snapshot lacks. */
export function missingReferences(refs: References, has: (kind: 'routes' | 'endpoints' | 'secrets', name: string) => boolean): SnapshotIssue[] {
  const issues: SnapshotIssue[] = [];
  const what = { routes: 'RouteConfiguration', endpoints: 'ClusterLoadAssignment', secrets: 'Secret' } as const;
  for (const kind of ['routes', 'endpoints', 'secrets'] as const) {
    for (const [ref, referrer] of refs[kind]) {
      if (!has(kind, ref)) issues.push({ ...referrer, message: `asks for ${what[kind]} ${JSON.stringify(ref)} over ADS, which the snapshot does not have` });
    }
  }
  return issues;
}
