// Large hostile objects. validate() must do work in proportion to the object however many errors
// it holds (a quadratic walk turns a 3 MiB review into minutes of blocked event loop), and a caller
// may ask for the first errors only. Work is counted, not timed (tests never assert wall-clock
// limits): every walk over the object, ajv's included, lists an object's keys before it looks
// inside, so the number of Object.keys calls counts the objects visited.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CAPPED_VALIDATORS, VALIDATORS } from '../src/generated/validators.js';
import { validate } from '../src/index.js';
import type { ValidateOptions } from '../src/types.js';
import { backendPool, withField } from './fixtures.js';

function objectsVisited(run: () => void): number {
  const keys = Object.keys;
  let n = 0;
  Object.keys = (o: object) => {
    n++;
    return keys(o);
  };
  try {
    run();
  } finally {
    Object.keys = keys;
  }
  return n;
}

/** How many times more work validating a case of 4n items takes than one of n items. */
function growth(make: (n: number) => [unknown, ValidateOptions]): number {
  const visits = (n: number) => {
    const [object, options] = make(n);
    return objectsVisited(() => validate(object, options));
  };
  return visits(4000) / visits(1000);
}

describe('validate does work linear in the object', () => {
  it('ratchets an UPDATE whose every list item is invalid by comparing each value once', () => {
    // Every port is invalid and unchanged, but the list differs from the old one at its last item,
    // so no ancestor is unchanged: a per-error comparison from the root walks the whole list each time.
    const ratio = growth((n) => {
      const ports = Array.from({ length: n }, () => ({ number: 'bad' }));
      const old = [...ports.slice(0, -1), { number: 'other' }];
      return [withField(backendPool(), 'spec.targetPorts', ports), { operation: 'UPDATE', oldObject: withField(backendPool(), 'spec.targetPorts', old) }];
    });
    assert.ok(ratio < 5, `4x the items took ${ratio.toFixed(1)}x the work`);
  });
});

describe('maxErrors', () => {
  const cases: [string, unknown][] = [
    [
      'bad ports and a bad protocol (blocking)',
      withField(withField(backendPool(), 'spec.targetPorts', [{ number: 0 }, { number: 'x' }]), 'spec.appProtocol', 'grpc'),
    ],
    [
      'bad label keys (not blocking) and a failing CEL rule',
      withField(withField(backendPool(), 'metadata.labels', { 'a b': 'x', 'c d': 'y' }), 'spec.loadBalancer.type', 'RoundRobin'),
    ],
  ];
  for (const [name, object] of cases) {
    it(`lists the first errors and counts the rest, with the same verdict: ${name}`, () => {
      const all = validate(object);
      assert.ok(all.errors.length >= 3, all.errors.map((e) => e.message).join('\n'));
      for (const max of [0, 1, 2]) {
        const some = validate(object, { maxErrors: max });
        assert.deepEqual(some.errors, all.errors.slice(0, max));
        assert.equal(some.omittedErrors, all.errors.length - max);
        assert.equal(some.valid, false);
      }
    });
  }

  it('has the generated validators build only the error objects it may list, keeping the path and keyword of the rest', () => {
    const ports = Array.from({ length: 10_000 }, () => ({ number: 'bad' }));
    const object = withField(backendPool(), 'spec.targetPorts', ports);
    const full = VALIDATORS.BackendPool;
    assert.equal(full(object), false);
    const all = full.errors!;
    assert.equal(all.length, 10_001); // maxItems, then one per port
    const run = CAPPED_VALIDATORS.BackendPool(object, 40);
    assert.equal(run.valid, false);
    assert.deepEqual(run.errors, all.slice(0, 40));
    assert.deepEqual(
      run.overflowPaths,
      all.slice(40).map((e) => e.instancePath),
    );
    assert.deepEqual(
      run.overflowKeywords,
      all.slice(40).map((e) => e.keyword),
    );
  });

  it('lists the same first errors when ratcheting drops every error object that was built', () => {
    // The unchanged ports' errors come first and are all ratcheted; the changed fields' come after
    // the built ones, so they must be built after all.
    const stored = withField(
      backendPool(),
      'spec.targetPorts',
      Array.from({ length: 100 }, () => ({ number: 70_000 })),
    );
    const edited = withField(withField(stored, 'spec.loadBalancer.external.maxEndpoints', -1), 'spec.loadBalancer.external.messageTimeout', 'soon');
    const update = { operation: 'UPDATE' as const, oldObject: stored };
    const all = validate(edited, update);
    assert.ok(all.errors.length >= 3, all.errors.map((e) => e.message).join('\n'));
    for (const max of [1, 2]) {
      const some = validate(edited, { ...update, maxErrors: max });
      assert.deepEqual(some.errors, all.errors.slice(0, max));
      assert.equal(some.omittedErrors, all.errors.length - max);
    }
  });

  it('lists everything by default', () => {
    const labels = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`bad key ${i}`, 'v']));
    const r = validate(withField(backendPool(), 'metadata.labels', labels));
    assert.deepEqual([r.errors.length, r.omittedErrors], [500, 0]);
  });
});

describe('a map past its maxProperties', () => {
  // kube-openapi refuses the map whole and validates nothing inside it, so the API server answers
  // with one error for it (and the note that the rules were skipped), however many entries it has.
  const pool = (entries: number) => {
    const matchLabels: Record<string, string> = {};
    for (let i = 0; i < entries; i++) matchLabels[`bad key ${i}`] = i % 2 === 0 ? 'v' : '-not a label value-';
    return withField(backendPool(), 'spec.selector.matchLabels', matchLabels);
  };

  it('is answered with the API server’s two errors, not one per entry and not a crash', () => {
    const result = validate(pool(150_000), { maxErrors: 32 });
    assert.deepEqual(
      result.errors.map((e) => e.message),
      [
        'spec.selector.matchLabels: Too many: 150000: must have at most 64 items',
        '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    );
    assert.equal(result.omittedErrors, 0);
    assert.deepEqual(
      result.warnings.filter((w) => w.field.includes('matchLabels')),
      [],
    );
  });

  it('is checked without looking at each entry', () => {
    // The object is visited the same number of times whatever the size of the map.
    const visits = (n: number) => objectsVisited(() => validate(pool(n)));
    assert.equal(visits(4000), visits(1000));
  });
});
