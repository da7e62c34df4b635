// What a controller must write or watch for the objects the read stage made: a headless shadow
// Service per pool (Kubernetes then publishes the pool's ready Pods as its EndpointSlices), and
// the ConfigMaps and Secrets the inputs name. The read stage is the one source of these facts; a
// controller re-parses none of them.
import { compare, type JsonObject } from '../json.js';
import type { Inputs, ObjectReference, Pool } from '../read/index.js';
import { shadowServiceName } from '../resolve/index.js';

/** The labels every shadow Service carries, so a controller finds the ones it made. */
export const SHADOW_SERVICE_LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  poolKind: 'extlb.dev/pool-kind',
  poolName: 'extlb.dev/pool-name',
} as const;

export interface ClusterNeeds {
  /** The Service each pool should have (`v1` Service objects, sorted by namespace and name). */
  shadowServices: JsonObject[];
  /** `namespace/name` of each ConfigMap a BackendTLSPolicy or a Gateway names as a CA bundle, sorted. */
  configMaps: string[];
  /** `namespace/name` of each Secret a Gateway names (listener certificates, the backend client certificate), sorted. */
  secrets: string[];
  /** The GatewayClasses whose controllerName is this converter's, sorted. */
  gatewayClasses: string[];
}

/** The shadow Service of one pool; undefined for a pool that selects nothing or has no uid to own it by. */
export function shadowService(pool: Pool): JsonObject | undefined {
  if (Object.keys(pool.selector).length === 0 || pool.targetPorts.length === 0 || !pool.meta.uid) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: shadowServiceName(pool.kind, pool.meta.name),
      namespace: pool.meta.namespace,
      labels: { [SHADOW_SERVICE_LABELS.managedBy]: 'extlb', [SHADOW_SERVICE_LABELS.poolKind]: pool.kind, [SHADOW_SERVICE_LABELS.poolName]: pool.meta.name },
      annotations: { 'extlb.dev/for': `${pool.kind}/${pool.meta.name}` },
      ownerReferences: [
        { apiVersion: pool.apiVersion, kind: pool.kind, name: pool.meta.name, uid: pool.meta.uid, controller: true, blockOwnerDeletion: false },
      ],
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: false,
      selector: { ...pool.selector },
      ports: pool.targetPorts.map((port) => ({ name: `tcp-${port}`, port, targetPort: port, protocol: 'TCP' })),
    },
  };
}

const sameList = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** `next`, or `last` when it holds the very same needs: a controller can tell "nothing to write" by identity. */
export function keptNeeds(last: ClusterNeeds | undefined, next: ClusterNeeds): ClusterNeeds {
  if (!last) return next;
  const same = (['shadowServices', 'configMaps', 'secrets', 'gatewayClasses'] as const).every((k) => sameList(last[k], next[k]));
  return same ? last : next;
}

const core = (ref: { group: string; kind: string }, kind: string) => ref.group === '' && ref.kind === kind;

/** Each pool record's shadow Service, made once (the read stage keeps an unchanged pool's record). */
const shadows = new WeakMap<Pool, JsonObject | undefined>();

export function clusterNeeds(inputs: Inputs, gatewayClasses: readonly string[]): ClusterNeeds {
  const shadowServices: JsonObject[] = [];
  for (const p of inputs.pools.values()) {
    const s = shadows.has(p) ? shadows.get(p) : shadowService(p);
    shadows.set(p, s);
    if (s) shadowServices.push(s);
  }
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const p of inputs.backendTlsPolicies) {
    for (const ref of p.caCertificateRefs) if (core(ref, 'ConfigMap') && ref.name !== '') configMaps.add(`${p.meta.namespace}/${ref.name}`);
  }
  const add = (set: Set<string>, ref: ObjectReference | undefined, kind: string) => {
    if (ref && core(ref, kind) && ref.name !== '') set.add(`${ref.namespace}/${ref.name}`);
  };
  for (const g of inputs.gateways) {
    const frontend = g.tls.frontend;
    for (const v of [frontend?.default, ...(frontend?.perPort ?? []).map((p) => p.validation)])
      for (const ref of v?.caCertificateRefs ?? []) add(configMaps, ref, 'ConfigMap');
    for (const l of g.listeners) for (const ref of l.tls?.certificateRefs ?? []) add(secrets, ref, 'Secret');
    add(secrets, g.tls.backendClientCertificate, 'Secret');
  }
  const key = (s: JsonObject) => {
    const m = s.metadata as { namespace: string; name: string };
    return `${m.namespace}/${m.name}`;
  };
  return {
    shadowServices: shadowServices.sort((a, b) => compare(key(a), key(b))),
    configMaps: [...configMaps].sort(compare),
    secrets: [...secrets].sort(compare),
    gatewayClasses: [...gatewayClasses].sort(compare),
  };
}
