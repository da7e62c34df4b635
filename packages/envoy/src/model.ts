// The checked, defaulted records the converter works on, one per input object, and the helpers
// that key and order them.
import { compare, type ObjectRef } from './diagnostics.js';
import type { LoadBalancer } from './loadbalancer.js';
import type { Json } from './read.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export interface Meta {
  name: string;
  namespace: string;
  /** ISO timestamp; objects without one sort as the newest. */
  creationTimestamp: string;
  generation?: number;
  labels: Record<string, string>;
}

export interface Base {
  ref: ObjectRef;
  meta: Meta;
}

export interface Listener {
  name: string;
  index: number;
  port: number;
  protocol: 'HTTP' | 'HTTPS';
  hostname?: string;
  certificateRefs: { namespace: string; name: string }[];
  from: 'Same' | 'All' | 'Selector';
  selector?: Record<string, string>;
  /** Whether HTTPRoute is among the listener's allowed kinds. */
  allowsHttpRoute: boolean;
}

/** A listener the converter does not turn into Envoy config, and why (for the Gateway's status). */
export interface RejectedListener {
  name: string;
  index: number;
  /** Gateway API listener condition reason: UnsupportedProtocol, PortUnavailable, ProtocolConflict, ... */
  reason: string;
  message: string;
  /** The Conflicted condition is True for conflicts, Accepted is False for the rest. */
  conflict: boolean;
}

export interface Gateway extends Base {
  gatewayClassName: string;
  listeners: Listener[];
  rejected: RejectedListener[];
}

export interface ParentRef {
  index: number;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export type PathType = 'Exact' | 'PathPrefix' | 'RegularExpression';
export interface ValueMatch {
  name: string;
  type: 'Exact' | 'RegularExpression';
  value: string;
}
export interface Match {
  index: number;
  path: { type: PathType; value: string };
  headers: ValueMatch[];
  queryParams: ValueMatch[];
  method?: string;
}

export interface BackendRef {
  index: number;
  group: string;
  kind: string;
  name: string;
  namespace: string;
  port?: number;
  weight: number;
  /** Per-backend filters are not supported; kept so the converter can say so. */
  filterCount: number;
}

export interface Filter {
  index: number;
  type: string;
  spec: Json;
}

export interface Rule {
  index: number;
  name?: string;
  matches: Match[];
  filters: Filter[];
  backendRefs: BackendRef[];
  timeouts: { requestMs?: number; backendRequestMs?: number };
  retry?: { codes: number[]; attempts?: number; backoffMs?: number };
  sessionPersistence: boolean;
}

export interface HttpRoute extends Base {
  parentRefs: ParentRef[];
  hostnames: string[];
  rules: Rule[];
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

export interface Service extends Base {
  type: string;
  headless: boolean;
  ports: ServicePort[];
}

export interface EndpointSlice extends Base {
  serviceName?: string;
  addresses: string[];
  ports: { name: string; port: number }[];
}

export interface Pod extends Base {
  ip?: string;
  ready: boolean;
}

export interface ReferenceGrant extends Base {
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}

export interface Pool extends Base {
  kind: 'BackendPool' | 'InferencePool';
  selector: Record<string, string>;
  targetPorts: number[];
  h2c: boolean;
  /** The pool's own load balancer: BackendPool's `loadBalancer`, InferencePool's picker. */
  lb?: LoadBalancer;
}

export interface PolicyTarget {
  index: number;
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

export interface Policy extends Base {
  targets: PolicyTarget[];
  lb?: LoadBalancer;
}

export interface Inputs {
  gateways: Gateway[];
  routes: HttpRoute[];
  services: Map<string, Service>;
  slicesByService: Map<string, EndpointSlice[]>;
  pods: Map<string, Pod[]>;
  grants: Map<string, ReferenceGrant[]>;
  pools: Map<string, Pool>;
  policies: Policy[];
  namespaces: Map<string, Record<string, string>>;
}

/** `namespace/name`, the key of every index. */
export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Kind plus group as a key: `Service`, `BackendPool.extlb.dev`. */
export function groupKind(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

/** Oldest first, then `namespace/name` alphabetically: Gateway API's tie-break everywhere. */
export function byAge(a: Base, b: Base): number {
  return (
    compare(a.meta.creationTimestamp, b.meta.creationTimestamp) || compare(a.ref.namespace ?? '', b.ref.namespace ?? '') || compare(a.meta.name, b.meta.name)
  );
}
