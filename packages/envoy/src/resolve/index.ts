// The resolve stage: records → the IR of every converted Gateway, and the outcomes that become
// statuses. Gateway API meaning lives here, and of Envoy only its limits (the largest weight sum
// and duration it can hold), so a route Envoy would refuse is reported here against the route.
import { type Diagnostics, describeRef } from '../diagnostics.js';
import { compare, sameJson } from '../json.js';
import { type GatewayRecord, type RouteRecord, type Inputs, type ListenerSet, type Policy, isStreamRoute } from '../read/index.js';
import { acceptedSetOutcome, listenerSetsOf, refusedSetOutcome } from './listener-sets.js';
import { type AttachMemo, type Attachments, attachRoutes } from './attach.js';
import { Backends, type BackendsMemo } from './backends.js';
import { TlsRefs } from './certificates.js';
import type { CompileMemo } from './compile-memo.js';
import { DEFAULT_CONTROLLER, gatewayClasses } from './classes.js';
import { type GatewaySpecOutcome, checkGatewaySpec } from './gateway-spec.js';
import type { Backend, Gateway, IR, PickerSet } from './ir.js';
import { type GatewayListeners, resolveListeners } from './listeners.js';
import {
  type BackendTlsPolicyOutcome,
  type GatewayOutcome,
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
import { buildListeners, type ListenerMemo } from './servers.js';
import { compileStreamRoute } from './stream-routes.js';

export { BackendsMemo, shadowServiceName, usesPicker } from './backends.js';
export { AttachMemo } from './attach.js';
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

/** The Services (`namespace/name`) a route references, resolved or not: made once per route record. */
const servicesOf = new WeakMap<RouteRecord, readonly string[]>();
function routeServices(route: RouteRecord): readonly string[] {
  let out = servicesOf.get(route);
  if (!out) {
    const services = new Set<string>();
    for (const rule of route.rules) {
      const filters = [...rule.filters, ...rule.backendRefs.flatMap((ref) => ref.filters)];
      const mirrors = filters.flatMap((f) => (f.type === 'RequestMirror' ? [f.mirror.backendRef] : []));
      for (const ref of [...rule.backendRefs, ...mirrors]) if (ref.group === '' && ref.kind === 'Service') services.add(`${ref.namespace}/${ref.name}`);
    }
    out = [...services];
    servicesOf.set(route, out);
  }
  return out;
}

/** The Services (`namespace/name`) the routes attached to a Gateway reference, resolved or not. */
function referencedServices(listeners: GatewayListeners, attachments: Attachments): Set<string> {
  const out = new Set<string>();
  for (const l of listeners.active) for (const { route } of attachments.routes.get(l) ?? []) for (const svc of routeServices(route)) out.add(svc);
  return out;
}

/** `listener "a" is` or `listeners "a", "b" are`. */
const theListeners = (listeners: ListenerOutcome[]) =>
  `${listeners.length === 1 ? 'listener' : 'listeners'} ${listeners.map((l) => `"${l.name}"`).join(', ')} ${listeners.length === 1 ? 'is' : 'are'}`;

/**
 * A Gateway is accepted when one of its listeners is (and nothing of the Gateway itself rejects
 * it), with ListenersNotValid when some listener is not served; programmed when one is served.
 */
function gatewayOutcome(
  gateway: GatewayRecord,
  listeners: ListenerOutcome[],
  spec: GatewaySpecOutcome,
  rejected: Verdict | undefined,
  attachedListenerSets: number,
): GatewayOutcome {
  const notServed = listeners.filter((l) => !l.programmed.status);
  const unresolved = listeners.filter((l) => !l.resolvedRefs.status);
  let accepted = verdict(true, 'Accepted', 'Gateway is accepted');
  let programmed = verdict(true, 'Programmed', 'Gateway is in the Envoy configuration');
  if (rejected) {
    accepted = rejected;
    programmed = verdict(false, 'Invalid', 'the Gateway is not accepted');
  } else if (!listeners.some((l) => l.accepted.status && !l.conflicted.status)) {
    accepted = verdict(false, 'ListenersNotValid', 'no listener can be converted');
    programmed = verdict(false, 'Invalid', 'no listener can be converted');
  } else if (notServed.length === listeners.length) {
    accepted = verdict(true, 'ListenersNotValid', `${theListeners(notServed)} not served`);
    programmed = verdict(false, 'Invalid', 'no listener can be served');
  } else if (notServed.length > 0) accepted = verdict(true, 'ListenersNotValid', `${theListeners(notServed)} not served; the others are`);
  const resolvedRefs =
    spec.unresolved ??
    (unresolved.length > 0
      ? verdict(false, 'ListenersNotResolved', `${theListeners(unresolved)} missing references`)
      : verdict(true, 'ResolvedRefs', 'All references are resolved'));
  const outcome: GatewayOutcome = { gateway, accepted, programmed, resolvedRefs, addresses: spec.addresses, listeners, attachedListenerSets };
  if (spec.insecureFrontend) outcome.insecureFrontend = spec.insecureFrontend;
  return outcome;
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
  const setOutcomes: ListenerSetOutcome[] = [];
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
    for (const set of sets.refused) setOutcomes.push(refusedSetOutcome(set, gateway, 'NotAllowed'));
    if (rejected) for (const set of sets.allowed) setOutcomes.push(refusedSetOutcome(set, gateway, 'ParentNotAccepted'));
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
  const attachments = attachRoutes(inputs, converted, others, diags, setEntries, knownSets, memo?.attach);
  for (const { set, gateway } of setEntries.values()) setOutcomes.push(acceptedSetOutcome(set, converted.get(gateway)?.listeners.outcomes ?? []));
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
    const c = compiled.get(route) as CompiledRoute;
    const parents = attachments.parents.get(route) ?? [];
    const held = memo?.routes.get(route);
    if (held?.compiled === c && sameJson(held.outcome.parents, parents)) return held.outcome;
    const invalid = [...route.problems, ...c.problems].sort((a, b) => compare(a.path, b.path));
    const outcome: RouteOutcome = {
      route,
      parents,
      refProblems: c.refProblems,
      invalid,
      // A stream route's rules have no matches: only a TLSRoute left without a usable hostname serves nothing.
      noRuleLeft: isStreamRoute(route.kind)
        ? route.kind === 'TLSRoute' && route.hostnames.length === 0
        : invalid.length > 0 && route.rules.every((r) => r.matches.length === 0),
    };
    memo?.routes.set(route, { compiled: c, outcome });
    return outcome;
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
  return {
    ir: { gateways },
    outcomes: {
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
      listenerSets: setOutcomes.sort((a, b) => compare(describeRef(a.listenerSet.ref), describeRef(b.listenerSet.ref))),
    },
  };
}
