// The streams of a port: where a TLS, TCP or UDP listener sends whole connections (datagrams).
// A TLS listener's routes are chosen by SNI: each name belongs to the most specific listener of
// the port whose hostname contains it (an HTTPS listener's own hostname is its server's), and on
// that listener to the oldest route that asks for it. A TCP or UDP listener has no SNI: its oldest
// route takes every connection, and the newer ones, attached too, are told they are shadowed.
import type { Diagnostics } from '../diagnostics.js';
import type { RouteRecord } from '../read/index.js';
import type { Attachment } from './attach.js';
import { compareListenerHostnames, contains } from './hostnames.js';
import type { Destination, Stream } from './ir.js';
import { type ActiveListener, type PortGroup, listenerName } from './listeners.js';
import type { CompiledRoute } from './routes.js';

export interface StreamInputs {
  attachments: Map<ActiveListener, Attachment[]>;
  compiled: Map<RouteRecord, CompiledRoute>;
  diags?: Diagnostics;
}

/** The listener of the port a name belongs to: the most specific one whose hostname contains it. */
function ownerOf(name: string, listeners: ActiveListener[]): ActiveListener | undefined {
  let best: ActiveListener | undefined;
  for (const l of listeners) {
    if (!contains(l.spec.hostname, name)) continue;
    if (!best || compareListenerHostnames(l.spec.hostname, best.spec.hostname) < 0) best = l;
  }
  return best;
}

function destinations(route: RouteRecord, inputs: StreamInputs): Destination[] {
  const [rule] = inputs.compiled.get(route)?.rules ?? [];
  return rule?.action.type === 'forward' ? rule.action.destinations : [];
}

function kindName(route: RouteRecord): string {
  return `${route.kind.toLowerCase()}/${route.meta.namespace}/${route.meta.name}`;
}

/** The streams of one port, given the name of its proxy listener. */
export function buildStreams(portName: string, group: PortGroup, inputs: StreamInputs): Stream[] {
  const out: Stream[] = [];
  const streamOf = (l: ActiveListener, route: RouteRecord): Stream => ({
    name: `${portName}/${listenerName(l.spec)}/${kindName(route)}`,
    listener: listenerName(l.spec),
    route: route.ref,
    destinations: destinations(route, inputs),
  });
  if (group.protocol === 'TCP' || group.protocol === 'UDP') {
    for (const l of group.listeners) {
      if (!l.outcome.programmed.status) continue;
      const [first, ...newer] = inputs.attachments.get(l) ?? [];
      if (!first) continue;
      out.push(streamOf(l, first.route));
      for (const { route } of newer)
        inputs.diags?.warning(
          'RouteShadowed',
          `listener "${l.spec.name}" forwards every connection to ${first.route.kind} ${first.route.meta.namespace}/${first.route.meta.name}, which is older (or first by name); this route is attached but gets none`,
          route.ref,
          'spec.parentRefs',
        );
    }
    return out;
  }
  // TLS (and HTTPS) on one port: the SNI names of the HTTPS servers are theirs.
  const claimed = new Set(group.listeners.filter((l) => l.protocol === 'HTTPS').map((l) => l.spec.hostname ?? '*'));
  for (const l of group.listeners) {
    if (l.protocol !== 'TLS' || !l.outcome.programmed.status) continue;
    if (l.tlsMode === 'Terminate' && !l.tls) continue;
    for (const { route, hostnames } of inputs.attachments.get(l) ?? []) {
      const names = hostnames.filter((h) => ownerOf(h, group.listeners) === l);
      const taken = names.filter((h) => claimed.has(h));
      const own = names.filter((h) => !claimed.has(h));
      for (const h of own) claimed.add(h);
      if (taken.length > 0)
        inputs.diags?.warning(
          'RouteShadowed',
          `on listener "${l.spec.name}" the SNI names ${taken.join(', ')} are already served by an older route or another listener of port ${group.port}; this route does not get them`,
          route.ref,
          'spec.hostnames',
        );
      if (own.length === 0) continue;
      const stream: Stream = { ...streamOf(l, route), serverNames: own };
      if (l.tlsMode === 'Terminate' && l.tls) stream.tls = l.tls;
      out.push(stream);
    }
  }
  return out;
}
