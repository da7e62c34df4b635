// The API server's ObjectMeta checks for a custom resource (apimachinery ValidateObjectMetaAccessor
// with NameIsDNSSubdomain): name (or generateName), namespace, label keys and values, annotation keys.
import { type ErrorList, fieldError } from './field-errors.js';
import { dns1123Label, dns1123Subdomain, labelValue, qualifiedName } from './names.js';
import { isPlainObject } from './paths.js';

function invalidEach(field: string, value: string, reasons: string[], out: ErrorList): void {
  for (const reason of reasons) out.add(false, () => fieldError.invalid(field, value, reason));
}

function stringMap(value: unknown, field: string, out: ErrorList): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    out.push(fieldError.invalid(field, value, 'must be a map of strings'));
    return {};
  }
  return value;
}

/** Adds the errors in `metadata` to `out`. */
export function objectMetaErrors(metadata: unknown, out: ErrorList): void {
  if (!isPlainObject(metadata)) {
    out.push(fieldError.required('metadata.name', 'name or generateName is required'));
    return;
  }
  const { name, generateName, namespace } = metadata;
  if (typeof name === 'string' && name !== '') invalidEach('metadata.name', name, dns1123Subdomain(name), out);
  else if (typeof generateName === 'string' && generateName !== '') {
    // generateName is a prefix: a trailing "-" is allowed, as the generated suffix follows it.
    invalidEach('metadata.generateName', generateName, dns1123Subdomain(generateName.replace(/-$/, '')), out);
  } else out.push(fieldError.required('metadata.name', 'name or generateName is required'));
  if (typeof namespace === 'string' && namespace !== '') invalidEach('metadata.namespace', namespace, dns1123Label(namespace), out);
  const labels = stringMap(metadata.labels, 'metadata.labels', out);
  for (const key of Object.keys(labels)) {
    const value = labels[key];
    invalidEach('metadata.labels', key, qualifiedName(key), out);
    if (typeof value !== 'string') out.add(false, () => fieldError.invalid(`metadata.labels[${key}]`, value, 'must be a string'));
    else invalidEach(`metadata.labels[${key}]`, value, labelValue(value), out);
  }
  for (const key of Object.keys(stringMap(metadata.annotations, 'metadata.annotations', out))) {
    invalidEach('metadata.annotations', key, qualifiedName(key.toLowerCase()), out);
  }
}
