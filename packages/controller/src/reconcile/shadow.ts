// Shadow Services: for every BackendPool and InferencePool, a headless Service with the pool's
// selector and target ports, owned by the pool (the Converter says which, from the read stage).
// Kubernetes then publishes the pool's ready Pods as that Service's EndpointSlices — readiness and
// addresses decided where they always are — and the controller reads those slices instead of
// watching every Pod. The ownerReference lets Kubernetes delete the Service with its pool. Each
// Service is written on its own, so one that fails is retried alone.
import { type JsonObject, SHADOW_SERVICE_LABELS } from '@extlb/envoy';
import { ApiError, type KubeApi } from '../cluster/api.js';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether a Service is one extlb made for a pool. */
export function isShadowService(s: JsonObject): boolean {
  const labels = isObject(s.metadata) && isObject(s.metadata.labels) ? s.metadata.labels : {};
  return labels[SHADOW_SERVICE_LABELS.managedBy] === 'extlb' && labels[SHADOW_SERVICE_LABELS.poolKind] !== undefined;
}

/** `namespace/name` of a Service. */
export function serviceKey(s: JsonObject): string {
  const m = (isObject(s.metadata) ? s.metadata : {}) as JsonObject;
  return `${String(m.namespace)}/${String(m.name)}`;
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

/**
 * Brings one shadow Service in line: creates it when missing, corrects it when changed, deletes it
 * when no pool wants it (`want` undefined; Kubernetes' garbage collector would too, this also covers
 * a pool replaced by another of the same name). Throws when the API server refuses, for a retry.
 */
export async function syncShadowService(
  api: KubeApi,
  want: JsonObject | undefined,
  have: JsonObject | undefined,
): Promise<'created' | 'updated' | 'deleted' | 'unchanged'> {
  const target = (want ?? have) as JsonObject | undefined;
  if (!target) return 'unchanged';
  const m = target.metadata as { namespace: string; name: string };
  const base = `/api/v1/namespaces/${encodeURIComponent(m.namespace)}/services`;
  if (!want) {
    if (!have) return 'unchanged';
    try {
      await api.request('DELETE', `${base}/${encodeURIComponent(m.name)}`);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    return 'deleted';
  }
  if (!have) {
    await api.request('POST', base, { body: want });
    return 'created';
  }
  if (upToDate(have, want)) return 'unchanged';
  // Keep what the API server set (clusterIP, resourceVersion, ...); replace what extlb owns.
  const hm = have.metadata as JsonObject;
  const wm = want.metadata as JsonObject;
  const body = {
    ...have,
    metadata: { ...hm, labels: { ...(hm.labels as object), ...(wm.labels as object) }, ownerReferences: wm.ownerReferences },
    spec: { ...(have.spec as object), ...(want.spec as object) },
  };
  await api.request('PUT', `${base}/${encodeURIComponent(m.name)}`, { body });
  return 'updated';
}
