// metadata.name: the formats the API server checks per kind (with its messages), and generateName.
import type { KindSpec } from './kinds.js';
import type { KubeObject } from './objects.js';
import { type FieldError, fieldError, invalid } from './status.js';

const NAME_FORMATS = {
  subdomain: {
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    max: 253,
    message:
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  },
  label: {
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    max: 63,
    message:
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  },
  dns1035: {
    pattern: /^[a-z]([-a-z0-9]*[a-z0-9])?$/,
    max: 63,
    message:
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  },
};

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** A name from `metadata.generateName`: the prefix and five random characters, as the API server makes them. */
export function generateName(prefix: string): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return `${prefix}${s}`;
}

/** 422 unless `metadata.name` is set and has the kind's format, with the API server's messages. */
export function validateName(spec: KindSpec, obj: KubeObject): void {
  const name = obj.metadata.name ?? '';
  const errors: FieldError[] = [];
  const format = NAME_FORMATS[spec.nameFormat ?? 'subdomain'];
  if (name === '') errors.push(fieldError('metadata.name', 'FieldValueRequired', 'name or generateName is required'));
  else {
    if (!format.pattern.test(name)) errors.push(fieldError('metadata.name', 'FieldValueInvalid', format.message, name));
    if (name.length > format.max) errors.push(fieldError('metadata.name', 'FieldValueInvalid', `must be no more than ${format.max} characters`, name));
  }
  if (errors.length > 0) throw invalid(spec.kind, spec.group, name, errors);
}
