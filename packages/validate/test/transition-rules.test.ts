// Transition rules (oldSelf) and UPDATE handling. extlb's schemas carry no oldSelf rule today, so
// these run the real rule engine on a small structural schema of their own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { celErrors } from '../src/cel/rules.js';
import { Correlated } from '../src/correlation.js';
import { ErrorList } from '../src/field-errors.js';
import { validate } from '../src/index.js';
import type { StructuralSchema } from '../src/structural.js';
import { backendPool, withField } from './fixtures.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', rules: [{ rule: 'self == oldSelf', message: 'name is immutable' }] },
    replicas: { type: 'integer', rules: [{ rule: 'self >= oldSelf', message: 'replicas may not decrease' }] },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string', rules: [{ rule: 'self == oldSelf', message: 'label values are immutable', reason: 'FieldValueForbidden' }] },
    },
    items: {
      type: 'array',
      listType: 'map',
      listMapKeys: ['id'],
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, size: { type: 'integer', rules: [{ rule: 'self >= oldSelf', message: 'size may not shrink' }] } },
      },
    },
    atomic: {
      type: 'array',
      items: {
        type: 'object',
        properties: { size: { type: 'integer', rules: [{ rule: 'self >= oldSelf', message: 'never checked: atomic lists do not correlate' }] } },
      },
    },
    budget: { type: 'integer', rules: [{ rule: 'self + 1 > 1', message: 'budget must be positive' }] },
    missing: { type: 'object', properties: { a: { type: 'string' } }, rules: [{ rule: "self.a == 'x'", message: ' a must be x ' }, { rule: 'self.a == 1' }] },
    size: { intOrString: true, rules: [{ rule: "type(self) == int ? self > 0 : self.endsWith('%')", message: 'size is a positive count or a percentage' }] },
  },
};

function run(self: unknown, old?: unknown): string[] {
  const errors = new ErrorList();
  celErrors(schema, self, old === undefined ? undefined : new Correlated(self, old, schema), errors);
  return errors.listed.map((e) => e.message);
}

describe('transition rules', () => {
  it('do not run without an old object (CREATE)', () => assert.deepEqual(run({ name: 'a', replicas: 1 }), []));
  it('pass when the value is unchanged', () => assert.deepEqual(run({ name: 'a', replicas: 2 }, { name: 'a', replicas: 2 }), []));
  it('fail on a forbidden change, with the field path', () => {
    assert.deepEqual(run({ name: 'b', replicas: 1 }, { name: 'a', replicas: 2 }), [
      'name: Invalid value: "string": name is immutable',
      'replicas: Invalid value: "integer": replicas may not decrease',
    ]);
  });
  it('do not run for a field the old object lacks', () => assert.deepEqual(run({ name: 'b' }, { replicas: 1 }), []));
  it('correlate map values by key and honour reason', () => {
    assert.deepEqual(run({ labels: { a: 'x', b: 'new' } }, { labels: { a: 'y' } }), ['labels[a]: Forbidden: label values are immutable']);
  });
  it('correlate list-type=map entries by key, not by position', () => {
    const old = {
      items: [
        { id: 'a', size: 5 },
        { id: 'b', size: 1 },
      ],
    };
    assert.deepEqual(
      run(
        {
          items: [
            { id: 'b', size: 1 },
            { id: 'a', size: 4 },
            { id: 'c', size: 0 },
          ],
        },
        old,
      ),
      ['items[1].size: Invalid value: "integer": size may not shrink'],
    );
  });
  it('never correlate atomic list items', () => assert.deepEqual(run({ atomic: [{ size: 1 }] }, { atomic: [{ size: 9 }] }), []));
  it('see integers as CEL ints (int arithmetic works)', () => {
    assert.deepEqual(run({ budget: 1 }), []);
    assert.deepEqual(run({ budget: 0 }), ['budget: Invalid value: "integer": budget must be positive']);
  });
});

describe('ratcheting correlation', () => {
  const now = {
    name: 'a',
    labels: { k: 'v' },
    items: [
      { id: 'b', size: 2 },
      { id: 'a', size: 1 },
    ],
    atomic: [{ size: 1 }],
  };
  const old = { name: 'a', labels: { k: 'v' }, items: [{ id: 'a', size: 1 }], atomic: [{ size: 1 }] };
  const pairs = () => new Correlated(now, old, schema);
  it('correlates properties, map keys and list-map entries by key', () => {
    assert.equal(pairs().key('labels')?.key('k')?.old, 'v');
    assert.equal(pairs().key('items')?.index(1)?.key('size')?.old, 1);
    assert.equal(pairs().key('items')?.index(0), undefined);
    assert.equal(pairs().key('atomic')?.index(0), undefined);
  });
  it('an unchanged node or ancestor ratchets everything below it', () => {
    assert.equal(pairs().ratchets('/items/1/size'), true);
    assert.equal(pairs().ratchets('/atomic/0/size'), true); // the atomic list itself is unchanged
    assert.equal(pairs().ratchets('/items/0/size'), false);
  });
  it('reads escaped pointer tokens (~1 for "/", ~0 for "~") and the root pointer', () => {
    const labels = { 'a/b~c': 'v', other: 'new' };
    const pair = new Correlated({ name: 'a', labels }, { name: 'a', labels: { 'a/b~c': 'v', other: 'old' } }, schema);
    assert.equal(pair.ratchets('/labels/a~1b~0c'), true);
    assert.equal(pair.ratchets('/labels/other'), false);
    assert.equal(pair.ratchets(''), false);
    assert.equal(new Correlated(labels, { ...labels }, schema.properties!.labels).ratchets(''), true);
  });
  it('compares list-map entries by key, not by position', () => {
    const items = [
      { id: 'a', size: 1 },
      { id: 'b', size: 2 },
    ];
    assert.equal(new Correlated({ items: [...items].reverse() }, { items }, schema).unchanged(), true);
    assert.equal(new Correlated({ atomic: [{ size: 2 }, { size: 1 }] }, { atomic: [{ size: 1 }, { size: 2 }] }, schema).unchanged(), false);
  });
});

describe('rule evaluation errors and messages', () => {
  it('report a missing field and a type mismatch as the API server words them', () => {
    const errors = run({ missing: {} });
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /^missing: Invalid value: "object": no such key: a evaluating rule: a must be x$/);
    assert.match(
      errors[1]!,
      /^missing: Invalid value: "object": .* evaluating rule: self\.a == 1$|^missing: Invalid value: "object": '.*': call arguments did not match a supported operator, function or macro signature for rule: self\.a == 1$/,
    );
  });
  it('trim messages and fall back to "failed rule: <rule>"', () => {
    assert.deepEqual(run({ missing: { a: 'y' } }).slice(0, 1), ['missing: Invalid value: "object": a must be x']);
  });
});

describe('int-or-string', () => {
  it('an integer reaches CEL as an int, a string as a string', () => {
    assert.deepEqual(run({ size: 3 }), []);
    assert.deepEqual(run({ size: '50%' }), []);
    assert.deepEqual(run({ size: 0 }), ['size: Invalid value: "": size is a positive count or a percentage']);
  });
});

describe('validate on UPDATE', () => {
  it('accepts an unchanged valid object', () => {
    const r = validate(backendPool(), { operation: 'UPDATE', oldObject: backendPool() });
    assert.deepEqual(r.errors, []);
  });
  it('validates the new object in full, whatever the old one was', () => {
    const r = validate(withField(backendPool(), 'spec.targetPorts', [{ number: 1 }, { number: 1 }]), { operation: 'UPDATE', oldObject: { bogus: true } });
    assert.deepEqual(
      r.errors.map((e) => e.message),
      ['spec.targetPorts: Invalid value: "array": port number must be unique'],
    );
  });
  it('ignores an oldObject on CREATE', () => {
    assert.equal(validate(backendPool(), { operation: 'CREATE', oldObject: backendPool() }).valid, true);
  });

  it('ratchets: an unchanged invalid value does not block an update elsewhere (schema and CEL)', () => {
    const stored = withField(backendPool(), 'spec.targetPorts', [{ number: 70000 }, { number: 70000 }]);
    const edited = withField(stored, 'spec.appProtocol', 'kubernetes.io/h2c');
    assert.deepEqual(validate(edited, { operation: 'UPDATE', oldObject: stored }).errors, []);
    assert.deepEqual(
      validate(edited, { operation: 'CREATE' }).errors.map((e) => e.message),
      [
        'spec.targetPorts[0].number: Invalid value: 70000: spec.targetPorts[0].number in body should be less than or equal to 65535',
        'spec.targetPorts[1].number: Invalid value: 70000: spec.targetPorts[1].number in body should be less than or equal to 65535',
        'spec.targetPorts: Invalid value: "array": port number must be unique',
      ],
    );
  });
  it('ratchets only what is unchanged: a changed invalid value is reported', () => {
    const stored = withField(backendPool(), 'spec.targetPorts', [{ number: 70000 }]);
    const edited = withField(stored, 'spec.targetPorts', [{ number: 70001 }, { number: 8000 }, { number: 8000 }]);
    assert.deepEqual(
      validate(edited, { operation: 'UPDATE', oldObject: stored }).errors.map((e) => e.message),
      [
        'spec.targetPorts[0].number: Invalid value: 70001: spec.targetPorts[0].number in body should be less than or equal to 65535',
        'spec.targetPorts: Invalid value: "array": port number must be unique',
      ],
    );
  });
  it('does not ratchet inside an atomic list that changed (status.parents items do not correlate)', () => {
    const bad = { type: 'Accepted', status: 'True', lastTransitionTime: 'long ago', reason: 'Accepted', message: '' };
    const stored = withField(backendPool(), 'status.parents[0].conditions', [bad]);
    const edited = withField(stored, 'status.parents[0].controllerName', 'extlb.dev/other');
    assert.equal(validate(edited, { operation: 'UPDATE', oldObject: stored }).errors[0]?.field, 'status.parents[0].conditions[0].lastTransitionTime');
    assert.deepEqual(validate(withField(stored, 'spec.appProtocol', 'kubernetes.io/h2c'), { operation: 'UPDATE', oldObject: stored }).errors, []);
  });
});
