// The parents of each BackendPool and InferencePool, as GIE's status asks: one entry per Gateway
// the pool is associated with — through a route that Gateway accepted, or (Accepted=False,
// HTTPRouteNotAccepted) only through routes it rejected — and none once no route references it.
import { type ObjectRef, describeRef } from '../diagnostics.js';
import { compare } from '../json.js';
import type { RouteRecord, Inputs, Pool } from '../read/index.js';
import type { Backends } from './backends.js';
import { type PoolOutcome, type PoolParent, type RouteOutcome, type Verdict, gatewayRef, verdict } from './outcomes.js';
import type { CompiledRoute } from './routes.js';

export interface PoolContext {
  inputs: Inputs;
  backends: Backends;
  routes: RouteOutcome[];
  compiled: Map<RouteRecord, CompiledRoute>;
  /** `namespace/name` of every converted Gateway. */
  converted: ReadonlySet<string>;
  /** The converted Gateways (`namespace/name`) whose accepted routes use an object. */
  gatewaysUsing(kind: string, namespace: string, name: string): string[];
}

function poolKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** Per pool, the converted Gateways that rejected a route referencing it, and those routes. */
function rejections(ctx: PoolContext): Map<string, Map<string, ObjectRef[]>> {
  const out = new Map<string, Map<string, ObjectRef[]>>();
  for (const o of ctx.routes) {
    const refused = o.parents
      .filter((p) => !p.accepted.status)
      .map((p) => `${p.parent.namespace}/${p.parent.name}`)
      .filter((gw) => ctx.converted.has(gw));
    if (refused.length === 0) continue;
    for (const rule of ctx.compiled.get(o.route)?.rules ?? []) {
      for (const b of rule.backends) {
        if (b.kind === 'Service') continue;
        const byGateway = out.get(poolKey(b.ref)) ?? new Map<string, ObjectRef[]>();
        for (const gw of refused) {
          const routes = byGateway.get(gw) ?? [];
          if (!routes.includes(o.route.ref)) routes.push(o.route.ref);
          byGateway.set(gw, routes);
        }
        out.set(poolKey(b.ref), byGateway);
      }
    }
  }
  return out;
}

/**
 * Accepted for a Gateway whose routes use the pool. An InferencePool without endpointPickerRef
 * is served too — by a LoadBalancerPolicy on it, or round robin — and says so with GIE's reason.
 */
function accepted(pool: Pool, backends: Backends): Verdict {
  if (pool.kind !== 'InferencePool' || pool.lb) return verdict(true, 'Accepted', 'Pool is referenced by an accepted route');
  const policy = backends.policies.policyFor(pool.kind, pool.meta.namespace, pool.meta.name);
  const how = policy?.lb
    ? `${describeRef(policy.ref)} balances its endpoints (${policy.lb.type})`
    : 'the proxy balances its endpoints round robin; a LoadBalancerPolicy on the pool can name a picker or another policy';
  return verdict(true, 'EndpointPickerRefMissing', `Pool is referenced by an accepted route; it has no endpointPickerRef, so ${how}`);
}

export function poolOutcomes(ctx: PoolContext): PoolOutcome[] {
  const rejected = rejections(ctx);
  return [...ctx.inputs.pools.values()].map((pool) => {
    const using = new Set(ctx.gatewaysUsing(pool.kind, pool.meta.namespace, pool.meta.name));
    const parents: PoolParent[] = [...using].map((gw) => ({ gateway: gatewayRef(gw), accepted: accepted(pool, ctx.backends) }));
    for (const [gw, routes] of rejected.get(poolKey(pool.ref)) ?? []) {
      if (using.has(gw)) continue;
      const message = `every route of this Gateway that references the pool was rejected: ${routes.map(describeRef).join(', ')}`;
      parents.push({ gateway: gatewayRef(gw), accepted: verdict(false, 'HTTPRouteNotAccepted', message) });
    }
    parents.sort((a, b) => compare(`${a.gateway.namespace}/${a.gateway.name}`, `${b.gateway.namespace}/${b.gateway.name}`));
    return { pool, parents, pickerProblems: ctx.backends.pickerProblems(pool.ref) };
  });
}
