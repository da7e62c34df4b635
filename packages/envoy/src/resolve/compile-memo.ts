// Route compilation remembered across resolves. A route's rules compile from the route alone and
// from what its backendRefs resolve to, so a route whose record is the one compiled before (the
// read stage shares unchanged records) and whose references resolve exactly as they did then
// compiles to what it did. The references are resolved again, in route order as a compile would,
// so the backends' own findings and state are those of a full compile.
import { type Diagnostic, Diagnostics } from '../diagnostics.js';
import type { BackendRef, RouteRecord } from '../read/index.js';
import type { Backends, Resolution } from './backends.js';
import type { Backend } from './ir.js';
import type { CompiledRoute } from './routes.js';

interface Compiled {
  compiled: CompiledRoute;
  /** Every reference the compile resolved, in order, with the resolution's JSON. */
  calls: { ref: BackendRef; json: string }[];
  diagnostics: readonly Diagnostic[];
}

/**
 * A resolution as JSON. A backend is one object per resolve, shared by every route using it, so
 * its JSON is made once; the one change a resolve makes to a backend after making it (a GRPCRoute
 * turning on HTTP/2) is part of the key.
 */
const backendJson = new WeakMap<Backend, { h2c: boolean; json: string }>();
function jsonOf(res: Resolution): string {
  if (!res.ok) return `!${JSON.stringify(res.problem)}`;
  const b = res.backend;
  let held = backendJson.get(b);
  if (held?.h2c !== b.h2c) {
    held = { h2c: b.h2c, json: JSON.stringify(b) };
    backendJson.set(b, held);
  }
  return held.json;
}

export class CompileMemo {
  private byRoute = new WeakMap<RouteRecord, Compiled>();

  compile(
    route: RouteRecord,
    backends: Backends,
    diags: Diagnostics,
    compile: (route: RouteRecord, backends: Backends, diags: Diagnostics) => CompiledRoute,
  ): CompiledRoute {
    const held = this.byRoute.get(route);
    if (held) {
      const again = this.replay(route, held, backends);
      if (again) {
        for (const d of held.diagnostics) diags.list.push(d);
        return again;
      }
    }
    const calls: Compiled['calls'] = [];
    const recording = Object.create(backends) as Backends;
    recording.resolve = (ref, backendRef) => {
      const res = backends.resolve(ref, backendRef);
      calls.push({ ref: backendRef, json: jsonOf(res) });
      return res;
    };
    const own = new Diagnostics();
    const compiled = compile(route, recording, own);
    for (const d of own.list) diags.list.push(d);
    this.byRoute.set(route, { compiled, calls, diagnostics: own.list });
    return compiled;
  }

  /** The compile held, on this resolve's backends; undefined when a reference resolves otherwise now. */
  private replay(route: RouteRecord, held: Compiled, backends: Backends): CompiledRoute | undefined {
    const now = new Map<string, Backend>();
    const results: Resolution[] = [];
    for (const call of held.calls) results.push(backends.resolve(route.ref, call.ref));
    // All of them first: a compile would have resolved every reference whatever the others gave.
    for (let i = 0; i < results.length; i++) {
      const res = results[i] as Resolution;
      if (jsonOf(res) !== held.calls[i]?.json) return undefined;
      if (res.ok) now.set(res.backend.key, res.backend);
    }
    const rebind = (list: Backend[]) => list.map((b) => now.get(b.key) ?? b);
    const c = held.compiled;
    const out: CompiledRoute = { ...c, rules: c.rules.map((r) => ({ ...r, backends: rebind(r.backends) })) };
    if (c.httpOnly) out.httpOnly = rebind(c.httpOnly);
    return out;
  }
}
