// Turns raw Kubernetes objects into checked, defaulted records indexed by namespace and name. Every
// later stage reads only these records, so a malformed input is reported once, here.
import { isIP } from 'node:net';
import { Diagnostics, compare, type ObjectRef } from './diagnostics.js';
import { GROUP, INFERENCE_GROUP, readLoadBalancer, readPickerRef, type LoadBalancer } from './loadbalancer.js';
import { HEADER_NAME, Reader, isObject, type Json } from './read.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export interface Meta {
  name: string;
  namespace: string;
  /** ISO timestamp; objects without one sort as the newest. */
  creationTimestamp: string;
  generation?: number;
  labels: Record<string, string>;
}

interface Base {
  ref: ObjectRef;
  meta: Meta;
}

export interface Listener {
  name: string;
  index: number;
  port: number;
  protocol: 'HTTP' | 'HTTPS';
  hostname?: string;
  certificateRefs: { namespace: string; name: string }[];
  from: 'Same' | 'All' | 'Selector';
  selector?: Record<string, string>;
  /** Whether HTTPRoute is among the listener's allowed kinds. */
  allowsHttpRoute: boolean;
}

/** A listener the converter does not turn into Envoy config, and why (for the Gateway's status). */
export interface RejectedListener {
  name: string;
  index: number;
  /** Gateway API listener condition reason: UnsupportedProtocol, PortUnavailable, ProtocolConflict, ... */
  reason: string;
  message: string;
  /** The Conflicted condition is True for conflicts, Accepted is False for the rest. */
  conflict: boolean;
}

export interface Gateway extends Base {
  gatewayClassName: string;
  listeners: Listener[];
  rejected: RejectedListener[];
}

export interface ParentRef {
  index: number;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export type PathType = 'Exact' | 'PathPrefix' | 'RegularExpression';
export interface ValueMatch {
  name: string;
  type: 'Exact' | 'RegularExpression';
  value: string;
}
export interface Match {
  index: number;
  path: { type: PathType; value: string };
  headers: ValueMatch[];
  queryParams: ValueMatch[];
  method?: string;
}

export interface BackendRef {
  index: number;
  group: string;
  kind: string;
  name: string;
  namespace: string;
  port?: number;
  weight: number;
  /** Per-backend filters are not supported; kept so the converter can say so. */
  filterCount: number;
}

export interface Filter {
  index: number;
  type: string;
  spec: Json;
}

export interface Rule {
  index: number;
  name?: string;
  matches: Match[];
  filters: Filter[];
  backendRefs: BackendRef[];
  timeouts: { requestMs?: number; backendRequestMs?: number };
  retry?: { codes: number[]; attempts?: number; backoffMs?: number };
  sessionPersistence: boolean;
}

export interface HttpRoute extends Base {
  parentRefs: ParentRef[];
  hostnames: string[];
  rules: Rule[];
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

export interface Service extends Base {
  type: string;
  headless: boolean;
  ports: ServicePort[];
}

export interface EndpointSlice extends Base {
  serviceName?: string;
  addresses: string[];
  ports: { name: string; port: number }[];
}

export interface Pod extends Base {
  ip?: string;
  ready: boolean;
}

export interface ReferenceGrant extends Base {
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}

export interface Pool extends Base {
  kind: 'BackendPool' | 'InferencePool';
  selector: Record<string, string>;
  targetPorts: number[];
  h2c: boolean;
  /** The pool's own load balancer: BackendPool's `loadBalancer`, InferencePool's picker. */
  lb?: LoadBalancer;
}

export interface PolicyTarget {
  index: number;
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

export interface Policy extends Base {
  targets: PolicyTarget[];
  lb?: LoadBalancer;
}

export interface Inputs {
  gateways: Gateway[];
  routes: HttpRoute[];
  services: Map<string, Service>;
  slicesByService: Map<string, EndpointSlice[]>;
  pods: Map<string, Pod[]>;
  grants: Map<string, ReferenceGrant[]>;
  pools: Map<string, Pool>;
  policies: Policy[];
  namespaces: Map<string, Record<string, string>>;
}

/** `namespace/name`, the key of every index. */
export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Kind plus group as a key: `Service`, `BackendPool.extlb.dev`. */
export function groupKind(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

/** Oldest first, then `namespace/name` alphabetically: Gateway API's tie-break everywhere. */
export function byAge(a: Base, b: Base): number {
  return compare(a.meta.creationTimestamp, b.meta.creationTimestamp) || compare(a.ref.namespace ?? '', b.ref.namespace ?? '') || compare(a.meta.name, b.meta.name);
}

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;

function readMeta(raw: Json, kind: string, diags: Diagnostics, defaultNamespace: string): Meta | undefined {
  const m = isObject(raw.metadata) ? raw.metadata : {};
  const name = typeof m.name === 'string' && m.name !== '' ? m.name : undefined;
  const namespace = typeof m.namespace === 'string' && m.namespace !== '' ? m.namespace : defaultNamespace;
  if (!name) {
    diags.error('Invalid', `${kind} without metadata.name is ignored`, { kind, namespace, name: '<no name>' }, 'metadata.name');
    return undefined;
  }
  const meta: Meta = {
    name,
    namespace,
    // A missing timestamp sorts last: an object not yet created is never the established one.
    creationTimestamp: typeof m.creationTimestamp === 'string' ? m.creationTimestamp : '9999-12-31T23:59:59Z',
    labels: {},
  };
  if (typeof m.generation === 'number') meta.generation = m.generation;
  const r = new Reader(diags, { kind, namespace, name });
  meta.labels = r.labels(m.labels, 'metadata.labels');
  return meta;
}

function readGateway(r: Reader, spec: Json, meta: Meta): Gateway {
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
        if (certName) listener.certificateRefs.push({ namespace: r.string(cr?.namespace, `${p}.tls.certificateRefs[${i}].namespace`) ?? meta.namespace, name: certName });
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
      if (sel?.matchExpressions !== undefined) r.diags.warning('UnsupportedValue', 'namespace selectors with matchExpressions are not supported; only matchLabels is read', r.ref, `${p}.allowedRoutes.namespaces.selector.matchExpressions`);
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
  if (!ok) r.invalid(path, `${path}: ${JSON.stringify(value)} is not a valid RE2 regular expression`);
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
      r.invalid(`${path}[${i}].name`, `${path}[${i}].name must be a header name (RFC 7230 token)`);
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
    r.invalid(`${path}.path.value`, `${path}.path.value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`);
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

function readDurationField(r: Reader, raw: unknown, path: string, parse: (v: unknown) => number | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parse(raw);
  if (ms === undefined) r.invalid(path, `${path} must be a Gateway API duration such as 10s or 1m30s`);
  return ms;
}

function readRule(r: Reader, raw: unknown, path: string, index: number, namespace: string, parseDuration: (v: unknown) => number | undefined): Rule {
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
    const request = readDurationField(r, t.request, `${path}.timeouts.request`, parseDuration);
    const backend = readDurationField(r, t.backendRequest, `${path}.timeouts.backendRequest`, parseDuration);
    if (request !== undefined) rule.timeouts.requestMs = request;
    if (backend !== undefined) rule.timeouts.backendRequestMs = backend;
    if (request !== undefined && backend !== undefined && request !== 0 && backend > request) {
      r.invalid(`${path}.timeouts`, `${path}.timeouts: backendRequest timeout cannot be longer than request timeout`);
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
    const backoff = readDurationField(r, retry.backoff, `${path}.retry.backoff`, parseDuration);
    if (backoff !== undefined) rule.retry.backoffMs = backoff;
  }
  return rule;
}

function readRoute(r: Reader, spec: Json, meta: Meta, parseDuration: (v: unknown) => number | undefined): HttpRoute {
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
  const rules = (rawRules.length === 0 ? [{}] : rawRules).map((rule, i) => readRule(r, rule, `spec.rules[${i}]`, i, meta.namespace, parseDuration));
  return { ref: r.ref, meta, parentRefs, hostnames, rules };
}

function readService(r: Reader, spec: Json, meta: Meta): Service {
  const ports: ServicePort[] = [];
  r.array(spec.ports, 'spec.ports').forEach((raw, i) => {
    const o = r.object(raw, `spec.ports[${i}]`);
    const port = r.integer(o?.port, `spec.ports[${i}].port`, 1, 65535, true);
    if (!o || port === undefined) return;
    const sp: ServicePort = { port };
    const name = r.string(o.name, `spec.ports[${i}].name`);
    if (name) sp.name = name;
    if (typeof o.targetPort === 'number' || typeof o.targetPort === 'string') sp.targetPort = o.targetPort;
    const app = r.string(o.appProtocol, `spec.ports[${i}].appProtocol`);
    if (app) sp.appProtocol = app;
    ports.push(sp);
  });
  const type = r.string(spec.type, 'spec.type') ?? 'ClusterIP';
  return { ref: r.ref, meta, type, headless: spec.clusterIP === 'None', ports };
}

function readSlice(r: Reader, raw: Json, meta: Meta): EndpointSlice {
  const addresses: string[] = [];
  r.array(raw.endpoints, 'endpoints').forEach((e, i) => {
    const o = r.object(e, `endpoints[${i}]`);
    const cond = r.object(o?.conditions, `endpoints[${i}].conditions`);
    // Kubernetes: a nil `ready` means ready; only an explicit false takes an endpoint out.
    if (cond?.ready === false) return;
    r.array(o?.addresses, `endpoints[${i}].addresses`).forEach((a, j) => {
      const addr = r.string(a, `endpoints[${i}].addresses[${j}]`);
      if (addr && isIP(addr) === 0) r.invalid(`endpoints[${i}].addresses[${j}]`, `endpoints[${i}].addresses[${j}]: ${JSON.stringify(addr)} is not an IP address`);
      else if (addr) addresses.push(addr);
    });
  });
  const ports: { name: string; port: number }[] = [];
  r.array(raw.ports, 'ports').forEach((p, i) => {
    const o = r.object(p, `ports[${i}]`);
    const port = r.integer(o?.port, `ports[${i}].port`, 1, 65535);
    if (port !== undefined) ports.push({ name: typeof o?.name === 'string' ? o.name : '', port });
  });
  const slice: EndpointSlice = { ref: r.ref, meta, addresses, ports };
  const svc = meta.labels['kubernetes.io/service-name'];
  if (svc) slice.serviceName = svc;
  else r.diags.warning('Ignored', 'EndpointSlice has no kubernetes.io/service-name label, so no Service uses it', r.ref, 'metadata.labels');
  return slice;
}

function readPod(raw: Json, meta: Meta, r: Reader): Pod {
  const status = r.object(raw.status, 'status') ?? {};
  const ip = typeof status.podIP === 'string' && isIP(status.podIP) !== 0 ? status.podIP : undefined;
  if (status.podIP !== undefined && ip === undefined) r.invalid('status.podIP', `status.podIP: ${JSON.stringify(status.podIP)} is not an IP address`);
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const readyCond = conditions.find((c) => isObject(c) && c.type === 'Ready');
  // Without reported conditions (a hand-written manifest) a Running Pod counts as ready.
  const ready = status.phase === 'Running' && (readyCond === undefined || (isObject(readyCond) && readyCond.status === 'True'));
  const pod: Pod = { ref: r.ref, meta, ready };
  if (ip) pod.ip = ip;
  return pod;
}

function readGrant(r: Reader, spec: Json, meta: Meta): ReferenceGrant {
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

function readPoolSelector(r: Reader, spec: Json): { selector: Record<string, string>; targetPorts: number[]; h2c: boolean } | undefined {
  const sel = r.object(spec.selector, 'spec.selector');
  const selector = r.labels(sel?.matchLabels, 'spec.selector.matchLabels');
  if (Object.keys(selector).length === 0) {
    r.invalid('spec.selector.matchLabels', 'spec.selector.matchLabels must have at least 1 item');
    return undefined;
  }
  const targetPorts: number[] = [];
  r.array(spec.targetPorts, 'spec.targetPorts').forEach((p, i) => {
    const n = r.integer(r.object(p, `spec.targetPorts[${i}]`)?.number, `spec.targetPorts[${i}].number`, 1, 65535, true);
    if (n !== undefined) targetPorts.push(n);
  });
  if (targetPorts.length === 0) {
    r.invalid('spec.targetPorts', 'spec.targetPorts must have at least 1 item');
    return undefined;
  }
  if (new Set(targetPorts).size !== targetPorts.length) {
    r.invalid('spec.targetPorts', 'spec.targetPorts: port number must be unique');
    return undefined;
  }
  const app = r.oneOf(spec.appProtocol, 'spec.appProtocol', ['http', 'kubernetes.io/h2c'] as const, 'http');
  return { selector, targetPorts, h2c: app === 'kubernetes.io/h2c' };
}

function readBackendPool(r: Reader, spec: Json, meta: Meta): Pool | undefined {
  const base = readPoolSelector(r, spec);
  if (!base) return undefined;
  const pool: Pool = { ref: r.ref, meta, kind: 'BackendPool', ...base };
  if (spec.loadBalancer !== undefined) {
    const lb = readLoadBalancer(r, spec.loadBalancer, 'spec.loadBalancer');
    if (!lb) return undefined;
    pool.lb = lb;
  }
  return pool;
}

function readInferencePool(r: Reader, spec: Json, meta: Meta): Pool | undefined {
  const base = readPoolSelector(r, spec);
  if (!base) return undefined;
  const pool: Pool = { ref: r.ref, meta, kind: 'InferencePool', ...base };
  if (spec.endpointPickerRef === undefined) {
    r.diags.warning('NoEndpointPicker', 'InferencePool has no endpointPickerRef; unless a LoadBalancerPolicy gives it one, its endpoints are load-balanced round robin', r.ref, 'spec.endpointPickerRef');
    return pool;
  }
  const ref = readPickerRef(r, spec.endpointPickerRef, 'spec.endpointPickerRef');
  const epr = r.object(spec.endpointPickerRef, 'spec.endpointPickerRef');
  const failureMode = r.oneOf(epr?.failureMode, 'spec.endpointPickerRef.failureMode', ['FailOpen', 'FailClose'] as const, 'FailClose');
  if (!ref || !failureMode) return undefined;
  // GIE's pool is an External pool with one picker and the protocol's defaults.
  pool.lb = {
    type: 'External',
    external: {
      refs: [ref],
      failureMode,
      fallback: 'RoundRobin',
      endpointSource: 'Metadata',
      messageTimeoutMs: 200,
      requestBodyMode: 'FullDuplexStreamed',
      responseBodyMode: 'None',
      reportServedEndpoint: false,
      maxEndpoints: 1,
    },
  };
  return pool;
}

function readPolicy(r: Reader, spec: Json, meta: Meta): Policy | undefined {
  const targets: PolicyTarget[] = [];
  r.array(spec.targetRefs, 'spec.targetRefs').forEach((t, index) => {
    const p = `spec.targetRefs[${index}]`;
    const o = r.object(t, p);
    // group is required but may be empty: "" is the core group of a Service.
    const group = o?.group === undefined ? (r.invalid(`${p}.group`, `${p}.group is required`), undefined) : r.string(o.group, `${p}.group`);
    const kind = r.string(o?.kind, `${p}.kind`, true);
    const name = r.string(o?.name, `${p}.name`, true);
    if (group === undefined || !kind || !name) return;
    const allowed = (group === '' && kind === 'Service') || (group === GROUP && kind === 'BackendPool') || (group === INFERENCE_GROUP && kind === 'InferencePool');
    if (!allowed) {
      r.invalid(p, `${p}: each targetRef must be a Service (group ""), a BackendPool (group extlb.dev) or an InferencePool (group inference.networking.k8s.io)`);
      return;
    }
    const target: PolicyTarget = { index, group, kind, name };
    const section = r.string(o?.sectionName, `${p}.sectionName`);
    if (section) {
      if (kind !== 'Service') {
        r.invalid(`${p}.sectionName`, `${p}: sectionName may only be set when the target is a Service`);
        return;
      }
      target.sectionName = section;
    }
    targets.push(target);
  });
  if (targets.length === 0) r.invalid('spec.targetRefs', 'spec.targetRefs must have at least 1 valid item');
  const policy: Policy = { ref: r.ref, meta, targets };
  const lb = readLoadBalancer(r, spec.loadBalancer, 'spec.loadBalancer');
  if (lb) policy.lb = lb;
  else if (spec.loadBalancer === undefined) r.invalid('spec.loadBalancer', 'spec.loadBalancer is required');
  return policy;
}

function push<T>(map: Map<string, T[]>, k: string, v: T): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/** Kinds the converter reads, keyed by `apiVersion group` + kind. */
const KNOWN: Record<string, string> = {
  [`${GATEWAY_GROUP}/Gateway`]: 'Gateway',
  [`${GATEWAY_GROUP}/HTTPRoute`]: 'HTTPRoute',
  [`${GATEWAY_GROUP}/ReferenceGrant`]: 'ReferenceGrant',
  [`${GATEWAY_GROUP}/GatewayClass`]: 'GatewayClass',
  '/Service': 'Service',
  '/Pod': 'Pod',
  '/Namespace': 'Namespace',
  'discovery.k8s.io/EndpointSlice': 'EndpointSlice',
  [`${GROUP}/BackendPool`]: 'BackendPool',
  [`${GROUP}/LoadBalancerPolicy`]: 'LoadBalancerPolicy',
  [`${INFERENCE_GROUP}/InferencePool`]: 'InferencePool',
};

function identity(raw: unknown, defaultNamespace: string): string | undefined {
  if (!isObject(raw) || !isObject(raw.metadata) || typeof raw.metadata.name !== 'string') return undefined;
  const ns = typeof raw.metadata.namespace === 'string' && raw.metadata.namespace !== '' ? raw.metadata.namespace : defaultNamespace;
  return [String(raw.apiVersion), String(raw.kind), ns, raw.metadata.name].join('\u0000');
}

/**
 * Drops repeated objects (same apiVersion, kind, namespace and name). Which copy is kept must not
 * depend on input order, so it is the one whose JSON sorts first.
 */
function unique(objects: readonly unknown[], diags: Diagnostics, defaultNamespace: string): unknown[] {
  const byId = new Map<string, unknown[]>();
  const out: unknown[] = [];
  for (const raw of objects) {
    const id = identity(raw, defaultNamespace);
    if (id === undefined) out.push(raw);
    else byId.set(id, [...(byId.get(id) ?? []), raw]);
  }
  for (const [id, copies] of byId) {
    if (copies.length > 1) {
      const [apiVersion, kind, namespace, name] = id.split('\u0000') as [string, string, string, string];
      copies.sort((a, b) => compare(JSON.stringify(a), JSON.stringify(b)));
      diags.error('Duplicate', `${kind} ${namespace}/${name} (${apiVersion}) appears ${copies.length} times; one copy is used`, { kind, namespace, name });
    }
    out.push(copies[0]);
  }
  return out;
}

/** Reads and indexes every object; unknown kinds are reported and skipped. */
export function readInputs(objects: readonly unknown[], diags: Diagnostics, parseDuration: (v: unknown) => number | undefined, defaultNamespace = 'default'): Inputs {
  const inputs: Inputs = {
    gateways: [],
    routes: [],
    services: new Map(),
    slicesByService: new Map(),
    pods: new Map(),
    grants: new Map(),
    pools: new Map(),
    policies: [],
    namespaces: new Map(),
  };
  for (const raw of unique(objects, diags, defaultNamespace)) {
    if (!isObject(raw)) {
      diags.error('Invalid', 'a manifest is not an object');
      continue;
    }
    const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
    const kindName = typeof raw.kind === 'string' ? raw.kind : '<no kind>';
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
    const kind = KNOWN[`${group}/${kindName}`];
    // List kinds (`kubectl get -o yaml`) carry their objects in items.
    if (kindName.endsWith('List') && Array.isArray(raw.items)) {
      const nested = readInputs(raw.items, diags, parseDuration, defaultNamespace);
      mergeInputs(inputs, nested);
      continue;
    }
    const meta = readMeta(raw, kindName, diags, kind === 'Namespace' ? '' : defaultNamespace);
    if (!meta) continue;
    const ref: ObjectRef = kind === 'Namespace' ? { kind: kindName, name: meta.name } : { kind: kindName, namespace: meta.namespace, name: meta.name };
    if (!kind || kind === 'GatewayClass') {
      if (!kind) diags.info('IgnoredKind', `${apiVersion || '<no apiVersion>'} ${kindName} is not an input of the converter and is ignored`, ref);
      continue;
    }
    const r = new Reader(diags, ref);
    const spec = isObject(raw.spec) ? raw.spec : {};
    const k = key(meta.namespace, meta.name);
    switch (kind) {
      case 'Gateway':
        inputs.gateways.push(readGateway(r, spec, meta));
        break;
      case 'HTTPRoute':
        inputs.routes.push(readRoute(r, spec, meta, parseDuration));
        break;
      case 'ReferenceGrant':
        push(inputs.grants, meta.namespace, readGrant(r, spec, meta));
        break;
      case 'Service':
        inputs.services.set(k, readService(r, spec, meta));
        break;
      case 'EndpointSlice': {
        const slice = readSlice(r, raw, meta);
        if (slice.serviceName) push(inputs.slicesByService, key(meta.namespace, slice.serviceName), slice);
        break;
      }
      case 'Pod':
        push(inputs.pods, meta.namespace, readPod(raw, meta, r));
        break;
      case 'Namespace':
        inputs.namespaces.set(meta.name, meta.labels);
        break;
      case 'BackendPool':
      case 'InferencePool': {
        const pool = kind === 'BackendPool' ? readBackendPool(r, spec, meta) : readInferencePool(r, spec, meta);
        if (pool) inputs.pools.set(`${kind}/${k}`, pool);
        break;
      }
      case 'LoadBalancerPolicy': {
        const policy = readPolicy(r, spec, meta);
        if (policy) inputs.policies.push(policy);
        break;
      }
    }
  }
  sortInputs(inputs);
  return inputs;
}

function mergeInputs(into: Inputs, from: Inputs): void {
  into.gateways.push(...from.gateways);
  into.routes.push(...from.routes);
  into.policies.push(...from.policies);
  for (const [k, v] of from.services) into.services.set(k, v);
  for (const [k, v] of from.pools) into.pools.set(k, v);
  for (const [k, v] of from.namespaces) into.namespaces.set(k, v);
  for (const [k, v] of from.slicesByService) for (const s of v) push(into.slicesByService, k, s);
  for (const [k, v] of from.pods) for (const p of v) push(into.pods, k, p);
  for (const [k, v] of from.grants) for (const g of v) push(into.grants, k, g);
}

/** Input order must not change the output, so every list is put in a canonical order here. */
function sortInputs(inputs: Inputs): void {
  inputs.gateways.sort(byAge);
  inputs.routes.sort(byAge);
  inputs.policies.sort(byAge);
  for (const list of inputs.slicesByService.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
  for (const list of inputs.pods.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
  for (const list of inputs.grants.values()) list.sort((a, b) => compare(a.meta.name, b.meta.name));
}
