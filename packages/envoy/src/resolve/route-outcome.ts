// A route's own outcome: its parents' verdicts, and what of it is invalid.
import { compare, sameJson } from '../json.js';
import { type RouteRecord, isStreamRoute } from '../read/index.js';
import type { ParentOutcome, RouteOutcome } from './outcomes.js';
import type { CompiledRoute } from './routes.js';

/** The Services (`namespace/name`) a route references, resolved or not: made once per route record. */
const servicesOf = new WeakMap<RouteRecord, readonly string[]>();
export function routeServices(route: RouteRecord): readonly string[] {
  let out = servicesOf.get(route);
  if (!out) {
    const services = new Set<string>();
    for (const rule of route.rules) {
      const filters = [...rule.filters, ...rule.backendRefs.flatMap((ref) => ref.filters)];
      const mirrors = filters.flatMap((f) => (f.type === 'RequestMirror' ? [f.mirror.backendRef] : []));
      for (const ref of [...rule.backendRefs, ...mirrors]) if (ref.group === '' && ref.kind === 'Service') services.add(`${ref.namespace}/${ref.name}`);
    }
    out = [...services];
    servicesOf.set(route, out);
  }
  return out;
}

/**
 * A route's outcome. With `held`, a route whose record and compile are the ones of before and
 * whose parents came out as before keeps that very outcome, so what is made of it (its status) is
 * known unchanged without comparing.
 */
export function routeOutcome(
  route: RouteRecord,
  c: CompiledRoute,
  parents: ParentOutcome[],
  held?: WeakMap<RouteRecord, { compiled: CompiledRoute; outcome: RouteOutcome }>,
): RouteOutcome {
  const last = held?.get(route);
  if (last?.compiled === c && sameJson(last.outcome.parents, parents)) return last.outcome;
  const invalid = [...route.problems, ...c.problems].sort((a, b) => compare(a.path, b.path));
  const outcome: RouteOutcome = {
    route,
    parents,
    refProblems: c.refProblems,
    invalid,
    // A stream route's rules have no matches: only a TLSRoute left without a usable hostname serves nothing.
    noRuleLeft: isStreamRoute(route.kind)
      ? route.kind === 'TLSRoute' && route.hostnames.length === 0
      : invalid.length > 0 && route.rules.every((r) => r.matches.length === 0),
  };
  held?.set(route, { compiled: c, outcome });
  return outcome;
}
