// The resolve stage: records → the IR of every converted Gateway, and the outcomes that become
// statuses. Gateway API meaning lives here, and nothing of Envoy.
import type { Diagnostics, ObjectRef } from '../diagnostics.js';
import { compare } from '../json.js';
import type { Gateway, HttpRoute, Inputs, Policy } from '../read/index.js';
import { type Attachments, attachRoutes } from './attach.js';
import { Backends } from './backends.js';
import type { Backend, IR, Gateway as IrGateway, PickerSet } from './ir.js';
import { type GatewayListeners, resolveListeners } from './listeners.js';
import { type BackendTlsPolicyOutcome, type GatewayOutcome, type Outcomes, type PolicyOutcome, type RouteOutcome, type Verdict, verdict } from './outcomes.js';
import { arbitrationVerdict } from './policies.js';
import { type CompiledRoute, compileRoute } from './routes.js';
import { buildListeners } from './servers.js';

export { shadowServiceName, usesPicker } from './backends.js';
export { compareHostnames, intersect } from './hostnames.js';
export type * from './ir.js';
export type * from './outcomes.js';

export interface ResolveOptions {
  /** Convert only Gateways of these classes (all when unset): a cluster may run several controllers. */
  gatewayClassNames?: readonly string[];
}

export interface Resolved {
  ir: IR;
  outcomes: Outcomes;
}

function gatewayName(g: { meta: { namespace: string; name: string } }): string {
  return `${g.meta.namespace}/${g.meta.name}`;
}

function gatewayRef(name: string): ObjectRef {
  const [namespace = '', n = ''] = name.split('/');
  return { kind: 'Gateway', namespace, name: n };
}

function sortedRecord<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => compare(a, b)));
}

/** The backends (and picker sets) the routes attached to a Gateway use. */
function usedBy(listeners: GatewayListeners, attachments: Attachments, compiled: Map<HttpRoute, CompiledRoute>, backends: Backends) {
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
  for (const l of listeners.active) {
    for (const { route } of attachments.routes.get(l) ?? []) {
      for (const rule of route.rules) {
        const mirrors = rule.filters.flatMap((f) => (f.type === 'RequestMirror' ? [f.mirror.backendRef] : []));
        for (const ref of [...rule.backendRefs, ...mirrors]) if (ref.group === '' && ref.kind === 'Service') out.add(`${ref.namespace}/${ref.name}`);
      }
    }
  }
  return out;
}

function gatewayOutcome(gateway: Gateway, listeners: GatewayListeners): GatewayOutcome {
  const ok = listeners.active.length > 0;
  return {
    gateway,
    accepted: ok ? verdict(true, 'Accepted', 'Gateway is accepted') : verdict(false, 'ListenersNotValid', 'no listener can be converted'),
    programmed: ok ? verdict(true, 'Programmed', 'Gateway is in the Envoy configuration') : verdict(false, 'Invalid', 'no listener can be converted'),
    listeners: listeners.outcomes,
  };
}

function policyAccepted(policy: Policy, backends: Backends): Verdict {
  if (policy.invalid !== undefined || !policy.lb) return verdict(false, 'Invalid', policy.invalid ?? 'spec.loadBalancer is invalid');
  return arbitrationVerdict(policy, backends.policies.outcomes.get(policy) ?? []);
}

export function resolve(inputs: Inputs, options: ResolveOptions, diags: Diagnostics): Resolved {
  const classes = options.gatewayClassNames;
  const converted = new Map<string, { gateway: Gateway; listeners: GatewayListeners }>();
  const others = new Map<string, Gateway>();
  for (const gateway of inputs.gateways) {
    if (classes && !classes.includes(gateway.gatewayClassName)) others.set(gatewayName(gateway), gateway);
    else converted.set(gatewayName(gateway), { gateway, listeners: resolveListeners(gateway, diags) });
  }
  const backends = new Backends(inputs, diags);
  const attachments = attachRoutes(inputs, converted, others, diags);
  const compiled = new Map<HttpRoute, CompiledRoute>();
  const routeOrder = new Map<HttpRoute, number>();
  inputs.routes.forEach((route, i) => {
    routeOrder.set(route, i);
    compiled.set(route, compileRoute(route, backends, diags));
  });

  const gateways: IrGateway[] = [];
  /** Per object (`kind/namespace/name`), the Gateways whose routes use it. */
  const uses = new Map<string, Set<string>>();
  /** Per Service (`namespace/name`), the Gateways whose routes reference it, even where it did not resolve. */
  const references = new Map<string, Set<string>>();
  for (const [name, { gateway, listeners }] of [...converted].sort(([a], [b]) => compare(a, b))) {
    for (const svc of referencedServices(listeners, attachments)) references.set(svc, (references.get(svc) ?? new Set()).add(name));
    const used = usedBy(listeners, attachments, compiled, backends);
    for (const b of Object.values(used.backends)) {
      const k = `${b.ref.kind}/${b.ref.namespace ?? ''}/${b.ref.name}`;
      uses.set(k, (uses.get(k) ?? new Set()).add(name));
    }
    gateways.push({
      name,
      ref: gateway.ref,
      listeners: buildListeners(name, listeners.ports, { attachments: attachments.routes, compiled, routeOrder }),
      ...used,
    });
  }

  const gatewaysUsing = (kind: string, namespace: string, name: string) => [...(uses.get(`${kind}/${namespace}/${name}`) ?? [])];
  const allGateways = [...converted.keys()].sort(compare);
  const routes: RouteOutcome[] = inputs.routes.map((route) => {
    const c = compiled.get(route) as CompiledRoute;
    const invalid = [...route.problems, ...c.problems].sort((a, b) => compare(a.path, b.path));
    return {
      route,
      parents: attachments.parents.get(route) ?? [],
      refProblems: c.refProblems,
      invalid,
      noRuleLeft: invalid.length > 0 && route.rules.every((r) => r.matches.length === 0),
    };
  });
  const pools = [...inputs.pools.values()].map((pool) => ({
    pool,
    gateways: gatewaysUsing(pool.kind, pool.meta.namespace, pool.meta.name).sort(compare).map(gatewayRef),
    pickerProblems: backends.pickerProblems(pool.ref),
  }));
  const policies: PolicyOutcome[] = inputs.policies.map((policy) => {
    const reached = new Set(policy.targets.flatMap((t) => gatewaysUsing(t.kind, policy.meta.namespace, t.name)));
    return {
      policy,
      ancestors: (reached.size > 0 ? [...reached].sort(compare) : allGateways).map(gatewayRef),
      accepted: policyAccepted(policy, backends),
      pickerProblems: backends.pickerProblems(policy.ref),
    };
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
  return {
    ir: { gateways },
    outcomes: {
      gateways: [...converted.values()].map(({ gateway, listeners }) => gatewayOutcome(gateway, listeners)),
      routes,
      pools,
      policies,
      backendTlsPolicies,
    },
  };
}
