// Routes to listeners: which parentRefs a route can attach through, under which hostnames, and
// the outcome of each parentRef for the route's status. HTTPRoutes and GRPCRoutes attach alike, but
// never share a hostname on a listener: the older route keeps it (GEP-1016).
import { type Diagnostic, Diagnostics } from '../diagnostics.js';
import {
  GATEWAY_GROUP,
  type GatewayRecord,
  type RouteRecord,
  type Inputs,
  type ListenerSet,
  type ListenerSpec,
  type ParentRef,
  type RouteGroupKind,
  type RouteKind,
} from '../read/index.js';
import { HostnameHolders } from './hostname-holders.js';
import { intersect } from './hostnames.js';
import type { ActiveListener, GatewayListeners } from './listeners.js';
import { type ParentOutcome, verdict } from './outcomes.js';

/** A route attached to a listener, with the hostnames it serves there. */
export interface Attachment {
  route: RouteRecord;
  hostnames: string[];
}

export interface Attachments {
  /** Per route, the outcome of each parentRef this controller answers for. */
  parents: Map<RouteRecord, ParentOutcome[]>;
  /** Per listener, the routes attached to it, in route order. */
  routes: Map<ActiveListener, Attachment[]>;
  /** Per route, the listeners it is attached to. */
  on: Map<RouteRecord, ActiveListener[]>;
  /** Per listener, the kind of the first route attached to it. */
  kinds: Map<ActiveListener, RouteKind>;
  /** The listeners where routes of two kinds met: attached, or one refused for the other's hostnames. */
  mixed: Set<ActiveListener>;
}

/**
 * How each route attached at the last resolve, for the next one while nothing but routes changed
 * (same `epoch`): a route whose record is the same attaches as it did, unless a route of the other
 * kind (HTTPRoute, GRPCRoute) now holds hostnames on a listener it is on — it is then attached
 * afresh. A route that met such holders is attached afresh each time.
 */
export class AttachMemo {
  /** Bumped by the memo's owner whenever anything but routes changed. */
  epoch = 0;
  private byRoute = new WeakMap<RouteRecord, AttachEntry>();

  get(route: RouteRecord): AttachEntry | undefined {
    const entry = this.byRoute.get(route);
    return entry?.epoch === this.epoch && entry.replays ? entry : undefined;
  }

  /** What the route's last attachment reported, at any epoch. */
  diagnosticsOf(route: RouteRecord): readonly Diagnostic[] | undefined {
    return this.byRoute.get(route)?.diagnostics;
  }

  set(route: RouteRecord, entry: Omit<AttachEntry, 'epoch'>): void {
    this.byRoute.set(route, { ...entry, epoch: this.epoch });
  }
}

interface AttachEntry {
  epoch: number;
  /** False when it met hostnames of the other kind: then it is attached afresh each time. */
  replays: boolean;
  outcomes: ParentOutcome[];
  /** Where it attached: the Gateway, the listener's index among its active ones, the hostnames. */
  placements: { gateway: string; index: number; hostnames: string[] }[];
  diagnostics: readonly Diagnostic[];
}

/** The namespace `Same` means for a listener: its ListenerSet's, or its Gateway's. */
function homeOf(l: ListenerSpec, gw: GatewayRecord): string {
  return l.owner?.namespace ?? gw.meta.namespace;
}

function namespaceAllowed(l: ActiveListener, gw: GatewayRecord, route: RouteRecord, inputs: Inputs): boolean {
  const { from, selector } = l.spec.namespaces;
  if (from === 'All') return true;
  if (from === 'Same') return route.meta.namespace === homeOf(l.spec, gw);
  const labels = inputs.namespaces.get(route.meta.namespace);
  return labels !== undefined && Object.entries(selector ?? {}).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v);
}

/** What a parentRef asks for, as a phrase: `listener "http"`, `listener on port 80`, ... */
function wanted(parent: ParentRef): string {
  if (parent.sectionName !== undefined && parent.port !== undefined) return `listener "${parent.sectionName}" on port ${parent.port}`;
  if (parent.sectionName !== undefined) return `listener "${parent.sectionName}"`;
  if (parent.port !== undefined) return `listener on port ${parent.port}`;
  return 'listener';
}

function kindName(k: RouteGroupKind): string {
  return k.group === GATEWAY_GROUP ? k.kind : `${k.kind}.${k.group}`;
}

/**
 * Why a listener a parentRef names does not take the route, or undefined when it does: it allows
 * other route kinds, extlb does not serve it, or it allows routes from other namespaces.
 */
function refusal(l: ListenerSpec, listeners: GatewayListeners, gw: GatewayRecord, route: RouteRecord, inputs: Inputs): string | undefined {
  const served = listeners.active.find((a) => a.spec === l);
  const allowsKind = served
    ? served.routeKinds.includes(route.kind)
    : !l.kinds?.length || l.kinds.some((k) => k.group === GATEWAY_GROUP && k.kind === route.kind);
  if (!allowsKind) return `listener "${l.name}" allows only ${(l.kinds ?? []).map(kindName).join(', ')}`;
  if (!served) {
    const outcome = listeners.outcomes.find((o) => o.index === l.index && o.owner === l.owner);
    return `listener "${l.name}" is not served: ${outcome?.programmed.message ?? 'it cannot be converted'}`;
  }
  if (namespaceAllowed(served, gw, route, inputs)) return undefined;
  const { from, selector } = l.namespaces;
  const which =
    from === 'Same'
      ? `namespace ${homeOf(l, gw)}`
      : `namespaces labelled ${Object.entries(selector ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`;
  return `listener "${l.name}" allows routes from ${which} only, not from namespace ${route.meta.namespace}`;
}

/** What a route attaches to: the converted Gateways, other controllers' Gateways, ListenerSets. */
export interface AttachContext {
  inputs: Inputs;
  /** The converted Gateways, by `namespace/name`. */
  gateways: Map<string, { gateway: GatewayRecord; listeners: GatewayListeners }>;
  /** Gateways of classes this controller does not convert (their routes' status entries belong to another controller). */
  others: Map<string, GatewayRecord>;
  /** The ListenerSets whose Gateway accepts them, by `namespace/name`, with that Gateway's key. */
  sets: Map<string, { set: ListenerSet; gateway: string }>;
  /** Every ListenerSet this controller answers for, accepted or not, by `namespace/name`. */
  knownSets: Set<string>;
}

/** Where one route attached, and the outcome of each of its parentRefs. */
export interface RouteAttachment {
  outcomes: ParentOutcome[];
  placements: { listener: ActiveListener; gateway: string; index: number; hostnames: string[] }[];
  /** The listeners where it met hostnames held by routes of the other kind (its attachment then depends on them). */
  metHolders: ActiveListener[];
}

const otherKind = (route: RouteRecord): RouteKind => (route.kind === 'HTTPRoute' ? 'GRPCRoute' : 'HTTPRoute');

/**
 * Attaches one route to the listeners of its parents. `holdersOf` gives, per listener, who holds
 * which hostnames among the routes of the other kind attached before it (undefined: none).
 */
export function attachRoute(
  route: RouteRecord,
  ctx: AttachContext,
  diags: Diagnostics,
  holdersOf: (l: ActiveListener) => HostnameHolders | undefined = () => undefined,
): RouteAttachment {
  const { inputs, sets, knownSets } = ctx;
  const placements: RouteAttachment['placements'] = [];
  const metHolders: ActiveListener[] = [];
  const outcomes: ParentOutcome[] = [];
  const reject = (parent: ParentRef, reason: string, message: string) => outcomes.push({ parent, accepted: verdict(false, reason, message) });
  for (const parent of route.parentRefs) {
    const path = `spec.parentRefs[${parent.index}]`;
    let gwName = `${parent.namespace}/${parent.name}`;
    const viaSet = parent.group === GATEWAY_GROUP && parent.kind === 'ListenerSet';
    if (parent.group !== GATEWAY_GROUP || (parent.kind !== 'Gateway' && !viaSet)) {
      const gk = parent.group === '' ? parent.kind : `${parent.kind}.${parent.group}`;
      diags.warning('UnsupportedParent', `a parent of kind ${gk} is not supported; only Gateways and ListenerSets are`, route.ref, path);
      reject(parent, 'NoMatchingParent', `parent kind ${parent.kind} is not supported`);
      continue;
    }
    const setName = gwName;
    const set = viaSet ? sets.get(setName) : undefined;
    if (viaSet) {
      if (!set) {
        // A set of another controller's Gateway is not ours to answer for.
        if (!knownSets.has(setName)) {
          if (!inputs.listenerSets.some((x) => `${x.meta.namespace}/${x.meta.name}` === setName)) {
            diags.error('ParentNotFound', `ListenerSet ${setName} not found`, route.ref, path);
            reject(parent, 'NoMatchingParent', `ListenerSet ${setName} not found`);
          }
          continue;
        }
        diags.warning('NotAllowedByListeners', `ListenerSet ${setName} is not accepted by its Gateway, so its listeners take no route`, route.ref, path);
        reject(parent, 'NotAllowedByListeners', `ListenerSet ${setName} is not accepted by its Gateway`);
        continue;
      }
      gwName = set.gateway;
    }
    const other = ctx.others.get(gwName);
    if (other) {
      diags.info('OtherGatewayClass', `Gateway ${gwName} is of class ${other.gatewayClassName}, which is not converted`, route.ref, path);
      continue;
    }
    const entry = ctx.gateways.get(gwName);
    if (!entry) {
      diags.error('ParentNotFound', `Gateway ${gwName} not found`, route.ref, path);
      reject(parent, 'NoMatchingParent', `Gateway ${gwName} not found`);
      continue;
    }
    const { gateway: gw, listeners } = entry;
    // NoMatchingParent only when the Gateway has no such listener at all; a listener that is
    // there but does not take the route (other kinds, not served, other namespaces) is NotAllowedByListeners.
    // A Gateway parent attaches to the Gateway's own listeners, a ListenerSet parent to the set's only.
    const named = (set ? set.set.listeners : gw.listeners).filter(
      (l) => (parent.sectionName === undefined || l.name === parent.sectionName) && (parent.port === undefined || l.port === parent.port),
    );
    const parentName = set ? `ListenerSet ${setName}` : `Gateway ${gwName}`;
    if (named.length === 0) {
      diags.error('NoMatchingParent', `${parentName} has no ${wanted(parent)}`, route.ref, path);
      reject(parent, 'NoMatchingParent', `the ${set ? 'ListenerSet' : 'Gateway'} has no ${wanted(parent)}`);
      continue;
    }
    const refusals = named.map((l) => refusal(l, listeners, gw, route, inputs));
    const taking = new Set(named.filter((_l, i) => refusals[i] === undefined));
    const allowed = listeners.active.filter((a) => taking.has(a.spec));
    if (allowed.length === 0) {
      const why = refusals.join('; ');
      diags.warning('NotAllowedByListeners', `no listener of ${parentName} takes the route: ${why}`, route.ref, path);
      reject(parent, 'NotAllowedByListeners', why);
      continue;
    }
    let any = false;
    let conflict: RouteRecord | undefined;
    for (const l of allowed) {
      const hostnames =
        route.hostnames.length === 0 ? [l.spec.hostname ?? '*'] : [...new Set(route.hostnames.flatMap((h) => intersect(l.spec.hostname, h) ?? []))];
      if (hostnames.length === 0) continue;
      const others = holdersOf(l);
      if (others) metHolders.push(l);
      const holder = others && hostnames.map((h) => others.holder(h)).find((r) => r !== undefined);
      if (holder) {
        conflict = holder;
        diags.warning(
          'HostnameConflict',
          `${holder.kind} ${holder.meta.namespace}/${holder.meta.name}, which is older (or first by name), already serves these hostnames on listener "${l.spec.name}" of Gateway ${gwName}; a hostname is served by HTTPRoutes or by GRPCRoutes, not both`,
          route.ref,
          path,
        );
        continue;
      }
      any = true;
      placements.push({ listener: l, gateway: gwName, index: listeners.active.indexOf(l), hostnames });
    }
    if (!any && conflict) {
      reject(parent, 'HostnameConflict', `${conflict.kind} ${conflict.meta.namespace}/${conflict.meta.name} already serves these hostnames`);
      continue;
    }
    if (!any) {
      diags.warning('NoMatchingListenerHostname', `no hostname of the route matches a listener of ${parentName}`, route.ref, 'spec.hostnames');
      reject(parent, 'NoMatchingListenerHostname', 'no route hostname matches a listener hostname');
      continue;
    }
    outcomes.push({ parent, accepted: verdict(true, 'Accepted', 'Route is accepted') });
  }
  return { outcomes, placements, metHolders };
}

/**
 * Attaches every route to the listeners of its parents, oldest first (the older route keeps a
 * hostname both kinds want).
 */
export function attachRoutes(ctx: AttachContext, diags: Diagnostics, memo?: AttachMemo): Attachments {
  const parents = new Map<RouteRecord, ParentOutcome[]>();
  const routes = new Map<ActiveListener, Map<RouteRecord, Attachment>>();
  const on = new Map<RouteRecord, ActiveListener[]>();
  const kinds = new Map<ActiveListener, RouteKind>();
  const mixed = new Set<ActiveListener>();
  /** Per listener and route kind, who holds which hostnames; routes attach oldest first. */
  const holders = new Map<ActiveListener, Map<RouteKind, HostnameHolders>>();
  const held = (l: ActiveListener, kind: RouteKind) => {
    const byKind = holders.get(l) ?? new Map<RouteKind, HostnameHolders>();
    holders.set(l, byKind);
    const h = byKind.get(kind) ?? new HostnameHolders();
    byKind.set(kind, h);
    return h;
  };
  const place = (l: ActiveListener, route: RouteRecord, hostnames: string[]) => {
    let attached = routes.get(l);
    if (!attached) {
      attached = new Map();
      routes.set(l, attached);
    }
    const existing = attached.get(route);
    if (existing) existing.hostnames = [...new Set([...existing.hostnames, ...hostnames])];
    else {
      attached.set(route, { route, hostnames });
      const listeners = on.get(route);
      if (listeners) listeners.push(l);
      else on.set(route, [l]);
    }
    const kind = kinds.get(l);
    if (kind === undefined) kinds.set(l, route.kind);
    else if (kind !== route.kind) mixed.add(l);
    // A route whose every match was invalid serves nothing, so it holds no hostname.
    if (route.rules.some((r) => r.matches.length > 0)) for (const h of hostnames) held(l, route.kind).add(h, route);
  };
  for (const route of ctx.inputs.routes) {
    const kept = memo?.get(route);
    if (kept) {
      const listeners = kept.placements.map((p) => ctx.gateways.get(p.gateway)?.listeners.active[p.index]);
      if (listeners.every((l) => l !== undefined && holders.get(l)?.get(otherKind(route)) === undefined)) {
        for (const [i, p] of kept.placements.entries()) place(listeners[i] as ActiveListener, route, p.hostnames);
        for (const d of kept.diagnostics) diags.list.push(d);
        parents.set(route, kept.outcomes);
        continue;
      }
    }
    const own = memo ? new Diagnostics() : diags;
    const attached = attachRoute(route, ctx, own, (l) => holders.get(l)?.get(otherKind(route)));
    for (const p of attached.placements) place(p.listener, route, p.hostnames);
    for (const l of attached.metHolders) mixed.add(l);
    parents.set(route, attached.outcomes);
    if (memo) {
      for (const d of own.list) diags.list.push(d);
      memo.set(route, {
        outcomes: attached.outcomes,
        placements: attached.placements.map(({ gateway, index, hostnames }) => ({ gateway, index, hostnames })),
        diagnostics: own.list,
        replays: attached.metHolders.length === 0,
      });
    }
  }
  const lists = new Map<ActiveListener, Attachment[]>();
  for (const [l, attached] of routes) {
    l.outcome.attachedRoutes = attached.size;
    lists.set(l, [...attached.values()]);
  }
  return { parents, routes: lists, on, kinds, mixed };
}
