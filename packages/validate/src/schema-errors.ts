// Turns ajv's errors into the API server's: kube-openapi's message for the keyword, wrapped the way
// apiextensions-apiserver's kubeOpenAPIResultToFieldErrors wraps it in a field.Error.
import { type ErrorList, fieldError, goQuote } from './field-errors.js';
import { isPlainObject, keysOf, openApiPath, pointerTokens, type Segment, setOwn } from './paths.js';
import type { StructuralSchema } from './structural.js';
import type { FieldError } from './types.js';

/** The subset of ajv's ErrorObject (with `verbose: true`) this module reads. */
export interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: { format?: string; type?: string | string[] };
}

/** A generated standalone validator: returns true or leaves its errors on itself. */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

/** A generated validator that builds at most `cap` error objects and keeps only the path and keyword of the rest. */
export type CappedValidator = (data: unknown, cap: number) => { valid: boolean; errors: AjvError[]; overflowPaths: string[]; overflowKeywords: string[] };

/** Splits a JSON pointer into segments, using the data to tell list indexes from map keys. */
function pointerToPath(pointer: string, root: unknown): Segment[] {
  let at: unknown = root;
  return pointerTokens(pointer).map((token) => {
    if (Array.isArray(at)) {
      at = at[Number(token)];
      return Number(token);
    }
    at = isPlainObject(at) && Object.hasOwn(at, token) ? at[token] : undefined;
    return token;
  });
}

/** kube-openapi's name for a decoded JSON value's type (type.go, schemaInfoForType). */
function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v; // string, boolean
}

/** The Go decoder's format for a number: int64 for integers, double otherwise. */
function jsonFormatName(v: unknown): string {
  if (typeof v !== 'number') return '';
  return Number.isInteger(v) ? 'int64' : 'double';
}

/**
 * kube-openapi's type check: a number-ish format (int32, int64) is checked first for non-string,
 * non-list values and is what the message names then.
 */
function typeError(name: string, err: AjvError): FieldError {
  const data = err.data;
  const wanted = Array.isArray(err.params.type) ? (err.params.type as string[]).join(',') : String(err.params.type);
  const format = err.parentSchema?.format;
  if (data === null || data === undefined) return fieldError.typeInvalid(name, '', `${name} in body must be of type ${wanted}`);
  const kind = jsonTypeName(data);
  if (format && typeof data !== 'string' && !Array.isArray(data)) {
    const actual = jsonFormatName(data);
    return fieldError.typeInvalid(name, actual, `${name} in body must be of type ${format}: ${goQuote(actual)}`);
  }
  return fieldError.typeInvalid(name, kind, `${name} in body must be of type ${wanted}: ${goQuote(kind)}`);
}

function count(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  return -1;
}

function toFieldError(err: AjvError, root: unknown, sizes: ReadonlyMap<string, number>): FieldError {
  const path = pointerToPath(err.instancePath, root);
  const name = openApiPath(path);
  const p = err.params;
  switch (err.keyword) {
    case 'required':
      return fieldError.required(openApiPath([...path, String(p.missingProperty)]));
    case 'type':
      return typeError(name, err);
    case 'enum':
      return fieldError.notSupported(
        name,
        err.data,
        ((p.allowedValues as unknown[]) ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      );
    case 'maxLength':
      return fieldError.tooLong(name, Number(p.limit));
    case 'minLength':
      return fieldError.invalid(name, err.data, `${name} in body should be at least ${p.limit} chars long`);
    case 'pattern':
      return fieldError.invalid(name, err.data, `${name} in body should match '${p.pattern}'`);
    case 'maximum':
      return fieldError.invalid(name, err.data, `${name} in body should be less than or equal to ${p.limit}`);
    case 'exclusiveMaximum':
      return fieldError.invalid(name, err.data, `${name} in body should be less than ${p.limit}`);
    case 'minimum':
      return fieldError.invalid(name, err.data, `${name} in body should be greater than or equal to ${p.limit}`);
    case 'exclusiveMinimum':
      return fieldError.invalid(name, err.data, `${name} in body should be greater than ${p.limit}`);
    case 'multipleOf':
      return fieldError.invalid(name, err.data, `${name} in body should be a multiple of ${p.multipleOf}`);
    case 'maxItems':
    case 'maxProperties':
      return fieldError.tooMany(name, sizes.get(err.instancePath) ?? count(err.data), Number(p.limit));
    case 'minItems':
      return fieldError.invalid(name, count(err.data), `${name} in body should have at least ${p.limit} items`);
    case 'minProperties':
      return fieldError.invalid(name, count(err.data), `${name} in body should have at least ${p.limit} properties`);
    case 'uniqueItems':
      return fieldError.invalid(name, err.data, `${name} in body shouldn't contain duplicates`);
    case 'format':
      return fieldError.typeInvalid(name, err.data, `${name} in body must be of type ${p.format}: ${goQuote(String(err.data))}`);
    default:
      return fieldError.invalid(name, err.data, `${name} in body ${err.message ?? `failed ${err.keyword}`}`);
  }
}

/** The errors ajv reported, as far as they were built, and the path and keyword of the rest. */
interface Found {
  errors: AjvError[];
  overflowPaths: readonly string[];
  overflowKeywords: readonly string[];
}

const isCountKeyword = (keyword: string) => keyword === 'minProperties' || keyword === 'maxProperties';

/**
 * kube-openapi stops at an object whose property count is out of bounds and checks nothing inside
 * it; ajv goes on. Whether an error at `instancePath` is inside such an object.
 */
function insideCountFailure({ errors, overflowPaths, overflowKeywords }: Found): (instancePath: string) => boolean {
  const stops: string[] = [];
  for (const e of errors) if (isCountKeyword(e.keyword)) stops.push(`${e.instancePath}/`);
  for (let i = 0; i < overflowKeywords.length; i++) if (isCountKeyword(overflowKeywords[i]!)) stops.push(`${overflowPaths[i]}/`);
  return (instancePath) => stops.length > 0 && stops.some((s) => instancePath.startsWith(s));
}

/** The keywords whose errors toFieldError makes blocking (Required, Unsupported, Too long, Too many, type). */
const BLOCKING_KEYWORDS = new Set(['required', 'type', 'enum', 'maxLength', 'maxItems', 'maxProperties', 'format']);

/**
 * Where objects with a maxProperties can be, worked out once per schema node: the node's own limit
 * and the children under which there is one. A subtree without a limit is never walked.
 */
interface LimitPlan {
  maxProperties: number | undefined;
  /** Properties with a limit at or under them (null prototype: keys come from user input). */
  properties: Record<string, LimitPlan>;
  /** The keys of `properties`. */
  keys: string[];
  /** The schema's own properties: a key among them is never an additional property. */
  known: Record<string, StructuralSchema> | undefined;
  additional: LimitPlan | undefined;
  items: LimitPlan | undefined;
}

const limitPlans = new WeakMap<StructuralSchema, LimitPlan | null>();

function limitPlanOf(schema: StructuralSchema): LimitPlan | null {
  const known = limitPlans.get(schema);
  if (known !== undefined) return known;
  const properties: Record<string, LimitPlan> = Object.create(null);
  let any = schema.maxProperties !== undefined;
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const plan = limitPlanOf(child);
    if (plan) {
      properties[key] = plan;
      any = true;
    }
  }
  const additional = schema.additionalProperties ? (limitPlanOf(schema.additionalProperties) ?? undefined) : undefined;
  const items = schema.items ? (limitPlanOf(schema.items) ?? undefined) : undefined;
  const plan =
    any || additional || items
      ? { maxProperties: schema.maxProperties, properties, keys: Object.keys(properties), known: schema.properties, additional, items }
      : null;
  limitPlans.set(schema, plan);
  return plan;
}

const escapeToken = (token: string | number) => (typeof token === 'number' ? String(token) : token.replace(/~/g, '~0').replace(/\//g, '~1'));

interface Cutting {
  /** The real size of each object cut, by JSON pointer. */
  sizes: Map<string, number>;
  /** The path to the value being walked; turned into a pointer only for an object that is cut. */
  path: (string | number)[];
}

function cutChild(plan: LimitPlan, value: unknown, at: string | number, cutting: Cutting): unknown {
  if (typeof value !== 'object' || value === null) return value;
  cutting.path.push(at);
  const cut = withoutOversized(plan, value, cutting);
  cutting.path.pop();
  return cut;
}

/**
 * `value` as the schema validator needs to see it: an object with more properties than its schema's
 * maxProperties cut to one past the limit, since kube-openapi refuses it whole ("Too many") and
 * validates nothing inside it. So a 3 MiB map costs one count, not a check of every entry. Only
 * the paths where a limit can apply are walked, and nothing is copied unless something is cut.
 */
function withoutOversized(plan: LimitPlan, value: unknown, cutting: Cutting): unknown {
  if (Array.isArray(value)) {
    const items = plan.items;
    if (!items) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const cut = cutChild(items, value[i], i, cutting);
      if (cut !== value[i]) {
        out ??= value.slice();
        out[i] = cut;
      }
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  const limit = plan.maxProperties;
  if (limit !== undefined) {
    const keys = keysOf(value);
    if (keys.length > limit) {
      cutting.sizes.set(cutting.path.map((t) => `/${escapeToken(t)}`).join(''), keys.length);
      const cut: Record<string, unknown> = {};
      for (const key of keys.slice(0, limit + 1)) setOwn(cut, key, value[key]);
      return cut;
    }
  }
  let out: Record<string, unknown> | undefined;
  const { properties, additional, known } = plan;
  // A map is walked by its keys; an object only by the properties under which there is a limit.
  const keys = additional ? keysOf(value) : plan.keys;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!Object.hasOwn(value, key)) continue;
    const child = properties[key] ?? (!additional || (known && Object.hasOwn(known, key)) ? undefined : additional);
    if (!child) continue;
    const cut = cutChild(child, value[key], key, cutting);
    if (cut !== value[key]) {
      out ??= { ...value };
      setOwn(out, key, cut);
    }
  }
  return out ?? value;
}

/**
 * Runs a generated validator and adds the API server's errors for `object` to `out`. `ratcheted`
 * says whether the value at an error's JSON pointer is unchanged on UPDATE, so its errors are ignored.
 * Only as many error objects are built as `out` still lists (and a few more, for the ones
 * ratcheting or a count failure drops); the others are filtered and counted by path and keyword.
 */
export function schemaErrors(
  validator: SchemaValidator,
  capped: CappedValidator,
  schema: StructuralSchema,
  object: unknown,
  out: ErrorList,
  ratcheted?: (pointer: string) => boolean,
): void {
  const plan = limitPlanOf(schema);
  const sizes = new Map<string, number>();
  const seen = plan ? withoutOversized(plan, object, { sizes, path: [] }) : object;
  const room = out.room;
  let found: Found;
  if (room === Number.POSITIVE_INFINITY) {
    if (validator(seen)) return;
    found = { errors: validator.errors ?? [], overflowPaths: [], overflowKeywords: [] };
  } else {
    const run = capped(seen, 2 * room + 8);
    if (run.valid) return;
    found = run;
  }
  const { errors, overflowPaths, overflowKeywords } = found;
  const skip = insideCountFailure(found);
  const kept = errors.filter((e) => !skip(e.instancePath) && !ratcheted?.(e.instancePath));
  let past = 0;
  let pastBlocking = false;
  for (let i = 0; i < overflowPaths.length; i++) {
    if (skip(overflowPaths[i]!) || ratcheted?.(overflowPaths[i]!)) continue;
    past++;
    if (BLOCKING_KEYWORDS.has(overflowKeywords[i]!)) pastBlocking = true;
  }
  if (kept.length < room && past > 0) {
    // So many of the built errors were dropped that one only counted would be listed: build them all.
    validator(seen);
    const all = validator.errors ?? [];
    const skipAll = insideCountFailure({ errors: all, overflowPaths: [], overflowKeywords: [] });
    for (const e of all) {
      if (!skipAll(e.instancePath) && !ratcheted?.(e.instancePath)) out.add(BLOCKING_KEYWORDS.has(e.keyword), () => toFieldError(e, seen, sizes));
    }
    return;
  }
  for (const e of kept) out.add(BLOCKING_KEYWORDS.has(e.keyword), () => toFieldError(e, seen, sizes));
  if (past > 0) out.count(past, pastBlocking);
}
