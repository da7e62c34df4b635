// HTTPRoute and GRPCRoute rules to actions: filters (the rule's and its backendRefs'), weighted
// destinations, mirrors, timeouts and retry, as Gateway API defines them. The result does not
// depend on which listener serves the route.
import { MAX_DURATION_SECONDS, MAX_WEIGHT_SUM } from '../limits.js';
import type { Diagnostics } from '../diagnostics.js';
import type { BackendRef, Cors, Filter, HeaderModifier, RouteRecord, PathModifier, Problem, Redirect, Rule } from '../read/index.js';
import { type Backends, usesPicker } from './backends.js';
import { composeHeaders } from './filters.js';
import type { Action, Backend, Destination, Forward, Mirror, RedirectAction } from './ir.js';
import type { RefProblem } from './outcomes.js';

export interface CompiledRule {
  rule: Rule;
  action: Action;
  /** Every backend the rule sends to or mirrors to, valid or not. */
  backends: Backend[];
}

export interface CompiledRoute {
  route: RouteRecord;
  rules: CompiledRule[];
  refProblems: RefProblem[];
  /** Values that cannot be used, found while compiling (the read stage's are on the route). */
  problems: Problem[];
  /** A TLSRoute, TCPRoute or UDPRoute: the backends it refused because their load balancer needs HTTP (External). */
  httpOnly?: Backend[];
}

/** What the filters of one level (a rule, or one of its backendRefs) do, each kept with its path. */
interface FilterSet {
  requestHeaders?: HeaderModifier;
  responseHeaders?: HeaderModifier;
  hostname?: string;
  path?: { modifier: PathModifier; at: string };
  redirect?: { redirect: Redirect; at: string };
  mirrors: { mirror: Mirror; backend: Backend; at: string }[];
  cors?: { cors: Cors; at: string };
  unsupported: { name: string; at: string }[];
}

/** A rule's request changes and answers, as they become its action. */
interface RuleFilters {
  requestHeaders?: HeaderModifier;
  responseHeaders?: HeaderModifier;
  rewrite?: NonNullable<Forward['rewrite']>;
  mirrors: Mirror[];
  cors?: Cors;
}

/** Compiles one route at a time, keeping its diagnostics and status problems together. */
class RouteCompiler {
  readonly refProblems: RefProblem[] = [];
  readonly problems: Problem[] = [];

  constructor(
    private readonly route: RouteRecord,
    private readonly backends: Backends,
    private readonly diags: Diagnostics,
  ) {}

  private invalid(path: string, message: string): void {
    this.problems.push({ path, message });
    this.diags.error('Invalid', message, this.route.ref, path);
  }

  /** A configuration Gateway API allows and extlb cannot apply: the status and a warning say so. */
  private unsupported(path: string, message: string): void {
    this.problems.push({ path, message });
    this.diags.warning('UnsupportedFilter', message, this.route.ref, path);
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

  /** A path modifier the rule can apply: ReplacePrefixMatch needs one PathPrefix match to replace. */
  private usablePath(rule: Rule, modifier: PathModifier | undefined, at: string): PathModifier | undefined {
    if (modifier?.type !== 'ReplacePrefixMatch' || this.prefixOf(rule) !== undefined) return modifier;
    this.invalid(at, 'ReplacePrefixMatch needs exactly one PathPrefix match in the rule');
    return undefined;
  }

  /** Reads one level's filters; mirror backends are resolved (and reported) whether used or not. */
  private filterSet(rule: Rule, filters: Filter[]): FilterSet {
    const set: FilterSet = { mirrors: [], unsupported: [] };
    for (const f of filters) {
      switch (f.type) {
        case 'RequestHeaderModifier':
          set.requestHeaders = f.headers;
          break;
        case 'ResponseHeaderModifier':
          set.responseHeaders = f.headers;
          break;
        case 'RequestRedirect': {
          const path = this.usablePath(rule, f.redirect.path, `${f.path}.requestRedirect.path`);
          const { path: _written, ...rest } = f.redirect;
          set.redirect = { redirect: path ? { ...rest, path } : rest, at: f.path };
          break;
        }
        case 'URLRewrite': {
          if (f.rewrite.hostname !== undefined) set.hostname = f.rewrite.hostname;
          const path = this.usablePath(rule, f.rewrite.path, `${f.path}.urlRewrite.path`);
          if (path) set.path = { modifier: path, at: f.path };
          break;
        }
        case 'RequestMirror': {
          const backend = this.resolve(f.mirror.backendRef);
          if (!backend) break;
          const mirror: Mirror = { backend: backend.key };
          if (f.mirror.percent !== undefined) mirror.percent = f.mirror.percent;
          else if (f.mirror.fraction) mirror.fraction = f.mirror.fraction;
          set.mirrors.push({ mirror, backend, at: f.path });
          break;
        }
        case 'CORS':
          set.cors = { cors: f.cors, at: f.path };
          break;
        case 'Unsupported':
          set.unsupported.push({ name: f.name, at: f.path });
      }
    }
    return set;
  }

  private redirectAction(rule: Rule, redirect: Redirect, responseHeaders: HeaderModifier | undefined): RedirectAction {
    const prefix = this.prefixOf(rule);
    const action: RedirectAction = { type: 'redirect', redirect };
    if (prefix !== undefined && redirect.path) action.prefix = prefix;
    if (responseHeaders) action.responseHeaders = responseHeaders;
    return action;
  }

  /** Filters that do nothing on a redirect are reported, not dropped silently. */
  private redirectIgnores(sets: FilterSet[], what: string): void {
    for (const set of sets) {
      for (const m of set.mirrors)
        this.diags.warning('IncompatibleFilters', `${what} forwards no request, so this RequestMirror mirrors nothing`, this.route.ref, m.at);
      if (set.cors)
        this.diags.warning('IncompatibleFilters', `${what} answers every request itself, so this CORS filter does not apply`, this.route.ref, set.cors.at);
    }
  }

  compile(rule: Rule): CompiledRule {
    const base = `spec.rules[${rule.index}]`;
    const result: CompiledRule = { rule, action: { type: 'direct', status: 500 }, backends: [] };
    if (rule.sessionPersistence)
      this.diags.warning('UnsupportedValue', 'sessionPersistence is not supported yet and is ignored', this.route.ref, `${base}.sessionPersistence`);
    const own = this.filterSet(rule, rule.filters);
    if (own.unsupported.length > 0) {
      // Gateway API: a filter that cannot be applied must not be skipped; its requests get an error.
      for (const u of own.unsupported)
        this.diags.warning(
          'UnsupportedFilter',
          `filter type ${u.name} is not supported by extlb; requests matching this rule get 500`,
          this.route.ref,
          `${u.at}.type`,
        );
      this.resolveAll(rule); // still report the rule's references
      return result;
    }
    if (own.redirect) {
      if (rule.backendRefs.length > 0)
        this.diags.warning(
          'IncompatibleFilters',
          'a rule with a RequestRedirect filter must not have backendRefs; the redirect is used',
          this.route.ref,
          `${base}.backendRefs`,
        );
      this.redirectIgnores([own], 'a rule that redirects');
      result.action = this.redirectAction(rule, own.redirect.redirect, own.responseHeaders);
      return result;
    }
    const forward: Forward = { type: 'forward', destinations: [], mirrors: [], timeouts: rule.timeouts };
    if (rule.retry) forward.retry = rule.retry;
    // GRPCRoute: requests for an invalid backend get UNAVAILABLE, which a 503 becomes for gRPC clients.
    const grpc = this.route.kind === 'GRPCRoute';
    if (grpc) forward.invalidStatus = 503;
    const filters: RuleFilters = {
      mirrors: own.mirrors.map((m) => m.mirror),
      ...(own.requestHeaders ? { requestHeaders: own.requestHeaders } : {}),
      ...(own.responseHeaders ? { responseHeaders: own.responseHeaders } : {}),
      ...(own.cors ? { cors: own.cors.cors } : {}),
    };
    if (own.hostname !== undefined || own.path) filters.rewrite = this.rewrite(rule, own.hostname, own.path?.modifier);
    result.backends.push(...own.mirrors.map((m) => m.backend));
    const resolved = this.resolveAll(rule);
    rule.backendRefs.forEach((ref, i) => {
      const b = resolved[i];
      if (b) result.backends.push(b);
      forward.destinations.push(this.destination(ref, b));
    });
    const sets = rule.backendRefs.map((ref) => (ref.filters.length > 0 ? this.filterSet(rule, ref.filters) : undefined));
    const live = forward.destinations.flatMap((d, i) => (d.weight > 0 ? [i] : []));
    const [first] = live;
    const sole = live.length === 1 && first !== undefined && forward.destinations[first]?.invalid === undefined ? first : undefined;
    for (const i of live) {
      const set = sets[i];
      const d = forward.destinations[i] as Destination;
      if (!set || d.invalid !== undefined) continue;
      if (i !== sole) {
        this.keepOnDestination(set, d);
        continue;
      }
      const redirect = this.foldSole(rule, own, filters, set, d);
      if (redirect) {
        // The backend is never reached: nothing is forwarded, nothing mirrored.
        result.action = redirect;
        result.backends = [];
        return result;
      }
      if (d.invalid === undefined) result.backends.push(...set.mirrors.map((m) => m.backend));
    }
    Object.assign(forward, filters);
    if (!this.withinEnvoyLimits(rule, forward)) return result;
    // No backend at all, or only invalid or zero-weight ones: Gateway API answers 500 (UNAVAILABLE for gRPC).
    if (forward.destinations.some((d) => d.backend !== undefined && d.weight > 0)) result.action = forward;
    else if (grpc) result.action = { type: 'direct', status: 503 };
    return result;
  }

  /**
   * Values Gateway API accepts but Envoy cannot express: weights that sum past a uint32, and a
   * retry whose attempts at the backend request timeout need a route timeout past the longest
   * Duration. Such a rule is invalid (it answers 500), so the rest of the Gateway still loads.
   */
  private withinEnvoyLimits(rule: Rule, forward: Forward): boolean {
    const base = `spec.rules[${rule.index}]`;
    const weights = forward.destinations.reduce((sum, d) => sum + d.weight, 0);
    if (weights > MAX_WEIGHT_SUM) {
      this.invalid(`${base}.backendRefs`, `the weights sum to ${weights}, more than Envoy can add up (${MAX_WEIGHT_SUM})`);
      return false;
    }
    const perTry = forward.timeouts.backendRequestMs;
    const attempts = (forward.retry?.attempts ?? 0) + 1;
    if (perTry !== undefined && (perTry / 1000) * attempts > MAX_DURATION_SECONDS) {
      this.invalid(
        `${base}.retry.attempts`,
        `${attempts} attempts of timeouts.backendRequest need a route timeout longer than the longest Envoy can express (${MAX_DURATION_SECONDS} seconds)`,
      );
      return false;
    }
    return true;
  }

  private rewrite(rule: Rule, hostname: string | undefined, path: PathModifier | undefined): NonNullable<Forward['rewrite']> {
    const rewrite: NonNullable<Forward['rewrite']> = {};
    if (hostname !== undefined) rewrite.hostname = hostname;
    if (path) {
      rewrite.path = path;
      const prefix = this.prefixOf(rule);
      if (prefix !== undefined) rewrite.prefix = prefix;
    }
    return rewrite;
  }

  /**
   * The filters of a backendRef that receives all of the rule's requests apply to all of them:
   * they join the rule's, after them on requests (a header or hostname they set wins) and before
   * them on responses. A RequestRedirect there makes the rule redirect (returned).
   */
  private foldSole(rule: Rule, own: FilterSet, filters: RuleFilters, set: FilterSet, d: Destination): RedirectAction | undefined {
    if (this.refuseUnsupported(set, d)) return undefined;
    if (set.redirect) {
      if (filters.rewrite) {
        this.unsupported(set.redirect.at, "a RequestRedirect on a backendRef cannot follow the rule's URLRewrite; requests to this backendRef get 500");
        d.invalid = "its RequestRedirect cannot follow the rule's URLRewrite";
        return undefined;
      }
      this.redirectIgnores([own, set], 'a backendRef that redirects');
      return this.redirectAction(rule, set.redirect.redirect, composeHeaders(set.responseHeaders, filters.responseHeaders));
    }
    if (set.path && filters.rewrite?.path && set.path.modifier.type === 'ReplacePrefixMatch') {
      this.unsupported(set.path.at, "a ReplacePrefixMatch on a backendRef cannot follow the rule's own path rewrite; requests to this backendRef get 500");
      d.invalid = "its ReplacePrefixMatch cannot follow the rule's path rewrite";
      return undefined;
    }
    if (set.cors && filters.cors) {
      this.unsupported(set.cors.at, "a CORS filter on a backendRef cannot follow the rule's own CORS filter; requests to this backendRef get 500");
      d.invalid = "its CORS filter cannot follow the rule's";
      return undefined;
    }
    if (set.hostname !== undefined || set.path) {
      filters.rewrite = this.rewrite(rule, set.hostname ?? filters.rewrite?.hostname, set.path?.modifier ?? filters.rewrite?.path);
    }
    const requestHeaders = composeHeaders(filters.requestHeaders, set.requestHeaders);
    if (requestHeaders) filters.requestHeaders = requestHeaders;
    const responseHeaders = composeHeaders(set.responseHeaders, filters.responseHeaders);
    if (responseHeaders) filters.responseHeaders = responseHeaders;
    filters.mirrors.push(...set.mirrors.map((m) => m.mirror));
    if (set.cors) filters.cors = set.cors.cors;
    return undefined;
  }

  /**
   * The filters of a backendRef that shares the rule's requests with others apply to its share
   * only: header changes and the hostname can; a path rewrite, redirect, mirror or CORS filter
   * cannot be limited to one share of a route, so that share answers 500 and the status says so.
   */
  private keepOnDestination(set: FilterSet, d: Destination): void {
    if (this.refuseUnsupported(set, d)) return;
    const routeWide = [set.path?.at, set.redirect?.at, ...set.mirrors.map((m) => m.at), set.cors?.at].filter((at) => at !== undefined);
    for (const at of routeWide)
      this.unsupported(
        at,
        "extlb applies this filter on a backendRef only when the backendRef receives all of the rule's requests; this rule splits them, so the requests sent to this backendRef get 500",
      );
    if (routeWide.length > 0) {
      d.invalid = 'a filter of its backendRef cannot be limited to its share of the requests';
      return;
    }
    if (set.requestHeaders) d.requestHeaders = set.requestHeaders;
    if (set.responseHeaders) d.responseHeaders = set.responseHeaders;
    if (set.hostname !== undefined) d.hostname = set.hostname;
  }

  /** A filter type extlb does not implement makes its backendRef's share answer 500. */
  private refuseUnsupported(set: FilterSet, d: Destination): boolean {
    for (const u of set.unsupported)
      this.diags.warning(
        'UnsupportedFilter',
        `filter type ${u.name} is not supported by extlb; requests sent to this backendRef get 500`,
        this.route.ref,
        `${u.at}.type`,
      );
    if (set.unsupported.length === 0) return false;
    d.invalid = `filter type ${set.unsupported.map((u) => u.name).join(', ')} is not supported`;
    return true;
  }

  private destination(ref: BackendRef, b: Backend | undefined): Destination {
    if (!b) return { weight: ref.weight, invalid: 'the backendRef cannot be resolved' };
    // An External backend that must fail closed but has no picker answers like an invalid one.
    if (b.lb.type === 'External' && !usesPicker(b) && b.lb.external?.failureMode === 'FailClose') {
      return { backend: b.key, weight: ref.weight, invalid: 'no picker of the backend can be reached and it fails closed' };
    }
    return { backend: b.key, weight: ref.weight };
  }

  private resolveAll(rule: Rule): (Backend | undefined)[] {
    return rule.backendRefs.map((ref) => this.resolve(ref));
  }
}

/** Compiles every rule of a route. */
export function compileRoute(route: RouteRecord, backends: Backends, diags: Diagnostics): CompiledRoute {
  const c = new RouteCompiler(route, backends, diags);
  const rules = route.rules.map((rule) => c.compile(rule));
  return { route, rules, refProblems: c.refProblems, problems: c.problems };
}
