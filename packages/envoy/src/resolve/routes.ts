// HTTPRoute and GRPCRoute rules to actions: filters, weighted destinations, mirrors, timeouts and
// retry, as Gateway API defines them. The result does not depend on which listener serves the route.
import type { Diagnostics } from '../diagnostics.js';
import type { BackendRef, Filter, HttpRoute, Problem, Rule } from '../read/index.js';
import { type Backends, usesPicker } from './backends.js';
import type { Action, Backend, Destination, Forward, Mirror } from './ir.js';
import type { RefProblem } from './outcomes.js';

export interface CompiledRule {
  rule: Rule;
  action: Action;
  /** Every backend the rule sends to or mirrors to, valid or not. */
  backends: Backend[];
}

export interface CompiledRoute {
  route: HttpRoute;
  rules: CompiledRule[];
  refProblems: RefProblem[];
  /** Values that cannot be used, found while compiling (the read stage's are on the route). */
  problems: Problem[];
}

/** Compiles one route at a time, keeping its diagnostics and status problems together. */
class RouteCompiler {
  readonly refProblems: RefProblem[] = [];
  readonly problems: Problem[] = [];

  constructor(
    private readonly route: HttpRoute,
    private readonly backends: Backends,
    private readonly diags: Diagnostics,
  ) {}

  private invalid(path: string, message: string): void {
    this.problems.push({ path, message });
    this.diags.error('Invalid', message, this.route.ref, path);
  }

  private resolve(ref: BackendRef): Backend | undefined {
    const res = this.backends.resolve(this.route.ref, ref);
    if (res.ok) return res.backend;
    this.refProblems.push({ ...res.problem, path: ref.path });
    this.diags.error(res.problem.reason, res.problem.message, this.route.ref, ref.path);
    return undefined;
  }

  /** The prefix a ReplacePrefixMatch replaces: the rule's one PathPrefix match, without trailing slashes. */
  private prefixOf(rule: Rule): string | undefined {
    const [only, ...rest] = rule.matches;
    return only?.path.type === 'PathPrefix' && rest.length === 0 ? only.path.value.replace(/\/+$/, '') : undefined;
  }

  compile(rule: Rule): CompiledRule {
    const base = `spec.rules[${rule.index}]`;
    const result: CompiledRule = { rule, action: { type: 'direct', status: 500 }, backends: [] };
    if (rule.sessionPersistence)
      this.diags.warning('UnsupportedValue', 'sessionPersistence is not supported yet and is ignored', this.route.ref, `${base}.sessionPersistence`);
    const forward: Forward = { type: 'forward', destinations: [], mirrors: [], timeouts: rule.timeouts };
    if (rule.retry) forward.retry = rule.retry;
    // GRPCRoute: requests for an invalid backend get UNAVAILABLE, which a 503 becomes for gRPC clients.
    const grpc = this.route.kind === 'GRPCRoute';
    if (grpc) forward.invalidStatus = 503;
    let redirect: Extract<Filter, { type: 'RequestRedirect' }> | undefined;
    let unsupported = false;
    const prefix = this.prefixOf(rule);
    for (const f of rule.filters) {
      switch (f.type) {
        case 'RequestHeaderModifier':
          forward.requestHeaders = f.headers;
          break;
        case 'ResponseHeaderModifier':
          forward.responseHeaders = f.headers;
          break;
        case 'RequestRedirect':
          redirect = f;
          break;
        case 'URLRewrite': {
          const rewrite: NonNullable<Forward['rewrite']> = {};
          if (f.rewrite.hostname !== undefined) rewrite.hostname = f.rewrite.hostname;
          if (f.rewrite.path?.type === 'ReplacePrefixMatch' && prefix === undefined) {
            this.invalid(`${f.path}.urlRewrite.path`, 'ReplacePrefixMatch needs exactly one PathPrefix match in the rule');
          } else if (f.rewrite.path) {
            rewrite.path = f.rewrite.path;
            if (prefix !== undefined) rewrite.prefix = prefix;
          }
          forward.rewrite = rewrite;
          break;
        }
        case 'RequestMirror': {
          const b = this.resolve(f.mirror.backendRef);
          if (!b) break;
          result.backends.push(b);
          const m: Mirror = { backend: b.key };
          if (f.mirror.percent !== undefined) m.percent = f.mirror.percent;
          else if (f.mirror.fraction) m.fraction = f.mirror.fraction;
          forward.mirrors.push(m);
          break;
        }
        case 'Unsupported':
          // Gateway API: a filter that cannot be applied must not be skipped; its requests get an error.
          unsupported = true;
          this.diags.warning(
            'UnsupportedFilter',
            `filter type ${f.name} is not supported by extlb; requests matching this rule get 500`,
            this.route.ref,
            `${f.path}.type`,
          );
      }
    }
    if (unsupported) {
      this.resolveAll(rule, base); // still report the rule's references
      return result;
    }
    if (redirect) {
      if (rule.backendRefs.length > 0)
        this.diags.warning(
          'IncompatibleFilters',
          'a rule with a RequestRedirect filter must not have backendRefs; the redirect is used',
          this.route.ref,
          `${base}.backendRefs`,
        );
      if (redirect.redirect.path?.type === 'ReplacePrefixMatch' && prefix === undefined) {
        this.invalid(`${redirect.path}.requestRedirect.path`, 'ReplacePrefixMatch needs exactly one PathPrefix match in the rule');
        const { path: _dropped, ...rest } = redirect.redirect;
        result.action = { type: 'redirect', redirect: rest };
      } else result.action = { type: 'redirect', redirect: redirect.redirect, ...(prefix !== undefined && redirect.redirect.path ? { prefix } : {}) };
      return result;
    }
    const resolved = this.resolveAll(rule, base);
    rule.backendRefs.forEach((ref, i) => {
      const b = resolved[i];
      if (b) result.backends.push(b);
      forward.destinations.push(this.destination(ref, b));
    });
    // No backend at all, or only invalid or zero-weight ones: Gateway API answers 500 (UNAVAILABLE for gRPC).
    if (forward.destinations.some((d) => d.backend !== undefined && d.weight > 0)) result.action = forward;
    else if (grpc) result.action = { type: 'direct', status: 503 };
    return result;
  }

  private destination(ref: BackendRef, b: Backend | undefined): Destination {
    if (!b) return { weight: ref.weight, invalid: 'the backendRef cannot be resolved' };
    // An External backend that must fail closed but has no picker answers like an invalid one.
    if (b.lb.type === 'External' && !usesPicker(b) && b.lb.external?.failureMode === 'FailClose') {
      return { backend: b.key, weight: ref.weight, invalid: 'no picker of the backend can be reached and it fails closed' };
    }
    return { backend: b.key, weight: ref.weight };
  }

  private resolveAll(rule: Rule, base: string): (Backend | undefined)[] {
    return rule.backendRefs.map((ref) => {
      if (ref.filters.length > 0)
        this.diags.warning(
          'UnsupportedFilter',
          'filters on a backendRef are not supported and are ignored',
          this.route.ref,
          `${base}.backendRefs[${ref.index}].filters`,
        );
      return this.resolve(ref);
    });
  }
}

/** Compiles every rule of a route. */
export function compileRoute(route: HttpRoute, backends: Backends, diags: Diagnostics): CompiledRoute {
  const c = new RouteCompiler(route, backends, diags);
  const rules = route.rules.map((rule) => c.compile(rule));
  return { route, rules, refProblems: c.refProblems, problems: c.problems };
}
