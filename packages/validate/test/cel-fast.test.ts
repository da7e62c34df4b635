// The closures that decide most CEL rules (src/cel/fast.ts) against cel-js itself: for every rule
// of every kind, on values of its schema's shape (fields present or not, of the wrong type, lists
// with duplicates), a closure that decides gives cel-js's result, and one that cannot decide
// leaves the rule to cel-js. The closures must also decide the rules of valid objects, or they
// would buy nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileCel } from '../src/cel/environment.js';
import { compileFast, UNDECIDED } from '../src/cel/fast.js';
import { toCelValue } from '../src/cel/values.js';
import { KINDS } from '../src/generated/structures.js';
import { validate } from '../src/index.js';
import type { StructuralSchema } from '../src/structural.js';
import { backendPool } from './fixtures.js';

interface Rule {
  where: string;
  rule: string;
  schema: StructuralSchema;
}

function rulesOf(schema: StructuralSchema, where: string, out: Rule[]): Rule[] {
  for (const { rule } of schema.rules ?? []) out.push({ where, rule, schema });
  for (const [key, child] of Object.entries(schema.properties ?? {})) rulesOf(child, `${where}.${key}`, out);
  if (schema.additionalProperties) rulesOf(schema.additionalProperties, `${where}.*`, out);
  if (schema.items) rulesOf(schema.items, `${where}[]`, out);
  return out;
}

const RULES = Object.entries(KINDS).flatMap(([kind, { structure }]) => rulesOf(structure, kind, []));

// Words the rules compare with, and some they do not.
const WORDS = [
  '',
  'External',
  'RoundRobin',
  'LeastRequest',
  'RingHash',
  'Maglev',
  'Header',
  'Cookie',
  'Service',
  'BackendPool',
  'InferencePool',
  'extlb.dev',
  'inference.networking.k8s.io',
  'apps',
  'a',
  'b',
  '200ms',
  '1s',
  '2h',
  'x',
];

/** Values shaped like `schema`: each field there or not, now and then of another type. */
function shapedLike(schema: StructuralSchema, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.constant(null), fc.integer({ min: -2, max: 3 }), fc.constantFrom(...WORDS), fc.boolean());
  let right: fc.Arbitrary<unknown>;
  if (schema.type === 'object' && schema.properties && depth < 5) {
    const entries = Object.entries(schema.properties).map(([k, child]) => [k, shapedLike(child, depth + 1)] as const);
    right = fc.record(Object.fromEntries(entries), { requiredKeys: [] });
  } else if (schema.type === 'array' && schema.items && depth < 5) {
    right = fc.array(shapedLike(schema.items, depth + 1), { maxLength: 4 });
  } else if (schema.type === 'integer' || schema.intOrString) right = fc.integer({ min: 0, max: 3 });
  else if (schema.type === 'boolean') right = fc.boolean();
  else right = fc.constantFrom(...WORDS);
  return fc.oneof({ weight: 9, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

/** cel-js's answer: the value, or the error it throws, as text. */
function celJs(rule: Rule, self: unknown): unknown {
  try {
    return compileCel(rule.rule)({ self: toCelValue(self, rule.schema) });
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

describe('CEL rules as closures', () => {
  it('compiles most of the rules of extlb’s kinds', () => {
    const compiled = RULES.filter((r) => compileFast((compileCel(r.rule) as { ast?: unknown }).ast));
    // The duration comparisons are cel-js's; everything else has a closure.
    assert.deepEqual(
      RULES.filter((r) => !compiled.includes(r)).map((r) => r.rule),
      RULES.filter((r) => r.rule.includes('duration(')).map((r) => r.rule),
    );
  });

  for (const rule of RULES) {
    const fast = compileFast((compileCel(rule.rule) as { ast?: unknown }).ast);
    if (!fast) continue;
    it(`${rule.where}: ${rule.rule}`, () => {
      let decided = 0;
      fc.assert(
        fc.property(shapedLike(rule.schema), (self) => {
          let result: unknown;
          try {
            result = fast(self, undefined);
          } catch (err) {
            if (err !== UNDECIDED) throw err;
            return;
          }
          decided++;
          assert.equal(result, celJs(rule, self), JSON.stringify(self));
        }),
        { numRuns: 300 },
      );
      assert.ok(decided > 0, 'the closure decided none of the values');
    });
  }

  it('decide every rule of a valid BackendPool without cel-js', () => {
    const pool = validate(backendPool()).object;
    let evaluated = 0;
    const visit = (schema: StructuralSchema, value: unknown) => {
      for (const { rule } of schema.rules ?? []) {
        if (rule.includes('duration(')) continue;
        evaluated++;
        assert.equal(compileFast((compileCel(rule) as { ast?: unknown }).ast)!(value, undefined), true, rule);
      }
      if (Array.isArray(value) && schema.items) for (const item of value) visit(schema.items, item);
      else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) {
          const child = schema.properties?.[k] ?? schema.additionalProperties;
          if (child) visit(child, v);
        }
    };
    visit(KINDS['extlb.dev/v1alpha1/BackendPool']!.structure, pool);
    assert.ok(evaluated >= 5, `${evaluated} rules`);
  });
});
