// TLSRoute, TCPRoute and UDPRoute as written. They read into the same record as an HTTPRoute, so
// that attachment, backends and statuses are shared: a rule of theirs has backendRefs and no
// matches (it forwards whole connections or datagrams); a TLSRoute's hostnames are SNI names.
import type { JsonObject } from '../json.js';
import { readBackendRef, readRouteOf } from './gateway-api.js';
import type { Reader } from './reader.js';
import type { RouteRecord, Meta, Rule, StreamRouteKind } from './records.js';

function readRule(r: Reader, raw: unknown, path: string, index: number, namespace: string): Rule {
  const o: JsonObject = r.object(raw, path) ?? {};
  const rule: Rule = {
    index,
    matches: [],
    filters: [],
    // Weights and filters are as on an HTTPRoute; these kinds' backendRefs have no filters.
    backendRefs: r.array(o.backendRefs, `${path}.backendRefs`).flatMap((b, i) => readBackendRef(r, b, `${path}.backendRefs[${i}]`, i, namespace, false) ?? []),
    timeouts: {},
    sessionPersistence: false,
  };
  const name = r.string(o.name, `${path}.name`);
  if (name) rule.name = name;
  return rule;
}

export function readStreamRoute(kind: StreamRouteKind, r: Reader, spec: JsonObject, meta: Meta): RouteRecord {
  if (kind !== 'TLSRoute' && spec.hostnames !== undefined) r.invalid('spec.hostnames', `a ${kind} has no hostnames`);
  const route = readRouteOf(kind, readRule, r, kind === 'TLSRoute' ? spec : { ...spec, hostnames: undefined }, meta);
  if (kind === 'TLSRoute' && r.array(spec.hostnames, 'spec.hostnames').length === 0 && route.problems.every((p) => p.path !== 'spec.hostnames')) {
    r.invalid('spec.hostnames', 'Required value: a TLSRoute names at least one hostname');
  }
  return route;
}
