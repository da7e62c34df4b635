// Gateway API kinds: Gateway, HTTPRoute and ReferenceGrant.
import { parseDuration } from './duration.js';
import {
  GATEWAY_GROUP,
  type BackendRef,
  type Filter,
  type Gateway,
  type HttpRoute,
  type Listener,
  type Match,
  type Meta,
  type ParentRef,
  type ReferenceGrant,
  type RejectedListener,
  type Rule,
  type ValueMatch,
} from './model.js';
import { HEADER_NAME, type Reader, isObject, type Json } from './read.js';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;

export function readGateway(r: Reader, spec: Json, meta: Meta): Gateway {
  const listeners: Listener[] = [];
  const rejected: RejectedListener[] = [];
  const reject = (name: string, index: number, reason: string, message: string) => rejected.push({ name, index, reason, message, conflict: false });
  r.array(spec.listeners, 'spec.listeners').forEach((raw, index) => {
    const p = `spec.listeners[${index}]`;
    const l = r.object(raw, p);
    if (!l) return;
    const name = r.string(l.name, `${p}.name`, true);
    const port = r.integer(l.port, `${p}.port`, 1, 65535, true);
    const protocol = r.string(l.protocol, `${p}.protocol`, true);
    if (name === undefined || port === undefined || protocol === undefined) return;
    if (protocol !== 'HTTP' && protocol !== 'HTTPS') {
      const message = `listener "${name}" uses protocol ${protocol}, which extlb does not convert; only HTTP and HTTPS listeners are`;
      r.diags.warning('UnsupportedProtocol', message, r.ref, `${p}.protocol`);
      reject(name, index, 'UnsupportedProtocol', message);
      return;
    }
    const listener: Listener = { name, index, port, protocol, certificateRefs: [], from: 'Same', allowsHttpRoute: true };
    const hostname = r.string(l.hostname, `${p}.hostname`);
    if (hostname) listener.hostname = hostname.toLowerCase();
    if (protocol === 'HTTPS') {
      const tls = r.object(l.tls, `${p}.tls`);
      const mode = tls?.mode ?? 'Terminate';
      if (mode !== 'Terminate') {
        const message = `listener "${name}": TLS mode ${String(mode)} is not supported; only Terminate is`;
        r.diags.warning('UnsupportedValue', message, r.ref, `${p}.tls.mode`);
        reject(name, index, 'UnsupportedValue', message);
        return;
      }
      r.array(tls?.certificateRefs, `${p}.tls.certificateRefs`).forEach((c, i) => {
        const cr = r.object(c, `${p}.tls.certificateRefs[${i}]`);
        const certName = r.string(cr?.name, `${p}.tls.certificateRefs[${i}].name`, true);
        if (certName)
          listener.certificateRefs.push({ namespace: r.string(cr?.namespace, `${p}.tls.certificateRefs[${i}].namespace`) ?? meta.namespace, name: certName });
      });
      if (listener.certificateRefs.length === 0) {
        const message = `listener "${name}": an HTTPS listener needs at least one certificateRef`;
        r.invalid(`${p}.tls.certificateRefs`, message);
        reject(name, index, 'InvalidCertificateRef', message);
        return;
      }
    }
    const allowed = r.object(l.allowedRoutes, `${p}.allowedRoutes`);
    const ns = r.object(allowed?.namespaces, `${p}.allowedRoutes.namespaces`);
    listener.from = r.oneOf(ns?.from, `${p}.allowedRoutes.namespaces.from`, ['Same', 'All', 'Selector'] as const, 'Same') ?? 'Same';
    if (listener.from === 'Selector') {
      const sel = r.object(ns?.selector, `${p}.allowedRoutes.namespaces.selector`);
      if (sel?.matchExpressions !== undefined)
        r.diags.warning(
          'UnsupportedValue',
          'namespace selectors with matchExpressions are not supported; only matchLabels is read',
          r.ref,
          `${p}.allowedRoutes.namespaces.selector.matchExpressions`,
        );
      listener.selector = r.labels(sel?.matchLabels, `${p}.allowedRoutes.namespaces.selector.matchLabels`);
    }
    const kinds = r.array(allowed?.kinds, `${p}.allowedRoutes.kinds`);
    if (kinds.length > 0) {
      listener.allowsHttpRoute = kinds.some((k) => isObject(k) && k.kind === 'HTTPRoute' && (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP);
    }
    listeners.push(listener);
  });
  return { ref: r.ref, meta, gatewayClassName: r.string(spec.gatewayClassName, 'spec.gatewayClassName', true) ?? '', listeners, rejected };
}

/**
 * Envoy compiles regexes with RE2: reject what RE2 or JavaScript cannot compile (lookaround and
 * backreferences are JavaScript-only), so a bad regex is reported here, not by Envoy at load time.
 */
function validRegex(r: Reader, value: string, path: string): boolean {
  let ok = value !== '' && !/\(\?<?[=!]|\\[1-9]/.test(value);
  if (ok) {
    try {
      new RegExp(value, 'u');
    } catch {
      ok = false;
    }
  }
  if (!ok) r.invalid(path, `${JSON.stringify(value)} is not a valid RE2 regular expression`);
  return ok;
}

function readValueMatches(r: Reader, raw: unknown, path: string, lowerCase: boolean): ValueMatch[] {
  const out: ValueMatch[] = [];
  const seen = new Set<string>();
  r.array(raw, path).forEach((h, i) => {
    const o = r.object(h, `${path}[${i}]`);
    const name = r.string(o?.name, `${path}[${i}].name`, true);
    const value = r.string(o?.value, `${path}[${i}].value`, true);
    const type = r.oneOf(o?.type, `${path}[${i}].type`, ['Exact', 'RegularExpression'] as const, 'Exact');
    if (name === undefined || value === undefined || !type) return;
    if (type === 'RegularExpression' && !validRegex(r, value, `${path}[${i}].value`)) return;
    if (lowerCase && !HEADER_NAME.test(name)) {
      r.invalid(`${path}[${i}].name`, `must be a header name (RFC 7230 token)`);
      return;
    }
    const k = lowerCase ? name.toLowerCase() : name;
    // Gateway API: with duplicate names the first entry wins and the others are ignored.
    if (seen.has(k)) return;
    seen.add(k);
    out.push({ name: k, type, value });
  });
  return out;
}

function readMatch(r: Reader, raw: unknown, path: string, index: number): Match | undefined {
  const o = r.object(raw, path) ?? {};
  const pathObj = r.object(o.path, `${path}.path`);
  const type = r.oneOf(pathObj?.type, `${path}.path.type`, ['Exact', 'PathPrefix', 'RegularExpression'] as const, 'PathPrefix');
  const value = r.string(pathObj?.value, `${path}.path.value`) ?? '/';
  if (!type) return undefined;
  if (type === 'RegularExpression' && !validRegex(r, value, `${path}.path.value`)) return undefined;
  if (type !== 'RegularExpression' && !value.startsWith('/')) {
    r.invalid(`${path}.path.value`, `value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`);
    return undefined;
  }
  const m: Match = {
    index,
    path: { type, value },
    headers: readValueMatches(r, o.headers, `${path}.headers`, true),
    queryParams: readValueMatches(r, o.queryParams, `${path}.queryParams`, false),
  };
  const method = r.oneOf(o.method, `${path}.method`, HTTP_METHODS);
  if (method) m.method = method;
  else if (o.method !== undefined) return undefined;
  return m;
}

function readDurationField(r: Reader, raw: unknown, path: string): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined) r.invalid(path, `${JSON.stringify(raw)} is not a Gateway API duration such as 10s or 1m30s`);
  return ms;
}

function readRule(r: Reader, raw: unknown, path: string, index: number, namespace: string): Rule {
  const o = r.object(raw, path) ?? {};
  const rawMatches = r.array(o.matches, `${path}.matches`);
  const matches: Match[] = [];
  (rawMatches.length === 0 ? [{}] : rawMatches).forEach((m, i) => {
    const match = readMatch(r, m, `${path}.matches[${i}]`, i);
    if (match) matches.push(match);
  });
  const filters: Filter[] = [];
  r.array(o.filters, `${path}.filters`).forEach((f, i) => {
    const fo = r.object(f, `${path}.filters[${i}]`);
    const type = r.string(fo?.type, `${path}.filters[${i}].type`, true);
    if (fo && type) filters.push({ index: i, type, spec: fo });
  });
  const backendRefs: BackendRef[] = [];
  r.array(o.backendRefs, `${path}.backendRefs`).forEach((b, i) => {
    const p = `${path}.backendRefs[${i}]`;
    const bo = r.object(b, p);
    const name = r.string(bo?.name, `${p}.name`, true);
    if (!bo || name === undefined) return;
    const ref: BackendRef = {
      index: i,
      group: r.string(bo.group, `${p}.group`) ?? '',
      kind: r.string(bo.kind, `${p}.kind`) ?? 'Service',
      name,
      namespace: r.string(bo.namespace, `${p}.namespace`) ?? namespace,
      weight: r.integer(bo.weight, `${p}.weight`, 0, 1_000_000) ?? 1,
      filterCount: r.array(bo.filters, `${p}.filters`).length,
    };
    const port = r.integer(bo.port, `${p}.port`, 1, 65535);
    if (port !== undefined) ref.port = port;
    backendRefs.push(ref);
  });
  const rule: Rule = { index, matches, filters, backendRefs, timeouts: {}, sessionPersistence: o.sessionPersistence !== undefined };
  const name = r.string(o.name, `${path}.name`);
  if (name) rule.name = name;
  const t = r.object(o.timeouts, `${path}.timeouts`);
  if (t) {
    const request = readDurationField(r, t.request, `${path}.timeouts.request`);
    const backend = readDurationField(r, t.backendRequest, `${path}.timeouts.backendRequest`);
    if (request !== undefined) rule.timeouts.requestMs = request;
    if (backend !== undefined) rule.timeouts.backendRequestMs = backend;
    if (request !== undefined && backend !== undefined && request !== 0 && backend > request) {
      r.invalid(`${path}.timeouts`, `backendRequest timeout cannot be longer than request timeout`);
    }
  }
  const retry = r.object(o.retry, `${path}.retry`);
  if (retry) {
    const codes: number[] = [];
    r.array(retry.codes, `${path}.retry.codes`).forEach((c, i) => {
      const code = r.integer(c, `${path}.retry.codes[${i}]`, 400, 599);
      if (code !== undefined && !codes.includes(code)) codes.push(code);
    });
    rule.retry = { codes };
    const attempts = r.integer(retry.attempts, `${path}.retry.attempts`, 0, 1_000);
    if (attempts !== undefined) rule.retry.attempts = attempts;
    const backoff = readDurationField(r, retry.backoff, `${path}.retry.backoff`);
    if (backoff !== undefined) rule.retry.backoffMs = backoff;
  }
  return rule;
}

export function readRoute(r: Reader, spec: Json, meta: Meta): HttpRoute {
  const parentRefs: ParentRef[] = [];
  r.array(spec.parentRefs, 'spec.parentRefs').forEach((raw, index) => {
    const p = `spec.parentRefs[${index}]`;
    const o = r.object(raw, p);
    const name = r.string(o?.name, `${p}.name`, true);
    if (!o || name === undefined) return;
    const ref: ParentRef = {
      index,
      group: r.string(o.group, `${p}.group`) ?? GATEWAY_GROUP,
      kind: r.string(o.kind, `${p}.kind`) ?? 'Gateway',
      namespace: r.string(o.namespace, `${p}.namespace`) ?? meta.namespace,
      name,
    };
    const section = r.string(o.sectionName, `${p}.sectionName`);
    if (section) ref.sectionName = section;
    const port = r.integer(o.port, `${p}.port`, 1, 65535);
    if (port !== undefined) ref.port = port;
    parentRefs.push(ref);
  });
  const hostnames = r
    .array(spec.hostnames, 'spec.hostnames')
    .map((h, i) => r.string(h, `spec.hostnames[${i}]`))
    .filter((h): h is string => h !== undefined)
    .map((h) => h.toLowerCase());
  const rawRules = r.array(spec.rules, 'spec.rules');
  const rules = (rawRules.length === 0 ? [{}] : rawRules).map((rule, i) => readRule(r, rule, `spec.rules[${i}]`, i, meta.namespace));
  return { ref: r.ref, meta, parentRefs, hostnames, rules };
}

export function readGrant(r: Reader, spec: Json, meta: Meta): ReferenceGrant {
  const from = r.array(spec.from, 'spec.from').flatMap((f, i) => {
    const o = r.object(f, `spec.from[${i}]`);
    const kind = r.string(o?.kind, `spec.from[${i}].kind`, true);
    const namespace = r.string(o?.namespace, `spec.from[${i}].namespace`, true);
    return kind && namespace ? [{ group: r.string(o?.group, `spec.from[${i}].group`) ?? '', kind, namespace }] : [];
  });
  const to = r.array(spec.to, 'spec.to').flatMap((t, i) => {
    const o = r.object(t, `spec.to[${i}]`);
    const kind = r.string(o?.kind, `spec.to[${i}].kind`, true);
    if (!kind) return [];
    const entry: { group: string; kind: string; name?: string } = { group: r.string(o?.group, `spec.to[${i}].group`) ?? '', kind };
    const name = r.string(o?.name, `spec.to[${i}].name`);
    if (name) entry.name = name;
    return [entry];
  });
  return { ref: r.ref, meta, from, to };
}
