// Checks generated configuration against Envoy's own API protos, as Envoy would when loading it:
// strict proto3 JSON (unknown fields, wrong types and unknown enum values fail, every `@type` is
// resolved), the protoc-gen-validate rules written in the protos, the version a field needs, and
// the load-time rules Envoy's C++ enforces beyond the protos.
//
// The protos come from @grpc/grpc-js-xds, pinned to an Envoy API of mid-2024. The few messages and
// values extlb needs that are newer (override_host, FULL_DUPLEX_STREAMED, newer ext_proc fields) are
// added below from the field tables of the Envoy API (names, numbers, types, validation rules).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import type { EnvoyTarget } from './clusters.js';
import { INVALID_BACKEND_CLUSTER, NAME } from './envoy-names.js';

export interface ValidationIssue {
  path: string;
  message: string;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

const ENTRY_FILES = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/config/core/v3/http_service.proto',
  'envoy/type/v3/http_status.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto',
  'envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto',
  'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
  'envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto',
  'envoy/extensions/load_balancing_policies/random/v3/random.proto',
  'envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto',
  'envoy/extensions/load_balancing_policies/maglev/v3/maglev.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
];

/** envoy/extensions/load_balancing_policies/override_host/v3/override_host.proto (Envoy 1.35; field 2 since 1.38). */
const OVERRIDE_HOST_PROTO = `
syntax = "proto3";
package envoy.extensions.load_balancing_policies.override_host.v3;
import "envoy/config/cluster/v3/cluster.proto";
import "envoy/type/metadata/v3/metadata.proto";
import "validate/validate.proto";
message OverrideHost {
  message OverrideHostSource {
    string header = 1 [(validate.rules).string = {well_known_regex: HTTP_HEADER_VALUE, strict: false}];
    envoy.type.metadata.v3.MetadataKey metadata = 2;
  }
  repeated OverrideHostSource override_host_sources = 1 [(validate.rules).repeated = {min_items: 1}];
  envoy.type.metadata.v3.MetadataKey selected_host_key = 2;
  envoy.config.cluster.v3.LoadBalancingPolicy fallback_policy = 3 [(validate.rules).message = {required: true}];
}
`;

/** ext_proc additions after the bundled API: `ExtProcHttpService` is field 20's message. */
const EXT_PROC_ADDITIONS = `
syntax = "proto3";
package envoy.extensions.filters.http.ext_proc.v3;
import "envoy/config/core/v3/http_service.proto";
message ExtProcHttpService {
  envoy.config.core.v3.HttpService http_service = 1;
}
`;

const EXT_PROC = 'envoy.extensions.filters.http.ext_proc.v3';

/** Fields added after the bundled protos: [message, field, number, type, rule, repeated]. */
const ADDED_FIELDS: [string, string, number, string, boolean?][] = [
  [`${EXT_PROC}.ExternalProcessor`, 'http_service', 20, 'ExtProcHttpService'],
  [`${EXT_PROC}.ExternalProcessor`, 'send_body_without_waiting_for_header_response', 21, 'bool'],
  [`${EXT_PROC}.ExternalProcessor`, 'allowed_override_modes', 22, 'ProcessingMode', true],
  [`${EXT_PROC}.ExternalProcessor`, 'on_processing_response', 23, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.ExternalProcessor`, 'status_on_error', 24, 'envoy.type.v3.HttpStatus'],
  [`${EXT_PROC}.ExternalProcessor`, 'processing_request_modifier', 25, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.ExternalProcessor`, 'allow_content_length_header', 26, 'bool'],
  [`${EXT_PROC}.ExtProcOverrides`, 'failure_mode_allow', 8, 'google.protobuf.BoolValue'],
  [`${EXT_PROC}.ExtProcOverrides`, 'processing_request_modifier', 9, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.MetadataOptions`, 'cluster_metadata_forwarding_namespaces', 3, 'MetadataOptions.MetadataNamespaces'],
];

/** The first Envoy release that accepts a field or message; the bundled API predates them. */
const SINCE: Record<string, number> = {
  'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost': 135,
  'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost.selected_host_key': 138,
  [`${EXT_PROC}.ExternalProcessor.on_processing_response`]: 135,
  [`${EXT_PROC}.ExternalProcessor.status_on_error`]: 136,
  [`${EXT_PROC}.ExternalProcessor.processing_request_modifier`]: 136,
  [`${EXT_PROC}.ExternalProcessor.allow_content_length_header`]: 138,
  [`${EXT_PROC}.ExtProcOverrides.failure_mode_allow`]: 135,
  [`${EXT_PROC}.ExtProcOverrides.processing_request_modifier`]: 136,
  [`${EXT_PROC}.MetadataOptions.cluster_metadata_forwarding_namespaces`]: 137,
};

/** legacy means "older than 1.35": the newest such release whose API the walker accepts. */
const RELEASE: Record<EnvoyTarget, number> = { legacy: 134, '1.35': 135, '1.38': 138 };

function protoRoots(): string[] {
  const require = createRequire(import.meta.url);
  // grpc-js-xds exports no package.json; its main file sits in build/src.
  const xds = join(dirname(require.resolve('@grpc/grpc-js-xds')), '..', '..', 'deps');
  const pbjs = dirname(require.resolve('protobufjs/package.json'));
  return [join(xds, 'envoy-api'), join(xds, 'googleapis'), join(xds, 'protoc-gen-validate'), join(xds, 'xds'), pbjs];
}

function loadRoot(): protobuf.Root {
  const roots = protoRoots();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const r of roots) {
      const p = join(r, target);
      if (existsSync(p)) return p;
    }
    return target; // google/protobuf/*.proto: protobufjs has them built in
  };
  root.loadSync(ENTRY_FILES, { keepCase: true });
  protobuf.parse(OVERRIDE_HOST_PROTO, root, { keepCase: true });
  protobuf.parse(EXT_PROC_ADDITIONS, root, { keepCase: true });
  const body = root.lookupEnum(`${EXT_PROC}.ProcessingMode.BodySendMode`);
  if (body.values.FULL_DUPLEX_STREAMED === undefined) body.add('FULL_DUPLEX_STREAMED', 4);
  if (body.values.GRPC === undefined) body.add('GRPC', 5);
  for (const [message, field, id, type, repeated] of ADDED_FIELDS) {
    const t = root.lookupType(message);
    if (t.fields[field]) continue;
    const f = new protobuf.Field(field, id, type, repeated ? 'repeated' : undefined);
    t.add(f);
    f.resolve(); // the type is already resolved, so resolveAll() would skip the new field
  }
  // Newer APIs accept http_service instead; "exactly one of the two" is a load-time rule below.
  const grpc = root.lookupType(`${EXT_PROC}.ExternalProcessor`).fields.grpc_service;
  if (grpc?.options) delete grpc.options['(validate.rules).message.required'];
  root.resolveAll();
  return root;
}

const WRAPPERS: Record<string, string> = {
  DoubleValue: 'double',
  FloatValue: 'float',
  Int64Value: 'int64',
  UInt64Value: 'uint64',
  Int32Value: 'int32',
  UInt32Value: 'uint32',
  BoolValue: 'bool',
  StringValue: 'string',
  BytesValue: 'bytes',
};

const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;

function durationNanos(v: string): bigint | undefined {
  const m = DURATION.exec(v);
  if (!m) return undefined;
  const nanos = BigInt(m[2] ?? '0') * 1_000_000_000n + BigInt((m[3] ?? '').padEnd(9, '0') || '0');
  return m[1] ? -nanos : nanos;
}

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const HEADER_VALUE = /^[^\u0000\n\r]*$/;

export class EnvoyValidator {
  private readonly release: number;
  private readonly jsonNames = new Map<protobuf.Type, Map<string, protobuf.Field>>();

  constructor(
    readonly root: protobuf.Root,
    readonly target: EnvoyTarget = '1.38',
  ) {
    this.release = RELEASE[target];
  }

  /** The same protos, checked for another Envoy release. */
  forTarget(target: EnvoyTarget): EnvoyValidator {
    return new EnvoyValidator(this.root, target);
  }

  /** Strict proto3 JSON check of `value` as message `typeName`, protoc-gen-validate rules included. */
  validateMessage(typeName: string, value: unknown, path = ''): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    this.message(this.root.lookupType(typeName), value, path, issues);
    return issues;
  }

  /** A bootstrap: the proto check plus Envoy's load-time rules. */
  validateBootstrap(bootstrap: unknown): ValidationIssue[] {
    const issues = this.validateMessage('envoy.config.bootstrap.v3.Bootstrap', bootstrap);
    if (!isObj(bootstrap)) return issues;
    const sr = isObj(bootstrap.static_resources) ? bootstrap.static_resources : {};
    const listeners = Array.isArray(sr.listeners) ? (sr.listeners as Json[]) : [];
    const clusters = Array.isArray(sr.clusters) ? (sr.clusters as Json[]) : [];
    new LoadRules(this.release, issues, clusters, [], undefined).run(listeners, 'static_resources');
    return issues;
  }

  /** xDS resource lists as `toXds` writes them. */
  validateXds(xds: unknown): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    if (!isObj(xds)) return [{ path: '', message: 'xDS output must be an object' }];
    const lists: Record<string, Json[]> = {};
    for (const k of ['listeners', 'routes', 'clusters', 'endpoints']) {
      const list = Array.isArray(xds[k]) ? (xds[k] as Json[]) : [];
      lists[k] = list;
      list.forEach((r, i) => this.any(r, `${k}[${i}]`, issues));
    }
    new LoadRules(this.release, issues, lists.clusters ?? [], lists.endpoints ?? [], lists.routes ?? []).run(lists.listeners ?? [], '');
    return issues;
  }

  private fieldsByJsonName(type: protobuf.Type): Map<string, protobuf.Field> {
    let m = this.jsonNames.get(type);
    if (!m) {
      m = new Map();
      for (const f of type.fieldsArray) {
        m.set(f.name, f);
        m.set(f.name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), f);
      }
      this.jsonNames.set(type, m);
    }
    return m;
  }

  private since(fullName: string, path: string, issues: ValidationIssue[]): void {
    const v = SINCE[fullName.replace(/^\./, '')];
    if (v !== undefined && this.release < v) issues.push({ path, message: `${fullName.replace(/^\./, '')} needs Envoy ${Math.floor(v / 100)}.${v % 100} or newer (target ${this.target})` });
  }

  private any(value: unknown, path: string, issues: ValidationIssue[]): void {
    if (!isObj(value) || typeof value['@type'] !== 'string') {
      issues.push({ path, message: 'an Any needs "@type"' });
      return;
    }
    const url = value['@type'];
    const name = url.slice(url.lastIndexOf('/') + 1);
    let type: protobuf.Type;
    try {
      type = this.root.lookupType(name);
    } catch {
      issues.push({ path: `${path}.@type`, message: `unknown type ${url}` });
      return;
    }
    const { '@type': _, ...rest } = value;
    this.message(type, rest, path, issues);
  }

  private message(type: protobuf.Type, value: unknown, path: string, issues: ValidationIssue[]): void {
    const full = type.fullName.replace(/^\./, '');
    this.since(full, path || full, issues);
    switch (full) {
      case 'google.protobuf.Any':
        return this.any(value, path, issues);
      case 'google.protobuf.Duration':
        if (typeof value !== 'string' || durationNanos(value) === undefined) issues.push({ path, message: `expected a duration such as "1.5s", got ${JSON.stringify(value)}` });
        return;
      case 'google.protobuf.Timestamp':
      case 'google.protobuf.FieldMask':
        if (typeof value !== 'string') issues.push({ path, message: `expected a string, got ${JSON.stringify(value)}` });
        return;
      case 'google.protobuf.Struct':
        if (!isObj(value)) issues.push({ path, message: 'expected an object (Struct)' });
        return;
      case 'google.protobuf.Value':
        return;
      case 'google.protobuf.ListValue':
        if (!Array.isArray(value)) issues.push({ path, message: 'expected a list (ListValue)' });
        return;
      case 'google.protobuf.Empty':
        if (!isObj(value) || Object.keys(value).length > 0) issues.push({ path, message: 'expected {} (Empty)' });
        return;
    }
    const wrapped = full.startsWith('google.protobuf.') ? WRAPPERS[full.slice('google.protobuf.'.length)] : undefined;
    if (wrapped) return this.scalar(wrapped, value, path, issues);
    if (!isObj(value)) {
      issues.push({ path, message: `expected an object (${full}), got ${JSON.stringify(value)}` });
      return;
    }
    const byName = this.fieldsByJsonName(type);
    const present = new Set<protobuf.Field>();
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      const field = byName.get(k);
      if (!field) {
        issues.push({ path: p, message: `unknown field "${k}" in ${full}` });
        continue;
      }
      if (present.has(field)) issues.push({ path: p, message: `field ${field.name} is set twice` });
      present.add(field);
      if (field.options?.deprecated) issues.push({ path: p, message: `field ${full}.${field.name} is deprecated` });
      this.since(`${full}.${field.name}`, p, issues);
      this.field(field, v, p, issues);
    }
    for (const oneof of type.oneofsArray) {
      const set = oneof.fieldsArray.filter((f) => present.has(f));
      if (set.length > 1) issues.push({ path, message: `only one of ${oneof.oneof.join(', ')} may be set in ${full}` });
      if (set.length === 0 && oneof.options?.['(validate.required)']) issues.push({ path, message: `one of ${oneof.oneof.join(', ')} is required in ${full}` });
    }
    for (const f of type.fieldsArray) {
      // PGV applies `required` to a oneof member only when that member is the one set.
      const inOneof = f.partOf !== null && f.partOf.fieldsArray.length > 1;
      if (!present.has(f) && !inOneof && f.options?.['(validate.rules).message.required']) issues.push({ path: path ? `${path}.${f.name}` : f.name, message: 'value is required' });
      if (!present.has(f) && f.repeated && (f.options?.['(validate.rules).repeated.min_items'] ?? 0) > 0) {
        issues.push({ path: path ? `${path}.${f.name}` : f.name, message: `value must contain at least ${f.options?.['(validate.rules).repeated.min_items']} item(s)` });
      }
    }
  }

  private field(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    const rules = field.options ?? {};
    if (field.map) {
      if (!isObj(value)) {
        issues.push({ path, message: 'expected an object (map)' });
        return;
      }
      for (const [k, v] of Object.entries(value)) this.single(field, v, `${path}[${k}]`, issues);
      return;
    }
    if (field.repeated) {
      if (!Array.isArray(value)) {
        issues.push({ path, message: 'expected a list' });
        return;
      }
      const min = rules['(validate.rules).repeated.min_items'];
      const max = rules['(validate.rules).repeated.max_items'];
      if (typeof min === 'number' && value.length < min) issues.push({ path, message: `value must contain at least ${min} item(s)` });
      if (typeof max === 'number' && value.length > max) issues.push({ path, message: `value must contain at most ${max} item(s)` });
      value.forEach((v, i) => this.single(field, v, `${path}[${i}]`, issues));
      return;
    }
    this.single(field, value, path, issues);
  }

  private single(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) {
      this.message(resolved, value, path, issues);
      this.durationRules(field, value, path, issues);
      this.numberRules(field, value, path, issues);
      return;
    }
    if (resolved instanceof protobuf.Enum) {
      const ok = typeof value === 'string' ? resolved.values[value] !== undefined : typeof value === 'number' && Object.values(resolved.values).includes(value);
      if (!ok) issues.push({ path, message: `${JSON.stringify(value)} is not a value of enum ${resolved.fullName.replace(/^\./, '')}` });
      return;
    }
    this.scalar(field.type, value, path, issues);
    this.stringRules(field, value, path, issues);
    this.numberRules(field, value, path, issues);
    if (field.options?.['(validate.rules).bool.const'] !== undefined && value !== field.options['(validate.rules).bool.const']) {
      issues.push({ path, message: `value must equal ${String(field.options['(validate.rules).bool.const'])}` });
    }
  }

  private scalar(type: string, value: unknown, path: string, issues: ValidationIssue[]): void {
    const bad = (what: string) => issues.push({ path, message: `expected ${what}, got ${JSON.stringify(value)}` });
    switch (type) {
      case 'string':
        if (typeof value !== 'string') bad('a string');
        return;
      case 'bool':
        if (typeof value !== 'boolean') bad('a boolean');
        return;
      case 'bytes':
        if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) bad('base64 bytes');
        return;
      case 'double':
      case 'float':
        if (typeof value !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(String(value))) bad('a number');
        return;
      case 'int32':
      case 'sint32':
      case 'sfixed32':
      case 'uint32':
      case 'fixed32': {
        const unsigned = type === 'uint32' || type === 'fixed32';
        const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
        if (typeof n !== 'number' || !Number.isInteger(n) || n > (unsigned ? 4294967295 : 2147483647) || n < (unsigned ? 0 : -2147483648)) bad(`an ${type}`);
        return;
      }
      default: {
        // 64-bit integers: proto3 JSON writes them as strings, numbers are accepted too.
        const ok = (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value));
        if (!ok || (type.startsWith('u') || type.startsWith('fixed')) && String(value).startsWith('-')) bad(`an ${type}`);
      }
    }
  }

  private stringRules(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    if (typeof value !== 'string') return;
    const o = field.options ?? {};
    const min = o['(validate.rules).string.min_len'] ?? o['(validate.rules).string.min_bytes'];
    if (typeof min === 'number' && value.length < min) issues.push({ path, message: `value length must be at least ${min}` });
    const max = o['(validate.rules).string.max_bytes'] ?? o['(validate.rules).string.max_len'];
    if (typeof max === 'number' && Buffer.byteLength(value) > max) issues.push({ path, message: `value length must be at most ${max}` });
    const pattern = o['(validate.rules).string.pattern'];
    if (typeof pattern === 'string' && !new RegExp(pattern, 'u').test(value)) issues.push({ path, message: `value does not match regex pattern ${JSON.stringify(pattern)}` });
    const wk = o['(validate.rules).string.well_known_regex'];
    const strict = o['(validate.rules).string.strict'] !== false;
    if (wk === 'HTTP_HEADER_NAME' && strict && !HEADER_NAME.test(value)) issues.push({ path, message: 'value is not a valid HTTP header name' });
    if (wk === 'HTTP_HEADER_VALUE' && !HEADER_VALUE.test(value)) issues.push({ path, message: 'value is not a valid HTTP header value' });
  }

  private numberRules(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : undefined;
    if (n === undefined) return;
    for (const [k, limit] of Object.entries(field.options ?? {})) {
      const m = /^\(validate\.rules\)\.(?:u?int(?:32|64)|double|float)\.(gt|gte|lt|lte)$/.exec(k);
      if (!m || typeof limit !== 'number') continue;
      const op = m[1];
      const ok = op === 'gt' ? n > limit : op === 'gte' ? n >= limit : op === 'lt' ? n < limit : n <= limit;
      if (!ok) issues.push({ path, message: `value must be ${op} ${limit}` });
    }
  }

  private durationRules(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    if (typeof value !== 'string') return;
    const nanos = durationNanos(value);
    if (nanos === undefined) return;
    const o = field.options ?? {};
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      const s = o[`(validate.rules).duration.${op}.seconds`];
      const ns = o[`(validate.rules).duration.${op}.nanos`];
      if (s === undefined && ns === undefined) continue;
      const limit = BigInt(typeof s === 'number' ? s : 0) * 1_000_000_000n + BigInt(typeof ns === 'number' ? ns : 0);
      const ok = op === 'gt' ? nanos > limit : op === 'gte' ? nanos >= limit : op === 'lt' ? nanos < limit : nanos <= limit;
      if (!ok) issues.push({ path, message: `duration must be ${op} ${limit / 1_000_000_000n}s` });
    }
  }
}

const LB_FACTORIES = new Set([
  'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
  'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
  'envoy.extensions.load_balancing_policies.random.v3.Random',
  'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
  'envoy.extensions.load_balancing_policies.maglev.v3.Maglev',
  'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost',
]);
const OVERRIDE_HOST = 'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost';

function typeName(v: unknown): string {
  return isObj(v) && typeof v['@type'] === 'string' ? v['@type'].slice(v['@type'].lastIndexOf('/') + 1) : '';
}

function policies(lbp: unknown): Json[] {
  return isObj(lbp) && Array.isArray(lbp.policies) ? (lbp.policies as Json[]) : [];
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? (v as Json[]).filter(isObj) : [];
}

/** Rules Envoy's C++ checks when it loads a configuration, which the protos cannot express. */
class LoadRules {
  private readonly clusters = new Map<string, Json>();
  private readonly routes = new Map<string, Json>();
  private readonly assignments = new Set<string>();

  constructor(
    private readonly release: number,
    private readonly issues: ValidationIssue[],
    clusters: Json[],
    endpoints: Json[],
    routes: Json[] | undefined,
  ) {
    clusters.forEach((c, i) => {
      const name = String(c.name);
      if (this.clusters.has(name)) this.issue(`clusters[${i}]`, `duplicate cluster name ${name}`);
      this.clusters.set(name, c);
      this.cluster(c, `clusters[${i}]`);
    });
    for (const e of endpoints) this.assignments.add(String(e.cluster_name));
    for (const r of routes ?? []) this.routes.set(String(r.name), r);
    for (const [name, c] of this.clusters) {
      if (c.type === 'EDS' && routes !== undefined && !this.assignments.has(String((c.eds_cluster_config as Json | undefined)?.service_name ?? name))) {
        this.issue(`clusters[${name}]`, `EDS cluster ${name} has no ClusterLoadAssignment`);
      }
    }
  }

  private issue(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  run(listeners: Json[], base: string): void {
    const names = new Set<string>();
    listeners.forEach((l, i) => {
      const p = `${base ? `${base}.` : ''}listeners[${i}]`;
      if (names.has(String(l.name))) this.issue(p, `duplicate listener name ${String(l.name)}`);
      names.add(String(l.name));
      const matches = new Set<string>();
      list(l.filter_chains).forEach((fc, j) => {
        const key = JSON.stringify(fc.filter_chain_match ?? {});
        if (matches.has(key)) this.issue(`${p}.filter_chains[${j}]`, 'multiple filter chains with the same matching rules are defined');
        matches.add(key);
        list(fc.filters).forEach((f, k) => {
          if (f.name === NAME.hcm && isObj(f.typed_config)) this.hcm(f.typed_config, `${p}.filter_chains[${j}].filters[${k}].typed_config`);
        });
      });
    });
  }

  private cluster(c: Json, p: string): void {
    const lbp = c.load_balancing_policy;
    if (lbp !== undefined) {
      if (c.lb_subset_config !== undefined) this.issue(p, 'load_balancing_policy cannot be combined with lb_subset_config');
      const ps = policies(lbp);
      if (!ps.some((x) => LB_FACTORIES.has(typeName((x.typed_extension_config as Json | undefined)?.typed_config)))) {
        this.issue(`${p}.load_balancing_policy`, `cluster: didn't find a registered load balancer factory implementation for cluster: '${String(c.name)}'`);
      }
      ps.forEach((x, i) => {
        const tc = (x.typed_extension_config as Json | undefined)?.typed_config;
        if (typeName(tc) === OVERRIDE_HOST && isObj(tc)) this.overrideHost(c, tc, `${p}.load_balancing_policy.policies[${i}].typed_extension_config.typed_config`);
      });
    }
    if (c.type === 'ORIGINAL_DST') {
      if (c.lb_policy !== 'CLUSTER_PROVIDED') this.issue(p, "Only 'CLUSTER_PROVIDED' is allowed with cluster type 'ORIGINAL_DST'");
      if (c.load_assignment !== undefined) this.issue(p, 'ORIGINAL_DST clusters must have no load assignment configured');
      const odc = isObj(c.original_dst_lb_config) ? c.original_dst_lb_config : {};
      if (odc.http_header_name !== undefined && odc.use_http_header !== true) this.issue(`${p}.original_dst_lb_config`, 'Set use_http_header to true if http_header_name is desired.');
    }
    if (c.type === 'STATIC') {
      for (const ep of list((c.load_assignment as Json | undefined)?.endpoints)) {
        for (const lbe of list(ep.lb_endpoints)) {
          const addr = (((lbe.endpoint as Json | undefined)?.address as Json | undefined)?.socket_address as Json | undefined)?.address;
          if (typeof addr !== 'string' || isIP(addr) === 0) this.issue(`${p}.load_assignment`, `STATIC cluster endpoint ${JSON.stringify(addr)} is not an IP address`);
        }
      }
    }
    if (list(c.health_checks).some((h) => h.grpc_health_check !== undefined) && !this.http2(c)) {
      this.issue(`${p}.health_checks`, 'gRPC health checks need an HTTP/2 cluster');
    }
  }

  private overrideHost(c: Json, oh: Json, p: string): void {
    if (c.type === 'ORIGINAL_DST') this.issue(p, 'override_host needs a cluster with a host set; ORIGINAL_DST has none');
    const clc = isObj(c.common_lb_config) ? c.common_lb_config : {};
    for (const k of ['zone_aware_lb_config', 'locality_weighted_lb_config', 'consistent_hashing_lb_config']) {
      if (clc[k] !== undefined) this.issue(`${p}`, `load_balancing_policy cannot be combined with common_lb_config.${k}`);
    }
    list(oh.override_host_sources).forEach((s, i) => {
      const has = (s.header !== undefined ? 1 : 0) + (s.metadata !== undefined ? 1 : 0);
      if (has === 0) this.issue(`${p}.override_host_sources[${i}]`, 'Empty override source');
      if (has === 2) this.issue(`${p}.override_host_sources[${i}]`, 'Only one override source must be set');
    });
    const fb = policies(oh.fallback_policy);
    if (!fb.some((x) => LB_FACTORIES.has(typeName((x.typed_extension_config as Json | undefined)?.typed_config)) && typeName((x.typed_extension_config as Json | undefined)?.typed_config) !== OVERRIDE_HOST)) {
      this.issue(`${p}.fallback_policy`, "dynamic forwarding LB: didn't find a registered fallback load balancer factory");
    }
  }

  private http2(c: Json): boolean {
    const opts = isObj(c.typed_extension_protocol_options) ? c.typed_extension_protocol_options[NAME.httpProtocolOptions] : undefined;
    const explicit = isObj(opts) && isObj(opts.explicit_http_config) ? opts.explicit_http_config : undefined;
    return explicit?.http2_protocol_options !== undefined;
  }

  private grpcCluster(grpc: unknown, p: string): void {
    const name = isObj(grpc) && isObj(grpc.envoy_grpc) ? grpc.envoy_grpc.cluster_name : undefined;
    if (typeof name !== 'string') return;
    const c = this.clusters.get(name);
    if (!c) this.issue(p, `gRPC service cluster ${name} does not exist`);
    else if (!this.http2(c)) this.issue(p, `gRPC service cluster ${name} must use HTTP/2`);
  }

  private processingMode(pm: unknown, p: string): void {
    if (!isObj(pm)) return;
    for (const dir of ['request', 'response']) {
      if (pm[`${dir}_body_mode`] === 'FULL_DUPLEX_STREAMED' && pm[`${dir}_trailer_mode`] !== 'SEND') {
        this.issue(p, `If the ext_proc filter has the ${dir}_body_mode set to FULL_DUPLEX_STREAMED, then the ${dir}_trailer_mode has to be set to SEND`);
      }
    }
  }

  private hcm(hcm: Json, p: string): void {
    const filters = list(hcm.http_filters);
    const last = filters[filters.length - 1];
    if (!last || last.name !== NAME.router) this.issue(`${p}.http_filters`, 'the router filter must be the last HTTP filter');
    filters.forEach((f, i) => {
      const tc = f.typed_config;
      if (f.name !== NAME.extProc || !isObj(tc)) return;
      const fp = `${p}.http_filters[${i}].typed_config`;
      if ((tc.grpc_service === undefined) === (tc.http_service === undefined)) this.issue(fp, 'One and only one of grpc_service or http_service must be configured');
      if (tc.disable_clear_route_cache === true && tc.route_cache_action !== undefined && tc.route_cache_action !== 'DEFAULT') {
        this.issue(fp, 'disable_clear_route_cache and route_cache_action can not be set to none-default at the same time.');
      }
      this.processingMode(tc.processing_mode, `${fp}.processing_mode`);
      this.grpcCluster(tc.grpc_service, `${fp}.grpc_service`);
    });
    let rc = hcm.route_config;
    if (rc === undefined && isObj(hcm.rds)) {
      rc = this.routes.get(String(hcm.rds.route_config_name));
      if (!rc) this.issue(`${p}.rds`, `route configuration ${String(hcm.rds.route_config_name)} does not exist`);
    }
    if (isObj(rc)) this.routeConfig(rc, `${p}.route_config`);
  }

  private perFilter(tpfc: unknown, p: string): void {
    if (!isObj(tpfc)) return;
    const cfg = tpfc[NAME.extProc];
    if (!isObj(cfg) || !isObj(cfg.overrides)) return;
    const o = cfg.overrides;
    this.processingMode(o.processing_mode, `${p}[${NAME.extProc}].overrides.processing_mode`);
    this.grpcCluster(o.grpc_service, `${p}[${NAME.extProc}].overrides.grpc_service`);
  }

  private routeConfig(rc: Json, p: string): void {
    const domains = new Set<string>();
    list(rc.virtual_hosts).forEach((vh, i) => {
      const vp = `${p}.virtual_hosts[${i}]`;
      for (const d of Array.isArray(vh.domains) ? vh.domains : []) {
        if (domains.has(String(d))) this.issue(vp, `Only unique values for domains are permitted. Duplicate entry of domain ${String(d)}`);
        domains.add(String(d));
      }
      list(vh.routes).forEach((r, j) => {
        const rp = `${vp}.routes[${j}]`;
        this.perFilter(r.typed_per_filter_config, `${rp}.typed_per_filter_config`);
        const ra = isObj(r.route) ? r.route : undefined;
        if (!ra) return;
        const needCluster = (name: unknown, at: string) => {
          if (typeof name === 'string' && !this.clusters.has(name) && !(name === INVALID_BACKEND_CLUSTER && ra.cluster_not_found_response_code !== undefined)) {
            this.issue(at, `route refers to cluster ${name}, which does not exist`);
          }
        };
        needCluster(ra.cluster, `${rp}.route.cluster`);
        const wc = isObj(ra.weighted_clusters) ? list(ra.weighted_clusters.clusters) : [];
        if (isObj(ra.weighted_clusters) && wc.reduce((s, c) => s + (typeof c.weight === 'number' ? c.weight : 0), 0) <= 0) this.issue(`${rp}.route.weighted_clusters`, 'the sum of weights must be greater than 0');
        wc.forEach((c, k) => {
          needCluster(c.name, `${rp}.route.weighted_clusters.clusters[${k}].name`);
          this.perFilter(c.typed_per_filter_config, `${rp}.route.weighted_clusters.clusters[${k}].typed_per_filter_config`);
        });
        list(ra.request_mirror_policies).forEach((m, k) => needCluster(m.cluster, `${rp}.route.request_mirror_policies[${k}].cluster`));
      });
    });
  }
}

let shared: EnvoyValidator | undefined;

/** Loads the protos once per process (about half a second) and returns a validator for `target`. */
export function loadEnvoyValidator(target: EnvoyTarget = '1.38'): EnvoyValidator {
  shared ??= new EnvoyValidator(loadRoot());
  return shared.forTarget(target);
}
