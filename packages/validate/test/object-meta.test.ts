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
