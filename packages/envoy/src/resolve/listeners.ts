// A Gateway's listeners: which ones extlb can serve, and how they share ports. Two Gateways never
// share anything (each is its own proxy); inside one Gateway, listeners on the same port and
// protocol share one proxy listener, and the ones that cannot are Conflicted.
import type { Diagnostics } from '../diagnostics.js';
import { GATEWAY_GROUP, type GatewayRecord, type ListenerSet, type ListenerSpec, type RouteGroupKind, type RouteKind } from '../read/index.js';
import type { TlsRefs } from './certificates.js';
import type { ServerTls } from './ir.js';
import { listenerTls } from './listener-tls.js';
import { type ListenerOutcome, type Verdict, verdict } from './outcomes.js';

/** The listener protocols extlb serves. */
export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';
const PROTOCOLS: readonly string[] = ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP'];

/** The route kinds a listener of each protocol serves, in the order supportedKinds lists them. */
const KINDS: Record<ListenerProtocol, (RouteGroupKind & { kind: RouteKind })[]> = {
  HTTP: [
    { group: GATEWAY_GROUP, kind: 'HTTPRoute' },
    { group: GATEWAY_GROUP, kind: 'GRPCRoute' },
  ],
  HTTPS: [
    { group: GATEWAY_GROUP, kind: 'HTTPRoute' },
    { group: GATEWAY_GROUP, kind: 'GRPCRoute' },
  ],
  TLS: [{ group: GATEWAY_GROUP, kind: 'TLSRoute' }],
  TCP: [{ group: GATEWAY_GROUP, kind: 'TCPRoute' }],
  UDP: [{ group: GATEWAY_GROUP, kind: 'UDPRoute' }],
};

/**
 * Listeners of these protocols may share a port: HTTPS and TLS ones are told apart by SNI (one
 * Envoy listener, a filter chain each); the others have a port to themselves. UDP is another
 * socket, so a UDP listener never conflicts with a TCP-carried one on the same port number.
 */
const FAMILY: Record<ListenerProtocol, string> = { HTTP: 'http', HTTPS: 'tls', TLS: 'tls', TCP: 'tcp', UDP: 'udp' };

/**
 * A valid listener: routes attach to it. It is served (in the Envoy configuration) when its
 * outcome says Programmed, which an HTTPS (or terminating TLS) listener is not without a usable certificate.
 */
export interface ActiveListener {
  spec: ListenerSpec;
  protocol: ListenerProtocol;
  /** TLS listeners: whether the proxy terminates TLS or passes the connection through. */
  tlsMode?: 'Terminate' | 'Passthrough';
  /** The route kinds among the listener's allowed kinds that extlb serves. */
  routeKinds: RouteKind[];
  /** HTTPS and terminating TLS: what resolved of its certificates and client validation. */
  tls?: ServerTls;
  outcome: ListenerOutcome;
}

/** The listeners of one port (and transport: UDP's port numbers are its own). */
export interface PortGroup {
  port: number;
  /** HTTPS when an HTTPS listener is on the port, TLS when only TLS listeners are. */
  protocol: ListenerProtocol;
  listeners: ActiveListener[];
}

export interface GatewayListeners {
  /** Sorted by port. */
  ports: PortGroup[];
  active: ActiveListener[];
  /** Every listener, in the order of `spec.listeners`. */
  outcomes: ListenerOutcome[];
}

const ALL_RESOLVED = verdict(true, 'ResolvedRefs', 'All references are resolved');
const NO_CONFLICTS = verdict(false, 'NoConflicts', 'No conflicts');

const gk = (k: RouteGroupKind) => `${k.kind} (${k.group === '' ? 'core' : k.group})`;

/**
 * A listener's name in the IR: its own for a Gateway's, `<namespace>/<listenerset>/<name>` for a
 * ListenerSet's (a set may reuse a name of the Gateway's).
 */
export function listenerName(l: ListenerSpec): string {
  return l.owner ? `${l.owner.namespace ?? ''}/${l.owner.name}/${l.name}` : l.name;
}

function isProtocol(p: string): p is ListenerProtocol {
  return PROTOCOLS.includes(p);
}

/**
 * The route kinds a listener allows that extlb serves on its protocol, and those it cannot: a
 * listener of another protocol supports none.
 */
function routeKinds(l: ListenerSpec): { supported: RouteGroupKind[]; invalid: RouteGroupKind[] } {
  if (!isProtocol(l.protocol)) return { supported: [], invalid: l.kinds ?? [] };
  const served = KINDS[l.protocol];
  if (l.kinds === undefined || l.kinds.length === 0) return { supported: served, invalid: [] };
  const same = (a: RouteGroupKind, b: RouteGroupKind) => a.kind === b.kind && a.group === b.group;
  return { supported: served.filter((s) => l.kinds?.some((k) => same(k, s))), invalid: l.kinds.filter((k) => !served.some((s) => same(k, s))) };
}

/** A listener that is not served; it still lists the route kinds it would take. */
function rejected(l: ListenerSpec, accepted: Verdict, resolvedRefs: Verdict, conflicted: Verdict, message: string): ListenerOutcome {
  return {
    ...(l.owner ? { owner: l.owner } : {}),
    name: l.name,
    index: l.index,
    supportedKinds: routeKinds(l).supported,
    attachedRoutes: 0,
    accepted,
    programmed: verdict(false, 'Invalid', message),
    resolvedRefs,
    conflicted,
  };
}

/** Why a listener cannot be served on its own (before ports are shared), or undefined. */
function unsupported(gw: GatewayRecord, l: ListenerSpec, diags: Diagnostics): ListenerOutcome | undefined {
  const p = `spec.listeners[${l.index}]`;
  if (l.problem) {
    // Already reported (Invalid) where it was read.
    const message = `listener "${l.name}": ${l.problem.path}: ${l.problem.message}`;
    return rejected(l, verdict(false, 'Invalid', message), ALL_RESOLVED, NO_CONFLICTS, message);
  }
  if (!isProtocol(l.protocol)) {
    const message = `listener "${l.name}" uses protocol ${l.protocol}, which extlb does not convert; only ${PROTOCOLS.join(', ')} listeners are`;
    diags.warning('UnsupportedProtocol', message, gw.ref, `${p}.protocol`);
    return rejected(l, verdict(false, 'UnsupportedProtocol', message), ALL_RESOLVED, NO_CONFLICTS, message);
  }
  if (l.protocol === 'HTTPS') {
    const mode = l.tls?.mode ?? 'Terminate';
    if (mode !== 'Terminate') {
      const message = `listener "${l.name}": TLS mode ${mode} is not supported; only Terminate is`;
      diags.warning('UnsupportedValue', message, gw.ref, `${p}.tls.mode`);
      return rejected(l, verdict(false, 'UnsupportedValue', message), ALL_RESOLVED, NO_CONFLICTS, message);
    }
  }
  if (l.protocol === 'TLS') {
    if (!l.tls) {
      const message = `listener "${l.name}": a TLS listener needs tls.mode (Passthrough or Terminate)`;
      diags.error('Invalid', message, gw.ref, `${p}.tls`);
      return rejected(l, verdict(false, 'Invalid', message), ALL_RESOLVED, NO_CONFLICTS, message);
    }
    if (l.tls.mode !== 'Terminate' && l.tls.mode !== 'Passthrough') {
      const message = `listener "${l.name}": TLS mode ${l.tls.mode} is not one of Passthrough, Terminate`;
      diags.warning('UnsupportedValue', message, gw.ref, `${p}.tls.mode`);
      return rejected(l, verdict(false, 'UnsupportedValue', message), ALL_RESOLVED, NO_CONFLICTS, message);
    }
  }
  const terminates = l.protocol === 'HTTPS' || (l.protocol === 'TLS' && l.tls?.mode === 'Terminate');
  if (terminates && (l.tls?.certificateRefs.length ?? 0) === 0) {
    const message = `listener "${l.name}": a${l.protocol === 'TLS' ? ' terminating TLS' : 'n HTTPS'} listener needs at least one certificateRef`;
    diags.error('Invalid', message, gw.ref, `${p}.tls.certificateRefs`);
    return rejected(l, verdict(false, 'Invalid', message), verdict(false, 'InvalidCertificateRef', message), NO_CONFLICTS, message);
  }
  return undefined;
}

function conflict(
  gw: GatewayRecord,
  l: ListenerSpec,
  reason: 'ProtocolConflict' | 'HostnameConflict',
  message: string,
  field: string,
  diags: Diagnostics,
): ListenerOutcome {
  diags.error(reason, message, gw.ref, `spec.listeners[${l.index}].${field}`);
  // A ListenerSet's listener that conflicts with one of the Gateway (or an older set) is not accepted (GEP-1713).
  const accepted = l.owner ? verdict(false, reason, message) : verdict(true, 'Accepted', 'Listener is valid but conflicts');
  const outcome = rejected(l, accepted, ALL_RESOLVED, verdict(true, reason, message), message);
  if (l.owner) outcome.programmed = verdict(false, reason, message);
  return outcome;
}

/** ResolvedRefs of a valid listener: its TLS references, then its route kinds. */
function resolvedRefs(gw: GatewayRecord, l: ListenerSpec, invalidKinds: RouteGroupKind[], tlsProblems: Verdict[], diags: Diagnostics): Verdict {
  const problems = [...tlsProblems];
  if (invalidKinds.length > 0) {
    const served = isProtocol(l.protocol) ? KINDS[l.protocol] : [];
    const message = `extlb serves only ${served.map(gk).join(' and ')} on this listener; not supported: ${invalidKinds.map(gk).join(', ')}`;
    diags.warning('InvalidRouteKinds', message, gw.ref, `spec.listeners[${l.index}].allowedRoutes.kinds`);
    problems.push(verdict(false, 'InvalidRouteKinds', message));
  }
  const [first] = problems;
  return first ? verdict(false, first.reason, problems.map((p) => p.message).join('; ')) : ALL_RESOLVED;
}

/** A valid listener's outcome, and the TLS it is served with. */
function activeOutcome(gw: GatewayRecord, l: ListenerSpec, tlsRefs: TlsRefs, diags: Diagnostics): { outcome: ListenerOutcome; tls?: ServerTls } {
  const kinds = routeKinds(l);
  const terminates = l.protocol === 'HTTPS' || (l.protocol === 'TLS' && l.tls?.mode === 'Terminate');
  const tls = terminates ? listenerTls(gw, l, tlsRefs, diags) : undefined;
  let accepted = verdict(true, 'Accepted', 'Listener is accepted');
  let programmed = verdict(true, 'Programmed', 'Listener is in the Envoy configuration');
  if (tls?.noValidCa !== undefined) {
    accepted = verdict(false, 'NoValidCACertificate', tls.noValidCa);
    programmed = verdict(false, 'Invalid', tls.noValidCa);
  } else if (tls && tls.certificates.length === 0) {
    programmed = verdict(false, 'Invalid', 'no certificateRef of the listener can be used, so it is not served');
  }
  const outcome: ListenerOutcome = {
    ...(l.owner ? { owner: l.owner } : {}),
    name: l.name,
    index: l.index,
    supportedKinds: kinds.supported,
    attachedRoutes: 0,
    accepted,
    programmed,
    resolvedRefs: resolvedRefs(gw, l, kinds.invalid, tls?.problems ?? [], diags),
    conflicted: NO_CONFLICTS,
  };
  if (!tls) return { outcome };
  const served: ServerTls = { certificates: tls.certificates };
  if (tls.clientValidation) served.clientValidation = tls.clientValidation;
  return { outcome, tls: served };
}

/**
 * A ListenerSet as the Gateway its listeners join: its own reference and namespace (its
 * certificates are its references, under ReferenceGrants to ListenerSets), the Gateway's TLS settings.
 */
function asGateway(gw: GatewayRecord, set: ListenerSet): GatewayRecord {
  return { ...gw, ref: set.ref, meta: set.meta, listeners: set.listeners };
}

/**
 * The listeners of a Gateway and of the ListenerSets it accepts (oldest first): the Gateway's own
 * come first, so on a conflict they win, and an older set wins over a newer one.
 */
export function resolveListeners(gw: GatewayRecord, tlsRefs: TlsRefs, diags: Diagnostics, sets: readonly ListenerSet[] = []): GatewayListeners {
  const byPort = new Map<string, PortGroup & { family: string }>();
  const active: ActiveListener[] = [];
  const outcomes: ListenerOutcome[] = [];
  const all: [GatewayRecord, ListenerSpec][] = [...gw.listeners.map((l): [GatewayRecord, ListenerSpec] => [gw, l])];
  for (const set of sets) {
    const as = asGateway(gw, set);
    for (const l of set.listeners) all.push([as, l]);
  }
  for (const [owner, l] of all) {
    const gw = owner;
    const bad = unsupported(gw, l, diags);
    if (bad) {
      outcomes.push(bad);
      continue;
    }
    const protocol = l.protocol as ListenerProtocol;
    const portKey = `${protocol === 'UDP' ? 'udp' : 'tcp'}/${l.port}`;
    const p = `spec.listeners[${l.index}]`;
    if (l.namespaces.hasExpressions) {
      diags.warning(
        'UnsupportedValue',
        'namespace selectors with matchExpressions are not supported; only matchLabels is read',
        gw.ref,
        `${p}.allowedRoutes.namespaces.selector.matchExpressions`,
      );
    }
    let group = byPort.get(portKey);
    if (group && group.family !== FAMILY[protocol]) {
      outcomes.push(
        conflict(
          gw,
          l,
          'ProtocolConflict',
          `listener "${l.name}" mixes ${protocol} with another protocol on port ${l.port}; it is not converted`,
          'protocol',
          diags,
        ),
      );
      continue;
    }
    if (group?.listeners.some((o) => o.spec.hostname === l.hostname)) {
      const message =
        l.hostname === undefined && (protocol === 'TCP' || protocol === 'UDP')
          ? `listener "${l.name}": port ${l.port} already has a ${protocol} listener, and ${protocol} has no hostname to tell them apart; it is not converted`
          : `listener "${l.name}" has the same hostname as another ${group.protocol === 'HTTP' ? 'HTTP' : group.family.toUpperCase()} listener on port ${l.port}; it is not converted`;
      outcomes.push(conflict(gw, l, 'HostnameConflict', message, 'hostname', diags));
      continue;
    }
    if (!group) {
      group = { port: l.port, protocol, family: FAMILY[protocol], listeners: [] };
      byPort.set(portKey, group);
    }
    if (protocol === 'HTTPS') group.protocol = 'HTTPS';
    const { outcome, tls } = activeOutcome(gw, l, tlsRefs, diags);
    const a: ActiveListener = { spec: l, protocol, routeKinds: outcome.supportedKinds.map((k) => k.kind as RouteKind), outcome };
    if (protocol === 'TLS') a.tlsMode = l.tls?.mode === 'Terminate' ? 'Terminate' : 'Passthrough';
    if (tls) a.tls = tls;
    group.listeners.push(a);
    active.push(a);
    outcomes.push(outcome);
  }
  // The Gateway's own in spec order; each set's after them, in its own order.
  const rank = new Map(sets.map((set, i) => [set.ref, i + 1]));
  outcomes.sort((a, b) => (a.owner ? (rank.get(a.owner) ?? 0) : 0) - (b.owner ? (rank.get(b.owner) ?? 0) : 0) || a.index - b.index);
  const ports = [...byPort.values()].map(({ family: _, ...group }): PortGroup => group);
  // By port; TCP-carried before UDP on the same number.
  return { ports: ports.sort((a, b) => a.port - b.port || Number(a.protocol === 'UDP') - Number(b.protocol === 'UDP')), active, outcomes };
}
