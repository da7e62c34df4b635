// metadata checks the API server applies to every custom resource.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validate } from '../src/index.js';
import { backendPool, REMOVE, withField } from './fixtures.js';

const messages = (o: unknown) => validate(o).errors.map((e) => e.message);
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('metadata', () => {
  it('requires a name or generateName, and then skips CEL as the API server does', () => {
    assert.deepEqual(messages(withField(backendPool(), 'metadata.name', REMOVE)), [
      'metadata.name: Required value: name or generateName is required',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    assert.deepEqual(messages(withField(withField(backendPool(), 'metadata.name', REMOVE), 'metadata.generateName', 'pool-')), []);
  });
  it('checks the name is a DNS subdomain', () => {
    assert.deepEqual(messages(withField(backendPool(), 'metadata.name', 'My_Pool')), [`metadata.name: Invalid value: "My_Pool": ${SUBDOMAIN}`]);
    assert.deepEqual(
      messages(withField(backendPool(), 'metadata.name', 'a'.repeat(254))).map((m) => m.replace(/"a+"/, '"…"')),
      [`metadata.name: Invalid value: "…": must be no more than 253 characters`],
    );
  });
  it('checks namespace, label keys and values, annotation keys', () => {
    const o = withField(
      withField(withField(backendPool(), 'metadata.namespace', 'Apps'), 'metadata.labels', { 'bad key': 'ok', good: '-bad-' }),
      'metadata.annotations',
      { 'example.com/ok': 'x', '/nope': 'y' },
    );
    assert.deepEqual(messages(o), [
      "metadata.namespace: Invalid value: \"Apps\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "metadata.labels[good]: Invalid value: \"-bad-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      'metadata.annotations: Invalid value: "/nope": prefix part must be non-empty',
    ]);
  });
});

describe('metadata.annotations size', () => {
  const RULES_SKIPPED =
    '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
  const TOO_LONG = 'metadata.annotations: Too long: may not be more than 262144 bytes';
  /** Annotations whose keys and values come to `bytes` bytes, each value made of `unit`. */
  const annotations = (bytes: number, unit = 'a') => {
    const key = 'example.com/note';
    return { [key]: unit.repeat((bytes - key.length) / Buffer.byteLength(unit)) };
  };

  it('allows keys and values of 262144 bytes in all, and refuses one byte more, as ValidateAnnotationsSize does', () => {
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', annotations(262_144))), []);
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', annotations(262_145))), [TOO_LONG, RULES_SKIPPED]);
  });

  it('counts UTF-8 bytes, not characters', () => {
    // 2 bytes per "é" and 4 per "😀": well under 262144 characters, over 262144 bytes.
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', annotations(262_146, 'é'))), [TOO_LONG, RULES_SKIPPED]);
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', annotations(262_148, '😀'))), [TOO_LONG, RULES_SKIPPED]);
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', annotations(262_144, '😀'))), []);
  });

  it('sums every annotation, and reports the size after the key errors', () => {
    const many = Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`k${String(i).padStart(4, '0')}`, 'v'.repeat(59)]));
    assert.deepEqual(messages(withField(backendPool(), 'metadata.annotations', { ...many, '/bad': 'x' })), [
      'metadata.annotations: Invalid value: "/bad": prefix part must be non-empty',
      TOO_LONG,
      RULES_SKIPPED,
    ]);
  });
});
