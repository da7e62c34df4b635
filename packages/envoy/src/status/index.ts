// The status stage: the status each input object should get, as Gateway API, GEP-713 and GIE
// define them, from the resolve stage's outcomes. Only the status stanza and enough metadata to
// apply it (`kubectl apply --subresource=status`, or a patch).
import { API_VERSION, INFERENCE_API_VERSION } from '@extlb/types';
import type { ObjectRef } from '../diagnostics.js';
import { type JsonObject, compare } from '../json.js';
import { GATEWAY_GROUP, type Meta } from '../read/index.js';
import type {
  GatewayClassOutcome,
  BackendTlsPolicyOutcome,
  GatewayOutcome,
  ListenerOutcome,
  ListenerSetOutcome,
  Outcomes,
  PickerProblem,
  PolicyOutcome,
  PoolOutcome,
  RouteOutcome,
  Verdict,
} from '../resolve/index.js';

export interface StatusOptions {
  controllerName: string;
  /** lastTransitionTime of every condition. */
  now: string;
}

function condition(ctx: StatusOptions, meta: Meta, type: string, v: Verdict): JsonObject {
  const c: JsonObject = { type, status: v.status ? 'True' : 'False' };
  if (meta.generation !== undefined) c.observedGeneration = meta.generation;
  c.lastTransitionTime = ctx.now;
  c.reason = v.reason;
  c.message = v.message;
  return c;
}

function gatewayParentRef(gw: ObjectRef): JsonObject {
  return { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gw.namespace, name: gw.name };
}

function statusObject(apiVersion: string, ref: ObjectRef, status: JsonObject): JsonObject {
  const metadata = ref.namespace === undefined ? { name: ref.name } : { namespace: ref.namespace, name: ref.name };
  return { apiVersion, kind: ref.kind, metadata, status };
}

function listenerStatus(ctx: StatusOptions, meta: Meta, l: ListenerOutcome): JsonObject {
  return {
    name: l.name,
    supportedKinds: l.supportedKinds,
    attachedRoutes: l.attachedRoutes,
    conditions: [
      condition(ctx, meta, 'Accepted', l.accepted),
      condition(ctx, meta, 'Programmed', l.programmed),
      condition(ctx, meta, 'ResolvedRefs', l.resolvedRefs),
      condition(ctx, meta, 'Conflicted', l.conflicted),
    ],
  };
}

function gatewayStatus(ctx: StatusOptions, o: GatewayOutcome): JsonObject {
  const { meta, ref } = o.gateway;
  const conditions = [
    condition(ctx, meta, 'Accepted', o.accepted),
    condition(ctx, meta, 'Programmed', o.programmed),
    condition(ctx, meta, 'ResolvedRefs', o.resolvedRefs),
  ];
  if (o.insecureFrontend) conditions.push(condition(ctx, meta, 'InsecureFrontendValidationMode', o.insecureFrontend));
  const status: JsonObject = { conditions, listeners: o.listeners.map((l) => listenerStatus(ctx, meta, l)) };
  if (o.addresses.length > 0) status.addresses = o.addresses;
  // Said wherever ListenerSets may attach (or some did), left out of Gateways that take none.
  if (o.attachedListenerSets > 0 || o.gateway.allowedListeners.from !== 'None') status.attachedListenerSets = o.attachedListenerSets;
  return statusObject(`${GATEWAY_GROUP}/v1`, ref, status);
}

/** ListenerSet status: its own conditions, and each listener's as a Gateway's listener has them. */
function listenerSetStatus(ctx: StatusOptions, o: ListenerSetOutcome): JsonObject {
  const { meta, ref } = o.listenerSet;
  return statusObject(`${GATEWAY_GROUP}/v1`, ref, {
    conditions: [condition(ctx, meta, 'Accepted', o.accepted), condition(ctx, meta, 'Programmed', o.programmed)],
    listeners: o.listeners.map((l) => listenerStatus(ctx, meta, l)),
  });
}

function gatewayClassStatus(ctx: StatusOptions, o: GatewayClassOutcome): JsonObject {
  const { meta, ref } = o.gatewayClass;
  return statusObject(`${GATEWAY_GROUP}/v1`, ref, { conditions: [condition(ctx, meta, 'Accepted', o.accepted)] });
}

/**
 * HTTPRoute and GRPCRoute status per parent. Invalid values (a regex RE2 cannot compile, a malformed duration)
 * drop the rules they break, which Gateway API reports as PartiallyInvalid, or as Accepted=False
 * when no rule is left.
 */
function routeStatus(ctx: StatusOptions, o: RouteOutcome): JsonObject {
  const { meta } = o.route;
  const invalidMessage = o.invalid.map((p) => `${p.path}: ${p.message}`).join('; ');
  const first = o.refProblems[0];
  const resolved: Verdict = first
    ? { status: false, reason: first.reason, message: o.refProblems.map((p) => `${p.path}: ${p.message}`).join('; ') }
    : { status: true, reason: 'ResolvedRefs', message: 'All references are resolved' };
  const parents = o.parents.map((p) => {
    const parentRef: JsonObject = { group: p.parent.group, kind: p.parent.kind, namespace: p.parent.namespace, name: p.parent.name };
    if (p.parent.sectionName !== undefined) parentRef.sectionName = p.parent.sectionName;
    if (p.parent.port !== undefined) parentRef.port = p.parent.port;
    const accepted = p.accepted.status && o.noRuleLeft ? { status: false, reason: 'UnsupportedValue', message: invalidMessage } : p.accepted;
    const conditions = [condition(ctx, meta, 'Accepted', accepted), condition(ctx, meta, 'ResolvedRefs', resolved)];
    if (p.accepted.status && o.invalid.length > 0 && !o.noRuleLeft) {
      conditions.push(condition(ctx, meta, 'PartiallyInvalid', { status: true, reason: 'UnsupportedValue', message: invalidMessage }));
    }
    return { parentRef, controllerName: ctx.controllerName, conditions };
  });
  return statusObject(`${GATEWAY_GROUP}/v1`, o.route.ref, { parents });
}

function pickerVerdict(problems: PickerProblem[]): Verdict {
  if (problems.length === 0) return { status: true, reason: 'ResolvedRefs', message: 'All references are resolved' };
  return { status: false, reason: 'InvalidExtensionRef', message: problems.map((p) => `${p.ref.path}: ${p.message}`).join('; ') };
}

/** BackendPool and InferencePool status: one parent entry per Gateway the pool is associated with, none when no route references it. */
function poolStatus(ctx: StatusOptions, o: PoolOutcome): JsonObject {
  const { pool } = o;
  const parents = o.parents.map((p) => ({
    parentRef: gatewayParentRef(p.gateway),
    controllerName: ctx.controllerName,
    conditions: [condition(ctx, pool.meta, 'Accepted', p.accepted), condition(ctx, pool.meta, 'ResolvedRefs', pickerVerdict(o.pickerProblems))],
  }));
  return statusObject(pool.kind === 'BackendPool' ? API_VERSION : INFERENCE_API_VERSION, pool.ref, { parents });
}

/** LoadBalancerPolicy status (GEP-713): one ancestor entry per Gateway the policy reaches. */
function policyStatus(ctx: StatusOptions, o: PolicyOutcome): JsonObject {
  const { meta, ref } = o.policy;
  return statusObject(API_VERSION, ref, {
    ancestors: o.ancestors.map((gw) => {
      // The policy still applies to this Gateway's HTTP routes; its stream routes that cannot use it are named.
      const refused = (o.refusedBy ?? []).filter((r) => r.gateway.namespace === gw.namespace && r.gateway.name === gw.name);
      const accepted: Verdict =
        refused.length === 0
          ? o.accepted
          : {
              ...o.accepted,
              message: `${o.accepted.message}; its External load balancer needs HTTP, so ${refused.map((r) => `${r.route.kind} ${r.route.namespace ?? ''}/${r.route.name}`).join(', ')} cannot use it and refuse${refused.length === 1 ? 's' : ''} the backend`,
            };
      return {
        ancestorRef: gatewayParentRef(gw),
        controllerName: ctx.controllerName,
        conditions: [condition(ctx, meta, 'Accepted', accepted), condition(ctx, meta, 'ResolvedRefs', pickerVerdict(o.pickerProblems))],
      };
    }),
  });
}

/** BackendTLSPolicy status (GEP-713): one ancestor entry per Gateway whose routes reference a target. */
function backendTlsPolicyStatus(ctx: StatusOptions, o: BackendTlsPolicyOutcome): JsonObject {
  const { meta, ref } = o.policy;
  return statusObject(`${GATEWAY_GROUP}/v1`, ref, {
    ancestors: o.ancestors.map((gw) => ({
      ancestorRef: gatewayParentRef(gw),
      controllerName: ctx.controllerName,
      conditions: [condition(ctx, meta, 'Accepted', o.accepted), condition(ctx, meta, 'ResolvedRefs', o.resolvedRefs)],
    })),
  });
}

/** How the status of an object is known: its kind, namespace and name. */
export function objectStatusKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

/** How a status is known: kind, namespace and name. */
export function statusKey(s: JsonObject): string {
  const m = s.metadata as { namespace?: string; name?: string };
  return objectStatusKey(String(s.kind), m.namespace ?? '', m.name ?? '');
}

/** Every status, sorted by kind, namespace and name. */
export function statuses(outcomes: Outcomes, ctx: StatusOptions): JsonObject[] {
  return keyedStatuses(outcomes, ctx).map((k) => k.status);
}

export type KeyedStatus = { key: string; status: JsonObject };

/**
 * Every status with its statusKey, sorted by it. With `routes`, a route outcome made into a status
 * before gets that very status again (and the time its conditions were given then, when they last
 * changed): resolve hands an unchanged route the outcome object of before.
 */
export function keyedStatuses(outcomes: Outcomes, ctx: StatusOptions, routes?: WeakMap<RouteOutcome, KeyedStatus>): KeyedStatus[] {
  const keyed = (status: JsonObject): KeyedStatus => ({ key: statusKey(status), status });
  const route = (o: RouteOutcome): KeyedStatus => {
    let held = routes?.get(o);
    if (!held) {
      held = keyed(routeStatus(ctx, o));
      routes?.set(o, held);
    }
    return held;
  };
  const out = [
    ...outcomes.gatewayClasses.map((o) => keyed(gatewayClassStatus(ctx, o))),
    ...outcomes.gateways.map((o) => keyed(gatewayStatus(ctx, o))),
    ...outcomes.routes.map(route),
    // Every pool, used or not: a pool no route uses any more gets its parents removed.
    ...outcomes.pools.map((o) => keyed(poolStatus(ctx, o))),
    ...outcomes.policies.map((o) => keyed(policyStatus(ctx, o))),
    ...outcomes.backendTlsPolicies.map((o) => keyed(backendTlsPolicyStatus(ctx, o))),
    ...outcomes.listenerSets.map((o) => keyed(listenerSetStatus(ctx, o))),
  ];
  return out.sort((a, b) => compare(a.key, b.key));
}
