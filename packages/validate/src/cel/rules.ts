// x-kubernetes-validations: every rule compiled once when a structural schema is first seen, then
// evaluated top-down over an object, with oldSelf bound wherever the old object has a value to
// correlate with (object properties, map keys, list-type=map entries), as the API server does.
import { Correlated } from '../correlation.js';
import { type ErrorList, fieldError } from '../field-errors.js';
import { fieldPath, isPlainObject, type Segment } from '../paths.js';
import { prepareSchema, propertyOf, type CelRuleSpec, type StructuralSchema } from '../structural.js';
import type { FieldError } from '../types.js';
import { compileCel, type CelProgram } from './environment.js';

interface CompiledRule {
  spec: CelRuleSpec;
  program: CelProgram;
  messageProgram?: CelProgram;
  /** A transition rule: only checked when there is an old value to compare with. */
  usesOldSelf: boolean;
  /** Results by value, for rules on a string or number (CEL is pure, so a result never goes stale). */
  scalarResults?: Map<unknown, unknown>;
}

const SCALAR_CACHE_LIMIT = 1024;

/** Evaluates a rule, reusing the result for a scalar `self` it has already seen (e.g. "200ms"). */
function evaluate(rule: CompiledRule, context: { self: unknown; oldSelf: unknown }): unknown {
  const { self } = context;
  if (rule.usesOldSelf || (typeof self !== 'string' && typeof self !== 'bigint')) return rule.program(context);
  rule.scalarResults ??= new Map();
  const cache = rule.scalarResults;
  if (cache.has(self)) return cache.get(self);
  const result = rule.program(context);
  if (cache.size >= SCALAR_CACHE_LIMIT) cache.clear();
  cache.set(self, result);
  return result;
}

const compiled = new WeakMap<StructuralSchema, CompiledRule[]>();
const hasRulesBelow = new WeakMap<StructuralSchema, boolean>();

const OLD_SELF = /\boldSelf\b/;

function compileRules(schema: StructuralSchema): CompiledRule[] {
  let rules = compiled.get(schema);
  if (!rules) {
    rules = (schema.rules ?? []).map((spec) => ({
      spec,
      program: compileCel(spec.rule),
      ...(spec.messageExpression ? { messageProgram: compileCel(spec.messageExpression) } : {}),
      usesOldSelf: OLD_SELF.test(spec.rule),
    }));
    compiled.set(schema, rules);
  }
  return rules;
}

/** Compiles every rule under `schema` now, so a bad rule fails at load, not on the first request. */
export function compileAllRules(schema: StructuralSchema): number {
  prepareSchema(schema);
  let n = compileRules(schema).length;
  for (const child of children(schema)) n += compileAllRules(child);
  hasRulesBelow.set(schema, n > 0);
  return n;
}

function children(schema: StructuralSchema): StructuralSchema[] {
  const out = Object.values(schema.properties ?? {});
  if (schema.additionalProperties) out.push(schema.additionalProperties);
  if (schema.items) out.push(schema.items);
  return out;
}

/** apiextensions' fieldErrorForReason, with the value a rule error shows: the schema type. */
function ruleError(path: string, schema: StructuralSchema, rule: CompiledRule, detail: string): FieldError {
  const value = schema.type ?? '';
  switch (rule.spec.reason) {
    case 'FieldValueForbidden':
      return fieldError.forbidden(path, detail);
    case 'FieldValueRequired':
      return fieldError.required(path, detail);
    case 'FieldValueDuplicate':
      return fieldError.duplicate(path, value);
    default:
      return fieldError.invalid(path, value, detail);
  }
}

function messageOf(rule: CompiledRule, context: Record<string, unknown>): string {
  if (rule.messageProgram) {
    try {
      const m = rule.messageProgram(context);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m;
    } catch {
      // A failing messageExpression falls back to message, as the API server does.
    }
  }
  return rule.spec.message ? rule.spec.message.trim() : `failed rule: ${rule.spec.rule.trim()}`;
}

/** apiextensions' ruleErrorString: the message, or the rule itself. */
const ruleErrorString = (spec: CelRuleSpec) => (spec.message ? spec.message.trim() : spec.rule.trim());

/** The API server's wording for a rule that fails to evaluate (no such key, overflow, ...). */
function evaluationErrorDetail(err: unknown, spec: CelRuleSpec): string {
  const raw = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  // cel-go words its errors in lower case ("no such key: a"); cel-js capitalises them.
  const text = raw.charAt(0).toLowerCase() + raw.slice(1);
  if (/no (matching|such) overload/.test(text)) {
    return `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(spec)}`;
  }
  return `${text} evaluating rule: ${ruleErrorString(spec)}`;
}

/** `.a.b` or `.a['b']` relative to the rule's node. */
function rulePath(path: Segment[], relative: string | undefined): Segment[] {
  if (!relative) return path;
  const extra: Segment[] = [];
  for (const m of relative.matchAll(/\.([A-Za-z_$][\w$-]*)|\['([^']*)'\]|\[(\d+)\]/g)) {
    extra.push(m[1] ?? (m[2] !== undefined ? { key: m[2] } : Number(m[3])));
  }
  return [...path, ...extra];
}

interface Evaluation {
  errors: ErrorList;
  /** The path to the value being walked; pushed and popped, copied only for an error. */
  path: Segment[];
}

/** `old` pairs `self` with its old value, when the update has one to correlate. */
function evaluateRules(schema: StructuralSchema, self: unknown, old: Correlated | undefined, ev: Evaluation): void {
  for (const rule of compileRules(schema)) {
    if (rule.usesOldSelf && !old && !rule.spec.optionalOldSelf) continue;
    // Ratcheting: a rule without oldSelf is not re-checked on a value the update left unchanged.
    if (!rule.usesOldSelf && old?.unchanged()) continue;
    const context = { self, oldSelf: old?.old };
    let ok: unknown;
    try {
      ok = evaluate(rule, context);
    } catch (err) {
      // The node's path, not the rule's fieldPath, as the API server reports evaluation errors.
      ev.errors.push(fieldError.invalid(fieldPath(ev.path), schema.type ?? '', evaluationErrorDetail(err, rule.spec)));
      continue;
    }
    if (ok !== true) ev.errors.push(ruleError(fieldPath(rulePath(ev.path, rule.spec.fieldPath)), schema, rule, messageOf(rule, context)));
  }
}

function walkChild(schema: StructuralSchema, self: unknown, old: Correlated | undefined, segment: Segment, ev: Evaluation): void {
  ev.path.push(segment);
  walk(schema, self, old, ev);
  ev.path.pop();
}

function walk(schema: StructuralSchema, self: unknown, old: Correlated | undefined, ev: Evaluation): void {
  if (!hasRulesBelow.get(schema)) return;
  if (schema.rules) evaluateRules(schema, self, old, ev);
  if (isPlainObject(self)) {
    for (const key of Object.keys(self)) {
      const prop = propertyOf(schema, key);
      const child = prop ?? schema.additionalProperties;
      if (!child || !hasRulesBelow.get(child)) continue;
      walkChild(child, self[key], old?.key(key), prop ? key : { key }, ev);
    }
  } else if (Array.isArray(self) && schema.items && hasRulesBelow.get(schema.items)) {
    const items = schema.items;
    self.forEach((item, i) => {
      walkChild(items, item, old?.index(i), i, ev);
    });
  }
}

/**
 * Runs every rule under `schema` on `self` (CEL values: integers as bigint) and adds the failures
 * to `errors`. `old` is the old object's value on UPDATE; transition rules run only where it correlates.
 */
export function celErrors(schema: StructuralSchema, self: unknown, old: { value: unknown } | undefined, errors: ErrorList): void {
  if (!hasRulesBelow.has(schema)) compileAllRules(schema);
  walk(schema, self, old && new Correlated(self, old.value, schema), { errors, path: [] });
}
