// Property-based: validate() answers any JSON built around the real kinds (a fixture with
// arbitrary JSON at any of its fields, on CREATE and on UPDATE against another such object)
// without throwing, without an internal error, and with output in proportion to its input.
// Bounded in runs and in time, so that a slow machine shortens the run instead of failing it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validate } from '../src/index.js';
import { everyField, fixtures, withField } from './fixtures.js';

type Kind = keyof typeof fixtures;

/** Every field path of an object, `spec.targetPorts[0].number` style, containers included. */
function pathsOf(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => [`${at}[${i}]`, ...pathsOf(v, `${at}[${i}]`)]);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const p = at ? `${at}.${k}` : k;
    return [p, ...pathsOf(v, p)];
  });
}

const kinds = Object.keys(fixtures) as Kind[];
const mutated = (kind: Kind) =>
  fc.tuple(fc.constantFrom(...pathsOf(everyField(kind))), fc.jsonValue({ maxDepth: 4 })).map(([path, value]) => withField(everyField(kind), path, value));

const size = (v: unknown) => JSON.stringify(v)?.length ?? 0;

describe('validate() under arbitrary JSON (property-based)', () => {
  it('never throws or fails internally, lists at most maxErrors, and answers in proportion to its input', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds).chain((kind) => fc.tuple(mutated(kind), fc.option(mutated(kind), { nil: undefined }))),
        fc.option(fc.nat(4), { nil: undefined }),
        ([object, oldObject], maxErrors) => {
          const r = validate(object, oldObject === undefined ? { maxErrors } : { operation: 'UPDATE', oldObject, maxErrors });
          assert.equal(typeof r.valid, 'boolean');
          assert.equal(r.valid, r.errors.length + r.omittedErrors === 0);
          assert.ok(!r.errors.some((e) => e.type === 'Internal error'), r.errors.map((e) => e.message).join('\n'));
          if (maxErrors !== undefined) assert.ok(r.errors.length <= maxErrors);
          // An error quotes at most its own value plus a fixed explanation of a few hundred characters.
          const input = size(object) + size(oldObject);
          const output = size(r.errors) + size(r.warnings);
          assert.ok(output <= 128 * input + 16_384, `${output} characters out for ${input} in`);
        },
      ),
      { numRuns: 400, interruptAfterTimeLimit: 30_000 },
    );
  });
});

describe('validate() with shareInput (property-based)', () => {
  it('answers exactly as without it, and still never changes its input', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds).chain((kind) => fc.tuple(mutated(kind), fc.option(mutated(kind), { nil: undefined }))),
        ([object, oldObject]) => {
          const options = oldObject === undefined ? {} : { operation: 'UPDATE' as const, oldObject };
          const before = structuredClone([object, oldObject]);
          const shared = validate(object, { ...options, shareInput: true });
          assert.deepEqual([object, oldObject], before);
          assert.deepEqual(shared, validate(object, options));
        },
      ),
      { numRuns: 300, interruptAfterTimeLimit: 30_000 },
    );
  });
});
