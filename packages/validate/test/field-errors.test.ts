// apimachinery's rendering of field errors: which types show the value, and how.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldError, formatBadValue, goQuote } from '../src/field-errors.js';

describe('field errors', () => {
  it('render each type the way ErrorBody does', () => {
    assert.equal(fieldError.required('spec.a').message, 'spec.a: Required value');
    assert.equal(
      fieldError.required('metadata.name', 'name or generateName is required').message,
      'metadata.name: Required value: name or generateName is required',
    );
    assert.equal(fieldError.forbidden('spec.a', 'not allowed').message, 'spec.a: Forbidden: not allowed');
    assert.equal(fieldError.invalid('spec.a', 7, 'too big').message, 'spec.a: Invalid value: 7: too big');
    assert.equal(fieldError.notSupported('spec.a', 'x', ['b', 'c']).message, 'spec.a: Unsupported value: "x": supported values: "b", "c"');
    assert.equal(fieldError.tooLong('spec.a', 1).message, 'spec.a: Too long: may not be more than 1 byte');
    assert.equal(fieldError.tooLong('spec.a', 253).message, 'spec.a: Too long: may not be more than 253 bytes');
    assert.equal(fieldError.tooMany('spec.a', 9, 8).message, 'spec.a: Too many: 9: must have at most 8 items');
    assert.equal(fieldError.tooMany('spec.a', 2, 1).message, 'spec.a: Too many: 2: must have at most 1 item');
    assert.equal(fieldError.tooMany('spec.a', -1, 8).message, 'spec.a: Too many: must have at most 8 items');
    assert.equal(fieldError.duplicate('spec.a[1]', { type: 'Ready' }).message, 'spec.a[1]: Duplicate value: {"type":"Ready"}');
    assert.equal(fieldError.invalid('', null, 'x').message, '<nil>: Invalid value: null: x');
  });
  it('quote strings as Go does', () => {
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('tab\there\nnl\x01\x7f'), '"tab\\there\\nnl\\x01\\x7f"');
    assert.equal(goQuote('héllo ✓'), '"héllo ✓"');
    assert.equal(goQuote('\u2028'), '"\\u2028"');
  });
  it('format values that cannot be serialised without throwing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(formatBadValue(deep), '[...]');
    assert.equal(formatBadValue(10n), '10');
    assert.equal(formatBadValue(1.5), '1.5');
  });
});
