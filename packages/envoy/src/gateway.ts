// Gateways to Envoy listeners, and which routes attach to which listener under which hostnames.
import { type Diagnostics, compare } from './diagnostics.js';
import { GATEWAY_GROUP, type Gateway, type HttpRoute, type Inputs, type Listener, type ParentRef } from './model.js';

/** One Envoy filter chain: every HTTP listener on a port, or one HTTPS listener. */
export interface Chain {
  /** Route configuration name, unique in the output. */
  name: string;
  gateway: Gateway;
  listeners: Listener[];
  tls?: Listener;
  /** Routes attached, each with the hostnames it serves on this chain. */
  attached: { route: HttpRoute; hostnames: string[] }[];
}

export interface EnvoyListener {
  name: string;
  port: number;
  chains: Chain[];
}

export interface ParentOutcome {
  parent: ParentRef;
  gateway?: Gateway;
  accepted: boolean;
  reason: string;
  message: string;
}

/** Gateway API hostname intersection of a listener hostname and a route hostname, if any. */
export function intersect(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined || listener === route) return route;
  const wild = (h: string) => h.startsWith('*.');
  const covers = (pattern: string, h: string) => wild(pattern) && h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1;
  if (covers(listener, route)) return route;
  if (covers(route, listener)) return listener;
  return undefined;
}

export function buildListeners(inputs: Inputs, diags: Diagnostics): EnvoyListener[] {
  const byPort = new Map<number, EnvoyListener>();
  const owner = new Map<number, Gateway>();
  for (const gw of inputs.gateways) {
    const converted: Listener[] = [];
    const reject = (l: Listener, code: string, reason: string, conflict: boolean, message: string, field: string) => {
      diags.error(code, message, gw.ref, `spec.listeners[${l.index}].${field}`);
      gw.rejected.push({ name: l.name, index: l.index, reason, message, conflict });
    };
    for (const l of gw.listeners) {
      const holder = owner.get(l.port);
      if (holder && holder !== gw) {
        // One Envoy serves every converted Gateway, so two Gateways cannot share a port.
        reject(
          l,
          'PortConflict',
          'PortUnavailable',
          false,
          `port ${l.port} is already used by Gateway ${holder.meta.namespace}/${holder.meta.name}; listener "${l.name}" is not converted`,
          'port',
        );
        continue;
      }
      owner.set(l.port, gw);
      let el = byPort.get(l.port);
      if (!el) {
        el = { name: `${gw.meta.namespace}/${gw.meta.name}/${l.port}`, port: l.port, chains: [] };
        byPort.set(l.port, el);
      }
      const kinds = new Set(el.chains.map((c) => (c.tls ? 'HTTPS' : 'HTTP')));
      if (kinds.size > 0 && !kinds.has(l.protocol)) {
        reject(
          l,
          'ProtocolConflict',
          'ProtocolConflict',
          true,
          `listener "${l.name}" mixes ${l.protocol} with another protocol on port ${l.port}; it is not converted`,
          'protocol',
        );
        continue;
      }
      if (l.protocol === 'HTTP') {
        const chain = el.chains[0];
        if (chain) chain.listeners.push(l);
        else el.chains.push({ name: el.name, gateway: gw, listeners: [l], attached: [] });
      } else {
        if (el.chains.some((c) => c.tls?.hostname === l.hostname)) {
          reject(
            l,
            'HostnameConflict',
            'HostnameConflict',
            true,
            `listener "${l.name}" has the same hostname as another HTTPS listener on port ${l.port}; it is not converted`,
            'hostname',
          );
          continue;
        }
        el.chains.push({ name: `${el.name}/${l.name}`, gateway: gw, listeners: [l], tls: l, attached: [] });
      }
      converted.push(l);
    }
    gw.listeners = converted;
  }
  return [...byPort.values()].sort((a, b) => a.port - b.port);
}

function namespaceAllowed(l: Listener, gw: Gateway, route: HttpRoute, inputs: Inputs): boolean {
  if (l.from === 'All') return true;
  if (l.from === 'Same') return route.meta.namespace === gw.meta.namespace;
  const labels = inputs.namespaces.get(route.meta.namespace);
  return labels !== undefined && Object.entries(l.selector ?? {}).every(([k, v]) => labels[k] === v);
}

/**
 * Attaches every route to the chains of its parents and returns, per route, the outcome for each
 * parentRef (the route's status).
 */
export interface Attachments {
  /** Per route, the outcome of each parentRef (the route's status). */
  outcomes: Map<HttpRoute, ParentOutcome[]>;
  /** Per listener, the routes attached to it (the Gateway's `attachedRoutes`). */
  routesOf: Map<Listener, Set<HttpRoute>>;
}

export function attachRoutes(inputs: Inputs, listeners: EnvoyListener[], diags: Diagnostics, others: Gateway[] = []): Attachments {
  const chainOf = new Map<Listener, Chain>();
  for (const el of listeners) for (const c of el.chains) for (const l of c.listeners) chainOf.set(l, c);
  const gateways = new Map(inputs.gateways.map((g) => [`${g.meta.namespace}/${g.meta.name}`, g]));
  const otherClass = new Map(others.map((g) => [`${g.meta.namespace}/${g.meta.name}`, g]));
  const out = new Map<HttpRoute, ParentOutcome[]>();
  const attachments = new Map<Chain, Map<HttpRoute, { route: HttpRoute; hostnames: string[] }>>();
  const routesOf = new Map<Listener, Set<HttpRoute>>();
  for (const route of inputs.routes) {
    const outcomes: ParentOutcome[] = [];
    for (const parent of route.parentRefs) {
      const path = `spec.parentRefs[${parent.index}]`;
      if (parent.group !== GATEWAY_GROUP || parent.kind !== 'Gateway') {
        diags.warning('UnsupportedParent', `parent ${parent.kind}.${parent.group} is not supported; only Gateways are`, route.ref, path);
        outcomes.push({ parent, accepted: false, reason: 'NoMatchingParent', message: `parent kind ${parent.kind} is not supported` });
        continue;
      }
      const gw = gateways.get(`${parent.namespace}/${parent.name}`);
      const other = otherClass.get(`${parent.namespace}/${parent.name}`);
      if (other) {
        // Another controller's Gateway: its status entry is that controller's to write.
        diags.info(
          'OtherGatewayClass',
          `Gateway ${parent.namespace}/${parent.name} is of class ${other.gatewayClassName}, which is not converted`,
          route.ref,
          path,
        );
        continue;
      }
      if (!gw) {
        diags.error('ParentNotFound', `Gateway ${parent.namespace}/${parent.name} not found`, route.ref, path);
        outcomes.push({ parent, accepted: false, reason: 'NoMatchingParent', message: `Gateway ${parent.namespace}/${parent.name} not found` });
        continue;
      }
      const candidates = gw.listeners.filter(
        (l) => (parent.sectionName === undefined || l.name === parent.sectionName) && (parent.port === undefined || l.port === parent.port),
      );
      if (candidates.length === 0) {
        const what = parent.sectionName !== undefined ? `listener "${parent.sectionName}"` : `a listener on port ${parent.port}`;
        diags.error('NoMatchingParent', `Gateway ${parent.namespace}/${parent.name} has no convertible ${what}`, route.ref, path);
        outcomes.push({ parent, gateway: gw, accepted: false, reason: 'NoMatchingParent', message: `no ${what} on the Gateway` });
        continue;
      }
      const allowed = candidates.filter((l) => l.allowsHttpRoute && namespaceAllowed(l, gw, route, inputs));
      if (allowed.length === 0) {
        diags.warning(
          'NotAllowedByListeners',
          `no listener of Gateway ${parent.namespace}/${parent.name} allows HTTPRoutes from namespace ${route.meta.namespace}`,
          route.ref,
          path,
        );
        outcomes.push({ parent, gateway: gw, accepted: false, reason: 'NotAllowedByListeners', message: 'no listener allows this route' });
        continue;
      }
      let any = false;
      for (const l of allowed) {
        const hostnames = route.hostnames.length === 0 ? [l.hostname ?? '*'] : route.hostnames.flatMap((h) => intersect(l.hostname, h) ?? []);
        const chain = chainOf.get(l);
        if (hostnames.length === 0 || !chain) continue;
        any = true;
        routesOf.set(l, (routesOf.get(l) ?? new Set()).add(route));
        let byRoute = attachments.get(chain);
        if (!byRoute) {
          byRoute = new Map();
          attachments.set(chain, byRoute);
        }
        const existing = byRoute.get(route);
        if (existing) existing.hostnames = [...new Set([...existing.hostnames, ...hostnames])];
        else {
          const a = { route, hostnames };
          byRoute.set(route, a);
          chain.attached.push(a);
        }
      }
      if (!any) {
        diags.warning(
          'NoMatchingListenerHostname',
          `no hostname of the route matches a listener of Gateway ${parent.namespace}/${parent.name}`,
          route.ref,
          'spec.hostnames',
        );
        outcomes.push({ parent, gateway: gw, accepted: false, reason: 'NoMatchingListenerHostname', message: 'no route hostname matches a listener hostname' });
        continue;
      }
      outcomes.push({ parent, gateway: gw, accepted: true, reason: 'Accepted', message: 'Route is accepted' });
    }
    out.set(route, outcomes);
  }
  return { outcomes: out, routesOf };
}

/** Orders hostnames as Envoy picks virtual hosts: exact names first, then longer wildcards, `*` last. */
export function compareHostnames(a: string, b: string): number {
  const rank = (h: string) => (h === '*' ? 2 : h.startsWith('*.') ? 1 : 0);
  return rank(a) - rank(b) || b.length - a.length || compare(a, b);
}
