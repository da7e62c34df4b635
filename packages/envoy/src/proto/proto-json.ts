// Proto3 JSON <-> protobuf binary for Envoy's messages, with protobufjs doing the wire format. The
// one walker of proto3 JSON against Envoy's descriptors: the xDS server encodes with it, and the
// validator checks with it (adding protoc-gen-validate's rules through `ProtoRules`).
//
// protobufjs' own fromObject is not proto3 JSON: it wants Durations as {seconds, nanos}, wrappers
// as {value}, Structs as {fields}, and it silently drops unknown fields and unknown enum names.
// Config that reaches a proxy must never lose a field on the way, so this walks each message
// against its descriptor, converts the well-known types from their JSON forms and rejects
// anything the message does not have, naming the field path.
import protobuf from 'protobufjs';
import { MAX_DURATION_SECONDS } from '../limits.js';

export type JsonObject = { [key: string]: unknown };

export class ProtoJsonError extends Error {
  constructor(
    /** Where in the input, e.g. `filter_chains[0].filters[1].typed_config.stat_prefix`. */
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'ProtoJsonError';
  }
}

/** One thing wrong in a value, at its path. */
export interface ProtoJsonIssue {
  path: string;
  message: string;
}

/** Reports an issue; the encoder's throws, a checker's collects and lets the walk go on. */
export type Report = (path: string, message: string) => void;

/**
 * Rules a checker adds to the walk (the validator: protoc-gen-validate's rules, the Envoy release
 * a field needs). Each is called on values that already have their proto3 JSON form right.
 */
export interface ProtoRules {
  /** Each message value, before its fields. */
  message?(type: protobuf.Type, name: string, path: string, report: Report): void;
  /** Each field set in a message, with its whole value (a list or a map for those). */
  field?(message: string, field: protobuf.Field, value: unknown, path: string, report: Report): void;
  /** Each single value of a field (each item of a list or a map). */
  value?(field: protobuf.Field, value: unknown, path: string, report: Report): void;
  /** Each message once its fields are walked, with the fields that were set. */
  fieldsSet?(type: protobuf.Type, name: string, set: ReadonlySet<protobuf.Field>, path: string, report: Report): void;
}

/** A message ready for protobufjs' encoder: field names as in the protos, enums as numbers. */
type Wire = { [field: string]: unknown };

const WRAPPERS: Readonly<Record<string, string>> = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};

/** The well-known types whose JSON form is not an object of their fields (wrappers aside). */
const SPECIAL_JSON = new Set([
  'google.protobuf.Any',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
]);

/** What the walker needs of a message type, worked out once (protobufjs computes fullName on each read). */
interface Descriptor {
  /** The full name, without protobufjs' leading dot. */
  name: string;
  /** The scalar a wrapper type wraps. */
  wrapped: string | undefined;
  /** Set for the well-known types with a JSON form of their own (wrappers included). */
  specialJson: boolean;
  /** Fields by their proto name and their lowerCamelCase JSON name. */
  fields: Map<string, protobuf.Field>;
}

const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;
const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const INTEGER = /^-?\d+$/;
const RANGE: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

/** A google.protobuf.Duration read from its proto3 JSON form (`1.5s`, `-0.000000001s`). */
export interface ProtoDuration {
  /** Whole seconds, with the sign of the duration. */
  seconds: number;
  /** Nanoseconds, with the sign of the duration. */
  nanos: number;
  /** The whole duration in nanoseconds. */
  totalNanos: bigint;
}

/**
 * The one parser of proto3 JSON Durations: seconds with 0 to 9 fractional digits and an `s`, within
 * google.protobuf.Duration's range (±315,576,000,000 s). Undefined when `value` is not one; `range`
 * says when it has the form but not the range.
 */
export function parseProtoDuration(value: unknown): ProtoDuration | { range: false } | undefined {
  const m = typeof value === 'string' ? DURATION.exec(value) : null;
  if (!m) return undefined;
  const sign = m[1] ? -1 : 1;
  const seconds = Number(m[2]);
  if (seconds > MAX_DURATION_SECONDS) return { range: false };
  const nanos = Number((m[3] ?? '').padEnd(9, '0'));
  return { seconds: sign * seconds, nanos: sign * nanos, totalNanos: BigInt(sign) * (BigInt(m[2] ?? '0') * 1_000_000_000n + BigInt(nanos)) };
}

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A 64-bit value as protobufjs' writer takes it: two's complement halves. */
function longBits(value: bigint): { low: number; high: number } {
  const u = BigInt.asUintN(64, value);
  return { low: Number(u & 0xffff_ffffn), high: Number(u >> 32n) };
}

/** A decoded 64-bit value (a number, a Long, or bare halves) as a decimal string. */
function longString(v: unknown, unsigned: boolean): string {
  if (typeof v === 'number') return String(v);
  const { low, high } = v as { low: number; high: number };
  const u = (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
  return String(unsigned ? u : BigInt.asIntN(64, u));
}

/** Stands for a value that could not be read; the checker's walk goes on past it. */
const INVALID = Symbol('invalid');

/** One walk of a value: where its issues go, and the rules checked on the way. */
interface Walk {
  report: Report;
  rules: ProtoRules | undefined;
}

function throwing(path: string, message: string): never {
  throw new ProtoJsonError(path, message);
}

export class ProtoJson {
  private readonly descriptors = new Map<protobuf.Type, Descriptor>();
  private readonly types = new Map<string, protobuf.Type>();
  private readonly anyType: protobuf.Type;
  private readonly encoding: Walk = { report: throwing, rules: undefined };

  constructor(readonly root: protobuf.Root) {
    this.anyType = root.lookupType('google.protobuf.Any');
  }

  /** The message type a type URL (`type.googleapis.com/<full name>`) names. */
  typeOf(typeUrl: string, path = '@type'): protobuf.Type {
    const type = this.typeOfUrl(typeUrl);
    if (!type) throw new ProtoJsonError(path, `unknown type ${JSON.stringify(typeUrl)}`);
    return type;
  }

  /** Encodes proto3 JSON that carries its `@type` as a `google.protobuf.Any`. */
  encodeAny(json: unknown, path = ''): Uint8Array {
    return this.anyType.encode(this.any(json, path, this.encoding) as Wire).finish();
  }

  /** Encodes proto3 JSON as the message `typeName` (a full name such as `envoy.config.core.v3.Node`). */
  encodeMessage(typeName: string, json: unknown, path = ''): Uint8Array {
    const type = this.root.lookupType(typeName);
    return type.encode(this.message(type, json, path, this.encoding) as Wire).finish();
  }

  /**
   * Every issue of `json` as the message `typeName`, or as the Any it carries when `typeName` is
   * `google.protobuf.Any`, with `rules` checked on the way; the walk goes on past each issue.
   */
  check(typeName: string, json: unknown, path = '', rules?: ProtoRules): ProtoJsonIssue[] {
    const issues: ProtoJsonIssue[] = [];
    const walk: Walk = { report: (p, message) => issues.push({ path: p, message }), rules };
    this.message(this.root.lookupType(typeName), json, path, walk);
    return issues;
  }

  /** Decodes a `google.protobuf.Any` into proto3 JSON with its `@type`. */
  decodeAny(bytes: Uint8Array): JsonObject {
    const any = this.anyType.decode(bytes) as unknown as Wire;
    return this.decode(String(any.type_url ?? ''), (any.value as Uint8Array | undefined) ?? new Uint8Array());
  }

  /** Decodes the value of an Any (its type URL and bytes) into proto3 JSON with its `@type`. */
  decode(typeUrl: string, value: Uint8Array): JsonObject {
    const type = this.typeOf(typeUrl);
    const inner = this.toJson(type, type.decode(value) as unknown as Wire);
    return this.descriptor(type).specialJson ? { '@type': typeUrl, value: inner } : { '@type': typeUrl, ...(inner as JsonObject) };
  }

  /** Decodes the message `typeName` into proto3 JSON (field names as in the protos). */
  decodeMessage(typeName: string, bytes: Uint8Array): unknown {
    const type = this.root.lookupType(typeName);
    return this.toJson(type, type.decode(bytes) as unknown as Wire);
  }

  /** Proto3 JSON of a message protobufjs decoded: only the fields present on the wire. */
  toJson(type: protobuf.Type, message: Wire): unknown {
    const d = this.descriptor(type);
    switch (d.name) {
      case 'google.protobuf.Any':
        return this.decode(String(message.type_url ?? ''), (message.value as Uint8Array | undefined) ?? new Uint8Array());
      case 'google.protobuf.Duration':
        return durationJson(message);
      case 'google.protobuf.Timestamp':
        return timestampJson(message);
      case 'google.protobuf.FieldMask':
        return ((message.paths as string[] | undefined) ?? []).map(lowerCamel).join(',');
      case 'google.protobuf.Struct':
        return this.structJson(message);
      case 'google.protobuf.Value':
        return this.valueJson(message);
      case 'google.protobuf.ListValue':
        return ((message.values as Wire[] | undefined) ?? []).map((v) => this.valueJson(v));
    }
    if (d.wrapped) return scalarJson(d.wrapped, message.value ?? defaultScalar(d.wrapped));
    const out: JsonObject = {};
    for (const field of type.fieldsArray) {
      const v = message[field.name];
      if (field.map) {
        if (!isJsonObject(v) || Object.keys(v).length === 0) continue;
        out[field.name] = Object.fromEntries(Object.entries(v).map(([k, item]) => [k, this.singleJson(field, item)]));
      } else if (field.repeated) {
        if (!Array.isArray(v) || v.length === 0) continue;
        out[field.name] = v.map((item) => this.singleJson(field, item));
      } else if (Object.hasOwn(message, field.name) && v !== null && v !== undefined) {
        out[field.name] = this.singleJson(field, v);
      }
    }
    return out;
  }

  // ---- JSON to wire ----

  private typeOfUrl(typeUrl: string): protobuf.Type | undefined {
    let type = this.types.get(typeUrl);
    if (!type) {
      try {
        type = this.root.lookupType(typeUrl.slice(typeUrl.lastIndexOf('/') + 1));
      } catch {
        return undefined;
      }
      this.types.set(typeUrl, type);
    }
    return type;
  }

  private any(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    if (!isJsonObject(value) || typeof value['@type'] !== 'string') return invalid(walk, path, 'an Any needs "@type"');
    const typeUrl = value['@type'];
    const type = this.typeOfUrl(typeUrl);
    if (!type) return invalid(walk, join(path, '@type'), `unknown type ${JSON.stringify(typeUrl)}`);
    const { '@type': _, ...rest } = value;
    let inner: unknown = rest;
    if (this.descriptor(type).specialJson) {
      // A well-known type inside an Any keeps its JSON form under "value".
      const extra = Object.keys(rest).filter((k) => k !== 'value');
      if (extra.length > 0) return invalid(walk, join(path, extra[0] ?? ''), `an Any holding ${typeUrl} has only "value"`);
      inner = rest.value;
    }
    const message = this.message(type, inner, path, walk);
    if (message === INVALID || walk !== this.encoding) return message;
    return { type_url: typeUrl, value: type.encode(message).finish() };
  }

  private message(type: protobuf.Type, value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    const d = this.descriptor(type);
    walk.rules?.message?.(type, d.name, path, walk.report);
    if (d.specialJson) {
      switch (d.name) {
        case 'google.protobuf.Any':
          return this.any(value, path, walk);
        case 'google.protobuf.Duration':
          return duration(value, path, walk);
        case 'google.protobuf.Timestamp':
          return timestamp(value, path, walk);
        case 'google.protobuf.FieldMask':
          return fieldMask(value, path, walk);
        case 'google.protobuf.Struct':
          return this.struct(value, path, walk);
        case 'google.protobuf.Value':
          return this.value(value, path, walk);
        case 'google.protobuf.ListValue':
          return this.listValue(value, path, walk);
      }
      if (d.wrapped) {
        const v = scalar(d.wrapped, value, path, walk);
        return v === INVALID ? v : { value: v };
      }
    }
    if (!isJsonObject(value)) return invalid(walk, path, `expected an object (${d.name}), got ${describe(value)}`);
    const out: Wire = {};
    const set = new Set<protobuf.Field>();
    const oneofs = new Map<protobuf.OneOf, string>();
    for (const [key, v] of Object.entries(value)) {
      const p = join(path, key);
      const field = d.fields.get(key);
      if (!field) {
        walk.report(p, `unknown field "${key}" in ${d.name}`);
        continue;
      }
      if (set.has(field)) {
        walk.report(p, `field ${field.name} is set twice`);
        continue;
      }
      // Proto3 JSON: null stands for the default value, except where null is itself a value.
      if (v === null && !takesNull(field)) continue;
      set.add(field);
      const oneof = field.partOf;
      if (oneof) {
        const other = oneofs.get(oneof);
        if (other !== undefined) walk.report(p, `only one of ${other} and ${field.name} may be set (oneof ${oneof.name})`);
        oneofs.set(oneof, field.name);
      }
      walk.rules?.field?.(d.name, field, v, p, walk.report);
      const wire = field.map ? this.map(field, v, p, walk) : field.repeated ? this.list(field, v, p, walk) : this.single(field, v, p, walk);
      if (wire !== INVALID) out[field.name] = wire;
    }
    walk.rules?.fieldsSet?.(type, d.name, set, path, walk.report);
    return out;
  }

  private descriptor(type: protobuf.Type): Descriptor {
    let d = this.descriptors.get(type);
    if (!d) {
      const name = type.fullName.slice(1);
      const fields = new Map<string, protobuf.Field>();
      for (const f of type.fieldsArray) {
        fields.set(f.name, f);
        fields.set(lowerCamel(f.name), f);
      }
      const wrapped = WRAPPERS[name];
      d = { name, wrapped, specialJson: wrapped !== undefined || SPECIAL_JSON.has(name), fields };
      this.descriptors.set(type, d);
    }
    return d;
  }

  private single(field: protobuf.Field, value: unknown, path: string, walk: Walk): unknown {
    const t = field.resolvedType;
    const wire =
      t instanceof protobuf.Type
        ? this.message(t, value, path, walk)
        : t instanceof protobuf.Enum
          ? enumValue(t, value, path, walk)
          : scalar(field.type, value, path, walk);
    if (wire !== INVALID) walk.rules?.value?.(field, value, path, walk.report);
    return wire;
  }

  private list(field: protobuf.Field, value: unknown, path: string, walk: Walk): unknown[] | typeof INVALID {
    if (!Array.isArray(value)) return invalid(walk, path, `expected a list, got ${describe(value)}`);
    return value.map((item, i) => this.single(field, item, join(path, i), walk));
  }

  private map(field: protobuf.Field, value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    if (!isJsonObject(value)) return invalid(walk, path, `expected an object (map), got ${describe(value)}`);
    const keyType = (field as unknown as protobuf.MapField).keyType;
    const out: Wire = {};
    for (const [k, v] of Object.entries(value)) {
      if (keyType !== 'string') scalar(keyType, k, join(path, k), walk); // checks an integer key is one
      out[k] = this.single(field, v, `${path}[${JSON.stringify(k)}]`, walk);
    }
    return out;
  }

  private struct(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    if (!isJsonObject(value)) return invalid(walk, path, `expected an object (Struct), got ${describe(value)}`);
    return { fields: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.value(v, join(path, k), walk)])) };
  }

  private listValue(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    if (!Array.isArray(value)) return invalid(walk, path, `expected a list (ListValue), got ${describe(value)}`);
    return { values: value.map((v, i) => this.value(v, join(path, i), walk)) };
  }

  private value(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
    if (value === null) return { nullValue: 0 };
    if (typeof value === 'number') return { numberValue: value };
    if (typeof value === 'string') return { stringValue: value };
    if (typeof value === 'boolean') return { boolValue: value };
    if (Array.isArray(value)) {
      const list = this.listValue(value, path, walk);
      return list === INVALID ? list : { listValue: list };
    }
    if (isJsonObject(value)) {
      const struct = this.struct(value, path, walk);
      return struct === INVALID ? struct : { structValue: struct };
    }
    return invalid(walk, path, `not a JSON value: ${describe(value)}`);
  }

  // ---- wire to JSON ----

  private singleJson(field: protobuf.Field, v: unknown): unknown {
    const t = field.resolvedType;
    if (t instanceof protobuf.Type) return this.toJson(t, v as Wire);
    if (t instanceof protobuf.Enum) return isNullValue(t) ? null : (t.valuesById[v as number] ?? v);
    return scalarJson(field.type, v);
  }

  private structJson(message: Wire): JsonObject {
    const fields = (message.fields ?? {}) as Record<string, Wire>;
    return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, this.valueJson(v)]));
  }

  private valueJson(message: Wire): unknown {
    if (Object.hasOwn(message, 'numberValue')) return message.numberValue;
    if (Object.hasOwn(message, 'stringValue')) return message.stringValue;
    if (Object.hasOwn(message, 'boolValue')) return message.boolValue;
    if (Object.hasOwn(message, 'structValue')) return this.structJson(message.structValue as Wire);
    if (Object.hasOwn(message, 'listValue')) return ((message.listValue as Wire).values as Wire[] | undefined)?.map((v) => this.valueJson(v)) ?? [];
    return null;
  }
}

function invalid(walk: Walk, path: string, message: string): typeof INVALID {
  walk.report(path, message);
  return INVALID;
}

/** google.protobuf.NullValue, by name and parent: protobufjs' fullName is computed on each read. */
function isNullValue(e: protobuf.Enum): boolean {
  return e.name === 'NullValue' && e.parent?.fullName === '.google.protobuf';
}

function takesNull(field: protobuf.Field): boolean {
  const t = field.resolvedType;
  if (field.repeated || field.map || !t) return false;
  return t instanceof protobuf.Enum ? isNullValue(t) : t.fullName === '.google.protobuf.Value';
}

function enumValue(e: protobuf.Enum, value: unknown, path: string, walk: Walk): number | typeof INVALID {
  if (typeof value === 'string' && e.values[value] !== undefined) return e.values[value];
  if (typeof value === 'number' && e.valuesById[value] !== undefined) return value;
  if (value === null && isNullValue(e)) return 0;
  return invalid(walk, path, `${describe(value)} is not a value of enum ${e.fullName.slice(1)}`);
}

function scalar(type: string, value: unknown, path: string, walk: Walk): unknown {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      break;
    case 'bool':
      if (typeof value === 'boolean') return value;
      break;
    case 'bytes':
      if (typeof value === 'string' && BASE64.test(value)) return Buffer.from(value, 'base64');
      break;
    case 'double':
    case 'float':
      if (typeof value === 'number') return value;
      if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
      break;
    default: {
      const range = RANGE[type];
      if (!range) break;
      const n =
        typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : typeof value === 'string' && INTEGER.test(value) ? BigInt(value) : undefined;
      if (n === undefined || n < range[0] || n > range[1]) break;
      if (!type.endsWith('64')) return Number(n);
      return Number.isSafeInteger(value) ? value : longBits(n);
    }
  }
  return invalid(walk, path, `expected ${scalarDescription(type)}, got ${describe(value)}`);
}

function scalarDescription(type: string): string {
  switch (type) {
    case 'string':
      return 'a string';
    case 'bool':
      return 'a boolean';
    case 'bytes':
      return 'base64 bytes';
    case 'double':
    case 'float':
      return 'a number';
    default:
      return `an integer (${type})`;
  }
}

function defaultScalar(type: string): unknown {
  switch (type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'bytes':
      return new Uint8Array();
    default:
      return 0;
  }
}

function scalarJson(type: string, v: unknown): unknown {
  switch (type) {
    case 'bytes':
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'double':
    case 'float':
      return Number.isFinite(v) ? v : String(v);
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return longString(v, false);
    case 'uint64':
    case 'fixed64':
      return longString(v, true);
    default:
      return v;
  }
}

function duration(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
  const d = parseProtoDuration(value);
  if (!d) return invalid(walk, path, `expected a duration such as "1.5s", got ${describe(value)}`);
  if ('range' in d) return invalid(walk, path, `duration ${String(value)} is out of the range of google.protobuf.Duration (±${MAX_DURATION_SECONDS}s)`);
  return { seconds: d.seconds, nanos: d.nanos };
}

function durationJson(message: Wire): string {
  const seconds = BigInt(longString(message.seconds ?? 0, false));
  const nanos = Number(message.nanos ?? 0);
  const negative = seconds < 0n || nanos < 0;
  const abs = (x: bigint) => (x < 0n ? -x : x);
  return `${negative ? '-' : ''}${abs(seconds)}${fraction(Math.abs(nanos))}s`;
}

/** Proto3 JSON writes 0, 3, 6 or 9 fractional digits. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  return `.${nanos % 1_000_000 === 0 ? digits.slice(0, 3) : nanos % 1000 === 0 ? digits.slice(0, 6) : digits}`;
}

function timestamp(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
  const m = typeof value === 'string' ? TIMESTAMP.exec(value) : null;
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
  if (!m || Number.isNaN(ms)) return invalid(walk, path, `expected an RFC 3339 time such as "2026-01-01T00:00:00Z", got ${describe(value)}`);
  return { seconds: Math.floor(ms / 1000), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

function timestampJson(message: Wire): string {
  const seconds = Number(longString(message.seconds ?? 0, false));
  const nanos = Number(message.nanos ?? 0);
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${base}${fraction(nanos)}Z`;
}

function fieldMask(value: unknown, path: string, walk: Walk): Wire | typeof INVALID {
  if (typeof value !== 'string') return invalid(walk, path, `expected a field mask such as "a.b,c", got ${describe(value)}`);
  return { paths: value === '' ? [] : value.split(',').map(snake) };
}
