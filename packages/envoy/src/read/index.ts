// The read stage: Kubernetes objects (parsed YAML or API responses) → typed, defaulted records,
// indexed by namespace and name. Every later stage reads only these records, so a malformed
// input is reported once, here.
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import { type Diagnostic, Diagnostics, type ObjectRef } from '../diagnostics.js';
import type { ReadCache } from './cache.js';
import { compare, isObject } from '../json.js';
import { readBackendTlsPolicy } from './backend-tls-policy.js';
import { readBackendPool, readGatewayParameters, readInferencePool, readPolicy } from './extlb.js';
import { GATEWAY_GROUP, readGateway, readGatewayClass, readGrant, readListenerSet, readRoute } from './gateway-api.js';
import { readGrpcRoute } from './grpc-route.js';
import { readConfigMap, readPod, readSecret, readService, readSlice } from './kubernetes.js';
import { byAge, byName, namespaceOf, readMeta } from './meta.js';
import { Reader } from './reader.js';
import { readStreamRoute } from './stream-routes.js';
import type {
  BackendTlsPolicy,
  ConfigMap,
  EndpointSlice,
  GatewayClass,
  GatewayParametersRecord,
  GatewayRecord,
  Inputs,
  ListenerSet,
  Pod,
  Policy,
  Pool,
  ReferenceGrant,
  RouteRecord,
  Secret,
  Service,
  StreamRouteKind,
} from './records.js';
import { key } from './records.js';

export { GATEWAY_GROUP } from './gateway-api.js';
export { byAge } from './meta.js';
export { HEADER_NAME } from './reader.js';
export * from './records.js';
export { ReadCache } from './cache.js';

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

/** One object read: its record (none for an object that is reported and skipped) and what was found reading it. */
export interface ObjectRead {
  entry?: ReadEntry;
  diagnostics: readonly Diagnostic[];
}

/** A record and where it goes in the Inputs. */
export type ReadEntry =
  | { kind: 'GatewayClass'; key: string; record: GatewayClass }
  | { kind: 'Gateway'; key: string; record: GatewayRecord }
  | { kind: 'Route'; key: string; record: RouteRecord }
  | { kind: 'ListenerSet'; key: string; record: ListenerSet }
  | { kind: 'BackendTLSPolicy'; key: string; record: BackendTlsPolicy }
  | { kind: 'ReferenceGrant'; key: string; record: ReferenceGrant }
  | { kind: 'Service'; key: string; record: Service }
  | { kind: 'EndpointSlice'; key: string; record: EndpointSlice }
  | { kind: 'Pod'; key: string; record: Pod }
  | { kind: 'Secret'; key: string; record: Secret }
  | { kind: 'ConfigMap'; key: string; record: ConfigMap }
  | { kind: 'Namespace'; key: string; record: Record<string, string> }
  | { kind: 'Pool'; key: string; record: Pool }
  | { kind: 'LoadBalancerPolicy'; key: string; record: Policy }
  | { kind: 'GatewayParameters'; key: string; record: GatewayParametersRecord };

/** Reads one object (not a `*List`); unknown kinds are reported and skipped. */
export function readObject(raw: unknown, defaultNamespace = 'default'): ObjectRead {
  const diags = new Diagnostics();
  const entry = readEntry(raw, diags, defaultNamespace);
  return entry ? { entry, diagnostics: diags.list } : { diagnostics: diags.list };
}

function readEntry(raw: unknown, diags: Diagnostics, defaultNamespace: string): ReadEntry | undefined {
  if (!isObject(raw)) {
    diags.error('Invalid', 'a manifest is not an object');
    return undefined;
  }
  const notText = (['apiVersion', 'kind'] as const).filter((f) => raw[f] !== undefined && typeof raw[f] !== 'string');
  if (notText.length > 0) {
    const name = isObject(raw.metadata) && typeof raw.metadata.name === 'string' ? raw.metadata.name : '<no name>';
    for (const f of notText)
      diags.error('Invalid', `${f} must be a string, not a ${textOf(raw[f])}; the manifest is ignored`, { kind: textOf(raw.kind) || '<no kind>', name }, f);
    return undefined;
  }
  const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
  const kindName = typeof raw.kind === 'string' ? raw.kind : '<no kind>';
  const kind = KNOWN[`${groupOf(apiVersion)}/${kindName}`];
  const namespace = kind && CLUSTER_SCOPED.has(kind) ? '' : namespaceOf(raw, defaultNamespace);
  const meta = readMeta(raw, kindName, diags, namespace);
  if (!meta) return undefined;
  const ref: ObjectRef = namespace === '' ? { kind: kindName, name: meta.name } : { kind: kindName, namespace, name: meta.name };
  if (!kind) {
    diags.info('IgnoredKind', `${apiVersion || '<no apiVersion>'} ${kindName} is not an input of the converter and is ignored`, ref);
    return undefined;
  }
  const r = new Reader(diags, ref);
  const spec = isObject(raw.spec) ? raw.spec : {};
  const k = key(meta.namespace, meta.name);
  switch (kind) {
    case 'GatewayClass':
      return { kind, key: meta.name, record: readGatewayClass(r, spec, meta) };
    case 'Gateway':
      return { kind, key: k, record: readGateway(r, spec, meta) };
    case 'HTTPRoute':
      return { kind: 'Route', key: k, record: readRoute(r, spec, meta) };
    case 'GRPCRoute':
      return { kind: 'Route', key: k, record: readGrpcRoute(r, spec, meta) };
    case 'TLSRoute':
    case 'TCPRoute':
    case 'UDPRoute':
      return { kind: 'Route', key: k, record: readStreamRoute(kind as StreamRouteKind, r, spec, meta) };
    case 'ListenerSet':
      return { kind, key: k, record: readListenerSet(r, spec, meta) };
    case 'BackendTLSPolicy':
      return { kind, key: k, record: readBackendTlsPolicy(r, spec, meta) };
    case 'ReferenceGrant':
      return { kind, key: meta.namespace, record: readGrant(r, spec, meta) };
    case 'Service':
      return { kind, key: k, record: readService(r, spec, meta) };
    case 'EndpointSlice': {
      const slice = readSlice(r, raw, meta);
      return slice ? { kind, key: key(meta.namespace, slice.serviceName), record: slice } : undefined;
    }
    case 'Pod':
      return { kind, key: meta.namespace, record: readPod(r, raw, meta) };
    case 'Secret':
      return { kind, key: k, record: readSecret(r, raw, meta) };
    case 'ConfigMap':
      return { kind, key: k, record: readConfigMap(r, raw, meta) };
    case 'Namespace':
      // The API server sets this label on every Namespace; files lack it, selectors rely on it.
      return { kind, key: meta.name, record: { ...meta.labels, 'kubernetes.io/metadata.name': meta.name } };
    case 'BackendPool':
      return { kind: 'Pool', key: `BackendPool/${k}`, record: readBackendPool(r, raw, meta) };
    case 'InferencePool':
      return { kind: 'Pool', key: `InferencePool/${k}`, record: readInferencePool(r, raw, meta) };
    case 'LoadBalancerPolicy':
      return { kind, key: k, record: readPolicy(r, raw, meta) };
    case 'GatewayParameters':
      return { kind, key: k, record: readGatewayParameters(r, raw, meta) };
  }
  return undefined;
}

function place(inputs: Inputs, e: ReadEntry): void {
  switch (e.kind) {
    case 'GatewayClass':
      inputs.gatewayClasses.set(e.key, e.record);
      break;
    case 'Gateway':
      inputs.gateways.push(e.record);
      break;
    case 'Route':
      inputs.routes.push(e.record);
      break;
    case 'ListenerSet':
      inputs.listenerSets.push(e.record);
      break;
    case 'BackendTLSPolicy':
      inputs.backendTlsPolicies.push(e.record);
      break;
    case 'ReferenceGrant':
      push(inputs.grants, e.key, e.record);
      break;
    case 'Service':
      inputs.services.set(e.key, e.record);
      break;
    case 'EndpointSlice':
      push(inputs.slicesByService, e.key, e.record);
      break;
    case 'Pod':
      push(inputs.pods, e.key, e.record);
      break;
    case 'Secret':
      inputs.secrets.set(e.key, e.record);
      break;
    case 'ConfigMap':
      inputs.configMaps.set(e.key, e.record);
      break;
    case 'Namespace':
      inputs.namespaces.set(e.key, e.record);
      break;
    case 'Pool':
      inputs.pools.set(e.key, e.record);
      break;
    case 'LoadBalancerPolicy':
      inputs.policies.push(e.record);
      break;
    case 'GatewayParameters':
      inputs.gatewayParameters.set(e.key, e.record);
      break;
  }
}

/**
 * Reads and indexes every object; unknown kinds are reported and skipped. With a cache, an object
 * read before (the same object, or the same uid and resourceVersion) is not read again: its record
 * is shared, so nothing downstream may mutate a record.
 */
export function readInputs(
  objects: readonly unknown[],
  diags: Diagnostics,
  defaultNamespace = 'default',
  cache?: ReadCache,
  /** The caller knows every object is named, no two share an identity, and none is a `*List`. */
  distinct = false,
): Inputs {
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
  for (const raw of distinct ? objects : unique(flatten(objects), diags, defaultNamespace)) {
    const read = cache ? cache.read(raw, defaultNamespace) : readObject(raw, defaultNamespace);
    for (const d of read.diagnostics) diags.list.push(d);
    if (read.entry) place(inputs, read.entry);
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
