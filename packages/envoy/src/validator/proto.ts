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
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import type { EnvoyTarget } from '../envoy-target.js';
import { type JsonObject, isObject } from '../json.js';
import { MAX_DURATION_SECONDS } from '../limits.js';
import type { ValidationIssue } from './issue.js';
import { LoadRules } from './load-rules.js';

export type { ValidationIssue } from './issue.js';

const ENTRY_FILES = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/config/core/v3/http_service.proto',
  'envoy/type/v3/http_status.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
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

const MAX_DURATION_NANOS = BigInt(MAX_DURATION_SECONDS) * 1_000_000_000n + 999_999_999n;

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: Envoy refuses NUL, CR and LF in header values
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
    if (!isObject(bootstrap)) return issues;
    const sr = isObject(bootstrap.static_resources) ? bootstrap.static_resources : {};
    const listeners = Array.isArray(sr.listeners) ? (sr.listeners as JsonObject[]) : [];
    const clusters = Array.isArray(sr.clusters) ? (sr.clusters as JsonObject[]) : [];
    const secrets = Array.isArray(sr.secrets) ? (sr.secrets as JsonObject[]) : [];
    new LoadRules(issues, clusters, [], undefined, secrets).run(listeners, 'static_resources');
    return issues;
  }

  /** xDS resource lists as `toXds` writes them. */
  validateXds(xds: unknown): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    if (!isObject(xds)) return [{ path: '', message: 'xDS output must be an object' }];
    const lists: Record<string, JsonObject[]> = {};
    for (const k of ['listeners', 'routes', 'clusters', 'endpoints', 'secrets']) {
      const list = Array.isArray(xds[k]) ? (xds[k] as JsonObject[]) : [];
      lists[k] = list;
      list.forEach((r, i) => {
        this.any(r, `${k}[${i}]`, issues);
      });
    }
    new LoadRules(issues, lists.clusters ?? [], lists.endpoints ?? [], lists.routes ?? [], lists.secrets ?? []).run(lists.listeners ?? [], '');
    return issues;
  }

  private fieldsByJsonName(type: protobuf.Type): Map<string, protobuf.Field> {
    let m = this.jsonNames.get(type);
    if (!m) {
      m = new Map();
      for (const f of type.fieldsArray) {
        m.set(f.name, f);
        m.set(
          f.name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
          f,
        );
      }
      this.jsonNames.set(type, m);
    }
    return m;
  }

  private since(fullName: string, path: string, issues: ValidationIssue[]): void {
    const v = SINCE[fullName.replace(/^\./, '')];
    if (v !== undefined && this.release < v)
      issues.push({ path, message: `${fullName.replace(/^\./, '')} needs Envoy ${Math.floor(v / 100)}.${v % 100} or newer (target ${this.target})` });
  }

  private any(value: unknown, path: string, issues: ValidationIssue[]): void {
    if (!isObject(value) || typeof value['@type'] !== 'string') {
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
        this.any(value, path, issues);
        return;
      case 'google.protobuf.Duration': {
        const nanos = typeof value === 'string' ? durationNanos(value) : undefined;
        if (nanos === undefined) issues.push({ path, message: `expected a duration such as "1.5s", got ${JSON.stringify(value)}` });
        else if (nanos > MAX_DURATION_NANOS || nanos < -MAX_DURATION_NANOS)
          issues.push({ path, message: `duration ${String(value)} is out of the range of google.protobuf.Duration (±${MAX_DURATION_SECONDS}s)` });
        return;
      }
      case 'google.protobuf.Timestamp':
      case 'google.protobuf.FieldMask':
        if (typeof value !== 'string') issues.push({ path, message: `expected a string, got ${JSON.stringify(value)}` });
        return;
      case 'google.protobuf.Struct':
        if (!isObject(value)) issues.push({ path, message: 'expected an object (Struct)' });
        return;
      case 'google.protobuf.Value':
        return;
      case 'google.protobuf.ListValue':
        if (!Array.isArray(value)) issues.push({ path, message: 'expected a list (ListValue)' });
        return;
      case 'google.protobuf.Empty':
        if (!isObject(value) || Object.keys(value).length > 0) issues.push({ path, message: 'expected {} (Empty)' });
        return;
    }
    const wrapped = full.startsWith('google.protobuf.') ? WRAPPERS[full.slice('google.protobuf.'.length)] : undefined;
    if (wrapped) {
      this.scalar(wrapped, value, path, issues);
      return;
    }
    if (!isObject(value)) {
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
      if (!present.has(f) && !inOneof && f.options?.['(validate.rules).message.required'])
        issues.push({ path: path ? `${path}.${f.name}` : f.name, message: 'value is required' });
      if (!present.has(f) && f.repeated && (f.options?.['(validate.rules).repeated.min_items'] ?? 0) > 0) {
        issues.push({
          path: path ? `${path}.${f.name}` : f.name,
          message: `value must contain at least ${f.options?.['(validate.rules).repeated.min_items']} item(s)`,
        });
      }
    }
  }

  private field(field: protobuf.Field, value: unknown, path: string, issues: ValidationIssue[]): void {
    const rules = field.options ?? {};
    if (field.map) {
      if (!isObject(value)) {
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
      value.forEach((v, i) => {
        this.single(field, v, `${path}[${i}]`, issues);
      });
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
        if (!ok || ((type.startsWith('u') || type.startsWith('fixed')) && String(value).startsWith('-'))) bad(`an ${type}`);
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
    if (typeof pattern === 'string' && !new RegExp(pattern, 'u').test(value))
      issues.push({ path, message: `value does not match regex pattern ${JSON.stringify(pattern)}` });
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

let shared: EnvoyValidator | undefined;

/** Loads the protos once per process (about half a second) and returns a validator for `target`. */
export function loadEnvoyValidator(target: EnvoyTarget = '1.38'): EnvoyValidator {
  shared ??= new EnvoyValidator(loadRoot());
  return shared.forTarget(target);
}
