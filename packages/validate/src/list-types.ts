// x-kubernetes-list-type map and set invariants (apiextensions-apiserver structural listtype
// validation): no two entries with the same keys, no two equal set items.
import { type ErrorList, fieldError } from './field-errors.js';
import { fieldPath, isPlainObject, keysOf, type Segment } from './paths.js';
import { prepareSchema, propertyOf, type StructuralSchema } from './structural.js';

const hasListTypes = new WeakMap<StructuralSchema, boolean>();

function needsCheck(schema: StructuralSchema): boolean {
  let known = hasListTypes.get(schema);
  if (known === undefined) {
    known =
      schema.listType === 'map' ||
      schema.listType === 'set' ||
      Object.values(schema.properties ?? {}).some(needsCheck) ||
      (schema.additionalProperties !== undefined && needsCheck(schema.additionalProperties)) ||
      (schema.items !== undefined && needsCheck(schema.items));
    hasListTypes.set(schema, known);
  }
  return known;
}

function checkList(schema: StructuralSchema, list: unknown[], path: Segment[], errors: ErrorList): void {
  const seen = new Set<string>();
  list.forEach((item, i) => {
    let key: string;
    let shown: unknown;
    if (schema.listType === 'map') {
      if (!isPlainObject(item)) return;
      const keys: Record<string, unknown> = {};
      for (const k of schema.listMapKeys ?? []) if (Object.hasOwn(item, k)) keys[k] = item[k];
      key = JSON.stringify(keys);
      shown = keys;
    } else {
      key = JSON.stringify(item);
      shown = item;
    }
    if (seen.has(key)) errors.add(false, () => fieldError.duplicate(fieldPath([...path, i]), shown));
    seen.add(key);
  });
}

/** Adds the duplicate keys in list-type=map lists and duplicate items in sets, anywhere in `value`. */
export function listTypeErrors(schema: StructuralSchema, value: unknown, errors: ErrorList): void {
  collect(prepareSchema(schema), value, [], errors);
}

/** `path` is pushed and popped as the walk goes, and copied only for an error. */
function collect(schema: StructuralSchema, value: unknown, path: Segment[], errors: ErrorList): void {
  if (!needsCheck(schema)) return;
  if (Array.isArray(value)) {
    if (schema.listType === 'map' || schema.listType === 'set') checkList(schema, value, path, errors);
    const items = schema.items;
    if (items && needsCheck(items)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        collect(items, value[i], path, errors);
        path.pop();
      }
    }
  } else if (isPlainObject(value)) {
    for (const key of keysOf(value)) {
      const prop = propertyOf(schema, key);
      const child = prop ?? schema.additionalProperties;
      if (!child || !needsCheck(child)) continue;
      path.push(prop ? key : { key });
      collect(child, value[key], path, errors);
      path.pop();
    }
  }
}
