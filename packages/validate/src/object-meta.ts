// The API server's ObjectMeta checks for a custom resource (apimachinery ValidateObjectMetaAccessor
// with NameIsDNSSubdomain): name (or generateName), namespace, label keys and values, annotation
// keys and the annotations' total size.
import { type ErrorList, fieldError } from './field-errors.js';
import { dns1123Label, dns1123Subdomain, labelValue, qualifiedName } from './names.js';
import { isPlainObject, keysOf } from './paths.js';

/** apimachinery's TotalAnnotationSizeLimitB: the bytes of every annotation key and value together. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** The UTF-8 length of `s`, as Go's len() counts it (a lone surrogate decodes to U+FFFD, 3 bytes). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 2 UTF-16 units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/**
 * apimachinery's ValidateAnnotationsSize: whether the keys and values pass 256 KiB. A UTF-8 byte is
 * at most one UTF-16 unit and a unit at most 3 bytes, so the lengths decide it unless they are
 * within a factor 3 of the limit; only then are the bytes counted.
 */
function annotationsTooLarge(annotations: Record<string, unknown>, keys: string[]): boolean {
  let units = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = annotations[key];
    units += key.length + (typeof value === 'string' ? value.length : 0);
    if (units > MAX_ANNOTATIONS_BYTES) return true;
  }
  if (units * 3 <= MAX_ANNOTATIONS_BYTES) return false;
  let bytes = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = annotations[key];
    bytes += utf8Length(key) + (typeof value === 'string' ? utf8Length(value) : 0);
    if (bytes > MAX_ANNOTATIONS_BYTES) return true;
  }
  return false;
}

function invalidEach(field: string, value: string, reasons: string[], out: ErrorList): void {
  if (reasons.length === 0) return;
  // Past the listed errors, a bad key of a 150,000-key map costs a count, not a closure per reason.
  if (out.room === 0) out.count(reasons.length, false);
  else for (const reason of reasons) out.add(false, () => fieldError.invalid(field, value, reason));
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
  for (const key of keysOf(labels)) {
    const value = labels[key];
    invalidEach('metadata.labels', key, qualifiedName(key), out);
    if (typeof value !== 'string') out.add(false, () => fieldError.invalid(`metadata.labels[${key}]`, value, 'must be a string'));
    else {
      const reasons = labelValue(value);
      if (reasons.length > 0) invalidEach(`metadata.labels[${key}]`, value, reasons, out);
    }
  }
  const annotations = stringMap(metadata.annotations, 'metadata.annotations', out);
  const keys = keysOf(annotations);
  for (const key of keys) invalidEach('metadata.annotations', key, qualifiedName(key.toLowerCase()), out);
  // After the key errors, as ValidateAnnotations adds it; the value is unused, so not shown.
  if (annotationsTooLarge(annotations, keys)) out.push(fieldError.tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
}
