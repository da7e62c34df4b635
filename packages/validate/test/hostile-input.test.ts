// validate() answers every input with a result: never a throw, never a polluted prototype.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validate } from '../src/index.js';
import { backendPool, fixtures, withField } from './fixtures.js';

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

function isResult(r: ReturnType<typeof validate>): boolean {
  return typeof r.valid === 'boolean' && Array.isArray(r.errors) && Array.isArray(r.warnings) && r.errors.every((e) => typeof e.message === 'string');
}

describe('hostile input', () => {
  for (const input of [undefined, null, 0, 'BackendPool', [], [backendPool()], true, Symbol('x'), () => 1, 10n]) {
    it(`answers ${typeof input} ${String(input).slice(0, 20)}`, () => {
      const r = validate(input);
      assert.ok(isResult(r));
      assert.equal(r.kind, undefined);
    });
  }

  it('objects of other kinds are not ours and are not judged', () => {
    const r = validate({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } });
    assert.deepEqual([r.kind, r.valid, r.errors.length], [undefined, true, 0]);
  });

  it('survives 100,000 levels of nesting in any field', () => {
    const deep = nested(100_000);
    for (const path of ['spec.foo', 'spec.selector.matchLabels.app', 'spec.targetPorts', 'spec.loadBalancer.type', 'metadata.labels', 'status']) {
      const r = validate(withField(backendPool(), path, deep));
      assert.ok(isResult(r), path);
    }
  });

  it('treats __proto__ and constructor as plain keys and pollutes nothing', () => {
    const hostile = JSON.parse(
      '{"apiVersion":"extlb.dev/v1alpha1","kind":"BackendPool","metadata":{"name":"p","__proto__":{"polluted":1}},"__proto__":{"polluted":2},' +
        '"spec":{"__proto__":{"polluted":3},"constructor":{"prototype":{"polluted":4}},"selector":{"matchLabels":{"__proto__":"x","constructor":"y"}},' +
        '"targetPorts":[{"number":80,"__proto__":{"polluted":5}}]}}',
    );
    const r = validate(hostile);
    assert.equal(({} as any).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.deepEqual(
      r.warnings.map((w) => w.message),
      [
        'unknown field "__proto__"',
        'unknown field "metadata.__proto__"',
        'unknown field "spec.__proto__"',
        'unknown field "spec.constructor"',
        'unknown field "spec.targetPorts[0].__proto__"',
        `spec.selector.matchLabels[__proto__]: "__proto__" is not a valid label key, so no Pod can carry it and the selector matches nothing; a key is a name of at most 63 characters (letters, digits, '-', '_' and '.') with an optional DNS-subdomain prefix and '/'`,
      ],
    );
    const labels = (r.object as any).spec.selector.matchLabels;
    assert.deepEqual(Object.keys(labels), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(labels), Object.prototype);
    // The API server does not check label keys either; "__proto__" is only warned about.
    assert.equal(r.valid, true);
  });

  it('survives a throwing getter and reports it', () => {
    const o = backendPool();
    Object.defineProperty(o.spec as object, 'appProtocol', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const r = validate(o);
    assert.ok(isResult(r));
    assert.equal(r.valid, false);
  });

  it('answers arbitrary values at arbitrary fields (property-based)', () => {
    const paths = [
      'spec',
      'spec.selector',
      'spec.selector.matchLabels',
      'spec.targetPorts',
      'spec.targetPorts[0]',
      'spec.targetPorts[0].number',
      'spec.loadBalancer',
      'spec.loadBalancer.external',
      'spec.loadBalancer.external.refs[0]',
      'spec.loadBalancer.external.maxEndpoints',
      'status',
      'status.parents[0].conditions',
      'metadata',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(fixtures) as (keyof typeof fixtures)[])),
        fc.constantFrom(...paths),
        fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true }),
        (kind, path, value) => {
          const r = validate(withField(fixtures[kind](), path, value), { operation: 'UPDATE', oldObject: withField(fixtures[kind](), path, value) });
          return isResult(r);
        },
      ),
      { numRuns: 400 },
    );
  });
});
