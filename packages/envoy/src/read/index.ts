// The read stage: Kubernetes objects (parsed YAML or API responses) → typed, defaulted records,
// indexed by namespace and name. Every later stage reads only these records, so a malformed
// input is reported once, here.
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import type { Diagnostics, ObjectRef } from '../diagnostics.js';
import { compare, isObject } from '../json.js';
import { readBackendTlsPolicy } from './backend-tls-policy.js';
import { readBackendPool, readGatewayParameters, readInferencePool, readPolicy } from './extlb.js';
import { GATEWAY_GROUP, readGateway, readGatewayClass, readGrant, readListenerSet, readRoute } from './gateway-api.js';
import { readGrpcRoute } from './grpc-route.js';
import { readConfigMap, readPod, readSecret, readService, readSlice } from './kubernetes.js';
import { byAge, byName, namespaceOf, readMeta } from './meta.js';
import { Reader } from './reader.js';
import { readStreamRoute } from './stream-routes.js';
import { type Inputs, type StreamRouteKind, key } from './records.js';

export { GATEWAY_GROUP } from './gateway-api.js';
export { byAge } from './meta.js';
export { HEADER_NAME } from './reader.js';
export * from './records.js';

/** Kinds the converter reads, keyed by API group and kind. */
const KNOWN: Record<string, string> = {
  [`${GATEWAY_GROUP}/Gateway`]: 'Gateway',
  [`${GATEWAY_GROUP}/HTTPRoute`]: 'HTTPRoute',
  [`${GATEWAY_GROUP}/GRPCRoute`]: 'GRPCRoute',
  [`${GATEWAY_GROUP}/TLSRoute`]: 'TLSRoute',
  [`${GATEWAY_GROUP}/TCPRoute`]: 'TCPRoute',
  [`${GATEWAY_GROUP}/UDPRoute`]: 'UDPRoute',
  [`${GATEWAY_GROUP}/ListenerSet`]: 'ListenerSet',
  [`${GATEWAY_GROUP}/BackendTLSPolicy`]: 'BackendTLSPolicy',
  [`${GATEWAY_GROUP}/ReferenceGrant`]: 'ReferenceGrant',
  [`${GATEWAY_GROUP}/GatewayClass`]: 'GatewayClass',
  '/Service': 'Service',
  '/Pod': 'Pod',
  '/Namespace': 'Namespace',
  '/Secret': 'Secret',
  '/ConfigMap': 'ConfigMap',
  'discovery.k8s.io/EndpointSlice': 'EndpointSlice',
  [`${GROUP}/BackendPool`]: 'BackendPool',
  [`${GROUP}/LoadBalancerPolicy`]: 'LoadBalancerPolicy',
  [`${GROUP}/GatewayParameters`]: 'GatewayParameters',
  [`${INFERENCE_GROUP}/InferencePool`]: 'InferencePool',
};

const CLUSTER_SCOPED = new Set(['Namespace', 'GatewayClass']);

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
}

/** Every object, with `*List` objects (`kubectl get -o yaml`) unpacked, however deeply nested. */
function flatten(objects: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  const stack: (readonly unknown[])[] = [objects];
  const positions: number[] = [0];
  while (stack.length > 0) {
    const top = stack.length - 1;
    const list = stack[top] as readonly unknown[];
    const i = positions[top] as number;
    if (i >= list.length) {
      stack.pop();
      positions.pop();
      continue;
    }
    positions[top] = i + 1;
    const raw = list[i];
    if (isObject(raw) && typeof raw.kind === 'string' && raw.kind.endsWith('List') && Array.isArray(raw.items)) {
      stack.push(raw.items);
      positions.push(0);
    } else out.push(raw);
  }
  return out;
}

/**
 * Drops repeated objects (same apiVersion, kind, namespace and name). Which copy is kept must not
 * depend on input order, so it is the one whose JSON sorts first.
 */
function unique(objects: readonly unknown[], diags: Diagnostics, defaultNamespace: string): unknown[] {
  const byId = new Map<string, unknown[]>();
  const out: unknown[] = [];
  for (const raw of objects) {
    if (!isObject(raw) || !isObject(raw.metadata) || typeof raw.metadata.name !== 'string') {
      out.push(raw);
      continue;
    }
    const id = [textOf(raw.apiVersion), textOf(raw.kind), namespaceOf(raw, defaultNamespace), raw.metadata.name].join('\u0000');
    const copies = byId.get(id);
    if (copies) copies.push(raw);
    else byId.set(id, [raw]);
  }
  for (const [id, copies] of byId) {
    if (copies.length > 1) {
      const [apiVersion, kind, namespace, name] = id.split('\u0000') as [string, string, string, string];
      const keyed = copies.map((c) => ({ c, json: safeJson(c) })).sort((a, b) => compare(a.json, b.json));
      diags.error('Duplicate', `${kind} ${namespace}/${name} (${apiVersion}) appears ${copies.length} times; one copy is used`, { kind, namespace, name });
      out.push(keyed[0]?.c);
    } else out.push(copies[0]);
  }
  return out;
}

/**
 * A field that should be a string, as text: itself, or what it is instead. String() of a value
 * nested 10,000 deep (`[[[…]]]`) would overflow the stack.
 */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  return v === undefined ? '' : `<${Array.isArray(v) ? 'list' : v === null ? 'null' : typeof v}>`;
}

/** JSON of an object for ordering; an object too deep to serialize sorts last. */
function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return '\uffff';
  }
}

function push<T>(map: Map<string, T[]>, k: string, v: T): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/** Reads and indexes every object; unknown kinds are reported and skipped. */
export function readInputs(objects: readonly unknown[], diags: Diagnostics, defaultNamespace = 'default'): Inputs {
  const inputs: Inputs = {
    gateways: [],
    gatewayClasses: new Map(),
    routes: [],
    listenerSets: [],
    services: new Map(),
    slicesByService: new Map(),
    pods: new Map(),
    grants: new Map(),
    pools: new Map(),
    policies: [],
    backendTlsPolicies: [],
    namespaces: new Map(),
    secrets: new Map(),
    configMaps: new Map(),
    gatewayParameters: new Map(),
  };
  for (const raw of unique(flatten(objects), diags, defaultNamespace)) {
    if (!isObject(raw)) {
      diags.error('Invalid', 'a manifest is not an object');
      continue;
    }
    const notText = (['apiVersion', 'kind'] as const).filter((f) => raw[f] !== undefined && typeof raw[f] !== 'string');
    if (notText.length > 0) {
      const name = isObject(raw.metadata) && typeof raw.metadata.name === 'string' ? raw.metadata.name : '<no name>';
      for (const f of notText)
        diags.error('Invalid', `${f} must be a string, not a ${textOf(raw[f])}; the manifest is ignored`, { kind: textOf(raw.kind) || '<no kind>', name }, f);
      continue;
    }
    const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
    const kindName = typeof raw.kind === 'string' ? raw.kind : '<no kind>';
    const kind = KNOWN[`${groupOf(apiVersion)}/${kindName}`];
    const namespace = kind && CLUSTER_SCOPED.has(kind) ? '' : namespaceOf(raw, defaultNamespace);
    const meta = readMeta(raw, kindName, diags, namespace);
    if (!meta) continue;
    const ref: ObjectRef = namespace === '' ? { kind: kindName, name: meta.name } : { kind: kindName, namespace, name: meta.name };
    if (!kind) {
      diags.info('IgnoredKind', `${apiVersion || '<no apiVersion>'} ${kindName} is not an input of the converter and is ignored`, ref);
      continue;
    }
    const r = new Reader(diags, ref);
    const spec = isObject(raw.spec) ? raw.spec : {};
    const k = key(meta.namespace, meta.name);
    switch (kind) {
      case 'GatewayClass':
        inputs.gatewayClasses.set(meta.name, readGatewayClass(r, spec, meta));
        break;
      case 'Gateway':
        inputs.gateways.push(readGateway(r, spec, meta));
        break;
      case 'HTTPRoute':
        inputs.routes.push(readRoute(r, spec, meta));
        break;
      case 'GRPCRoute':
        inputs.routes.push(readGrpcRoute(r, spec, meta));
        break;
      case 'TLSRoute':
      case 'TCPRoute':
      case 'UDPRoute':
        inputs.routes.push(readStreamRoute(kind as StreamRouteKind, r, spec, meta));
        break;
      case 'ListenerSet':
        inputs.listenerSets.push(readListenerSet(r, spec, meta));
        break;
      case 'BackendTLSPolicy':
        inputs.backendTlsPolicies.push(readBackendTlsPolicy(r, spec, meta));
        break;
      case 'ReferenceGrant':
        push(inputs.grants, meta.namespace, readGrant(r, spec, meta));
        break;
      case 'Service':
        inputs.services.set(k, readService(r, spec, meta));
        break;
      case 'EndpointSlice': {
        const slice = readSlice(r, raw, meta);
        if (slice) push(inputs.slicesByService, key(meta.namespace, slice.serviceName), slice);
        break;
      }
      case 'Pod':
        push(inputs.pods, meta.namespace, readPod(r, raw, meta));
        break;
      case 'Secret':
        inputs.secrets.set(k, readSecret(r, raw, meta));
        break;
      case 'ConfigMap':
        inputs.configMaps.set(k, readConfigMap(r, raw, meta));
        break;
      case 'Namespace':
        // The API server sets this label on every Namespace; files lack it, selectors rely on it.
        inputs.namespaces.set(meta.name, { ...meta.labels, 'kubernetes.io/metadata.name': meta.name });
        break;
      case 'BackendPool':
        inputs.pools.set(`BackendPool/${k}`, readBackendPool(r, raw, meta));
        break;
      case 'InferencePool':
        inputs.pools.set(`InferencePool/${k}`, readInferencePool(r, raw, meta));
        break;
      case 'LoadBalancerPolicy':
        inputs.policies.push(readPolicy(r, raw, meta));
        break;
      case 'GatewayParameters':
        inputs.gatewayParameters.set(k, readGatewayParameters(r, raw, meta));
        break;
    }
  }
  // Input order must not change the output, so every list is put in a canonical order here.
  inputs.gateways.sort(byAge);
  inputs.routes.sort(byAge);
  inputs.listenerSets.sort(byAge);
  inputs.policies.sort(byAge);
  inputs.backendTlsPolicies.sort(byAge);
  for (const list of [...inputs.slicesByService.values(), ...inputs.pods.values(), ...inputs.grants.values()]) list.sort(byName);
  return inputs;
}
