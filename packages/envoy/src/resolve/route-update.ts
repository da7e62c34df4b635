// A route change resolved for the Gateways it attaches to alone. While nothing but routes (and
// EndpointSlices, which resolve never reads) changed since a full resolve, an updated route that
// keeps its place in route order, its kind, its Gateways, the backends and Services it uses, and
// whose every parent accepts it before and after, changes nothing outside those Gateways: no
// other route's attachment (routes of one kind never contend for a hostname), no pool's,
// policy's or backend's outcome, no finding about a backend. So only its attachment, its compile,
// the ports of the listeners it leaves and joins, its Gateways' outcomes and its own are made
// again; every other IR and outcome is the very object of before. Anything else is the full
// resolve's to do (the caller is told so by `undefined`).
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

export interface RouteUpdate {
  ir: IR;
  outcomes: Outcomes;
  /** Every route, in route order, the new records in the old ones' places. */
  routes: RouteRecord[];
  /** The outcomes of the new records. */
  changed: RouteOutcome[];
  /** The Gateways resolved again, sorted. */
  gateways: string[];
  /** What the last resolve reported that this one takes back (the findings of the routes' old records and of the ports built again). */
  dropped: Set<Diagnostic>;
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const backendKeys = (c: CompiledRoute) => new Set(c.rules.flatMap((r) => r.backends.map((b) => b.key)));

/** The listener outcomes of a Gateway, each with the count of routes now attached to it. */
function counted(listeners: ListenerOutcome[], active: ActiveListener[], lists: Map<ActiveListener, Attachment[]>): ListenerOutcome[] {
  const counts = new Map(active.map((l) => [l.outcome, lists.get(l)?.length ?? 0]));
  return listeners.map((o) => {
    const n = counts.get(o);
    return n === undefined || n === o.attachedRoutes ? o : { ...o, attachedRoutes: n };
  });
}

/**
 * Routes updated in place (`before` → `after`, the read stage's records), resolved for their
 * Gateways alone; `undefined` when the change reaches further (see the header). `inputs` are the
 * current ones but for routes; `diags` gets what this resolve found anew.
 */
export function resolveRouteUpdate(
  inputs: Inputs,
  changes: { before: RouteRecord; after: RouteRecord }[],
  diags: Diagnostics,
  memo: RouteUpdateMemo,
): RouteUpdate | undefined {
  const state = memo.state;
  if (!state) return undefined;
  const { attachments } = state;
  const ctx: AttachContext = { ...state.attach, inputs };
  const dropped = new Set<Diagnostic>();
  const made: {
    before: RouteRecord;
    after: RouteRecord;
    index: number;
    attached: RouteAttachment;
    compiled: CompiledRoute;
    found: Diagnostics;
    attachFound: Diagnostics;
  }[] = [];
  for (const { before, after } of changes) {
    const index = state.routeOrder.get(before);
    const c0 = state.compiled.get(before);
    const held = memo.compiles.heldFor(before);
    const attachFindings = memo.attach.diagnosticsOf(before);
    if (index === undefined || !c0 || !held || !attachFindings || byAge(before, after) !== 0 || before.kind !== after.kind || after.kind === 'GRPCRoute')
      return undefined;
    const on0 = attachments.on.get(before) ?? [];
    const parents0 = attachments.parents.get(before) ?? [];
    if (c0.httpOnly?.length || parents0.some((p) => !p.accepted.status) || on0.some((l) => attachments.mixed.has(l))) return undefined;
    const attachFound = new Diagnostics();
    const attached = attachRoute(after, ctx, attachFound);
    const joins = attached.placements.map((p) => p.listener);
    if (
      attached.outcomes.some((p) => !p.accepted.status) ||
      joins.some((l) => attachments.mixed.has(l) || (attachments.kinds.get(l) ?? after.kind) !== after.kind)
    )
      return undefined;
    const gateways0 = new Set(on0.map((l) => state.gatewayOf.get(l) ?? ''));
    const gateways1 = new Set(joins.map((l) => state.gatewayOf.get(l) ?? ''));
    if (!sameSet(gateways0, gateways1) || !sameSet(new Set(routeServices(before)), new Set(routeServices(after)))) return undefined;
    const found = new Diagnostics();
    const compile = isStreamRoute(after.kind) ? compileStreamRoute : compileRoute;
    const compiled = memo.compiles.compile(after, state.backends, found, compile);
    const resolvedKeys = memo.compiles.heldFor(after)?.backendKeys;
    if (compiled.httpOnly?.length || !resolvedKeys || !sameSet(held.backendKeys, resolvedKeys) || !sameSet(backendKeys(c0), backendKeys(compiled)))
      return undefined;
    for (const d of [...held.diagnostics, ...attachFindings]) dropped.add(d);
    made.push({ before, after, index, attached, compiled, found, attachFound });
  }

  // Nothing reaches further: the change is made.
  const routes = [...state.routes];
  const changedListeners = new Set<ActiveListener>();
  /** Per old record, the new one's outcome. */
  const outcomeOf = new Map<RouteRecord, RouteOutcome>();
  for (const m of made) {
    routes[m.index] = m.after;
    state.routeOrder.delete(m.before);
    state.routeOrder.set(m.after, m.index);
    state.compiled.delete(m.before);
    state.compiled.set(m.after, m.compiled);
    attachments.parents.delete(m.before);
    attachments.parents.set(m.after, m.attached.outcomes);
    for (const l of attachments.on.get(m.before) ?? []) {
      changedListeners.add(l);
      attachments.routes.set(
        l,
        (attachments.routes.get(l) ?? []).filter((a) => a.route !== m.before),
      );
    }
    attachments.on.delete(m.before);
    const hostnames = new Map<ActiveListener, Set<string>>();
    for (const p of m.attached.placements) {
      const set = hostnames.get(p.listener) ?? new Set();
      for (const h of p.hostnames) set.add(h);
      hostnames.set(p.listener, set);
    }
    for (const [l, names] of hostnames) {
      changedListeners.add(l);
      attachments.kinds.set(l, m.after.kind);
      const list = attachments.routes.get(l) ?? [];
      // In route order, as a full attachment lists them.
      let at = list.findIndex((a) => (state.routeOrder.get(a.route) ?? 0) > m.index);
      if (at < 0) at = list.length;
      attachments.routes.set(l, [...list.slice(0, at), { route: m.after, hostnames: [...names] }, ...list.slice(at)]);
    }
    attachments.on.set(m.after, [...hostnames.keys()]);
    memo.attach.set(m.after, {
      outcomes: m.attached.outcomes,
      placements: m.attached.placements.map(({ gateway, index, hostnames: h }) => ({ gateway, index, hostnames: h })),
      diagnostics: m.attachFound.list,
      replays: true,
    });
    for (const d of [...m.attachFound.list, ...m.found.list]) diags.list.push(d);
    outcomeOf.set(m.before, routeOutcome(m.after, m.compiled, m.attached.outcomes, memo.routes));
  }
  memo.compiles.settle(state.compiled, state.backends);
  state.routes = routes;

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
    routes: state.outcomes.routes.map((o) => outcomeOf.get(o.route) ?? o),
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
  return { ir: state.ir, outcomes, routes, changed: [...outcomeOf.values()], gateways: [...touched].sort(compare), dropped };
}
