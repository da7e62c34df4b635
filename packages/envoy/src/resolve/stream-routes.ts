// TLSRoute, TCPRoute and UDPRoute rules to weighted destinations. They forward connections (or
// datagrams) whole, so nothing of HTTP applies — in particular not an External load balancer,
// which asks its picker from an HTTP filter (ext_proc): such a backend is refused with a route
// condition, never served round robin instead.
import type { Diagnostics } from '../diagnostics.js';
import type { RouteRecord } from '../read/index.js';
import type { Backends } from './backends.js';
import type { Backend, Destination, Forward } from './ir.js';
import type { RefProblem } from './outcomes.js';
import type { CompiledRoute, CompiledRule } from './routes.js';

/** Why a backend cannot take a stream route's connections, or undefined. */
function httpOnly(route: RouteRecord, b: Backend): string | undefined {
  if (b.lb.type !== 'External') return undefined;
  const from = b.lbFrom === 'default' ? 'its load balancer' : `${b.lbFrom.kind} ${b.lbFrom.namespace ?? ''}/${b.lbFrom.name}`;
  return `${b.kind} ${b.ref.namespace ?? ''}/${b.ref.name} is load-balanced External by ${from}, which needs HTTP (the picker is asked by an HTTP filter, ext_proc); a ${route.kind} forwards connections whole and cannot use it: give the backend a proxy algorithm (RoundRobin, LeastRequest, RingHash, Maglev, Random) for ${route.kind}s`;
}

export function compileStreamRoute(route: RouteRecord, backends: Backends, diags: Diagnostics): CompiledRoute {
  const refProblems: RefProblem[] = [];
  const httpOnlyBackends: Backend[] = [];
  const rules = route.rules.map((rule): CompiledRule => {
    const used: Backend[] = [];
    const destinations = rule.backendRefs.map((ref): Destination => {
      const res = backends.resolve(route.ref, ref);
      if (!res.ok) {
        refProblems.push({ ...res.problem, path: ref.path });
        diags.error(res.problem.reason, res.problem.message, route.ref, ref.path);
        return { weight: ref.weight, invalid: 'the backendRef cannot be resolved' };
      }
      const why = httpOnly(route, res.backend);
      if (why) {
        refProblems.push({ reason: 'UnsupportedProtocol', message: why, path: ref.path });
        diags.error('UnsupportedProtocol', why, route.ref, ref.path);
        httpOnlyBackends.push(res.backend);
        return { weight: ref.weight, invalid: 'its load balancer needs HTTP' };
      }
      used.push(res.backend);
      return { backend: res.backend.key, weight: ref.weight };
    });
    const forward: Forward = { type: 'forward', destinations, mirrors: [], timeouts: {} };
    return { rule, action: forward, backends: used };
  });
  const compiled: CompiledRoute = { route, rules, refProblems, problems: [] };
  if (httpOnlyBackends.length > 0) compiled.httpOnly = httpOnlyBackends;
  return compiled;
}
