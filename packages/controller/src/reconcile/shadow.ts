// Shadow Services: for every BackendPool and InferencePool, a headless Service with the pool's
// selector and target ports, owned by the pool. Kubernetes then publishes the pool's ready Pods as
// that Service's EndpointSlices — readiness and addresses decided where they always are — and the
// controller reads those slices instead of watching every Pod. The ownerReference lets Kubernetes
// delete the Service with its pool.
import { shadowServiceName } from '@extlb/envoy';
import { ApiError, type JsonObject, type KubeApi } from '../cluster/api.js';

export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'extlb' } as const;
const POOL_KIND_LABEL = 'extlb.dev/pool-kind';
const POOL_NAME_LABEL = 'extlb.dev/pool-name';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

interface Pool {
  apiVersion: string;
  kind: 'BackendPool' | 'InferencePool';
  namespace: string;
  name: string;
  uid: string;
  selector: Record<string, string>;
  ports: number[];
}

/** A pool's shape as the shadow Service needs it, or undefined for an object too broken to select Pods. */
function poolOf(o: JsonObject): Pool | undefined {
  const m = isObject(o.metadata) ? o.metadata : {};
  const spec = isObject(o.spec) ? o.spec : {};
  const labels = isObject(spec.selector) && isObject(spec.selector.matchLabels) ? spec.selector.matchLabels : undefined;
  const ports = Array.isArray(spec.targetPorts) ? spec.targetPorts.map((p) => (isObject(p) ? p.number : undefined)) : [];
  if (!labels || Object.keys(labels).length === 0 || ports.length === 0 || !ports.every((p) => typeof p === 'number')) return undefined;
  if (!Object.values(labels).every((v) => typeof v === 'string')) return undefined;
  if (typeof m.name !== 'string' || typeof m.namespace !== 'string' || typeof m.uid !== 'string') return undefined;
  return {
    apiVersion: String(o.apiVersion),
    kind: o.kind as Pool['kind'],
    namespace: m.namespace,
    name: m.name,
    uid: m.uid,
    selector: labels as Record<string, string>,
    ports: ports as number[],
  };
}

/** The Service a pool should have. */
export function shadowService(pool: Pool): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: shadowServiceName(pool.kind, pool.name),
      namespace: pool.namespace,
      labels: { ...MANAGED_BY, [POOL_KIND_LABEL]: pool.kind, [POOL_NAME_LABEL]: pool.name },
      annotations: { 'extlb.dev/for': `${pool.kind}/${pool.name}` },
      ownerReferences: [{ apiVersion: pool.apiVersion, kind: pool.kind, name: pool.name, uid: pool.uid, controller: true, blockOwnerDeletion: false }],
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: false,
      selector: { ...pool.selector },
      ports: pool.ports.map((port) => ({ name: `tcp-${port}`, port, targetPort: port, protocol: 'TCP' })),
    },
  };
}

/** Whether an existing Service already is what `want` asks (fields the API server fills are ignored). */
function upToDate(have: JsonObject, want: JsonObject): boolean {
  const h = (isObject(have.spec) ? have.spec : {}) as JsonObject;
  const w = want.spec as JsonObject;
  const hm = (isObject(have.metadata) ? have.metadata : {}) as JsonObject;
  const wm = want.metadata as JsonObject;
  const ports = (v: unknown) => JSON.stringify((Array.isArray(v) ? v : []).map((p: JsonObject) => [p.name, p.port, p.targetPort, p.protocol ?? 'TCP']));
  return (
    h.clusterIP === 'None' &&
    JSON.stringify(h.selector ?? {}) === JSON.stringify(w.selector) &&
    ports(h.ports) === ports(w.ports) &&
    JSON.stringify(hm.ownerReferences ?? []) === JSON.stringify(wm.ownerReferences) &&
    Object.entries(wm.labels as Record<string, string>).every(([k, v]) => isObject(hm.labels) && hm.labels[k] === v)
  );
}

export interface ShadowReport {
  created: number;
  updated: number;
  deleted: number;
  failed: string[];
}

/**
 * Brings the shadow Services in line with the pools: creates missing ones, corrects changed ones,
 * deletes those whose pool is gone (Kubernetes' garbage collector would too; this also covers a
 * pool replaced by another of the same name).
 */
export async function reconcileShadowServices(api: KubeApi, pools: JsonObject[], services: JsonObject[]): Promise<ShadowReport> {
  const report: ShadowReport = { created: 0, updated: 0, deleted: 0, failed: [] };
  const existing = new Map<string, JsonObject>();
  for (const s of services) {
    const m = (isObject(s.metadata) ? s.metadata : {}) as JsonObject;
    if (isObject(m.labels) && m.labels['app.kubernetes.io/managed-by'] === 'extlb' && m.labels[POOL_KIND_LABEL] !== undefined)
      existing.set(`${String(m.namespace)}/${String(m.name)}`, s);
  }
  const wanted = new Set<string>();
  for (const o of pools) {
    const pool = poolOf(o);
    if (!pool) continue;
    const want = shadowService(pool);
    const wm = want.metadata as { namespace: string; name: string };
    const key = `${wm.namespace}/${wm.name}`;
    wanted.add(key);
    const have = existing.get(key);
    const base = `/api/v1/namespaces/${encodeURIComponent(wm.namespace)}/services`;
    try {
      if (!have) {
        await api.request('POST', base, { body: want });
        report.created += 1;
      } else if (!upToDate(have, want)) {
        // Keep what the API server set (clusterIP, resourceVersion, ...); replace what extlb owns.
        const hm = have.metadata as JsonObject;
        const body = {
          ...have,
          metadata: {
            ...hm,
            labels: { ...(hm.labels as object), ...((want.metadata as JsonObject).labels as object) },
            ownerReferences: (want.metadata as JsonObject).ownerReferences,
          },
          spec: { ...(have.spec as object), ...(want.spec as object) },
        };
        await api.request('PUT', `${base}/${encodeURIComponent(wm.name)}`, { body });
        report.updated += 1;
      }
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) report.failed.push(`${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const [key, s] of existing) {
    if (wanted.has(key)) continue;
    const m = s.metadata as { namespace: string; name: string };
    try {
      await api.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(m.namespace)}/services/${encodeURIComponent(m.name)}`);
      report.deleted += 1;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) report.failed.push(`${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return report;
}
