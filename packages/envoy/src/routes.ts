// HTTPRoute rules to Envoy routes: matches, filters, weighted backends, timeouts and retries.
import type { Backend, Backends } from './backends.js';
import { type Diagnostics, compare } from './diagnostics.js';
import { envoyDuration } from './duration.js';
import { INVALID_BACKEND_CLUSTER, NAME, TYPE } from './envoy-names.js';
import { extProcDisabled, extProcOverrides, usesPicker } from './ext-proc.js';
import type { BackendRef, Filter, HttpRoute, Match, Rule, ValueMatch } from './model.js';
import type { External } from './loadbalancer.js';
import { HEADER_NAME, isObject, type Json } from './read.js';

export interface RefProblem {
  reason: 'InvalidKind' | 'BackendNotFound' | 'RefNotPermitted';
  message: string;
  path: string;
}

export interface RuleResult {
  rule: Rule;
  /** Fields of the Envoy Route other than name and match. */
  action: Json;
  backends: Backend[];
}

export interface RouteResult {
  route: HttpRoute;
  rules: RuleResult[];
  problems: RefProblem[];
}

export interface RouteOptions {
  /** Per-try timeout when the route does not set timeouts.backendRequest but retries walk a picker list. */
  perTryTimeoutMs: number;
  authority: (b: Backend) => string;
  /** False for Envoy older than 1.35, which cannot set failure_mode_allow per route. */
  perRouteFailureMode: boolean;
}

const REDIRECT_CODES: Record<number, string> = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

function stringMatch(m: ValueMatch): Json {
  return m.type === 'Exact' ? { exact: m.value } : { safe_regex: { regex: m.value } };
}

/** Envoy's form of one HTTPRoute match. PathPrefix is element-wise, as path_separated_prefix is. */
export function envoyMatch(m: Match): Json {
  const out: Json = {};
  const { type, value } = m.path;
  if (type === 'Exact') out.path = value;
  else if (type === 'RegularExpression') out.safe_regex = { regex: value };
  else {
    const trimmed = value.replace(/\/+$/, '');
    if (trimmed === '') out.prefix = '/';
    else out.path_separated_prefix = trimmed;
  }
  const headers = m.headers.map((h) => ({ name: h.name, string_match: stringMatch(h) }));
  if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
  if (headers.length > 0) out.headers = headers;
  if (m.queryParams.length > 0) out.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q) }));
  return out;
}

const PATH_RANK: Record<Match['path']['type'], number> = { Exact: 0, RegularExpression: 1, PathPrefix: 2 };

/**
 * Gateway API precedence between two matches (negative: `a` first): exact path, then the longest
 * path, then method, most headers, most query params. Ties are broken by the caller (route age,
 * then rule and match order).
 */
export function comparePrecedence(a: Match, b: Match): number {
  return (
    PATH_RANK[a.path.type] - PATH_RANK[b.path.type] ||
    b.path.value.replace(/\/+$/, '').length - a.path.value.replace(/\/+$/, '').length ||
    Number(b.method !== undefined) - Number(a.method !== undefined) ||
    b.headers.length - a.headers.length ||
    b.queryParams.length - a.queryParams.length
  );
}

function headerOptions(spec: unknown, path: string, r: RouteConverter): { add: Json[]; remove: string[] } {
  const o = isObject(spec) ? spec : {};
  const add: Json[] = [];
  for (const [field, action] of [
    ['set', 'OVERWRITE_IF_EXISTS_OR_ADD'],
    ['add', 'APPEND_IF_EXISTS_OR_ADD'],
  ] as const) {
    const list = Array.isArray(o[field]) ? (o[field] as unknown[]) : [];
    list.forEach((h, i) => {
      if (isObject(h) && typeof h.name === 'string' && HEADER_NAME.test(h.name) && typeof h.value === 'string')
        add.push({ header: { key: h.name, value: h.value }, append_action: action });
      else r.invalid(`${path}.${field}[${i}]`, `needs a header name and a value`);
    });
  }
  const remove: string[] = [];
  (Array.isArray(o.remove) ? (o.remove as unknown[]) : []).forEach((h, i) => {
    if (typeof h === 'string' && HEADER_NAME.test(h)) remove.push(h);
    else r.invalid(`${path}.remove[${i}]`, `must be a header name`);
  });
  return { add, remove };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Converts one route at a time, keeping its diagnostics and status problems together. */
class RouteConverter {
  readonly problems: RefProblem[] = [];

  constructor(
    readonly route: HttpRoute,
    private readonly backends: Backends,
    private readonly diags: Diagnostics,
    private readonly options: RouteOptions,
  ) {}

  invalid(path: string, message: string): void {
    this.diags.error('Invalid', message, this.route.ref, path);
  }

  private resolve(ref: BackendRef, path: string): Backend | undefined {
    const res = this.backends.resolve(this.route.ref, ref);
    if (res.ok) return res.backend;
    this.problems.push({ reason: res.reason, message: res.message, path });
    this.diags.error(res.reason, res.message, this.route.ref, path);
    return undefined;
  }

  convertRule(rule: Rule): RuleResult {
    const base = `spec.rules[${rule.index}]`;
    const action: Json = {};
    const result: RuleResult = { rule, action, backends: [] };
    if (rule.sessionPersistence)
      this.diags.warning('UnsupportedValue', 'sessionPersistence is not supported yet and is ignored', this.route.ref, `${base}.sessionPersistence`);
    let redirect: Json | undefined;
    let rewrite: Json | undefined;
    let unsupported = false;
    const mirrors: Json[] = [];
    const prefixMatch = rule.matches.length === 1 && rule.matches[0]?.path.type === 'PathPrefix' ? rule.matches[0].path.value.replace(/\/+$/, '') : undefined;
    for (const f of rule.filters) {
      const p = `${base}.filters[${f.index}]`;
      switch (f.type) {
        case 'RequestHeaderModifier': {
          const h = headerOptions(f.spec.requestHeaderModifier, `${p}.requestHeaderModifier`, this);
          if (h.add.length) action.request_headers_to_add = h.add;
          if (h.remove.length) action.request_headers_to_remove = h.remove;
          break;
        }
        case 'ResponseHeaderModifier': {
          const h = headerOptions(f.spec.responseHeaderModifier, `${p}.responseHeaderModifier`, this);
          if (h.add.length) action.response_headers_to_add = h.add;
          if (h.remove.length) action.response_headers_to_remove = h.remove;
          break;
        }
        case 'RequestRedirect':
          redirect = this.redirect(f, p, prefixMatch);
          break;
        case 'URLRewrite':
          rewrite = this.rewrite(f, p, prefixMatch);
          break;
        case 'RequestMirror': {
          const m = this.mirror(f, p, result);
          if (m) mirrors.push(m);
          break;
        }
        default:
          // Gateway API: a filter that cannot be applied must not be skipped; its requests get an error.
          unsupported = true;
          this.diags.warning(
            'UnsupportedFilter',
            `filter type ${f.type} is not supported by extlb; requests matching this rule get 500`,
            this.route.ref,
            `${p}.type`,
          );
      }
    }
    if (unsupported) {
      action.direct_response = { status: 500 };
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
      action.redirect = redirect;
      return result;
    }
    this.routeAction(rule, base, action, result, rewrite, mirrors);
    return result;
  }

  private resolveAll(rule: Rule, base: string): (Backend | undefined)[] {
    return rule.backendRefs.map((ref) => {
      const path = `${base}.backendRefs[${ref.index}]`;
      if (ref.filterCount > 0)
        this.diags.warning('UnsupportedFilter', 'filters on a backendRef are not supported and are ignored', this.route.ref, `${path}.filters`);
      return this.resolve(ref, path);
    });
  }

  private routeAction(rule: Rule, base: string, action: Json, result: RuleResult, rewrite: Json | undefined, mirrors: Json[]): void {
    const resolved = this.resolveAll(rule, base);
    let invalidWeight = 0;
    const entries: { backend: Backend; weight: number }[] = [];
    rule.backendRefs.forEach((ref, i) => {
      const b = resolved[i];
      // An External backend that must fail closed but has no picker answers like an invalid one.
      const unusable = b !== undefined && b.lb.type === 'External' && !usesPicker(b) && b.lb.external?.failureMode === 'FailClose';
      if (!b || unusable) invalidWeight += ref.weight;
      else if (ref.weight > 0) entries.push({ backend: b, weight: ref.weight });
      if (b) result.backends.push(b);
    });
    if (entries.length === 0) {
      // No backend at all, or only invalid or zero-weight ones: Gateway API answers 500.
      action.direct_response = { status: 500 };
      return;
    }
    const ra: Json = {};
    const externals = entries.filter((e) => usesPicker(e.backend));
    if (entries.length === 1 && invalidWeight === 0) {
      ra.cluster = entries[0]?.backend.cluster;
    } else {
      const clusters: Json[] = entries.map((e) => {
        const c: Json = { name: e.backend.cluster, weight: e.weight };
        if (externals.length > 0) {
          c.typed_per_filter_config = {
            [NAME.extProc]: usesPicker(e.backend)
              ? extProcOverrides(e.backend, this.options.authority(e.backend), this.options.perRouteFailureMode)
              : extProcDisabled(),
          };
        }
        return c;
      });
      if (invalidWeight > 0) clusters.push({ name: INVALID_BACKEND_CLUSTER, weight: invalidWeight });
      ra.weighted_clusters = { clusters };
      if (invalidWeight > 0) ra.cluster_not_found_response_code = 'INTERNAL_SERVER_ERROR';
    }
    const first = externals[0];
    if (first) {
      // Route level enables the disabled-by-default filter; a weighted entry's own config, more
      // specific, then says which picker (or none) its backend uses.
      action.typed_per_filter_config = {
        [NAME.extProc]: extProcOverrides(first.backend, this.options.authority(first.backend), this.options.perRouteFailureMode),
      };
    }
    if (rewrite) Object.assign(ra, rewrite);
    if (mirrors.length > 0) ra.request_mirror_policies = mirrors;
    const hash = this.hashPolicies(entries.map((e) => e.backend));
    if (hash.length > 0) ra.hash_policy = hash;
    this.timeoutsAndRetries(
      rule,
      base,
      ra,
      externals.map((e) => e.backend.lb.external as External),
    );
    action.route = ra;
  }

  private hashPolicies(backends: Backend[]): Json[] {
    const out = new Map<string, Json>();
    for (const b of backends) {
      const ch = b.lb.consistentHash;
      if (!ch) continue;
      let policy: Json;
      if (ch.type === 'Header') policy = { header: { header_name: ch.header } };
      else if (ch.type === 'Cookie')
        policy = { cookie: { name: ch.cookie?.name, ...(ch.cookie?.ttlMs !== undefined ? { ttl: envoyDuration(ch.cookie.ttlMs) } : {}) } };
      else policy = { connection_properties: { source_ip: true } };
      out.set(JSON.stringify(policy), policy);
    }
    return [...out.entries()].sort(([a], [b]) => compare(a, b)).map(([, p]) => p);
  }

  /**
   * Gateway API timeouts and retry (GEP-1742, GEP-1731), plus what override_host needs: each retry
   * takes the next endpoint of the picker's list, so a list of n endpoints needs n-1 retries, and a
   * per-try timeout so a slow endpoint does not use up the whole request timeout.
   */
  private timeoutsAndRetries(rule: Rule, base: string, ra: Json, externals: External[]): void {
    const { requestMs, backendRequestMs } = rule.timeouts;
    const walk = Math.max(0, ...externals.map((e) => e.maxEndpoints - 1));
    const retry = rule.retry;
    if (!retry && walk === 0) {
      if (requestMs !== undefined) ra.timeout = envoyDuration(requestMs);
      else if (backendRequestMs !== undefined) ra.timeout = envoyDuration(backendRequestMs);
      if (requestMs !== undefined && backendRequestMs !== undefined) ra.retry_policy = { num_retries: 0, per_try_timeout: envoyDuration(backendRequestMs) };
      return;
    }
    const retryOn = new Set<string>();
    const policy: Json = {};
    let attempts = walk;
    if (retry) {
      // GEP-1731: implementations should retry on connection errors whenever retry is set.
      for (const c of ['connect-failure', 'refused-stream', 'reset']) retryOn.add(c);
      if (retry.codes.length > 0) {
        retryOn.add('retriable-status-codes');
        policy.retriable_status_codes = [...retry.codes].sort((a, b) => a - b);
      }
      attempts = Math.max(attempts, retry.attempts ?? 1);
    }
    if (walk > 0) for (const c of ['connect-failure', 'reset', '5xx']) retryOn.add(c);
    const perTry = backendRequestMs ?? (walk > 0 ? this.options.perTryTimeoutMs : undefined);
    policy.retry_on = [...retryOn].sort().join(',');
    policy.num_retries = attempts;
    if (perTry !== undefined) policy.per_try_timeout = envoyDuration(perTry);
    if (retry?.backoffMs !== undefined) {
      if (retry.backoffMs > 0) policy.retry_back_off = { base_interval: envoyDuration(retry.backoffMs) };
      else
        this.diags.info(
          'RetryBackoff',
          'a zero retry backoff cannot be expressed in Envoy; its default (25ms) applies',
          this.route.ref,
          `${base}.retry.backoff`,
        );
    }
    if (walk > 0) {
      // Once the picker's list is used up the fallback policy picks; it should not re-pick a host
      // that already failed.
      policy.retry_host_predicate = [{ name: NAME.previousHosts, typed_config: { '@type': TYPE.previousHosts } }];
      policy.host_selection_retry_max_attempts = '5';
    }
    const order = [
      'retry_on',
      'num_retries',
      'per_try_timeout',
      'retry_host_predicate',
      'host_selection_retry_max_attempts',
      'retriable_status_codes',
      'retry_back_off',
    ];
    ra.retry_policy = Object.fromEntries(order.filter((k) => k in policy).map((k) => [k, policy[k]]));
    if (requestMs !== undefined) ra.timeout = envoyDuration(requestMs);
    else if (perTry !== undefined && walk > 0) ra.timeout = envoyDuration(perTry * (attempts + 1)); // room for every attempt
  }

  private redirect(f: Filter, p: string, prefixMatch: string | undefined): Json {
    const o = isObject(f.spec.requestRedirect) ? f.spec.requestRedirect : {};
    const out: Json = {};
    if (o.scheme === 'http' || o.scheme === 'https') out.scheme_redirect = o.scheme;
    if (typeof o.hostname === 'string') out.host_redirect = o.hostname;
    if (typeof o.port === 'number') out.port_redirect = o.port;
    const path = isObject(o.path) ? o.path : undefined;
    if (path?.type === 'ReplaceFullPath' && typeof path.replaceFullPath === 'string') out.path_redirect = path.replaceFullPath;
    else if (path?.type === 'ReplacePrefixMatch' && typeof path.replacePrefixMatch === 'string') {
      if (prefixMatch === undefined) this.invalid(`${p}.requestRedirect.path`, 'ReplacePrefixMatch needs exactly one PathPrefix match in the rule');
      else out.prefix_rewrite = path.replacePrefixMatch;
    } else if (path)
      this.invalid(`${p}.requestRedirect.path`, 'path needs type ReplaceFullPath with replaceFullPath, or ReplacePrefixMatch with replacePrefixMatch');
    const code = typeof o.statusCode === 'number' ? o.statusCode : 302;
    const rc = REDIRECT_CODES[code];
    if (!rc) this.invalid(`${p}.requestRedirect.statusCode`, `statusCode ${code} is not one of 301, 302, 303, 307, 308`);
    out.response_code = rc ?? 'FOUND';
    return out;
  }

  private rewrite(f: Filter, p: string, prefixMatch: string | undefined): Json {
    const o = isObject(f.spec.urlRewrite) ? f.spec.urlRewrite : {};
    const out: Json = {};
    if (typeof o.hostname === 'string') out.host_rewrite_literal = o.hostname;
    const path = isObject(o.path) ? o.path : undefined;
    if (path?.type === 'ReplaceFullPath' && typeof path.replaceFullPath === 'string') {
      out.regex_rewrite = { pattern: { regex: '^/.*$' }, substitution: path.replaceFullPath };
    } else if (path?.type === 'ReplacePrefixMatch' && typeof path.replacePrefixMatch === 'string') {
      if (prefixMatch === undefined) this.invalid(`${p}.urlRewrite.path`, 'ReplacePrefixMatch needs exactly one PathPrefix match in the rule');
      else if (path.replacePrefixMatch === '/' || prefixMatch === '') {
        // prefix_rewrite would leave `//rest`; a regex drops the whole matched prefix instead.
        out.regex_rewrite = { pattern: { regex: `^${escapeRegex(prefixMatch)}/*` }, substitution: path.replacePrefixMatch.replace(/\/*$/, '/') };
      } else out.prefix_rewrite = path.replacePrefixMatch;
    } else if (path)
      this.invalid(`${p}.urlRewrite.path`, 'path needs type ReplaceFullPath with replaceFullPath, or ReplacePrefixMatch with replacePrefixMatch');
    return out;
  }

  private mirror(f: Filter, p: string, result: RuleResult): Json | undefined {
    const o = isObject(f.spec.requestMirror) ? f.spec.requestMirror : {};
    const br = isObject(o.backendRef) ? o.backendRef : undefined;
    if (!br || typeof br.name !== 'string') {
      this.invalid(`${p}.requestMirror.backendRef`, 'requestMirror.backendRef with a name is required');
      return undefined;
    }
    const ref: BackendRef = {
      index: 0,
      group: typeof br.group === 'string' ? br.group : '',
      kind: typeof br.kind === 'string' ? br.kind : 'Service',
      name: br.name,
      namespace: typeof br.namespace === 'string' ? br.namespace : this.route.meta.namespace,
      weight: 1,
      filterCount: 0,
    };
    if (typeof br.port === 'number') ref.port = br.port;
    const b = this.resolve(ref, `${p}.requestMirror.backendRef`);
    if (!b) return undefined;
    result.backends.push(b);
    const m: Json = { cluster: b.cluster };
    const fraction = isObject(o.fraction) ? o.fraction : undefined;
    if (typeof o.percent === 'number') m.runtime_fraction = { default_value: { numerator: o.percent, denominator: 'HUNDRED' } };
    else if (fraction && typeof fraction.numerator === 'number') {
      const denominator = typeof fraction.denominator === 'number' && fraction.denominator > 0 ? fraction.denominator : 100;
      m.runtime_fraction = { default_value: { numerator: Math.round((fraction.numerator * 1_000_000) / denominator), denominator: 'MILLION' } };
    }
    return m;
  }
}

/** Converts every rule of a route; the result does not depend on which listener uses it. */
export function convertRoute(route: HttpRoute, backends: Backends, diags: Diagnostics, options: RouteOptions): RouteResult {
  const c = new RouteConverter(route, backends, diags, options);
  const rules = route.rules.map((rule) => c.convertRule(rule));
  return { route, rules, problems: c.problems };
}
