// x-kubernetes-validations: every rule compiled once when a structural schema is first seen, then
// evaluated top-down over an object, with oldSelf bound wherever the old object has a value to
// correlate with (object properties, map keys, list-type=map entries), as the API server does.
import type { Correlated } from '../correlation.js';
import { type ErrorList, fieldError } from '../field-errors.js';
import { fieldPath, isPlainObject, keysOf, type Segment } from '../paths.js';
import { prepareSchema, type CelRuleSpec, type StructuralSchema } from '../structural.js';
import type { FieldError } from '../types.js';
import { compileCel, type CelProgram } from './environment.js';
import { compileFast, type FastRule, UNDECIDED } from './fast.js';
import { toCelValue } from './values.js';

interface CompiledRule {
  spec: CelRuleSpec;
  program: CelProgram;
  /** The rule as a closure over decoded values, when its expression is one the closures take. */
  fast: FastRule | undefined;
  messageProgram?: CelProgram;
  /** A transition rule: only checked when there is an old value to compare with. */
  usesOldSelf: boolean;
  /** Results by value, for rules on a string or number (CEL is pure, so a result never goes stale). */
  scalarResults?: Map<unknown, unknown>;
}

const SCALAR_CACHE_LIMIT = 1024;

/** Evaluates a rule with cel-js, reusing the result for a scalar `self` it has already seen (e.g. "200ms"). */
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

/**
 * What the walk does at a schema node, worked out once: its rules, compiled, and the children under
 * which there are rules at all (a subtree without one is never walked).
 */
interface RulePlan {
  schema: StructuralSchema;
  rules: CompiledRule[];
  /** Properties with rules at or under them (null prototype: keys come from user input). */
  properties: Record<string, RulePlan>;
  /** The keys of `properties`. */
  keys: string[];
  /** The schema's own properties, with or without rules: a key among them is never an additional property. */
  known: Record<string, StructuralSchema> | undefined;
  additional: RulePlan | undefined;
  items: RulePlan | undefined;
}

const plans = new WeakMap<StructuralSchema, RulePlan | null>();

const OLD_SELF = /\boldSelf\b/;

function compileRules(schema: StructuralSchema): CompiledRule[] {
  return (schema.rules ?? []).map((spec) => {
    const program = compileCel(spec.rule);
    return {
      spec,
      program,
      fast: compileFast((program as CelProgram & { ast?: unknown }).ast),
      ...(spec.messageExpression ? { messageProgram: compileCel(spec.messageExpression) } : {}),
      usesOldSelf: OLD_SELF.test(spec.rule),
    };
  });
}

/** The plan of `schema`, null when nothing at or under it has a rule; every rule compiled now, so a bad rule fails at load. */
function planOf(schema: StructuralSchema): RulePlan | null {
  const known = plans.get(schema);
  if (known !== undefined) return known;
  prepareSchema(schema);
  const properties: Record<string, RulePlan> = Object.create(null);
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const plan = planOf(child);
    if (plan) properties[key] = plan;
  }
  const additional = schema.additionalProperties ? (planOf(schema.additionalProperties) ?? undefined) : undefined;
  const items = schema.items ? (planOf(schema.items) ?? undefined) : undefined;
  const rules = compileRules(schema);
  const hasAny = rules.length > 0 || Object.keys(properties).length > 0 || additional !== undefined || items !== undefined;
  const plan = hasAny ? { schema, rules, properties, keys: Object.keys(properties), known: schema.properties, additional, items } : null;
  plans.set(schema, plan);
  return plan;
}

/** Compiles every rule under `schema` now; returns how many there are. */
export function compileAllRules(schema: StructuralSchema): number {
  const count = (plan: RulePlan | null | undefined): number =>
    plan ? plan.rules.length + Object.values(plan.properties).reduce((n, p) => n + count(p), 0) + count(plan.additional) + count(plan.items) : 0;
  return count(planOf(schema));
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

/** `self` and `oldSelf` as cel-js takes them (integers as bigint). */
function celContext(schema: StructuralSchema, self: unknown, old: Correlated | undefined): { self: unknown; oldSelf: unknown } {
  return { self: toCelValue(self, schema), oldSelf: old && toCelValue(old.old, schema) };
}

/**
 * The rules at one node. Each is decided by its closure on the decoded values when it can be;
 * cel-js, with the values converted for it (made once per node, only if needed), decides the rest.
 * `old` pairs `self` with its old value, when the update has one to correlate.
 */
function evaluateRules(plan: RulePlan, self: unknown, old: Correlated | undefined, ev: Evaluation): void {
  const { schema } = plan;
  let cel: { self: unknown; oldSelf: unknown } | undefined;
  for (const rule of plan.rules) {
    if (rule.usesOldSelf && !old && !rule.spec.optionalOldSelf) continue;
    // Ratcheting: a rule without oldSelf is not re-checked on a value the update left unchanged.
    if (!rule.usesOldSelf && old?.unchanged()) continue;
    let ok: unknown = UNDECIDED;
    if (rule.fast) {
      try {
        ok = rule.fast(self, old?.old);
      } catch (err) {
        if (err !== UNDECIDED) throw err;
      }
    }
    // A string has one value for cel-js too, so a result it gave for the same string stands.
    if (ok === UNDECIDED && typeof self === 'string' && !rule.usesOldSelf && rule.scalarResults?.has(self)) ok = rule.scalarResults.get(self);
    if (ok === UNDECIDED) {
      cel ??= celContext(schema, self, old);
      try {
        ok = evaluate(rule, cel);
      } catch (err) {
        // The node's path, not the rule's fieldPath, as the API server reports evaluation errors.
        ev.errors.push(fieldError.invalid(fieldPath(ev.path), schema.type ?? '', evaluationErrorDetail(err, rule.spec)));
        continue;
      }
    }
    if (ok !== true) {
      cel ??= celContext(schema, self, old);
      ev.errors.push(ruleError(fieldPath(rulePath(ev.path, rule.spec.fieldPath)), schema, rule, messageOf(rule, cel)));
    }
  }
}

function walkChild(plan: RulePlan, self: unknown, old: Correlated | undefined, segment: Segment, ev: Evaluation): void {
  ev.path.push(segment);
  walk(plan, self, old, ev);
  ev.path.pop();
}

/** Rules top-down, children in the order the object has them. */
function walk(plan: RulePlan, self: unknown, old: Correlated | undefined, ev: Evaluation): void {
  if (plan.rules.length > 0) evaluateRules(plan, self, old, ev);
  if (isPlainObject(self)) {
    const { properties, known, additional } = plan;
    if (additional) {
      for (const key of keysOf(self)) {
        const property = properties[key];
        if (property) walkChild(property, self[key], old?.key(key), key, ev);
        else if (!(known && key in known)) walkChild(additional, self[key], old?.key(key), { key }, ev);
      }
    } else {
      // Only the properties with rules under them, in the schema's order: the API server walks an
      // object in Go's map order, which promises none.
      const { keys } = plan;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const value = self[key];
        if (value !== undefined && Object.hasOwn(self, key)) walkChild(properties[key]!, value, old?.key(key), key, ev);
      }
    }
  } else if (Array.isArray(self) && plan.items) {
    const items = plan.items;
    for (let i = 0; i < self.length; i++) walkChild(items, self[i], old?.index(i), i, ev);
  }
}

/**
 * Runs every rule under `schema` on `self` (decoded JSON) and adds the failures to `errors`. `old`
 * pairs it with the old object on UPDATE; transition rules run only where it correlates.
 */
export function celErrors(schema: StructuralSchema, self: unknown, old: Correlated | undefined, errors: ErrorList): void {
  const plan = planOf(schema);
  if (plan) walk(plan, self, old, { errors, path: [] });
}
