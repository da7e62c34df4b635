// What the resolve stage found about each input object, in the terms of its status: the status
// stage turns these into conditions, and never looks at diagnostics.
import type { ObjectRef } from '../diagnostics.js';
import type {
  BackendTlsPolicy,
  GatewayRecord,
  GatewayClass,
  RouteRecord,
  ListenerSet,
  ParentRef,
  PickerRef,
  Policy,
  Pool,
  Problem,
  RouteGroupKind,
} from '../read/index.js';

/** One condition: its status, a CamelCase reason and a sentence. */
export interface Verdict {
  status: boolean;
  reason: string;
  message: string;
}

export interface ListenerOutcome {
  /** The ListenerSet the listener comes from; absent for a Gateway's own. */
  owner?: ObjectRef;
  name: string;
  index: number;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  accepted: Verdict;
  programmed: Verdict;
  resolvedRefs: Verdict;
  conflicted: Verdict;
}

export interface GatewayOutcome {
  gateway: GatewayRecord;
  accepted: Verdict;
  programmed: Verdict;
  /** The Gateway's own references, and a summary of its listeners'. */
  resolvedRefs: Verdict;
  /** Present when some client validation allows insecure fallback. */
  insecureFrontend?: Verdict;
  /** `status.addresses`. */
  addresses: { type: string; value: string }[];
  /** In the order of `spec.listeners`: the Gateway's own. */
  listeners: ListenerOutcome[];
  /** How many ListenerSets the Gateway accepts (`status.attachedListenerSets`). */
  attachedListenerSets: number;
}

/** A ListenerSet whose parent is a Gateway of this controller. */
export interface ListenerSetOutcome {
  listenerSet: ListenerSet;
  accepted: Verdict;
  programmed: Verdict;
  /** In the order of its `spec.listeners`. */
  listeners: ListenerOutcome[];
}

/** A GatewayClass of this controller. */
export interface GatewayClassOutcome {
  gatewayClass: GatewayClass;
  accepted: Verdict;
}

export interface ParentOutcome {
  parent: ParentRef;
  accepted: Verdict;
}

/** A backendRef that cannot be used, and why (the route's ResolvedRefs condition). */
export interface RefProblem {
  reason: 'InvalidKind' | 'BackendNotFound' | 'InvalidBackend' | 'RefNotPermitted' | 'UnsupportedProtocol' | 'InvalidBackendTLS';
  message: string;
  path: string;
}

export interface RouteOutcome {
  route: RouteRecord;
  /** One per parentRef this controller answers for (other classes' Gateways are left out). */
  parents: ParentOutcome[];
  refProblems: RefProblem[];
  /** Values the route sets that cannot be used, sorted by path. */
  invalid: Problem[];
  /** Every rule lost its matches to invalid values: the route serves nothing. */
  noRuleLeft: boolean;
}

export interface PickerProblem {
  ref: PickerRef;
  message: string;
}

/** A parent Gateway of a pool, and whether it accepts the pool. */
export interface PoolParent {
  gateway: ObjectRef;
  accepted: Verdict;
}

export interface PoolOutcome {
  pool: Pool;
  /** One per Gateway the pool is associated with, sorted by `namespace/name`; none when no route references it. */
  parents: PoolParent[];
  /** Problems with the pickers the pool's own stanza names. */
  pickerProblems: PickerProblem[];
}

export interface PolicyOutcome {
  policy: Policy;
  /** The Gateways the policy is reported against, sorted. */
  ancestors: ObjectRef[];
  accepted: Verdict;
  pickerProblems: PickerProblem[];
  /** TLSRoutes, TCPRoutes and UDPRoutes (per Gateway) that cannot use the External load balancer the policy gives their backend. */
  refusedBy?: { gateway: ObjectRef; route: ObjectRef }[];
}

export interface BackendTlsPolicyOutcome {
  policy: BackendTlsPolicy;
  /** The Gateways whose routes reference a target Service, sorted; every converted Gateway when none does. */
  ancestors: ObjectRef[];
  accepted: Verdict;
  resolvedRefs: Verdict;
}

export interface Outcomes {
  gatewayClasses: GatewayClassOutcome[];
  gateways: GatewayOutcome[];
  /** HTTPRoutes, GRPCRoutes, TLSRoutes, TCPRoutes and UDPRoutes. */
  routes: RouteOutcome[];
  pools: PoolOutcome[];
  policies: PolicyOutcome[];
  backendTlsPolicies: BackendTlsPolicyOutcome[];
  listenerSets: ListenerSetOutcome[];
}

export function verdict(status: boolean, reason: string, message: string): Verdict {
  return { status, reason, message };
}

/** The Gateway a `namespace/name` key names. */
export function gatewayRef(key: string): ObjectRef {
  const [namespace = '', name = ''] = key.split('/');
  return { kind: 'Gateway', namespace, name };
}
