// The status an object should get: what the converter says for this controller, merged into what
// the object has. Entries other controllers own (route parents, policy ancestors, pool parents)
// stay as they are; a condition whose status did not change keeps its lastTransitionTime, so an
// unchanged object is never written and a condition's age stays true.
import type { JsonObject } from '../cluster/api.js';

/** Status lists in which each controller owns its own entries, by kind. */
const SHARED_LISTS: Record<string, 'parents' | 'ancestors'> = {
  HTTPRoute: 'parents',
  GRPCRoute: 'parents',
  TLSRoute: 'parents',
  TCPRoute: 'parents',
  UDPRoute: 'parents',
  BackendPool: 'parents',
  InferencePool: 'parents',
  LoadBalancerPolicy: 'ancestors',
  BackendTLSPolicy: 'ancestors',
};

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** Keeps the current lastTransitionTime of every condition whose type and status are unchanged. */
function keepTransitionTimes(desired: unknown, current: unknown): unknown {
  const before = new Map(list(current).map((c) => [c.type, c]));
  return list(desired).map((c) => {
    const old = before.get(c.type);
    return old && old.status === c.status && old.lastTransitionTime !== undefined ? { ...c, lastTransitionTime: old.lastTransitionTime } : c;
  });
}

/** The same for a list of entries that each have conditions, matched by a key. */
function keepEntryTimes(desired: JsonObject[], current: JsonObject[], key: (e: JsonObject) => string): JsonObject[] {
  const before = new Map(current.map((e) => [key(e), e]));
  return desired.map((e) => {
    const old = before.get(key(e));
    return old ? { ...e, conditions: keepTransitionTimes(e.conditions, old.conditions) } : e;
  });
}

const refKey = (field: 'parentRef' | 'ancestorRef') => (e: JsonObject) => `${String(e.controllerName)}\u0000${canonical(e[field])}`;

/** JSON with sorted keys: equal values, equal text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function mergeStatus(kind: string, current: JsonObject | undefined, desired: JsonObject, controllerName: string): JsonObject {
  const shared = SHARED_LISTS[kind];
  if (shared) {
    const field = shared === 'parents' ? 'parentRef' : 'ancestorRef';
    const others = list(current?.[shared]).filter((e) => e.controllerName !== controllerName);
    const mine = keepEntryTimes(list(desired[shared]), list(current?.[shared]), refKey(field));
    return { ...current, ...desired, [shared]: [...others, ...mine] };
  }
  // Gateways and GatewayClasses: the whole status is this controller's.
  const out: JsonObject = { ...desired };
  if (desired.conditions !== undefined) out.conditions = keepTransitionTimes(desired.conditions, current?.conditions);
  if (Array.isArray(desired.listeners)) {
    out.listeners = keepEntryTimes(list(desired.listeners), list(current?.listeners), (l) => String(l.name));
  }
  return out;
}

/**
 * Equal as JSON: key order and keys whose value is undefined do not count. Compared in place, not
 * as canonical text: the leader compares every object's status on each full recompute (11,000 in
 * the controller bench), and building their text was most of that.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const defined = (o: JsonObject) => Object.keys(o).filter((k) => o[k] !== undefined);
  const keys = defined(a);
  return keys.length === defined(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

export function sameStatus(a: unknown, b: unknown): boolean {
  return sameJson(a ?? {}, b ?? {});
}
