// The resolve stage: records → the IR of every converted Gateway, and the outcomes that become
// statuses. Gateway API meaning lives here, and of Envoy only its limits (the largest weight sum
// and duration it can hold), so a route Envoy would refuse is reported here against the route.
import { type Diagnostics, describeRef } from '../diagnostics.js';
import { compare } from '../json.js';
import { type GatewayRecord, type RouteRecord, type Inputs, type ListenerSet, type Policy, isStreamRoute } from '../read/index.js';
import { acceptedSetOutcome, listenerSetsOf, refusedSetOutcome } from './listener-sets.js';
import { type AttachMemo, type Attachments, attachRoutes } from './attach.js';
import { Backends, type BackendsMemo } from './backends.js';
import { TlsRefs } from './certificates.js';
import type { CompileMemo } from './compile-memo.js';
import { DEFAULT_CONTROLLER, gatewayClasses } from './classes.js';
import { type GatewaySpecOutcome, checkGatewaySpec } from './gateway-spec.js';
import type { Backend, Gateway, IR, PickerSet } from './ir.js';
import { type ActiveListener, type GatewayListeners, resolveListeners } from './listeners.js';
import {
  type BackendTlsPolicyOutcome,
  type ListenerOutcome,
  type ListenerSetOutcome,
  type Outcomes,
  type PolicyOutcome,
  type RouteOutcome,
  type Verdict,
  gatewayRef,
  verdict,
} from './outcomes.js';
import { gatewayAccessLog } from './parameters.js';
import { arbitrationVerdict } from './policies.js';
import { poolOutcomes } from './pools.js';
import { type CompiledRoute, compileRoute } from './routes.js';
import { gatewayOutcome } from './gateway-outcome.js';
import type { ResolveState } from './route-update.js';
import { routeOutcome, routeServices } from './route-outcome.js';
import { buildListeners, type ListenerMemo } from './servers.js';
import { compileStreamRoute } from './stream-routes.js';

export { BackendsMemo, shadowServiceName, usesPicker } from './backends.js';
export { AttachMemo } from './attach.js';
export { type RouteChange, type RouteUpdate, resolveRouteUpdate } from './route-update.js';
export { backendJsonOf, CompileMemo } from './compile-memo.js';
export { ListenerMemo } from './servers.js';
export { composeHeaders } from './filters.js';
export { type CertificateLookup, InputCertificates } from './certificates.js';
export { DEFAULT_CONTROLLER } from './classes.js';
export { compareHostnames, intersect } from './hostnames.js';
export type * from './ir.js';
export type * from './outcomes.js';

export interface ResolveOptions {
  /** Convert only Gateways of these classes (all when unset): a cluster may run several controllers. */
  gatewayClassNames?: readonly string[];
  /** GatewayClasses naming this controller are extlb's (default `extlb.dev/gateway-controller`). */
  controllerName?: string;
}

export interface Resolved {
  ir: IR;
  outcomes: Outcomes;
}

function gatewayName(g: { meta: { namespace: string; name: string } }): string {
  return `${g.meta.namespace}/${g.meta.name}`;
}

function sortedRecord<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => compare(a, b)));
}

/** The backends (and picker sets) the routes attached to a Gateway use. */
function usedBy(listeners: GatewayListeners, attachments: Attachments, compiled: Map<RouteRecord, CompiledRoute>, backends: Backends) {
  const used = new Map<string, Backend>();
  for (const l of listeners.active) {
    for (const { route } of attachments.routes.get(l) ?? []) {
      for (const rule of compiled.get(route)?.rules ?? []) for (const b of rule.backends) used.set(b.key, b);
    }
  }
  const pickerSets = new Map<string, PickerSet>();
  for (const b of used.values()) {
    const set = b.pickers === undefined ? undefined : backends.pickerSet(b.pickers);
    if (set) pickerSets.set(set.key, set);
  }
  return { backends: sortedRecord(used), pickerSets: sortedRecord(pickerSets) };
}

/** The Services (`namespace/name`) the routes attached to a Gateway reference, resolved or not. */
function referencedServices(listeners: GatewayListeners, attachments: Attachments): Set<string> {
  const out = new Set<string>();
  for (const l of listeners.active) for (const { route } of attachments.routes.get(l) ?? []) for (const svc of routeServices(route)) out.add(svc);
  return out;
}

/** Per served Gateway, the stream routes attached to it that refused a backend because its load balancer needs HTTP. */
function httpOnlyRoutes(
  served: Map<string, { listeners: GatewayListeners }>,
  attachments: Attachments,
  compiled: Map<RouteRecord, CompiledRoute>,
): { gateway: string; route: RouteRecord; backend: Backend }[] {
  const out: { gateway: string; route: RouteRecord; backend: Backend }[] = [];
  for (const [gateway, { listeners }] of [...served].sort(([a], [b]) => compare(a, b))) {
    const routes = new Set(listeners.active.flatMap((l) => (attachments.routes.get(l) ?? []).map((a) => a.route)));
    for (const route of routes) for (const backend of compiled.get(route)?.httpOnly ?? []) out.push({ gateway, route, backend });
  }
  return out;
}

function policyAccepted(policy: Policy, backends: Backends): Verdict {
  if (policy.invalid !== undefined || !policy.lb) return verdict(false, 'Invalid', policy.invalid ?? 'spec.loadBalancer is invalid');
  return arbitrationVerdict(policy, backends.policies.outcomes.get(policy) ?? []);
}

/** What resolve remembers across calls: route compiles, and each port's proxy listener. */
export interface ResolveMemo {
  /** How routes attached, while nothing but routes changes (its owner bumps its epoch otherwise). */
  attach: AttachMemo;
  /** The backends, while nothing a resolution reads changes (its owner bumps its epoch otherwise). */
  backends: BackendsMemo;
  compiles: CompileMemo;
  listeners: ListenerMemo;
  /**
   * Each route's outcome, with the compile it came from: a route whose record and compile are the
   * ones of before and whose parents came out as before keeps that very outcome, so what is made
   * of it (its status) is known unchanged without comparing.
   */
  routes: WeakMap<RouteRecord, { compiled: CompiledRoute; outcome: RouteOutcome }>;
  /** What the last full resolve leaves for route updates (see route-update.ts). */
  state?: ResolveState;
}

/** With a memo, a route compiled before and unchanged is not compiled again (see compile-memo.ts), nor a port's listener whose routes are all such. */
export function resolve(inputs: Inputs, options: ResolveOptions, diags: Diagnostics, memo?: ResolveMemo): Resolved {
  const classNames = options.gatewayClassNames;
  const classes = gatewayClasses(inputs, options.controllerName ?? DEFAULT_CONTROLLER, diags);
  const tlsRefs = new TlsRefs(inputs);
  /** Every Gateway this controller answers for; a rejected one with no listener to attach to. */
  const converted = new Map<string, { gateway: GatewayRecord; listeners: GatewayListeners }>();
  /** The accepted ones: each becomes a proxy. */
  const served = new Map<string, { gateway: GatewayRecord; listeners: GatewayListeners; spec: GatewaySpecOutcome }>();
  const others = new Map<string, GatewayRecord>();
  /** Made into outcomes after attachment, which counts each listener's routes. */
  const pending: { gateway: GatewayRecord; listeners: ListenerOutcome[]; spec: GatewaySpecOutcome; rejected: Verdict | undefined }[] = [];
  /** ListenerSets: the accepted ones (for routes to attach through), every one of this controller's Gateways, their outcomes. */
  const setEntries = new Map<string, { set: ListenerSet; gateway: string }>();
  const knownSets = new Set<string>();
  const refusedSets: ListenerSetOutcome[] = [];
  const attachedSets = new Map<GatewayRecord, number>();
  for (const gateway of inputs.gateways) {
    if ((classNames && !classNames.includes(gateway.gatewayClassName)) || !classes.owns(gateway)) {
      others.set(gatewayName(gateway), gateway);
      continue;
    }
    const spec = checkGatewaySpec(gateway, inputs, tlsRefs, diags);
    const rejected = classes.rejects(gateway) ?? spec.rejected;
    const sets = listenerSetsOf(gateway, inputs, diags);
    for (const set of [...sets.allowed, ...sets.refused]) knownSets.add(`${set.meta.namespace}/${set.meta.name}`);
    for (const set of sets.refused) refusedSets.push(refusedSetOutcome(set, gateway, 'NotAllowed'));
    if (rejected) for (const set of sets.allowed) refusedSets.push(refusedSetOutcome(set, gateway, 'ParentNotAccepted'));
    else for (const set of sets.allowed) setEntries.set(`${set.meta.namespace}/${set.meta.name}`, { set, gateway: gatewayName(gateway) });
    const listeners = resolveListeners(gateway, tlsRefs, diags, rejected ? [] : sets.allowed);
    attachedSets.set(gateway, rejected ? 0 : sets.allowed.length);
    if (rejected) {
      const outcomes = listeners.outcomes.map((l) => ({ ...l, programmed: verdict(false, 'Invalid', 'the Gateway is not accepted') }));
      converted.set(gatewayName(gateway), { gateway, listeners: { ports: [], active: [], outcomes } });
      pending.push({ gateway, listeners: outcomes, spec, rejected });
    } else {
      converted.set(gatewayName(gateway), { gateway, listeners });
      served.set(gatewayName(gateway), { gateway, listeners, spec });
      pending.push({ gateway, listeners: listeners.outcomes, spec, rejected });
    }
  }
  const backends = memo ? memo.backends.for(inputs, diags) : new Backends(inputs, diags);
  const attachments = attachRoutes({ inputs, gateways: converted, others, sets: setEntries, knownSets }, diags, memo?.attach);
  const acceptedSets = [...setEntries.values()].map(({ set, gateway }) => acceptedSetOutcome(set, converted.get(gateway)?.listeners.outcomes ?? []));
  for (const set of inputs.listenerSets) {
    const key = `${set.meta.namespace}/${set.meta.name}`;
    const parent = `${set.parentRef.namespace}/${set.parentRef.name}`;
    if (!knownSets.has(key) && !others.has(parent) && set.parentRef.kind === 'Gateway')
      diags.error('ParentNotFound', `Gateway ${parent} not found`, set.ref, 'spec.parentRef');
  }
  const compiled = new Map<RouteRecord, CompiledRoute>();
  const routeOrder = new Map<RouteRecord, number>();
  inputs.routes.forEach((route, i) => {
    routeOrder.set(route, i);
    const compile = isStreamRoute(route.kind) ? compileStreamRoute : compileRoute;
    compiled.set(route, memo ? memo.compiles.compile(route, backends, diags, compile) : compile(route, backends, diags));
  });
  memo?.compiles.settle(compiled, backends);

  const gateways: Gateway[] = [];
  /** Per object (`kind/namespace/name`), the Gateways whose routes use it. */
  const uses = new Map<string, Set<string>>();
  /** Per Service (`namespace/name`), the Gateways whose routes reference it, even where it did not resolve. */
  const references = new Map<string, Set<string>>();
  for (const [name, { gateway, listeners, spec }] of [...served].sort(([a], [b]) => compare(a, b))) {
    for (const svc of referencedServices(listeners, attachments)) references.set(svc, (references.get(svc) ?? new Set()).add(name));
    const used = usedBy(listeners, attachments, compiled, backends);
    for (const b of Object.values(used.backends)) {
      const k = `${b.ref.kind}/${b.ref.namespace ?? ''}/${b.ref.name}`;
      uses.set(k, (uses.get(k) ?? new Set()).add(name));
    }
    const ir: Gateway = {
      name,
      ref: gateway.ref,
      listeners: buildListeners(name, listeners.ports, { attachments: attachments.routes, compiled, routeOrder, diags }, memo?.listeners),
      ...used,
      accessLog: gatewayAccessLog(gateway, inputs),
    };
    if (spec.backendClientCertificate) ir.backendClientCertificate = spec.backendClientCertificate;
    gateways.push(ir);
  }

  const gatewaysUsing = (kind: string, namespace: string, name: string) => [...(uses.get(`${kind}/${namespace}/${name}`) ?? [])];
  const allGateways = [...served.keys()].sort(compare);
  const routes: RouteOutcome[] = inputs.routes.map((route) => {
    return routeOutcome(route, compiled.get(route) as CompiledRoute, attachments.parents.get(route) ?? [], memo?.routes);
  });
  const pools = poolOutcomes({ inputs, backends, routes, compiled, converted: new Set(converted.keys()), gatewaysUsing });
  const refused = httpOnlyRoutes(served, attachments, compiled);
  const policies: PolicyOutcome[] = inputs.policies.map((policy) => {
    const reached = new Set(policy.targets.flatMap((t) => gatewaysUsing(t.kind, policy.meta.namespace, t.name)));
    const cannotUse = refused.filter((r) => r.backend.lbFrom !== 'default' && describeRef(r.backend.lbFrom) === describeRef(policy.ref));
    for (const r of cannotUse) reached.add(r.gateway);
    const outcome: PolicyOutcome = {
      policy,
      ancestors: (reached.size > 0 ? [...reached].sort(compare) : allGateways).map(gatewayRef),
      accepted: policyAccepted(policy, backends),
      pickerProblems: backends.pickerProblems(policy.ref),
    };
    if (cannotUse.length > 0) outcome.refusedBy = cannotUse.map((r) => ({ gateway: gatewayRef(r.gateway), route: r.route.ref }));
    return outcome;
  });
  // A BackendTLSPolicy's ancestors are the Gateways whose routes reference its Services, also
  // where the policy made the reference invalid.
  const backendTlsPolicies: BackendTlsPolicyOutcome[] = inputs.backendTlsPolicies.map((policy) => {
    const services = policy.targets.filter((t) => t.group === '' && t.kind === 'Service');
    const reached = new Set(services.flatMap((t) => [...(references.get(`${policy.meta.namespace}/${t.name}`) ?? [])]));
    return {
      policy,
      ancestors: (reached.size > 0 ? [...reached].sort(compare) : allGateways).map(gatewayRef),
      accepted: backends.tls.accepted(policy),
      resolvedRefs: backends.tls.resolvedRefs(policy),
    };
  });
  memo?.listeners.settle();
  const outcomes: Outcomes = {
    gatewayClasses: classes.outcomes,
    // A Gateway's status lists its own listeners; a ListenerSet's are on the set.
    gateways: pending.map((p) =>
      gatewayOutcome(
        p.gateway,
        p.listeners.filter((l) => !l.owner),
        p.spec,
        p.rejected,
        attachedSets.get(p.gateway) ?? 0,
      ),
    ),
    routes,
    pools,
    policies,
    backendTlsPolicies,
    listenerSets: [...refusedSets, ...acceptedSets].sort((a, b) => compare(describeRef(a.listenerSet.ref), describeRef(b.listenerSet.ref))),
  };
  const ir: IR = { gateways };
  if (memo) {
    const gatewayOf = new Map<ActiveListener, string>();
    const ports = new Map<string, GatewayListeners['ports']>();
    for (const [name, { listeners }] of converted) {
      for (const l of listeners.active) gatewayOf.set(l, name);
      ports.set(name, listeners.ports);
    }
    memo.state = {
      attach: { gateways: converted, others, sets: setEntries, knownSets },
      attachments,
      compiled,
      routeOrder,
      routes: inputs.routes,
      backends,
      gatewayOf,
      pending: pending.map((p) => ({ ...p, sets: attachedSets.get(p.gateway) ?? 0 })),
      refusedSets,
      acceptedSets: [...setEntries.values()],
      ports,
      ir,
      outcomes,
    };
  }
  return { ir, outcomes };
}
