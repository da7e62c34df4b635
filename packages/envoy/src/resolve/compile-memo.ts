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
  /** Every reference the compile resolved, in order, with the resolution's JSON and backend. */
  calls: { ref: BackendRef; json: string; backend?: Backend }[];
  diagnostics: readonly Diagnostic[];
  /** The Backends its references last resolved on as they did then. */
  on: Backends;
}

/**
 * A resolution as JSON. A backend is one object per resolve, shared by every route using it, so
 * its JSON is made once; the one change a resolve makes to a backend after making it (a GRPCRoute
 * turning on HTTP/2) is part of the key.
 */
const backendJson = new WeakMap<Backend, { h2c: boolean; json: string }>();
export function backendJsonOf(b: Backend): string {
  let held = backendJson.get(b);
  if (held?.h2c !== b.h2c) {
    held = { h2c: b.h2c, json: JSON.stringify(b) };
    backendJson.set(b, held);
  }
  return held.json;
}

function jsonOf(res: Resolution): string {
  return res.ok ? backendJsonOf(res.backend) : `!${JSON.stringify(res.problem)}`;
}

export class CompileMemo {
  private byRoute = new WeakMap<RouteRecord, Compiled>();
  /** The routes of this resolve given their compile of before as it was: see settle(). */
  private reused: { route: RouteRecord; compiled: CompiledRoute }[] = [];

  compile(
    route: RouteRecord,
    backends: Backends,
    diags: Diagnostics,
    compile: (route: RouteRecord, backends: Backends, diags: Diagnostics) => CompiledRoute,
  ): CompiledRoute {
    const held = this.byRoute.get(route);
    if (held) {
      if (this.replay(route, held, backends)) {
        held.on = backends;
        for (const d of held.diagnostics) diags.list.push(d);
        this.reused.push({ route, compiled: held.compiled });
        return held.compiled;
      }
    }
    const calls: Compiled['calls'] = [];
    const recording = Object.create(backends) as Backends;
    recording.resolve = (ref, backendRef) => {
      const res = backends.resolve(ref, backendRef);
      calls.push(res.ok ? { ref: backendRef, json: jsonOf(res), backend: res.backend } : { ref: backendRef, json: jsonOf(res) });
      return res;
    };
    const own = new Diagnostics();
    const compiled = compile(route, recording, own);
    for (const d of own.list) diags.list.push(d);
    this.byRoute.set(route, { compiled, calls, diagnostics: own.list, on: backends });
    return compiled;
  }

  /** What the route's last compile reported, and the keys of the backends its references resolved to. */
  heldFor(route: RouteRecord): { diagnostics: readonly Diagnostic[]; backendKeys: Set<string> } | undefined {
    const held = this.byRoute.get(route);
    if (!held) return undefined;
    const backendKeys = new Set<string>();
    for (const call of held.calls) if (call.backend) backendKeys.add(call.backend.key);
    return { diagnostics: held.diagnostics, backendKeys };
  }

  /**
   * Once every route of a resolve is compiled: a route given its compile of before keeps that very
   * object (so what is built from it can be kept too) while its backends equal this resolve's —
   * they did when resolved, and a later GRPCRoute may since have turned one to HTTP/2 — else it
   * gets a copy on this resolve's backends.
   */
  settle(compiled: Map<RouteRecord, CompiledRoute>, backends: Backends): void {
    for (const { route, compiled: c } of this.reused) {
      if (compiled.get(route) !== c) continue;
      const differs = (b: Backend) => backends.backend(b.key)?.h2c !== b.h2c;
      if (!c.rules.some((r) => r.backends.some(differs)) && !c.httpOnly?.some(differs)) continue;
      const rebind = (list: Backend[]) => list.map((b) => backends.backend(b.key) ?? b);
      const out: CompiledRoute = { ...c, rules: c.rules.map((r) => ({ ...r, backends: rebind(r.backends) })) };
      if (c.httpOnly) out.httpOnly = rebind(c.httpOnly);
      compiled.set(route, out);
    }
    this.reused = [];
  }

  /**
   * Whether every reference of a held compile resolves as it did then. On the Backends they last
   * resolved on, each resolution is the one it keeps: they are only counted as resolved again.
   */
  private replay(route: RouteRecord, held: Compiled, backends: Backends): boolean {
    if (held.on === backends) {
      for (const call of held.calls) if (call.backend) backends.use(call.backend);
      return true;
    }
    let same = true;
    // Every one: a compile would have resolved every reference whatever the others gave.
    for (const call of held.calls) if (jsonOf(backends.resolve(route.ref, call.ref)) !== call.json) same = false;
    return same;
  }
}
