import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch, diff, escapePointerToken } from '../src/json-patch.js';

describe('json-patch', () => {
  it('escapes ~ before / in pointer tokens', () => {
    assert.equal(escapePointerToken('a/b~c'), 'a~1b~0c');
    assert.equal(escapePointerToken('~1'), '~01');
  });

  it('emits add for new members and replace for changed values, with escaped paths', () => {
    const from = { metadata: { annotations: { 'example.com/x': 'a' } }, spec: { list: [{ a: 1 }, { a: 2 }] } };
    const to = {
      metadata: { annotations: { 'example.com/x': 'b', 'a~b': 'c' } },
      spec: { list: [{ a: 1, g: '' }, { a: 3 }], mode: 'x' },
    };
    const ops = diff(from, to);
    assert.deepEqual(ops, [
      { op: 'replace', path: '/metadata/annotations/example.com~1x', value: 'b' },
      { op: 'add', path: '/metadata/annotations/a~0b', value: 'c' },
      { op: 'add', path: '/spec/list/0/g', value: '' },
      { op: 'replace', path: '/spec/list/1/a', value: 3 },
      { op: 'add', path: '/spec/mode', value: 'x' },
    ]);
    assert.deepEqual(applyPatch(from, ops), to);
  });

  it('replaces a list whose length changed and objects that became scalars', () => {
    const from = { a: [1, 2], b: { c: 1 }, d: null };
    const to = { a: [1, 2, 3], b: 'x', d: { e: 1 } };
    const ops = diff(from, to);
    assert.deepEqual(applyPatch(from, ops), to);
    assert.ok(ops.every((op) => op.op === 'replace'));
  });

  it('removes members only when asked', () => {
    const from = { a: 1, b: 2 };
    const to = { a: 1 };
    assert.deepEqual(diff(from, to, { removals: false }), []);
    const ops = diff(from, to);
    assert.deepEqual(ops, [{ op: 'remove', path: '/b' }]);
    assert.deepEqual(applyPatch(from, ops), to);
  });

  it('returns no operations for equal documents', () => {
    assert.deepEqual(diff({ a: [1, { b: null }] }, { a: [1, { b: null }] }), []);
  });

  it('treats a "__proto__" member as data when diffing and applying', () => {
    const from = JSON.parse('{"spec":{}}');
    const to = JSON.parse('{"spec":{"__proto__":{"polluted":true}}}');
    const ops = diff(from, to);
    assert.deepEqual(ops, [{ op: 'add', path: '/spec/__proto__', value: { polluted: true } }]);
    const out = applyPatch(from, ops) as { spec: object };
    assert.deepEqual(Object.keys(out.spec), ['__proto__']);
    assert.equal(Object.getPrototypeOf(out.spec), Object.prototype);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });

  it('rejects operations that do not apply', () => {
    assert.throws(() => applyPatch({}, [{ op: 'replace', path: '/a', value: 1 }]), /does not exist/);
    assert.throws(() => applyPatch({ a: [] }, [{ op: 'replace', path: '/a/0', value: 1 }]), /out of range/);
    assert.throws(() => applyPatch({}, [{ op: 'add', path: 'a', value: 1 }]), /must start with/);
    assert.deepEqual(applyPatch({ a: [1] }, [{ op: 'add', path: '/a/-', value: 2 }]), { a: [1, 2] });
  });
});
