// Route tables: per port of a Gateway, which hostnames are served and by which route rules, in
// Gateway API's precedence order, with listener isolation — a request is served only by the routes
// of the most specific listener whose hostname matches it.
import type { RouteRecord, Match } from '../read/index.js';
import type { Attachment } from './attach.js';
import { compareHostnames, compareListenerHostnames, contains } from './hostnames.js';
import type { Listener, Route, Server, VirtualHost } from './ir.js';
import { type ActiveListener, type PortGroup, listenerName } from './listeners.js';
import type { CompiledRoute } from './routes.js';
import { buildStreams } from './streams.js';
import { type Diagnostic, Diagnostics } from '../diagnostics.js';

const PATH_RANK: Record<Match['path']['type'], number> = { Exact: 0, RegularExpression: 1, PathPrefix: 2 };

/**
 * Gateway API precedence between two matches (negative: `a` first): exact path, then the longest
 * path, then method, most headers, most query params; between GRPCRoute matches (a hostname never
 * has both kinds), the longest service, then method, then most headers. Ties are broken by the
 * caller (route age, then rule and match order).
 */
export function comparePrecedence(a: Match, b: Match): number {
  if (a.grpc && b.grpc) {
    const chars = (m: Match['grpc'], part: 'service' | 'method') => m?.[part]?.length ?? 0;
    return chars(b.grpc, 'service') - chars(a.grpc, 'service') || chars(b.grpc, 'method') - chars(a.grpc, 'method') || b.headers.length - a.headers.length;
  }
  return (
    PATH_RANK[a.path.type] - PATH_RANK[b.path.type] ||
    b.path.value.replace(/\/+$/, '').length - a.path.value.replace(/\/+$/, '').length ||
    Number(b.method !== undefined) - Number(a.method !== undefined) ||
    b.headers.length - a.headers.length ||
    b.queryParams.length - a.queryParams.length
  );
}

/** `namespace/name` for an HTTPRoute, `namespace/grpcroute/name` for a GRPCRoute (the two may share a name). */
function routeName(route: RouteRecord): string {
  return route.kind === 'HTTPRoute' ? `${route.meta.namespace}/${route.meta.name}` : `${route.meta.namespace}/grpcroute/${route.meta.name}`;
}

interface Entry {
  route: RouteRecord;
  routeOrder: number;
  rule: number;
  ir: Route;
}

/** The listener of a server that a host belongs to: the most specific one whose hostname contains it. */
function ownerOf(host: string, listeners: ActiveListener[]): ActiveListener | undefined {
  let best: ActiveListener | undefined;
  for (const l of listeners) {
    if (!contains(l.spec.hostname, host)) continue;
    if (!best || compareListenerHostnames(l.spec.hostname, best.spec.hostname) < 0) best = l;
  }
  return best;
}

export interface ServerInputs {
  attachments: Map<ActiveListener, Attachment[]>;
  compiled: Map<RouteRecord, CompiledRoute>;
  routeOrder: Map<RouteRecord, number>;
  diags?: Diagnostics;
}

/**
 * The virtual hosts of one server: the routes of `served` (the listeners whose requests it
 * answers), with each hostname owned by the most specific listener of the whole port. On HTTPS a
 * server answers one listener; the hostnames of the port's other listeners answer 421 there, as
 * does any Host when the listener has a hostname (the request was meant for another listener).
 */
function virtualHosts(served: ActiveListener[], port: PortGroup, inputs: ServerInputs): VirtualHost[] {
  const byHost = new Map<string, { listener: ActiveListener; entries: Entry[]; misdirected?: true }>();
  const hostFor = (host: string, listener: ActiveListener) => {
    let vh = byHost.get(host);
    if (!vh) {
      vh = { listener, entries: [] };
      byHost.set(host, vh);
    }
    return vh;
  };
  // With several listeners, each one's hostname gets a virtual host even without routes, so that
  // its requests never fall through to a less specific listener's routes.
  if (port.listeners.length > 1) for (const l of served) hostFor(l.spec.hostname ?? '*', l);
  if (port.protocol === 'HTTPS') {
    const [self] = served;
    for (const other of port.listeners) {
      if (other === self) continue;
      const host = other.spec.hostname ?? '*';
      if (!byHost.has(host)) byHost.set(host, { listener: other, entries: [], misdirected: true });
    }
    if (self?.spec.hostname !== undefined && !byHost.has('*')) byHost.set('*', { listener: self, entries: [], misdirected: true });
  }
  for (const l of served) {
    for (const { route, hostnames } of inputs.attachments.get(l) ?? []) {
      const compiled = inputs.compiled.get(route);
      if (!compiled) continue;
      for (const host of hostnames) {
        if (ownerOf(host, port.listeners) !== l) continue;
        const vh = hostFor(host, l);
        for (const c of compiled.rules) {
          for (const match of c.rule.matches) {
            vh.entries.push({
              route,
              routeOrder: inputs.routeOrder.get(route) ?? 0,
              rule: c.rule.index,
              ir: {
                name: `${routeName(route)}/rule/${c.rule.index}/match/${match.index}`,
                route: route.ref,
                rule: c.rule.index,
                match,
                action: c.action,
              },
            });
          }
        }
      }
    }
  }
  return [...byHost.keys()].sort(compareHostnames).map((host) => {
    const vh = byHost.get(host) as { listener: ActiveListener; entries: Entry[]; misdirected?: true };
    vh.entries.sort(
      (a, b) => comparePrecedence(a.ir.match, b.ir.match) || a.routeOrder - b.routeOrder || a.rule - b.rule || a.ir.match.index - b.ir.match.index,
    );
    const out: VirtualHost = { hostname: host, listener: listenerName(vh.listener.spec), routes: vh.entries.map((e) => e.ir) };
    if (vh.misdirected) out.misdirected = true;
    return out;
  });
}

/**
 * The proxy listeners of one Gateway, one per port. An HTTPS listener that is not programmed (no
 * usable certificate, no usable CA for the client validation asked for) gets no server, but its
 * hostname still belongs to it: the port's other servers answer it 421, never with their routes.
 */
export function buildListeners(gatewayName: string, ports: PortGroup[], inputs: ServerInputs, memo?: ListenerMemo): Listener[] {
  return ports.flatMap((group) => (memo ? memo.port(gatewayName, group, inputs) : portListener(gatewayName, group, inputs)));
}

/** Small numbers for objects, to tell in a key whether two are the very same. */
const ids = new WeakMap<object, number>();
let lastId = 0;
function idOf(o: object | undefined): number {
  if (o === undefined) return 0;
  let id = ids.get(o);
  if (id === undefined) {
    id = ++lastId;
    ids.set(o, id);
  }
  return id;
}

const portAt = (gatewayName: string, group: PortGroup) => `${gatewayName}\u0000${group.protocol === 'UDP' ? 'udp' : ''}\u0000${group.port}`;

/** What a port's proxy listener is built from: its listeners, and its routes in attachment order (route order, the one tie-break within a listener). */
function portKey(group: PortGroup, inputs: ServerInputs): string {
  const routes = group.listeners.map((l) =>
    (inputs.attachments.get(l) ?? []).map((a) => `${idOf(a.route)}:${idOf(inputs.compiled.get(a.route))}:${a.hostnames.join(',')}`).join(' '),
  );
  return `${JSON.stringify(group)}\u0000${routes.join('\u0000')}`;
}

/**
 * The proxy listener of each port remembered across resolves: a port whose listeners resolve as
 * before and whose routes are the very records and compiles of before (the read stage and the
 * compile memo keep unchanged ones) is the very Listener of before, so a route change rebuilds the
 * port it is on, and the Envoy stage can tell the others unchanged without comparing them.
 */
export class ListenerMemo {
  private held = new Map<string, { key: string; listeners: Listener[]; diagnostics: Diagnostics['list'] }>();
  private next = new Map<string, { key: string; listeners: Listener[]; diagnostics: Diagnostics['list'] }>();

  port(gatewayName: string, group: PortGroup, inputs: ServerInputs): Listener[] {
    const at = portAt(gatewayName, group);
    const key = portKey(group, inputs);
    let entry = this.held.get(at);
    if (entry?.key === key) {
      for (const d of entry.diagnostics) inputs.diags?.list.push(d);
    } else {
      const diags = new Diagnostics();
      const listeners = portListener(gatewayName, group, { ...inputs, diags });
      for (const d of diags.list) inputs.diags?.list.push(d);
      entry = { key, listeners, diagnostics: diags.list };
    }
    this.next.set(at, entry);
    return entry.listeners;
  }

  /**
   * The proxy listeners of a Gateway whose routes changed on some listeners only: the ports of the
   * others are the very Listeners built before, the rest are built again (their new findings in
   * `inputs.diags`, the old ones added to `dropped`).
   */
  rebuild(gatewayName: string, ports: PortGroup[], changed: ReadonlySet<ActiveListener>, inputs: ServerInputs, dropped: Set<Diagnostic>): Listener[] {
    return ports.flatMap((group) => {
      const at = portAt(gatewayName, group);
      const held = this.held.get(at);
      if (held && !group.listeners.some((l) => changed.has(l))) return held.listeners;
      for (const d of held?.diagnostics ?? []) dropped.add(d);
      const diags = new Diagnostics();
      const listeners = portListener(gatewayName, group, { ...inputs, diags });
      for (const d of diags.list) inputs.diags?.list.push(d);
      this.held.set(at, { key: portKey(group, inputs), listeners, diagnostics: diags.list });
      return listeners;
    });
  }

  /** After a resolve: what it did not build is forgotten. */
  settle(): void {
    this.held = this.next;
    this.next = new Map();
  }
}

function portListener(gatewayName: string, group: PortGroup, inputs: ServerInputs): Listener[] {
  const name = group.protocol === 'UDP' ? `${gatewayName}/udp/${group.port}` : `${gatewayName}/${group.port}`;
  // HTTP's hostnames and 421s are among the HTTP and HTTPS listeners of the port alone.
  const http = { ...group, listeners: group.listeners.filter((l) => l.protocol === 'HTTP' || l.protocol === 'HTTPS') };
  const servers: Server[] =
    group.protocol === 'HTTP'
      ? [{ name, virtualHosts: virtualHosts(group.listeners, group, inputs) }]
      : http.listeners.flatMap((l) => {
          if (!l.outcome.programmed.status || !l.tls) return [];
          const tls: NonNullable<Server['tls']> = { ...l.tls };
          if (l.spec.hostname) tls.hostname = l.spec.hostname;
          return [{ name: `${name}/${listenerName(l.spec)}`, tls, virtualHosts: virtualHosts([l], http, inputs) }];
        });
  const streams = group.protocol === 'HTTP' ? [] : buildStreams(name, group, inputs);
  // A served TLS, TCP or UDP listener with no route yet still has its port open (refusing every
  // connection), so that its Programmed condition is a fact; an HTTPS port without a server has none.
  const open = group.listeners.some((l) => l.protocol !== 'HTTP' && l.protocol !== 'HTTPS' && l.outcome.programmed.status);
  if (servers.length === 0 && streams.length === 0 && !open) return [];
  const listener: Listener = { name, port: group.port, protocol: group.protocol, servers };
  if (streams.length > 0 || servers.length === 0) listener.streams = streams;
  return [listener];
}
