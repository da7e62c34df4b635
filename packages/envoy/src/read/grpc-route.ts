// GRPCRoute as written. It reads into the same record as an HTTPRoute, so that attachment,
// backends and statuses are shared: each method match also stands for the HTTP/2 path a gRPC call
// uses (`/<service>/<method>`), and GRPCRoute's own precedence is kept in `Match.grpc`.
import type { JsonObject } from '../json.js';
import { readBackendRef, readFilters, readRouteOf, readValueMatches, validRegex } from './gateway-api.js';
import type { Reader } from './reader.js';
import type { Filter, GrpcMethodMatch, RouteRecord, Match, Meta, Rule } from './records.js';

/** The API server's patterns for Exact service and method names (GRPCMethodMatch's CEL rules). */
const SERVICE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;
const SERVICE_MESSAGE = 'service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)';
const METHOD_MESSAGE = 'method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)';
const FILTER_TYPES = ['ResponseHeaderModifier', 'RequestHeaderModifier', 'RequestMirror', 'ExtensionRef'];
/** One path segment: a service or method name never contains `/`. */
const ANY = '[^/]+';

/**
 * The path a method match stands for. An Exact service and method is that one path; a regex part
 * must match its whole segment.
 */
function pathOf(m: GrpcMethodMatch): Match['path'] {
  if (m.service === undefined && m.method === undefined) return { type: 'PathPrefix', value: '/' };
  if (m.type === 'Exact' && m.service !== undefined && m.method !== undefined) return { type: 'Exact', value: `/${m.service}/${m.method}` };
  const part = (v: string | undefined) => (v === undefined ? ANY : m.type === 'Exact' ? v.replaceAll('.', '\\.') : `(?:${v})`);
  return { type: 'RegularExpression', value: `/${part(m.service)}/${part(m.method)}` };
}

function readMethod(r: Reader, raw: unknown, path: string): GrpcMethodMatch | undefined {
  const o = r.object(raw, path);
  if (!o) return { type: 'Exact' };
  const type = r.oneOf(o.type, `${path}.type`, ['Exact', 'RegularExpression'] as const, 'Exact');
  const service = r.string(o.service, `${path}.service`) || undefined;
  const method = r.string(o.method, `${path}.method`) || undefined;
  if (!type) return undefined;
  if (service === undefined && method === undefined) {
    r.invalid(path, "One or both of 'service' or 'method' must be specified");
    return undefined;
  }
  const valid = (value: string | undefined, field: 'service' | 'method', pattern: RegExp, message: string): boolean => {
    if (value === undefined) return true;
    if (type === 'RegularExpression') return validRegex(r, value, `${path}.${field}`);
    if (!pattern.test(value)) r.invalid(`${path}.${field}`, message);
    return pattern.test(value);
  };
  if (!valid(service, 'service', SERVICE, SERVICE_MESSAGE) || !valid(method, 'method', METHOD, METHOD_MESSAGE)) return undefined;
  const m: GrpcMethodMatch = { type };
  if (service !== undefined) m.service = service;
  if (method !== undefined) m.method = method;
  return m;
}

function readMatch(r: Reader, raw: unknown, path: string, index: number): Match | undefined {
  const o = r.object(raw, path) ?? {};
  const grpc = readMethod(r, o.method, `${path}.method`);
  if (!grpc) return undefined;
  return { index, path: pathOf(grpc), headers: readValueMatches(r, o.headers, `${path}.headers`, true), queryParams: [], grpc };
}

/** GRPCRoute's filter types; an HTTPRoute-only one is refused as the API server would, and answers like an unsupported one. */
function readGrpcFilters(r: Reader, raw: unknown, path: string, namespace: string): Filter[] {
  return readFilters(r, raw, path, namespace).map((f): Filter => {
    const type = f.type === 'Unsupported' ? f.name : f.type;
    if (FILTER_TYPES.includes(type)) return f;
    r.invalid(`${f.path}.type`, `Unsupported value: ${JSON.stringify(type)}: supported values: ${FILTER_TYPES.map((t) => `"${t}"`).join(', ')}`);
    return { index: f.index, path: f.path, type: 'Unsupported', name: type };
  });
}

function readRule(r: Reader, raw: unknown, path: string, index: number, namespace: string): Rule {
  const o: JsonObject = r.object(raw, path) ?? {};
  const rawMatches = r.array(o.matches, `${path}.matches`);
  const rule: Rule = {
    index,
    matches: (rawMatches.length === 0 ? [{}] : rawMatches).flatMap((m, i) => readMatch(r, m, `${path}.matches[${i}]`, i) ?? []),
    filters: readGrpcFilters(r, o.filters, `${path}.filters`, namespace),
    backendRefs: r.array(o.backendRefs, `${path}.backendRefs`).flatMap((b, i) => readBackendRef(r, b, `${path}.backendRefs[${i}]`, i, namespace, true) ?? []),
    timeouts: {},
    sessionPersistence: o.sessionPersistence !== undefined,
  };
  const name = r.string(o.name, `${path}.name`);
  if (name) rule.name = name;
  return rule;
}

export function readGrpcRoute(r: Reader, spec: JsonObject, meta: Meta): RouteRecord {
  return readRouteOf('GRPCRoute', readRule, r, spec, meta);
}
