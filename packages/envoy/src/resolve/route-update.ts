// A route change resolved for the Gateways it attaches to alone. While nothing but routes (and
// EndpointSlices, which resolve never reads) changed since a full resolve, an updated route that
// keeps its place in route order, its kind, its Gateways, the backends and Services it uses, and
// whose every parent accepts it before and after, changes nothing outside those Gateways: no
// other route's attachment (routes of one kind never contend for a hostname), no pool's,
// policy's or backend's outcome, no finding about a backend. So only its attachment, its compile,
// the ports of the listeners it leaves and joins, its Gateways' outcomes and its own are made
// again; every other IR and outcome is the very object of before.
//
// The same holds for an HTTPRoute added or deleted whose every parent accepts it, on listeners
// holding no route of another kind, when the routes that stay on each of its Gateways already use
// every backend it resolves to and every Service it names: then no Gateway gains or loses a
// backend (nor what its slices feed), no pool, policy or BackendTLSPolicy gains or loses a
// Gateway, and no backend is resolved for the first time (so no first-seen finding comes or
// goes). Its backends must be in its own namespace, or what it may use would rest on
// ReferenceGrants. An added one must have a place of its own in route order (no route of the same
// age, namespace and name, whose order would rest on input order); the routes after it move by
// one, which changes no relative order, and so no port of another listener. Anything else is the
// full resolve's to do (the caller is told so by `undefined`).
import { type Diagnostic, Diagnostics, describeRef } from '../diagnostics.js';
import { compare } from '../json.js';
import { type GatewayRecord, type Inputs, type ListenerSet, type RouteRecord, isStreamRoute } from '../read/index.js';
import { byAge } from '../read/meta.js';
import { type AttachContext, type AttachMemo, type Attachment, type Attachments, type RouteAttachment, attachRoute } from './attach.js';
import type { Backends } from './backends.js';
import type { CompileMemo } from './compile-memo.js';
import { gatewayOutcome } from './gateway-outcome.js';
import type { GatewaySpecOutcome } from './gateway-spec.js';
import type { Gateway, IR } from './ir.js';
import { acceptedSetOutcome } from './listener-sets.js';
import type { ActiveListener, GatewayListeners } from './listeners.js';
import type { ListenerOutcome, ListenerSetOutcome, Outcomes, RouteOutcome, Verdict } from './outcomes.js';
import { routeOutcome, routeServices } from './route-outcome.js';
import { type CompiledRoute, compileRoute } from './routes.js';
import type { ListenerMemo } from './servers.js';
import { compileStreamRoute } from './stream-routes.js';

/** What a full resolve leaves for the route updates after it; owned by the memo, replaced by the next full resolve. */
export interface ResolveState {
  attach: Omit<AttachContext, 'inputs'>;
  attachments: Attachments;
  compiled: Map<RouteRecord, CompiledRoute>;
  routeOrder: Map<RouteRecord, number>;
  routes: RouteRecord[];
  backends: Backends;
  /** The Gateway (`namespace/name`) of each active listener. */
  gatewayOf: Map<ActiveListener, string>;
  /** Per converted Gateway, what its outcome is made of (its listeners' counts aside). */
  pending: { gateway: GatewayRecord; listeners: ListenerOutcome[]; spec: GatewaySpecOutcome; rejected: Verdict | undefined; sets: number }[];
  /** ListenerSets: the refused ones' outcomes, and the accepted ones with their Gateway. */
  refusedSets: ListenerSetOutcome[];
  acceptedSets: { set: ListenerSet; gateway: string }[];
  ports: Map<string, GatewayListeners['ports']>;
  ir: IR;
  outcomes: Outcomes;
}

export interface RouteUpdateMemo {
  attach: AttachMemo;
  compiles: CompileMemo;
  listeners: ListenerMemo;
  routes: WeakMap<RouteRecord, { compiled: CompiledRoute; outcome: RouteOutcome }>;
  state?: ResolveState;
}

/** A route changed: updated in place (both records), added (`after` alone) or deleted (`before` alone). */
export interface RouteChange {
  before?: RouteRecord;
  after?: RouteRecord;
}

export interface RouteUpdate {
  ir: IR;
  outcomes: Outcomes;
  /** Every route, in route order: the new records in the old ones' places, the added ones in theirs, the deleted ones gone. */
  routes: RouteRecord[];
  /** The outcomes of the new records (updated and added). */
  changed: RouteOutcome[];
  /** The records deleted. */
  removed: RouteRecord[];
  /** The Gateways resolved again, sorted. */
  gateways: string[];
  /** What the last resolve reported that this one takes back (the findings of the routes' old records and of the ports built again). */
  dropped: Set<Diagnostic>;
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const backendKeys = (c: CompiledRoute) => new Set(c.rules.flatMap((r) => r.backends.map((b) => b.key)));

/** Whether a route refers to a backend (or mirrors to one) in another namespace: what it may use then rests on ReferenceGrants. */
function crossNamespace(route: RouteRecord): boolean {
  for (const rule of route.rules) {
    const filters = [...rule.filters, ...rule.backendRefs.flatMap((ref) => ref.filters)];
    const mirrors = filters.flatMap((f) => (f.type === 'RequestMirror' ? [f.mirror.backendRef] : []));
    if ([...rule.backendRefs, ...mirrors].some((ref) => ref.namespace !== route.meta.namespace)) return true;
  }
  return false;
}

/** Where a route goes in route order (a list sorted by age), or undefined when it ties with one there (their order would rest on input order). */
function placeOf(routes: readonly RouteRecord[], route: RouteRecord): number | undefined {
  let lo = 0;
  let hi = routes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = byAge(routes[mid] as RouteRecord, route);
    if (c === 0) return undefined;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The listener outcomes of a Gateway, each with the count of routes now attached to it. */
function counted(listeners: ListenerOutcome[], active: ActiveListener[], lists: Map<ActiveListener, Attachment[]>): ListenerOutcome[] {
  const counts = new Map(active.map((l) => [l.outcome, lists.get(l)?.length ?? 0]));
  return listeners.map((o) => {
    const n = counts.get(o);
    return n === undefined || n === o.attachedRoutes ? o : { ...o, attachedRoutes: n };
  });
}

/**
 * Routes updated in place, added or deleted (the read stage's records), resolved for their
 * Gateways alone; `undefined` when the change reaches further (see the header). `inputs` are the
 * current ones but for routes; `diags` gets what this resolve found anew.
 */
export function resolveRouteUpdate(inputs: Inputs, changes: RouteChange[], diags: Diagnostics, memo: RouteUpdateMemo): RouteUpdate | undefined {
  const state = memo.state;
  if (!state) return undefined;
  const { attachments } = state;
  const ctx: AttachContext = { ...state.attach, inputs };
  const dropped = new Set<Diagnostic>();
  /** The old records this change takes away (updated and deleted). */
  const leaving = new Set<RouteRecord>();
  for (const { before } of changes) if (before) leaving.add(before);
  /**
   * Whether the routes staying on each of these Gateways already use these backends (keys) and
   * Services: an added or deleted route that uses no other changes no Gateway's backends, no
   * pool's, policy's or BackendTLSPolicy's outcome, and resolves no backend for the first time.
   * The listeners given are looked at first (their routes are the likeliest to share backends),
   * and the look stops once every one is found.
   */
  const usesNothingNew = (gateways: Iterable<string>, keys: Iterable<string>, services: readonly string[], first: readonly ActiveListener[]) =>
    [...gateways].every((g) => {
      const keysLeft = new Set(keys);
      const servicesLeft = new Set(services);
      const active = state.attach.gateways.get(g)?.listeners.active ?? [];
      for (const l of [...first.filter((x) => active.includes(x)), ...active.filter((x) => !first.includes(x))]) {
        for (const { route } of attachments.routes.get(l) ?? []) {
          if (keysLeft.size === 0 && servicesLeft.size === 0) return true;
          if (leaving.has(route)) continue;
          for (const rule of state.compiled.get(route)?.rules ?? []) for (const b of rule.backends) keysLeft.delete(b.key);
          for (const s of routeServices(route)) servicesLeft.delete(s);
        }
      }
      return keysLeft.size === 0 && servicesLeft.size === 0;
    });
  const made: {
    before?: RouteRecord;
    after?: RouteRecord;
    attached?: RouteAttachment;
    compiled?: CompiledRoute;
    found: Diagnostics;
    attachFound: Diagnostics;
  }[] = [];
  const addedIds = new Set<string>();
  for (const { before, after } of changes) {
    if (before) {
      const c0 = state.compiled.get(before);
      const held = memo.compiles.heldFor(before);
      const attachFindings = memo.attach.diagnosticsOf(before);
      if (!state.routeOrder.has(before) || !c0 || !held || !attachFindings || before.kind === 'GRPCRoute') return undefined;
      const on0 = attachments.on.get(before) ?? [];
      const parents0 = attachments.parents.get(before) ?? [];
      if (c0.httpOnly?.length || parents0.some((p) => !p.accepted.status) || on0.some((l) => attachments.mixed.has(l))) return undefined;
      if (!after) {
        // Deleted: only an HTTPRoute each of whose Gateways keeps every backend and Service it used.
        const gateways0 = new Set(on0.map((l) => state.gatewayOf.get(l) ?? ''));
        if (before.kind !== 'HTTPRoute' || gateways0.size === 0 || crossNamespace(before)) return undefined;
        if (!usesNothingNew(gateways0, [...held.backendKeys, ...backendKeys(c0)], routeServices(before), on0)) return undefined;
        for (const d of [...held.diagnostics, ...attachFindings]) dropped.add(d);
        made.push({ before, found: new Diagnostics(), attachFound: new Diagnostics() });
        continue;
      }
      if (byAge(before, after) !== 0 || before.kind !== after.kind) return undefined;
    } else {
      // Added: only an HTTPRoute with a place of its own in route order.
      const id = after && `${after.meta.namespace}/${after.meta.name}`;
      if (!after || !id || addedIds.has(id) || after.kind !== 'HTTPRoute' || crossNamespace(after) || placeOf(state.routes, after) === undefined)
        return undefined;
      addedIds.add(id);
    }
    const attachFound = new Diagnostics();
    const attached = attachRoute(after, ctx, attachFound);
    const joins = attached.placements.map((p) => p.listener);
    if (
      attached.outcomes.some((p) => !p.accepted.status) ||
      joins.some((l) => attachments.mixed.has(l) || (attachments.kinds.get(l) ?? after.kind) !== after.kind)
    )
      return undefined;
    const gateways1 = new Set(joins.map((l) => state.gatewayOf.get(l) ?? ''));
    if (before) {
      const gateways0 = new Set((attachments.on.get(before) ?? []).map((l) => state.gatewayOf.get(l) ?? ''));
      if (!sameSet(gateways0, gateways1) || !sameSet(new Set(routeServices(before)), new Set(routeServices(after)))) return undefined;
    } else if (gateways1.size === 0 || !usesNothingNew(gateways1, [], routeServices(after), joins)) return undefined;
    const found = new Diagnostics();
    const compile = isStreamRoute(after.kind) ? compileStreamRoute : compileRoute;
    const compiled = memo.compiles.compile(after, state.backends, found, compile);
    const resolvedKeys = memo.compiles.heldFor(after)?.backendKeys;
    if (compiled.httpOnly?.length || !resolvedKeys) return undefined;
    if (before) {
      const c0 = state.compiled.get(before) as CompiledRoute;
      const held = memo.compiles.heldFor(before);
      if (!held || !sameSet(held.backendKeys, resolvedKeys) || !sameSet(backendKeys(c0), backendKeys(compiled))) return undefined;
      for (const d of [...held.diagnostics, ...(memo.attach.diagnosticsOf(before) ?? [])]) dropped.add(d);
    } else if (!usesNothingNew(gateways1, [...resolvedKeys, ...backendKeys(compiled)], [], joins)) return undefined;
    made.push(before ? { before, after, attached, compiled, found, attachFound } : { after, attached, compiled, found, attachFound });
  }
  // Two routes added with one place would be ordered by each other.
  const added = made.flatMap((m) => (m.before ? [] : [m.after as RouteRecord]));
  for (let i = 0; i < added.length; i++)
    for (let j = i + 1; j < added.length; j++) if (byAge(added[i] as RouteRecord, added[j] as RouteRecord) === 0) return undefined;

  // Nothing reaches further: the change is made. The old records leave their listeners first.
  const changedListeners = new Set<ActiveListener>();
  for (const m of made) {
    if (!m.before) continue;
    state.compiled.delete(m.before);
    attachments.parents.delete(m.before);
    for (const l of attachments.on.get(m.before) ?? []) {
      changedListeners.add(l);
      const list = (attachments.routes.get(l) ?? []).filter((a) => a.route !== m.before);
      // As a full attachment: a listener no route is on has no list, nor a kind.
      if (list.length > 0) attachments.routes.set(l, list);
      else {
        attachments.routes.delete(l);
        attachments.kinds.delete(l);
      }
    }
    attachments.on.delete(m.before);
  }
  // Route order: a record updated in place keeps its index; an added or deleted one moves those after it.
  const replaced = new Map(made.flatMap((m) => (m.before && m.after ? [[m.before, m.after] as const] : [])));
  const deleted = new Set(made.flatMap((m) => (m.before && !m.after ? [m.before] : [])));
  const routes: RouteRecord[] = [];
  for (const r of state.routes) if (!deleted.has(r)) routes.push(replaced.get(r) ?? r);
  const addedAt: number[] = [];
  for (const r of [...added].sort(byAge)) {
    const at = placeOf(routes, r) as number;
    routes.splice(at, 0, r);
    addedAt.push(at);
  }
  // Indexes change from the first route added or deleted on; before it, only the new records take the old ones' indexes.
  let from = Math.min(routes.length, ...addedAt);
  for (const r of deleted) from = Math.min(from, state.routeOrder.get(r) ?? 0);
  const kept = [...replaced].map(([b, a]) => [a, state.routeOrder.get(b) ?? 0] as const);
  for (const r of leaving) state.routeOrder.delete(r);
  for (const [a, index] of kept) if (index < from) state.routeOrder.set(a, index);
  for (let i = from; i < routes.length; i++) state.routeOrder.set(routes[i] as RouteRecord, i);
  /** Per old record, the new one's outcome; the added ones' outcomes by record. */
  const outcomeOf = new Map<RouteRecord, RouteOutcome>();
  const changed: RouteOutcome[] = [];
  for (const m of made) {
    const { after, attached, compiled } = m;
    if (!after || !attached || !compiled) continue;
    const index = state.routeOrder.get(after) ?? 0;
    state.compiled.set(after, compiled);
    attachments.parents.set(after, attached.outcomes);
    const hostnames = new Map<ActiveListener, Set<string>>();
    for (const p of attached.placements) {
      const set = hostnames.get(p.listener) ?? new Set();
      for (const h of p.hostnames) set.add(h);
      hostnames.set(p.listener, set);
    }
    for (const [l, names] of hostnames) {
      changedListeners.add(l);
      attachments.kinds.set(l, after.kind);
      const list = attachments.routes.get(l) ?? [];
      // In route order, as a full attachment lists them.
      let at = list.findIndex((a) => (state.routeOrder.get(a.route) ?? 0) > index);
      if (at < 0) at = list.length;
      attachments.routes.set(l, [...list.slice(0, at), { route: after, hostnames: [...names] }, ...list.slice(at)]);
    }
    attachments.on.set(after, [...hostnames.keys()]);
    memo.attach.set(after, {
      outcomes: attached.outcomes,
      placements: attached.placements.map(({ gateway, index: i, hostnames: h }) => ({ gateway, index: i, hostnames: h })),
      diagnostics: m.attachFound.list,
      replays: true,
    });
    for (const d of [...m.attachFound.list, ...m.found.list]) diags.list.push(d);
    const outcome = routeOutcome(after, compiled, attached.outcomes, memo.routes);
    outcomeOf.set(m.before ?? after, outcome);
    changed.push(outcome);
  }
  memo.compiles.settle(state.compiled, state.backends);
  state.routes = routes;
  // The route outcomes in route order: those of the added routes go to their places, ascending.
  const routeOutcomes: RouteOutcome[] = [];
  for (const o of state.outcomes.routes) if (!deleted.has(o.route)) routeOutcomes.push(outcomeOf.get(o.route) ?? o);
  for (const at of addedAt.sort((a, b) => a - b)) routeOutcomes.splice(at, 0, outcomeOf.get(routes[at] as RouteRecord) as RouteOutcome);

  const touched = new Set([...changedListeners].map((l) => state.gatewayOf.get(l) ?? ''));
  const ir: Gateway[] = state.ir.gateways.map((g) => {
    if (!touched.has(g.name)) return g;
    const ports = state.ports.get(g.name) ?? [];
    const inputsOfServers = { attachments: attachments.routes, compiled: state.compiled, routeOrder: state.routeOrder, diags };
    return { ...g, listeners: memo.listeners.rebuild(g.name, ports, changedListeners, inputsOfServers, dropped) };
  });
  const listenersOf = (name: string, listeners: ListenerOutcome[]) => {
    const entry = state.attach.gateways.get(name);
    return entry ? counted(listeners, entry.listeners.active, attachments.routes) : listeners;
  };
  const name = (g: GatewayRecord) => `${g.meta.namespace}/${g.meta.name}`;
  const previous = new Map(state.outcomes.gateways.map((o) => [name(o.gateway), o]));
  const outcomes: Outcomes = {
    ...state.outcomes,
    gateways: state.pending.map((p) => {
      const n = name(p.gateway);
      const kept = previous.get(n);
      if (kept && !touched.has(n)) return kept;
      const own = listenersOf(n, p.listeners).filter((l) => !l.owner);
      return gatewayOutcome(p.gateway, own, p.spec, p.rejected, p.sets);
    }),
    routes: routeOutcomes,
    listenerSets: [
      ...state.refusedSets,
      ...state.acceptedSets.map(({ set, gateway }) =>
        acceptedSetOutcome(set, listenersOf(gateway, state.attach.gateways.get(gateway)?.listeners.outcomes ?? [])),
      ),
    ],
  };
  outcomes.listenerSets.sort((a, b) => compare(describeRef(a.listenerSet.ref), describeRef(b.listenerSet.ref)));
  state.ir = { gateways: ir };
  state.outcomes = outcomes;
  return { ir: state.ir, outcomes, routes, changed, removed: [...deleted], gateways: [...touched].sort(compare), dropped };
}
