// A Gateway's listeners: which ones extlb can serve, and how they share ports. Two Gateways never
// share anything (each is its own proxy); inside one Gateway, listeners on the same port and
// protocol share one proxy listener, and the ones that cannot are Conflicted.
import type { Diagnostics } from '../diagnostics.js';
import { GATEWAY_GROUP, type Gateway, type ListenerSpec, type RouteGroupKind, type RouteKind } from '../read/index.js';
import type { TlsRefs } from './certificates.js';
import type { ServerTls } from './ir.js';
import { listenerTls } from './listener-tls.js';
import { type ListenerOutcome, type Verdict, verdict } from './outcomes.js';

/** The route kinds an HTTP or HTTPS listener serves, in the order supportedKinds lists them. */
const ROUTE_KINDS: (RouteGroupKind & { kind: RouteKind })[] = [
  { group: GATEWAY_GROUP, kind: 'HTTPRoute' },
  { group: GATEWAY_GROUP, kind: 'GRPCRoute' },
];

/**
 * A valid listener: routes attach to it. It is served (in the Envoy configuration) when its
 * outcome says Programmed, which an HTTPS listener is not without a usable certificate.
 */
export interface ActiveListener {
  spec: ListenerSpec;
  protocol: 'HTTP' | 'HTTPS';
  /** The route kinds among the listener's allowed kinds that extlb serves. */
  routeKinds: RouteKind[];
  /** HTTPS: what resolved of its certificates and client validation. */
  tls?: ServerTls;
  outcome: ListenerOutcome;
}

/** The listeners of one port. */
export interface PortGroup {
  port: number;
  protocol: 'HTTP' | 'HTTPS';
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
 * The route kinds a listener allows that extlb serves on its protocol, and those it cannot: a
 * listener of another protocol supports none.
 */
function routeKinds(l: ListenerSpec): { supported: RouteGroupKind[]; invalid: RouteGroupKind[] } {
  if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') return { supported: [], invalid: l.kinds ?? [] };
  if (l.kinds === undefined || l.kinds.length === 0) return { supported: ROUTE_KINDS, invalid: [] };
  const same = (a: RouteGroupKind, b: RouteGroupKind) => a.kind === b.kind && a.group === b.group;
  return { supported: ROUTE_KINDS.filter((s) => l.kinds?.some((k) => same(k, s))), invalid: l.kinds.filter((k) => !ROUTE_KINDS.some((s) => same(k, s))) };
}

/** A listener that is not served; it still lists the route kinds it would take. */
function rejected(l: ListenerSpec, accepted: Verdict, resolvedRefs: Verdict, conflicted: Verdict, message: string): ListenerOutcome {
  return {
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
function unsupported(gw: Gateway, l: ListenerSpec, diags: Diagnostics): ListenerOutcome | undefined {
  const p = `spec.listeners[${l.index}]`;
  if (l.problem) {
    // Already reported (Invalid) where it was read.
    const message = `listener "${l.name}": ${l.problem.path}: ${l.problem.message}`;
    return rejected(l, verdict(false, 'Invalid', message), ALL_RESOLVED, NO_CONFLICTS, message);
  }
  if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') {
    const message = `listener "${l.name}" uses protocol ${l.protocol}, which extlb does not convert; only HTTP and HTTPS listeners are`;
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
    if ((l.tls?.certificateRefs.length ?? 0) === 0) {
      const message = `listener "${l.name}": an HTTPS listener needs at least one certificateRef`;
      diags.error('Invalid', message, gw.ref, `${p}.tls.certificateRefs`);
      return rejected(l, verdict(false, 'Invalid', message), verdict(false, 'InvalidCertificateRef', message), NO_CONFLICTS, message);
    }
  }
  return undefined;
}

function conflict(
  gw: Gateway,
  l: ListenerSpec,
  reason: 'ProtocolConflict' | 'HostnameConflict',
  message: string,
  field: string,
  diags: Diagnostics,
): ListenerOutcome {
  diags.error(reason, message, gw.ref, `spec.listeners[${l.index}].${field}`);
  return rejected(l, verdict(true, 'Accepted', 'Listener is valid but conflicts'), ALL_RESOLVED, verdict(true, reason, message), message);
}

/** ResolvedRefs of a valid listener: its TLS references, then its route kinds. */
function resolvedRefs(gw: Gateway, l: ListenerSpec, invalidKinds: RouteGroupKind[], tlsProblems: Verdict[], diags: Diagnostics): Verdict {
  const problems = [...tlsProblems];
  if (invalidKinds.length > 0) {
    const message = `extlb serves only ${ROUTE_KINDS.map(gk).join(' and ')} on this listener; not supported: ${invalidKinds.map(gk).join(', ')}`;
    diags.warning('InvalidRouteKinds', message, gw.ref, `spec.listeners[${l.index}].allowedRoutes.kinds`);
    problems.push(verdict(false, 'InvalidRouteKinds', message));
  }
  const [first] = problems;
  return first ? verdict(false, first.reason, problems.map((p) => p.message).join('; ')) : ALL_RESOLVED;
}

/** A valid listener's outcome, and the TLS it is served with. */
function activeOutcome(gw: Gateway, l: ListenerSpec, tlsRefs: TlsRefs, diags: Diagnostics): { outcome: ListenerOutcome; tls?: ServerTls } {
  const kinds = routeKinds(l);
  const tls = l.protocol === 'HTTPS' ? listenerTls(gw, l, tlsRefs, diags) : undefined;
  let accepted = verdict(true, 'Accepted', 'Listener is accepted');
  let programmed = verdict(true, 'Programmed', 'Listener is in the Envoy configuration');
  if (tls?.noValidCa !== undefined) {
    accepted = verdict(false, 'NoValidCACertificate', tls.noValidCa);
    programmed = verdict(false, 'Invalid', tls.noValidCa);
  } else if (tls && tls.certificates.length === 0) {
    programmed = verdict(false, 'Invalid', 'no certificateRef of the listener can be used, so it is not served');
  }
  const outcome: ListenerOutcome = {
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

export function resolveListeners(gw: Gateway, tlsRefs: TlsRefs, diags: Diagnostics): GatewayListeners {
  const byPort = new Map<number, PortGroup>();
  const active: ActiveListener[] = [];
  const outcomes: ListenerOutcome[] = [];
  for (const l of gw.listeners) {
    const bad = unsupported(gw, l, diags);
    if (bad) {
      outcomes.push(bad);
      continue;
    }
    const protocol = l.protocol as 'HTTP' | 'HTTPS';
    const p = `spec.listeners[${l.index}]`;
    if (l.namespaces.hasExpressions) {
      diags.warning(
        'UnsupportedValue',
        'namespace selectors with matchExpressions are not supported; only matchLabels is read',
        gw.ref,
        `${p}.allowedRoutes.namespaces.selector.matchExpressions`,
      );
    }
    let group = byPort.get(l.port);
    if (group && group.protocol !== protocol) {
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
      const message = `listener "${l.name}" has the same hostname as another ${protocol} listener on port ${l.port}; it is not converted`;
      outcomes.push(conflict(gw, l, 'HostnameConflict', message, 'hostname', diags));
      continue;
    }
    if (!group) {
      group = { port: l.port, protocol, listeners: [] };
      byPort.set(l.port, group);
    }
    const { outcome, tls } = activeOutcome(gw, l, tlsRefs, diags);
    const a: ActiveListener = { spec: l, protocol, routeKinds: outcome.supportedKinds.map((k) => k.kind as RouteKind), outcome };
    if (tls) a.tls = tls;
    group.listeners.push(a);
    active.push(a);
    outcomes.push(outcome);
  }
  outcomes.sort((a, b) => a.index - b.index);
  return { ports: [...byPort.values()].sort((a, b) => a.port - b.port), active, outcomes };
}
