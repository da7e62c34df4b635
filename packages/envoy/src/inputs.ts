// Turns raw Kubernetes objects into checked, defaulted records indexed by namespace and name. Every
// later stage reads only these records, so a malformed input is reported once, here.
import { type Diagnostics, compare, type ObjectRef } from './diagnostics.js';
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import { GATEWAY_GROUP, byAge, key, type Inputs, type Meta } from './model.js';
import { readBackendPool, readInferencePool, readPolicy } from './read-extlb.js';
import { readGateway, readGrant, readRoute } from './read-gateway-api.js';
import { readPod, readService, readSlice } from './read-kubernetes.js';
import { Reader, isObject, type Json } from './read.js';

function readMeta(raw: Json, kind: string, diags: Diagnostics, defaultNamespace: string): Meta | undefined {
  const m = isObject(raw.metadata) ? raw.metadata : {};
  const name = typeof m.name === 'string' && m.name !== '' ? m.name : undefined;
  const namespace = typeof m.namespace === 'string' && m.namespace !== '' ? m.namespace : defaultNamespace;
  if (!name) {
    diags.error('Invalid', `${kind} without metadata.name is ignored`, { kind, namespace, name: '<no name>' }, 'metadata.name');
    return undefined;
  }
  const meta: Meta = {
    name,
    namespace,
    // A missing timestamp sorts last: an object not yet created is never the established one.
    creationTimestamp: typeof m.creationTimestamp === 'string' ? m.creationTimestamp : '9999-12-31T23:59:59Z',
    labels: {},
  };
  if (typeof m.generation === 'number') meta.generation = m.generation;
  const r = new Reader(diags, { kind, namespace, name });
  meta.labels = r.labels(m.labels, 'metadata.labels');
  return meta;
}

function push<T>(map: Map<string, T[]>, k: string, v: T): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/** Kinds the converter reads, keyed by `apiVersion group` + kind. */
const KNOWN: Record<string, string> = {
  [`${GATEWAY_GROUP}/Gateway`]: 'Gateway',
  [`${GATEWAY_GROUP}/HTTPRoute`]: 'HTTPRoute',
  [`${GATEWAY_GROUP}/ReferenceGrant`]: 'ReferenceGrant',
  [`${GATEWAY_GROUP}/GatewayClass`]: 'GatewayClass',
  '/Service': 'Service',
  '/Pod': 'Pod',
  '/Namespace': 'Namespace',
  'discovery.k8s.io/EndpointSlice': 'EndpointSlice',
  [`${GROUP}/BackendPool`]: 'BackendPool',
  [`${GROUP}/LoadBalancerPolicy`]: 'LoadBalancerPolicy',
  [`${INFERENCE_GROUP}/InferencePool`]: 'InferencePool',
};

function identity(raw: unknown, defaultNamespace: string): string | undefined {
  if (!isObject(raw) || !isObject(raw.metadata) || typeof raw.metadata.name !== 'string') return undefined;
  const ns = typeof raw.metadata.namespace === 'string' && raw.metadata.namespace !== '' ? raw.metadata.namespace : defaultNamespace;
  return [String(raw.apiVersion), String(raw.kind), ns, raw.metadata.name].join('\u0000');
}

/**
 * Drops repeated objects (same apiVersion, kind, namespace and name). Which copy is kept must not
 * depend on input order, so it is the one whose JSON sorts first.
 */
function unique(objects: readonly unknown[], diags: Diagnostics, defaultNamespace: string): unknown[] {
  const byId = new Map<string, unknown[]>();
  const out: unknown[] = [];
  for (const raw of objects) {
    const id = identity(raw, defaultNamespace);
    if (id === undefined) out.push(raw);
    else byId.set(id, [...(byId.get(id) ?? []), raw]);
  }
  for (const [id, copies] of byId) {
    if (copies.length > 1) {
      const [apiVersion, kind, namespace, name] = id.split('\u0000') as [string, string, string, string];
      copies.sort((a, b) => compare(JSON.stringify(a), JSON.stringify(b)));
      diags.error('Duplicate', `${kind} ${namespace}/${name} (${apiVersion}) appears ${copies.length} times; one copy is used`, { kind, namespace, name });
    }
    out.push(copies[0]);
  }
  return out;
}

/** Reads and indexes every object; unknown kinds are reported and skipped. */
export function readInputs(objects: readonly unknown[], diags: Diagnostics, defaultNamespace = 'default'): Inputs {
  const inputs: Inputs = {
    gateways: [],
    routes: [],
    services: new Map(),
    slicesByService: new Map(),
    pods: new Map(),
    grants: new Map(),
    pools: new Map(),
    policies: [],
    namespaces: new Map(),
  };
  for (const raw of unique(objects, diags, defaultNamespace)) {
    if (!isObject(raw)) {
      diags.error('Invalid', 'a manifest is not an object');
      continue;
    }
    const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
    const kindName = typeof raw.kind === 'string' ? raw.kind : '<no kind>';
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
    const kind = KNOWN[`${group}/${kindName}`];
    // List kinds (`kubectl get -o yaml`) carry their objects in items.
    if (kindName.endsWith('List') && Array.isArray(raw.items)) {
      const nested = readInputs(raw.items, diags, defaultNamespace);
      mergeInputs(inputs, nested);
      continue;
    }
    const meta = readMeta(raw, kindName, diags, kind === 'Namespace' ? '' : defaultNamespace);
    if (!meta) continue;
    const ref: ObjectRef = kind === 'Namespace' ? { kind: kindName, name: meta.name } : { kind: kindName, namespace: meta.namespace, name: meta.name };
    if (!kind || kind === 'GatewayClass') {
      if (!kind) diags.info('IgnoredKind', `${apiVersion || '<no apiVersion>'} ${kindName} is not an input of the converter and is ignored`, ref);
      continue;
    }
    const r = new Reader(diags, ref);
    const spec = isObject(raw.spec) ? raw.spec : {};
    const k = key(meta.namespace, meta.name);
    switch (kind) {
      case 'Gateway':
        inputs.gateways.push(readGateway(r, spec, meta));
        break;
      case 'HTTPRoute':
        inputs.routes.push(readRoute(r, spec, meta));
        break;
      case 'ReferenceGrant':
        push(inputs.grants, meta.namespace, readGrant(r, spec, meta));
        break;
      case 'Service':
        inputs.services.set(k, readService(r, spec, meta));
        break;
      case 'EndpointSlice': {
        const slice = readSlice(r, raw, meta);
        if (slice.serviceName) push(inputs.slicesByService, key(meta.namespace, slice.serviceName), slice);
        break;
      }
      case 'Pod':
        push(inputs.pods, meta.namespace, readPod(raw, meta, r));
        break;
      case 'Namespace':
        inputs.namespaces.set(meta.name, meta.labels);
        break;
      case 'BackendPool':
      case 'InferencePool': {
        const pool = kind === 'BackendPool' ? readBackendPool(r, spec, meta) : readInferencePool(r, spec, meta);
        if (pool) inputs.pools.set(`${kind}/${k}`, pool);
        break;
      }
      case 'LoadBalancerPolicy': {
        const policy = readPolicy(r, spec, meta);
        if (policy) inputs.policies.push(policy);
        break;
      }
    }
  }
  sortInputs(inputs);
  return inputs;
}

function mergeInputs(into: Inputs, from: Inputs): void {
  into.gateways.push(...from.gateways);
  into.routes.push(...from.routes);
  into.policies.push(...from.policies);
  for (const [k, v] of from.services) into.services.set(k, v);
  for (const [k, v] of from.pools) into.pools.set(k, v);
  for (const [k, v] of from.namespaces) into.namespaces.set(k, v);
  for (const [k, v] of from.slicesByService) for (const s of v) push(into.slicesByService, k, s);
  for (const [k, v] of from.pods) for (const p of v) push(into.pods, k, p);
  for (const [k, v] of from.grants) for (const g of v) push(into.grants, k, g);
}

/** Input order must not change the output, so every list is put in a canonical order here. */
function sortInputs(inputs: Inputs): void {
  inputs.gateways.sort(byAge);
  inputs.routes.sort(byAge);
  inputs.policies.sort(byAge);
  for (const list of inputs.slicesByService.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
  for (const list of inputs.pods.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
  for (const list of inputs.grants.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
}
