// The status each input object should get, as Gateway API and GIE define it. Only the status
// stanza and enough metadata to apply it (`kubectl apply --subresource=status` or a patch).
import type { Backend, Backends, Pickers } from './backends.js';
import { compare, type Diagnostic, type ObjectRef } from './diagnostics.js';
import type { ParentOutcome } from './gateway.js';
import { GATEWAY_GROUP, groupKind, type Gateway, type HttpRoute, type Listener, type Meta, type Policy } from './model.js';
import { API_VERSION, INFERENCE_API_VERSION } from '@extlb/types';
import type { Json } from './read.js';
import type { RefProblem } from './routes.js';

export interface StatusContext {
  controllerName: string;
  now: string;
}

function condition(ctx: StatusContext, meta: Meta, type: string, ok: boolean, reason: string, message: string): Json {
  const c: Json = { type, status: ok ? 'True' : 'False' };
  if (meta.generation !== undefined) c.observedGeneration = meta.generation;
  c.lastTransitionTime = ctx.now;
  c.reason = reason;
  c.message = message;
  return c;
}

function gatewayParentRef(gw: Gateway): Json {
  return { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gw.meta.namespace, name: gw.meta.name };
}

function statusObject(apiVersion: string, ref: ObjectRef, status: Json): Json {
  return { apiVersion, kind: ref.kind, metadata: { namespace: ref.namespace, name: ref.name }, status };
}

/**
 * HTTPRoute status per parent. `invalid` are the route's own invalid values (a regex RE2 cannot
 * compile, a malformed duration): the rules they break are dropped, which Gateway API reports as
 * PartiallyInvalid, or as Accepted=False when no rule is left.
 */
export function routeStatus(ctx: StatusContext, route: HttpRoute, outcomes: ParentOutcome[], problems: RefProblem[], invalid: Diagnostic[]): Json {
  const first = problems[0];
  const invalidMessage = invalid.map((d) => `${d.path}: ${d.message}`).join('; ');
  const noRuleLeft = invalid.length > 0 && route.rules.every((r) => r.matches.length === 0);
  const parents = outcomes.map((o) => {
    const parentRef: Json = { group: o.parent.group, kind: o.parent.kind, namespace: o.parent.namespace, name: o.parent.name };
    if (o.parent.sectionName !== undefined) parentRef.sectionName = o.parent.sectionName;
    if (o.parent.port !== undefined) parentRef.port = o.parent.port;
    const conditions = [
      o.accepted && noRuleLeft
        ? condition(ctx, route.meta, 'Accepted', false, 'UnsupportedValue', invalidMessage)
        : condition(ctx, route.meta, 'Accepted', o.accepted, o.reason, o.message),
      first
        ? condition(ctx, route.meta, 'ResolvedRefs', false, first.reason, problems.map((p) => `${p.path}: ${p.message}`).join('; '))
        : condition(ctx, route.meta, 'ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved'),
    ];
    if (o.accepted && invalid.length > 0 && !noRuleLeft) {
      conditions.push(condition(ctx, route.meta, 'PartiallyInvalid', true, 'UnsupportedValue', invalidMessage));
    }
    return { parentRef, controllerName: ctx.controllerName, conditions };
  });
  return statusObject(`${GATEWAY_GROUP}/v1`, route.ref, { parents });
}

/**
 * Gateway status: the Gateway is accepted and programmed when at least one listener is; each
 * listener says whether it was converted, how many routes attach to it, and any conflict.
 */
export function gatewayStatus(ctx: StatusContext, gw: Gateway, routesOf: Map<Listener, Set<HttpRoute>>): Json {
  const c = (type: string, ok: boolean, reason: string, message: string) => condition(ctx, gw.meta, type, ok, reason, message);
  const entries: [number, Json][] = gw.listeners.map((l) => [
    l.index,
    {
      name: l.name,
      supportedKinds: l.allowsHttpRoute ? [{ group: GATEWAY_GROUP, kind: 'HTTPRoute' }] : [],
      attachedRoutes: routesOf.get(l)?.size ?? 0,
      conditions: [
        c('Accepted', true, 'Accepted', 'Listener is accepted'),
        c('Programmed', true, 'Programmed', 'Listener is in the Envoy configuration'),
        l.allowsHttpRoute
          ? c('ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved')
          : c('ResolvedRefs', false, 'InvalidRouteKinds', 'no allowed route kind is supported; extlb supports HTTPRoute'),
        c('Conflicted', false, 'NoConflicts', 'No conflicts'),
      ],
    },
  ]);
  for (const r of gw.rejected) {
    entries.push([
      r.index,
      {
        name: r.name,
        supportedKinds: [],
        attachedRoutes: 0,
        conditions: [
          r.conflict
            ? c('Accepted', true, 'Accepted', 'Listener is valid but conflicts')
            : c('Accepted', false, r.reason === 'InvalidCertificateRef' ? 'Invalid' : r.reason, r.message),
          c('Programmed', false, 'Invalid', r.message),
          r.reason === 'InvalidCertificateRef'
            ? c('ResolvedRefs', false, 'InvalidCertificateRef', r.message)
            : c('ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved'),
          r.conflict ? c('Conflicted', true, r.reason, r.message) : c('Conflicted', false, 'NoConflicts', 'No conflicts'),
        ],
      },
    ]);
  }
  const ok = gw.listeners.length > 0;
  return statusObject(`${GATEWAY_GROUP}/v1`, gw.ref, {
    conditions: [
      ok ? c('Accepted', true, 'Accepted', 'Gateway is accepted') : c('Accepted', false, 'ListenersNotValid', 'no listener can be converted'),
      ok ? c('Programmed', true, 'Programmed', 'Gateway is in the Envoy configuration') : c('Programmed', false, 'Invalid', 'no listener can be converted'),
    ],
    listeners: entries.sort(([a], [b]) => a - b).map(([, l]) => l),
  });
}

function pickerCondition(ctx: StatusContext, meta: Meta, pickers: Pickers | undefined): Json {
  if (!pickers || pickers.problems.length === 0) return condition(ctx, meta, 'ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved');
  return condition(ctx, meta, 'ResolvedRefs', false, 'InvalidExtensionRef', pickers.problems.map((p) => `${p.ref.path}: ${p.message}`).join('; '));
}

/** Parent statuses of BackendPools and InferencePools, one entry per Gateway whose routes use them. */
export function poolStatuses(ctx: StatusContext, uses: Map<Backend, Set<Gateway>>): Json[] {
  const out: Json[] = [];
  for (const [backend, gateways] of uses) {
    const pool = backend.pool;
    if (!pool) continue;
    const own = backend.pickers?.owner === pool.ref ? backend.pickers : undefined;
    const parents = [...gateways].sort(byName).map((gw) => ({
      parentRef: gatewayParentRef(gw),
      controllerName: ctx.controllerName,
      conditions: [condition(ctx, pool.meta, 'Accepted', true, 'Accepted', 'Pool is referenced by an accepted route'), pickerCondition(ctx, pool.meta, own)],
    }));
    out.push(statusObject(pool.kind === 'BackendPool' ? API_VERSION : INFERENCE_API_VERSION, pool.ref, { parents }));
  }
  return out;
}

function byName(a: Gateway, b: Gateway): number {
  return compare(`${a.meta.namespace}/${a.meta.name}`, `${b.meta.namespace}/${b.meta.name}`);
}

/**
 * Policy ancestor statuses. Ancestors are the Gateways whose routes use a target; a policy that
 * reaches no Gateway (its target is missing or unused) is reported against every converted Gateway
 * so that the failure is visible somewhere.
 */
export function policyStatuses(
  ctx: StatusContext,
  backends: Backends,
  policies: Policy[],
  targetUses: Map<string, Set<Gateway>>,
  allGateways: Gateway[],
): Json[] {
  return policies.map((policy) => {
    const outcomes = backends.outcomes.get(policy) ?? [];
    const ns = policy.meta.namespace;
    const gws = new Set<Gateway>();
    for (const t of policy.targets) for (const g of targetUses.get(`${t.kind}/${ns}/${t.name}`) ?? []) gws.add(g);
    const ancestors = gws.size > 0 ? [...gws].sort(byName) : [...allGateways].sort(byName);
    let accepted: [boolean, string, string];
    const establishedBy = outcomes.find((o) => o.establishedBy)?.establishedBy;
    if (!policy.lb) accepted = [false, 'Invalid', 'spec.loadBalancer is invalid'];
    else if (outcomes.some((o) => o.winner)) accepted = [true, 'Accepted', 'Policy is accepted'];
    else if (establishedBy)
      accepted = [false, 'Conflicted', `every target is already targeted by ${establishedBy.kind} ${establishedBy.namespace ?? ''}/${establishedBy.name}`];
    else
      accepted = [
        false,
        'TargetNotFound',
        `no target found: ${policy.targets.map((t) => `${groupKind(t.group, t.kind)} ${t.name}${t.sectionName ? ` port ${t.sectionName}` : ''}`).join(', ')}`,
      ];
    const pickers = backends.pickersOf(policy.ref);
    return statusObject(API_VERSION, policy.ref, {
      ancestors: ancestors.map((gw) => ({
        ancestorRef: gatewayParentRef(gw),
        controllerName: ctx.controllerName,
        conditions: [condition(ctx, policy.meta, 'Accepted', ...accepted), pickerCondition(ctx, policy.meta, pickers)],
      })),
    });
  });
}
