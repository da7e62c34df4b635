// Checks generated configuration against Envoy's own API protos, as Envoy would when loading it:
// strict proto3 JSON (unknown fields, wrong types and unknown enum values fail, every `@type` is
// resolved) by the one proto3 JSON walker the xDS server encodes with, plus the protoc-gen-validate
// rules written in the protos, the version a field needs, and the load-time rules Envoy's C++
// enforces beyond the protos.
import type protobuf from 'protobufjs';
import type { EnvoyTarget } from '../envoy-target.js';
import { type JsonObject, isObject } from '../json.js';
import { EXT_PROC, loadEnvoyProtos } from '../proto/protos.js';
import { ProtoJson, type ProtoRules, type Report, parseProtoDuration } from '../proto/proto-json.js';
import type { ValidationIssue } from './issue.js';
import { LoadRules } from './load-rules.js';

export type { ValidationIssue } from './issue.js';

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

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: Envoy refuses NUL, CR and LF in header values
const HEADER_VALUE = /^[^\u0000\n\r]*$/;

function at(path: string, field: protobuf.Field): string {
  return path ? `${path}.${field.name}` : field.name;
}

/** protoc-gen-validate's rules as the protos write them, and the Envoy release each field needs. */
class EnvoyRules implements ProtoRules {
  constructor(
    private readonly release: number,
    private readonly target: EnvoyTarget,
  ) {}

  message(_type: protobuf.Type, name: string, path: string, report: Report): void {
    this.since(name, path || name, report);
  }

  field(message: string, field: protobuf.Field, value: unknown, path: string, report: Report): void {
    if (field.options?.deprecated) report(path, `field ${message}.${field.name} is deprecated`);
    this.since(`${message}.${field.name}`, path, report);
    if (!field.repeated || field.map || !Array.isArray(value)) return;
    const min = field.options?.['(validate.rules).repeated.min_items'];
    const max = field.options?.['(validate.rules).repeated.max_items'];
    if (typeof min === 'number' && value.length < min) report(path, `value must contain at least ${min} item(s)`);
    if (typeof max === 'number' && value.length > max) report(path, `value must contain at most ${max} item(s)`);
  }

  value(field: protobuf.Field, value: unknown, path: string, report: Report): void {
    const o = field.options ?? {};
    if (typeof value === 'string') {
      this.stringRules(o, value, path, report);
      this.durationRules(o, value, path, report);
    }
    this.numberRules(o, value, path, report);
    if (o['(validate.rules).bool.const'] !== undefined && value !== o['(validate.rules).bool.const'])
      report(path, `value must equal ${String(o['(validate.rules).bool.const'])}`);
  }

  fieldsSet(type: protobuf.Type, name: string, set: ReadonlySet<protobuf.Field>, path: string, report: Report): void {
    for (const oneof of type.oneofsArray) {
      if (oneof.options?.['(validate.required)'] && !oneof.fieldsArray.some((f) => set.has(f)))
        report(path, `one of ${oneof.oneof.join(', ')} is required in ${name}`);
    }
    for (const f of type.fieldsArray) {
      if (set.has(f)) continue;
      // PGV applies `required` to a oneof member only when that member is the one set.
      const inOneof = f.partOf !== null && f.partOf.fieldsArray.length > 1;
      if (!inOneof && f.options?.['(validate.rules).message.required']) report(at(path, f), 'value is required');
      const min = f.options?.['(validate.rules).repeated.min_items'] ?? 0;
      if (f.repeated && min > 0) report(at(path, f), `value must contain at least ${min} item(s)`);
    }
  }

  private since(fullName: string, path: string, report: Report): void {
    const v = SINCE[fullName];
    if (v !== undefined && this.release < v) report(path, `${fullName} needs Envoy ${Math.floor(v / 100)}.${v % 100} or newer (target ${this.target})`);
  }

  private stringRules(o: Record<string, unknown>, value: string, path: string, report: Report): void {
    const min = o['(validate.rules).string.min_len'] ?? o['(validate.rules).string.min_bytes'];
    if (typeof min === 'number' && value.length < min) report(path, `value length must be at least ${min}`);
    const max = o['(validate.rules).string.max_bytes'] ?? o['(validate.rules).string.max_len'];
    if (typeof max === 'number' && Buffer.byteLength(value) > max) report(path, `value length must be at most ${max}`);
    const pattern = o['(validate.rules).string.pattern'];
    if (typeof pattern === 'string' && !new RegExp(pattern, 'u').test(value)) report(path, `value does not match regex pattern ${JSON.stringify(pattern)}`);
    const wk = o['(validate.rules).string.well_known_regex'];
    const strict = o['(validate.rules).string.strict'] !== false;
    if (wk === 'HTTP_HEADER_NAME' && strict && !HEADER_NAME.test(value)) report(path, 'value is not a valid HTTP header name');
    if (wk === 'HTTP_HEADER_VALUE' && !HEADER_VALUE.test(value)) report(path, 'value is not a valid HTTP header value');
  }

  private numberRules(o: Record<string, unknown>, value: unknown, path: string, report: Report): void {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : undefined;
    if (n === undefined) return;
    for (const [k, limit] of Object.entries(o)) {
      const m = /^\(validate\.rules\)\.(?:u?int(?:32|64)|double|float)\.(gt|gte|lt|lte)$/.exec(k);
      if (!m || typeof limit !== 'number') continue;
      const op = m[1];
      const ok = op === 'gt' ? n > limit : op === 'gte' ? n >= limit : op === 'lt' ? n < limit : n <= limit;
      if (!ok) report(path, `value must be ${op} ${limit}`);
    }
  }

  private durationRules(o: Record<string, unknown>, value: string, path: string, report: Report): void {
    const d = parseProtoDuration(value);
    if (!d || 'range' in d) return;
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      const s = o[`(validate.rules).duration.${op}.seconds`];
      const ns = o[`(validate.rules).duration.${op}.nanos`];
      if (s === undefined && ns === undefined) continue;
      const limit = BigInt(typeof s === 'number' ? s : 0) * 1_000_000_000n + BigInt(typeof ns === 'number' ? ns : 0);
      const nanos = d.totalNanos;
      const ok = op === 'gt' ? nanos > limit : op === 'gte' ? nanos >= limit : op === 'lt' ? nanos < limit : nanos <= limit;
      if (!ok) report(path, `duration must be ${op} ${limit / 1_000_000_000n}s`);
    }
  }
}

export class EnvoyValidator {
  private readonly rules: EnvoyRules;
  private readonly json: ProtoJson;

  constructor(
    readonly root: protobuf.Root,
    readonly target: EnvoyTarget = '1.38',
    json?: ProtoJson,
  ) {
    this.rules = new EnvoyRules(RELEASE[target], target);
    this.json = json ?? new ProtoJson(root);
  }

  /** The same protos, checked for another Envoy release. */
  forTarget(target: EnvoyTarget): EnvoyValidator {
    return new EnvoyValidator(this.root, target, this.json);
  }

  /** Strict proto3 JSON check of `value` as message `typeName`, protoc-gen-validate rules included. */
  validateMessage(typeName: string, value: unknown, path = ''): ValidationIssue[] {
    return this.json.check(typeName, value, path, this.rules);
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
        issues.push(...this.validateMessage('google.protobuf.Any', r, `${k}[${i}]`));
      });
    }
    new LoadRules(issues, lists.clusters ?? [], lists.endpoints ?? [], lists.routes ?? [], lists.secrets ?? []).run(lists.listeners ?? [], '');
    return issues;
  }
}

let shared: EnvoyValidator | undefined;

/** Loads the protos once per process (about half a second) and returns a validator for `target`. */
export function loadEnvoyValidator(target: EnvoyTarget = '1.38'): EnvoyValidator {
  shared ??= new EnvoyValidator(loadEnvoyProtos());
  return shared.forTarget(target);
}
