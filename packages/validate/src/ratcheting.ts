// Validation ratcheting (CRDValidationRatcheting, on by default since Kubernetes 1.30): on UPDATE
// the API server ignores schema errors and non-transition CEL failures in any value that is
// unchanged from the old object, so a tightened schema does not block edits elsewhere. Values
// correlate as for transition rules: by property, by map key, and by key in list-type=map lists.
import { isPlainObject } from './paths.js';
import { prepareSchema, propertyOf, type StructuralSchema } from './structural.js';

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The old value that correlates with the value at `pointer` (a JSON pointer into `current`), or
 * undefined when there is none (a new field, or an item of an atomic list).
 */
export function correlatedOld(pointer: string, current: unknown, old: unknown, schema: StructuralSchema): { value: unknown } | undefined {
  if (pointer === '') return { value: old };
  let cur = current;
  let prev = old;
  let s: StructuralSchema | undefined = prepareSchema(schema);
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!s) return undefined;
    if (Array.isArray(cur)) {
      const item: unknown = cur[Number(token)];
      if (s.listType !== 'map' || !s.listMapKeys || !Array.isArray(prev) || !isPlainObject(item)) return undefined;
      const keys = s.listMapKeys;
      prev = prev.find((o) => isPlainObject(o) && keys.every((k) => o[k] === item[k]));
      cur = item;
      s = s.items;
    } else {
      if (!isPlainObject(cur) || !isPlainObject(prev) || !Object.hasOwn(prev, token)) return undefined;
      cur = cur[token];
      prev = prev[token];
      s = propertyOf(s, token) ?? s.additionalProperties;
    }
    if (prev === undefined) return undefined;
  }
  return { value: prev };
}

function valueAt(pointer: string, root: unknown): unknown {
  let value = root;
  if (pointer === '') return value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    value = Array.isArray(value) ? value[Number(token)] : isPlainObject(value) && Object.hasOwn(value, token) ? value[token] : undefined;
  }
  return value;
}

/**
 * Whether the value at `pointer`, or any value above it, is unchanged from its correlated old
 * value: the API server stops validating at an unchanged node, so nothing below it is reported.
 */
export function unchanged(pointer: string, current: unknown, old: unknown, schema: StructuralSchema): boolean {
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/');
  for (let n = 0; n <= tokens.length; n++) {
    const prefix = tokens
      .slice(0, n)
      .map((t) => `/${t}`)
      .join('');
    const before = correlatedOld(prefix, current, old, schema);
    if (!before) return false;
    if (deepEqual(valueAt(prefix, current), before.value)) return true;
  }
  return false;
}
