// Gateway API kinds as written: GatewayClass, Gateway, HTTPRoute and ReferenceGrant, and the parts
// of a route GRPCRoute shares (parentRefs, hostnames, header matches, filters, backendRefs).
import { parseDuration } from '../gateway-duration.js';
import { headerValueProblem, hostnameProblem, isUnmodifiableHeader, regexProblem } from '../limits.js';
import { type JsonObject, isObject } from '../json.js';
import { HEADER_NAME, type Reader, shown } from './reader.js';
import type {
  AllowedListeners,
  BackendRef,
  Cors,
  Filter,
  FrontendValidation,
  GatewayRecord,
  GatewayAddress,
  GatewayClass,
  HeaderModifier,
  HeaderValue,
  RouteRecord,
  ListenerSet,
  ListenerSpec,
  Match,
  Meta,
  ObjectReference,
  ParametersRef,
  ParentRef,
  PathModifier,
  Redirect,
  ReferenceGrant,
  Rewrite,
  RouteKind,
  Rule,
  ValueMatch,
} from './records.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;
const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;

/**
 * A reference to another object (SecretObjectReference, ObjectReference). `kind` defaults as the
 * field's type says (`Secret` for certificates; a CA reference has no default).
 */
function readReference(r: Reader, raw: unknown, path: string, namespace: string, defaultKind?: string): ObjectReference | undefined {
  const o = r.object(raw, path);
  const name = r.string(o?.name, `${path}.name`, true);
  const kind = defaultKind === undefined ? r.string(o?.kind, `${path}.kind`, true) : (r.string(o?.kind, `${path}.kind`) ?? defaultKind);
  if (!o || name === undefined || kind === undefined) return undefined;
  return { group: r.string(o.group, `${path}.group`) ?? '', kind, namespace: r.string(o.namespace, `${path}.namespace`) ?? namespace, name, path };
}

function readParametersRef(r: Reader, raw: unknown, path: string): ParametersRef | undefined {
  const o = r.object(raw, path);
  if (!o) return undefined;
  const ref: ParametersRef = {
    group: r.string(o.group, `${path}.group`, true) ?? '',
    kind: r.string(o.kind, `${path}.kind`, true) ?? '',
    name: r.string(o.name, `${path}.name`, true) ?? '',
    path,
  };
  const namespace = r.string(o.namespace, `${path}.namespace`);
  if (namespace) ref.namespace = namespace;
  return ref;
}

function readListener(r: Reader, raw: unknown, index: number, namespace: string): ListenerSpec | undefined {
  const p = `spec.listeners[${index}]`;
  const l = r.object(raw, p);
  if (!l) return undefined;
  const name = r.string(l.name, `${p}.name`, true);
  const port = r.integer(l.port, `${p}.port`, 1, 65535, true);
  const protocol = r.string(l.protocol, `${p}.protocol`, true);
  if (name === undefined || port === undefined || protocol === undefined) return undefined;
  const allowed = r.object(l.allowedRoutes, `${p}.allowedRoutes`);
  const ns = r.object(allowed?.namespaces, `${p}.allowedRoutes.namespaces`);
  const sel = r.object(ns?.selector, `${p}.allowedRoutes.namespaces.selector`);
  const listener: ListenerSpec = {
    name,
    index,
    port,
    protocol,
    namespaces: {
      from: r.oneOf(ns?.from, `${p}.allowedRoutes.namespaces.from`, ['Same', 'All', 'Selector'] as const, 'Same') ?? 'Same',
      hasExpressions: sel?.matchExpressions !== undefined,
    },
  };
  if (listener.namespaces.from === 'Selector') listener.namespaces.selector = r.labels(sel?.matchLabels, `${p}.allowedRoutes.namespaces.selector.matchLabels`);
  const hostname = r.string(l.hostname, `${p}.hostname`);
  if (hostname) {
    listener.hostname = hostname.toLowerCase();
    const problem = hostnameProblem(listener.hostname);
    if (problem) {
      r.invalid(`${p}.hostname`, problem);
      listener.problem = { path: `${p}.hostname`, message: problem };
    }
  }
  if (allowed?.kinds !== undefined) {
    listener.kinds = r.array(allowed.kinds, `${p}.allowedRoutes.kinds`).flatMap((k, i) => {
      const o = r.object(k, `${p}.allowedRoutes.kinds[${i}]`);
      const kind = r.string(o?.kind, `${p}.allowedRoutes.kinds[${i}].kind`, true);
      return kind ? [{ group: r.string(o?.group, `${p}.allowedRoutes.kinds[${i}].group`) ?? GATEWAY_GROUP, kind }] : [];
    });
  }
  const tls = r.object(l.tls, `${p}.tls`);
  if (tls) {
    listener.tls = {
      mode: r.string(tls.mode, `${p}.tls.mode`) ?? 'Terminate',
      certificateRefs: r
        .array(tls.certificateRefs, `${p}.tls.certificateRefs`)
        .flatMap((c, i) => readReference(r, c, `${p}.tls.certificateRefs[${i}]`, namespace, 'Secret') ?? []),
    };
  }
  return listener;
}

function readValidation(r: Reader, raw: unknown, path: string, namespace: string): FrontendValidation | undefined {
  const o = r.object(raw, path);
  if (!o) return undefined;
  return {
    mode: r.oneOf(o.mode, `${path}.mode`, ['AllowValidOnly', 'AllowInsecureFallback'] as const, 'AllowValidOnly') ?? 'AllowValidOnly',
    caCertificateRefs: r
      .array(o.caCertificateRefs, `${path}.caCertificateRefs`)
      .flatMap((c, i) => readReference(r, c, `${path}.caCertificateRefs[${i}]`, namespace) ?? []),
    path,
  };
}

function readGatewayTls(r: Reader, raw: unknown, namespace: string): GatewayRecord['tls'] {
  const tls = r.object(raw, 'spec.tls');
  const out: GatewayRecord['tls'] = {};
  const frontend = r.object(tls?.frontend, 'spec.tls.frontend');
  if (frontend) {
    const d = r.object(frontend.default, 'spec.tls.frontend.default');
    const perPort = r.array(frontend.perPort, 'spec.tls.frontend.perPort').flatMap((e, i) => {
      const p = `spec.tls.frontend.perPort[${i}]`;
      const o = r.object(e, p);
      const port = r.integer(o?.port, `${p}.port`, 1, 65535, true);
      if (port === undefined) return [];
      const validation = readValidation(r, r.object(o?.tls, `${p}.tls`)?.validation, `${p}.tls.validation`, namespace);
      return [validation ? { port, validation } : { port }];
    });
    const validation = readValidation(r, d?.validation, 'spec.tls.frontend.default.validation', namespace);
    out.frontend = validation ? { default: validation, perPort } : { perPort };
  }
  const backend = r.object(tls?.backend, 'spec.tls.backend');
  if (backend?.clientCertificateRef !== undefined) {
    const ref = readReference(r, backend.clientCertificateRef, 'spec.tls.backend.clientCertificateRef', namespace, 'Secret');
    if (ref) out.backendClientCertificate = ref;
  }
  return out;
}

function readAllowedListeners(r: Reader, raw: unknown): AllowedListeners {
  const ns = r.object(r.object(raw, 'spec.allowedListeners')?.namespaces, 'spec.allowedListeners.namespaces');
  const from = r.oneOf(ns?.from, 'spec.allowedListeners.namespaces.from', ['None', 'Same', 'All', 'Selector'] as const, 'None') ?? 'None';
  if (from !== 'Selector') return { from };
  const sel = r.object(ns?.selector, 'spec.allowedListeners.namespaces.selector');
  return { from, selector: r.labels(sel?.matchLabels, 'spec.allowedListeners.namespaces.selector.matchLabels') };
}

/** A ListenerSet: its parent Gateway and its listeners (read as a Gateway's are). */
export function readListenerSet(r: Reader, spec: JsonObject, meta: Meta): ListenerSet {
  const p = r.object(spec.parentRef, 'spec.parentRef');
  const parentRef = {
    group: r.string(p?.group, 'spec.parentRef.group') ?? GATEWAY_GROUP,
    kind: r.string(p?.kind, 'spec.parentRef.kind') ?? 'Gateway',
    namespace: r.string(p?.namespace, 'spec.parentRef.namespace') ?? meta.namespace,
    name: r.string(p?.name, 'spec.parentRef.name', true) ?? '',
  };
  const listeners = r.array(spec.listeners, 'spec.listeners').flatMap((raw, i) => {
    const l = readListener(r, raw, i, meta.namespace);
    return l ? [{ ...l, owner: r.ref }] : [];
  });
  return { ref: r.ref, meta, parentRef, listeners };
}

export function readGateway(r: Reader, spec: JsonObject, meta: Meta): GatewayRecord {
  const listeners = r.array(spec.listeners, 'spec.listeners').flatMap((raw, i) => readListener(r, raw, i, meta.namespace) ?? []);
  const addresses = r.array(spec.addresses, 'spec.addresses').flatMap((a, i): GatewayAddress[] => {
    const path = `spec.addresses[${i}]`;
    const o = r.object(a, path);
    if (!o) return [];
    const address: GatewayAddress = { type: r.string(o.type, `${path}.type`) ?? 'IPAddress', path };
    const value = r.string(o.value, `${path}.value`);
    if (value) address.value = value;
    return [address];
  });
  const infra = r.object(spec.infrastructure, 'spec.infrastructure');
  const infrastructure: GatewayRecord['infrastructure'] = {
    labels: r.labels(infra?.labels, 'spec.infrastructure.labels'),
    annotations: r.labels(infra?.annotations, 'spec.infrastructure.annotations'),
  };
  const parametersRef = readParametersRef(r, infra?.parametersRef, 'spec.infrastructure.parametersRef');
  if (parametersRef) infrastructure.parametersRef = parametersRef;
  return {
    ref: r.ref,
    meta,
    gatewayClassName: r.string(spec.gatewayClassName, 'spec.gatewayClassName', true) ?? '',
    listeners,
    allowedListeners: readAllowedListeners(r, spec.allowedListeners),
    addresses,
    infrastructure,
    tls: readGatewayTls(r, spec.tls, meta.namespace),
  };
}

export function readGatewayClass(r: Reader, spec: JsonObject, meta: Meta): GatewayClass {
  const gc: GatewayClass = { ref: r.ref, meta, controllerName: r.string(spec.controllerName, 'spec.controllerName', true) ?? '' };
  const parametersRef = readParametersRef(r, spec.parametersRef, 'spec.parametersRef');
  if (parametersRef) gc.parametersRef = parametersRef;
  return gc;
}

/** A regex Envoy compiles with RE2 (and its program size limit): a bad one is reported here, not by Envoy at load time. */
export function validRegex(r: Reader, value: string, path: string): boolean {
  const problem = regexProblem(value);
  if (problem) r.invalid(path, problem);
  return problem === undefined;
}

export function readValueMatches(r: Reader, raw: unknown, path: string, lowerCase: boolean): ValueMatch[] {
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
      r.invalid(`${path}[${i}].name`, 'must be a header name (RFC 7230 token)');
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
    r.invalid(`${path}.path.value`, "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']");
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
  if (ms === undefined) r.invalid(path, `${shown(raw)} is not a Gateway API duration such as 10s or 1m30s`);
  return ms;
}

/** Envoy refuses to set or remove the Host header through header changes; a hostname rewrite does it. */
function hostHeaderProblem(name: string): string | undefined {
  return isUnmodifiableHeader(name)
    ? 'the Host header cannot be set or removed by a header modifier (Envoy refuses it); a URLRewrite hostname changes it'
    : undefined;
}

function readHeaderModifier(r: Reader, spec: unknown, path: string): HeaderModifier {
  const o = r.object(spec, path) ?? {};
  const values = (field: 'set' | 'add'): HeaderValue[] =>
    r.array(o[field], `${path}.${field}`).flatMap((h, i) => {
      const at = `${path}.${field}[${i}]`;
      if (!isObject(h) || typeof h.name !== 'string' || !HEADER_NAME.test(h.name) || typeof h.value !== 'string') {
        r.invalid(at, 'needs a header name and a value');
        return [];
      }
      const problem = hostHeaderProblem(h.name) ?? headerValueProblem(h.value);
      if (problem) {
        r.invalid(at, problem);
        return [];
      }
      return [{ name: h.name, value: h.value }];
    });
  const remove = r.array(o.remove, `${path}.remove`).flatMap((h, i) => {
    const problem = typeof h === 'string' && HEADER_NAME.test(h) ? hostHeaderProblem(h) : 'must be a header name';
    if (problem === undefined) return [h as string];
    r.invalid(`${path}.remove[${i}]`, problem);
    return [];
  });
  return { set: values('set'), add: values('add'), remove };
}

function readPathModifier(r: Reader, raw: unknown, path: string): PathModifier | undefined {
  const o = r.object(raw, path);
  if (!o) return undefined;
  if (o.type === 'ReplaceFullPath' && typeof o.replaceFullPath === 'string') return { type: 'ReplaceFullPath', value: o.replaceFullPath };
  if (o.type === 'ReplacePrefixMatch' && typeof o.replacePrefixMatch === 'string') return { type: 'ReplacePrefixMatch', value: o.replacePrefixMatch };
  r.invalid(path, 'path needs type ReplaceFullPath with replaceFullPath, or ReplacePrefixMatch with replacePrefixMatch');
  return undefined;
}

/** A hostname a redirect or rewrite sets: no wildcard. */
function preciseHostname(r: Reader, raw: unknown, path: string): string | undefined {
  const hostname = r.string(raw, path);
  if (hostname === undefined) return undefined;
  const problem = hostname.startsWith('*') ? 'must not be a wildcard' : hostnameProblem(hostname);
  if (!problem) return hostname;
  r.invalid(path, problem);
  return undefined;
}

function readRedirect(r: Reader, raw: unknown, path: string): Redirect {
  const o = r.object(raw, path) ?? {};
  const redirect: Redirect = { statusCode: 302 };
  const scheme = r.oneOf(o.scheme, `${path}.scheme`, ['http', 'https'] as const);
  if (scheme) redirect.scheme = scheme;
  const hostname = preciseHostname(r, o.hostname, `${path}.hostname`);
  if (hostname) redirect.hostname = hostname;
  const port = r.integer(o.port, `${path}.port`, 1, 65535);
  if (port !== undefined) redirect.port = port;
  const pm = readPathModifier(r, o.path, `${path}.path`);
  if (pm) redirect.path = pm;
  if (o.statusCode !== undefined) {
    const code = REDIRECT_CODES.find((c) => c === o.statusCode);
    if (code) redirect.statusCode = code;
    else r.invalid(`${path}.statusCode`, `statusCode ${shown(o.statusCode)} is not one of 301, 302, 303, 307, 308`);
  }
  return redirect;
}

function readRewrite(r: Reader, raw: unknown, path: string): Rewrite {
  const o = r.object(raw, path) ?? {};
  const rewrite: Rewrite = {};
  const hostname = preciseHostname(r, o.hostname, `${path}.hostname`);
  if (hostname) rewrite.hostname = hostname;
  const pm = readPathModifier(r, o.path, `${path}.path`);
  if (pm) rewrite.path = pm;
  return rewrite;
}

// The API server's patterns for CORS values (Gateway API's CORSOrigin and HTTPHeaderName).
const CORS_ORIGIN = /(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)/;
const CORS_HEADER = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

function readCors(r: Reader, raw: unknown, path: string): Cors {
  const o = r.object(raw, path) ?? {};
  const list = (field: string, valid: (v: string) => boolean, what: string): string[] =>
    r.array(o[field], `${path}.${field}`).flatMap((v, i) => {
      if (typeof v === 'string' && valid(v)) return [v];
      r.invalid(`${path}.${field}[${i}]`, `${JSON.stringify(v)} is not ${what}`);
      return [];
    });
  const cors: Cors = {
    allowOrigins: list('allowOrigins', (v) => CORS_ORIGIN.test(v), "an origin (scheme://host[:port], or '*')"),
    allowMethods: list('allowMethods', (v) => v === '*' || (HTTP_METHODS as readonly string[]).includes(v), "an HTTP method or '*'"),
    allowHeaders: list('allowHeaders', (v) => CORS_HEADER.test(v), 'a header name'),
    exposeHeaders: list('exposeHeaders', (v) => CORS_HEADER.test(v), 'a header name'),
    allowCredentials: o.allowCredentials === true,
    maxAgeSeconds: r.integer(o.maxAge, `${path}.maxAge`, 1, 2 ** 31 - 1) ?? 5,
  };
  if (o.allowCredentials !== undefined && typeof o.allowCredentials !== 'boolean') r.invalid(`${path}.allowCredentials`, 'must be a boolean');
  for (const field of ['allowOrigins', 'allowMethods', 'allowHeaders'] as const) {
    if (cors[field].includes('*') && cors[field].length > 1) r.invalid(`${path}.${field}`, `${field} cannot contain '*' alongside other values`);
  }
  return cors;
}

export function readBackendRef(r: Reader, raw: unknown, path: string, index: number, namespace: string, withFilters: boolean): BackendRef | undefined {
  const o = r.object(raw, path);
  const name = r.string(o?.name, `${path}.name`, true);
  if (!o || name === undefined) return undefined;
  const ref: BackendRef = {
    index,
    group: r.string(o.group, `${path}.group`) ?? '',
    kind: r.string(o.kind, `${path}.kind`) ?? 'Service',
    name,
    namespace: r.string(o.namespace, `${path}.namespace`) ?? namespace,
    weight: r.integer(o.weight, `${path}.weight`, 0, 1_000_000) ?? 1,
    filters: withFilters ? readFilters(r, o.filters, `${path}.filters`, namespace) : [],
    path,
  };
  const port = r.integer(o.port, `${path}.port`, 1, 65535);
  if (port !== undefined) ref.port = port;
  return ref;
}

export function readFilters(r: Reader, raw: unknown, path: string, namespace: string): Filter[] {
  return r.array(raw, path).flatMap((f, index): Filter[] => {
    const p = `${path}[${index}]`;
    const o = r.object(f, p);
    const type = r.string(o?.type, `${p}.type`, true);
    if (!o || !type) return [];
    switch (type) {
      case 'RequestHeaderModifier':
        return [{ index, path: p, type, headers: readHeaderModifier(r, o.requestHeaderModifier, `${p}.requestHeaderModifier`) }];
      case 'ResponseHeaderModifier':
        return [{ index, path: p, type, headers: readHeaderModifier(r, o.responseHeaderModifier, `${p}.responseHeaderModifier`) }];
      case 'RequestRedirect':
        return [{ index, path: p, type, redirect: readRedirect(r, o.requestRedirect, `${p}.requestRedirect`) }];
      case 'URLRewrite':
        return [{ index, path: p, type, rewrite: readRewrite(r, o.urlRewrite, `${p}.urlRewrite`) }];
      case 'CORS':
        return [{ index, path: p, type, cors: readCors(r, o.cors, `${p}.cors`) }];
      case 'RequestMirror': {
        const mp = `${p}.requestMirror`;
        const m = r.object(o.requestMirror, mp) ?? {};
        if (m.backendRef === undefined) r.invalid(`${mp}.backendRef`, 'Required value');
        const backendRef = m.backendRef === undefined ? undefined : readBackendRef(r, m.backendRef, `${mp}.backendRef`, 0, namespace, false);
        if (!backendRef) return [];
        const mirror: Extract<Filter, { type: 'RequestMirror' }>['mirror'] = { backendRef };
        const percent = r.integer(m.percent, `${mp}.percent`, 0, 100);
        const fraction = r.object(m.fraction, `${mp}.fraction`);
        if (percent !== undefined) mirror.percent = percent;
        else if (fraction) {
          const numerator = r.integer(fraction.numerator, `${mp}.fraction.numerator`, 0, 2 ** 31 - 1, true);
          const denominator = r.integer(fraction.denominator, `${mp}.fraction.denominator`, 1, 2 ** 31 - 1) ?? 100;
          if (numerator !== undefined) mirror.fraction = { numerator, denominator };
        }
        return [{ index, path: p, type, mirror }];
      }
      default:
        return [{ index, path: p, type: 'Unsupported', name: type }];
    }
  });
}

function readRule(r: Reader, raw: unknown, path: string, index: number, namespace: string): Rule {
  const o = r.object(raw, path) ?? {};
  const rawMatches = r.array(o.matches, `${path}.matches`);
  const matches = (rawMatches.length === 0 ? [{}] : rawMatches).flatMap((m, i) => readMatch(r, m, `${path}.matches[${i}]`, i) ?? []);
  const backendRefs = r
    .array(o.backendRefs, `${path}.backendRefs`)
    .flatMap((b, i) => readBackendRef(r, b, `${path}.backendRefs[${i}]`, i, namespace, true) ?? []);
  const rule: Rule = {
    index,
    matches,
    filters: readFilters(r, o.filters, `${path}.filters`, namespace),
    backendRefs,
    timeouts: {},
    sessionPersistence: o.sessionPersistence !== undefined,
  };
  const name = r.string(o.name, `${path}.name`);
  if (name) rule.name = name;
  const t = r.object(o.timeouts, `${path}.timeouts`);
  if (t) {
    const request = readDurationField(r, t.request, `${path}.timeouts.request`);
    const backend = readDurationField(r, t.backendRequest, `${path}.timeouts.backendRequest`);
    if (request !== undefined) rule.timeouts.requestMs = request;
    if (backend !== undefined) rule.timeouts.backendRequestMs = backend;
    if (request !== undefined && backend !== undefined && request !== 0 && backend > request) {
      r.invalid(`${path}.timeouts`, 'backendRequest timeout cannot be longer than request timeout');
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

/** The parentRefs of a route, with Gateway API's defaults. */
function readParentRefs(r: Reader, spec: JsonObject, meta: Meta): ParentRef[] {
  return r.array(spec.parentRefs, 'spec.parentRefs').flatMap((raw, index): ParentRef[] => {
    const p = `spec.parentRefs[${index}]`;
    const o = r.object(raw, p);
    const name = r.string(o?.name, `${p}.name`, true);
    if (!o || name === undefined) return [];
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
    return [ref];
  });
}

/**
 * A route's hostnames, lower-cased; one that is not a Gateway API Hostname is reported and left
 * out. Undefined when hostnames were given and none is usable: the route must then serve nothing,
 * rather than every host.
 */
function readHostnames(r: Reader, spec: JsonObject): string[] | undefined {
  const raw = r.array(spec.hostnames, 'spec.hostnames');
  const hostnames = raw.flatMap((h, i) => {
    const host = r.string(h, `spec.hostnames[${i}]`)?.toLowerCase();
    if (host === undefined) return [];
    const problem = hostnameProblem(host);
    if (!problem) return [host];
    r.invalid(`spec.hostnames[${i}]`, problem);
    return [];
  });
  return raw.length > 0 && hostnames.length === 0 ? undefined : hostnames;
}

/** Reads one rule of a route: `spec.rules[index]` at `path`. */
export type RuleReader = (r: Reader, raw: unknown, path: string, index: number, namespace: string) => Rule;

/**
 * A route of either kind: its parentRefs, hostnames and rules. A route with hostnames but none
 * usable keeps its rules for its status, but none of their matches.
 */
export function readRouteOf(kind: RouteKind, readRuleOf: RuleReader, r: Reader, spec: JsonObject, meta: Meta): RouteRecord {
  const parentRefs = readParentRefs(r, spec, meta);
  const hostnames = readHostnames(r, spec);
  const rawRules = r.array(spec.rules, 'spec.rules');
  const rules = (rawRules.length === 0 ? [{}] : rawRules).map((rule, i) => readRuleOf(r, rule, `spec.rules[${i}]`, i, meta.namespace));
  return {
    ref: r.ref,
    meta,
    kind,
    parentRefs,
    hostnames: hostnames ?? [],
    rules: hostnames ? rules : rules.map((rule) => ({ ...rule, matches: [] })),
    problems: r.problems,
  };
}

export function readRoute(r: Reader, spec: JsonObject, meta: Meta): RouteRecord {
  return readRouteOf('HTTPRoute', readRule, r, spec, meta);
}

export function readGrant(r: Reader, spec: JsonObject, meta: Meta): ReferenceGrant {
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
