// What the API server does to an object before it validates it: drop fields the schema does not
// know (returned as warnings, the text kubectl prints), drop nulls where the schema does not allow
// them, then fill in defaults. One walk, guided by the structural schema, producing a fresh copy.
import { isPlainObject, openApiPath, setOwn, type Segment } from './paths.js';
import { prepareSchema, propertyOf, type StructuralSchema } from './structural.js';
import type { Warning } from './types.js';

/** ObjectMeta's fields: the API server owns metadata's schema, so a CRD only says "object". */
const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

interface Walk {
  warnings: Warning[];
  /** The path to the value being walked; pushed and popped, copied only for a warning. */
  path: Segment[];
}

function unknownField(walk: Walk, key: string): void {
  const field = openApiPath([...walk.path, key]);
  walk.warnings.push({ field, message: `unknown field "${field}"` });
}

/** Defaults are JSON from the schema; objects are copied so no two results share one. */
function cloneDefault(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (JSON.parse(JSON.stringify(value)) as unknown) : value;
}

const defaultedProperties = new WeakMap<StructuralSchema, [string, StructuralSchema][]>();

/** The properties of `schema` that have a default, computed once per schema node. */
function withDefaults(schema: StructuralSchema): [string, StructuralSchema][] {
  let list = defaultedProperties.get(schema);
  if (!list) {
    list = Object.entries(schema.properties ?? {}).filter(([, child]) => child.default !== undefined);
    defaultedProperties.set(schema, list);
  }
  return list;
}

function child(value: unknown, schema: StructuralSchema, key: string | number, walk: Walk): unknown {
  walk.path.push(key);
  const out = pruneAndDefault(value, schema, walk);
  walk.path.pop();
  return out;
}

/**
 * Objects up to this many keys are copied whole with a spread, the fastest copy of a small object;
 * V8 spreads an object of very many keys (a hostile map) far slower than it sets them one by one.
 */
const SPREAD_KEYS = 64;

/** Whether every key of `value` is a field the schema keeps as it is: no unknown field, no null to drop. */
function keepsEveryKey(value: Record<string, unknown>, keys: string[], schema: StructuralSchema): boolean {
  const additional = schema.additionalProperties;
  if (!schema.properties && additional) {
    // A map: every key is kept; only a null it does not allow goes.
    if (additional.nullable) return true;
    for (const key of keys) if (value[key] === null) return false;
    return true;
  }
  for (const key of keys) {
    const childSchema = propertyOf(schema, key) ?? schema.additionalProperties;
    if (!childSchema || (value[key] === null && !childSchema.nullable)) return false;
  }
  return true;
}

function objectValue(value: Record<string, unknown>, schema: StructuralSchema, walk: Walk): Record<string, unknown> {
  const atRoot = walk.path.length === 0;
  const keys = Object.keys(value);
  let out: Record<string, unknown>;
  if (!atRoot && keys.length <= SPREAD_KEYS && keepsEveryKey(value, keys, schema)) {
    // The common case: a copy of every key, then the objects and lists below copied in their turn.
    out = { ...value };
    for (const key of keys) {
      const v = value[key];
      if (typeof v === 'object' && v !== null) setOwn(out, key, child(v, (propertyOf(schema, key) ?? schema.additionalProperties)!, key, walk));
    }
  } else {
    out = {};
    for (const key of keys) {
      const v = value[key];
      if (atRoot && key === 'metadata') {
        if (v !== null) setOwn(out, key, metadataValue(v, walk));
        continue;
      }
      const childSchema = propertyOf(schema, key) ?? schema.additionalProperties;
      if (!childSchema) {
        if (schema.preserveUnknownFields) setOwn(out, key, v);
        else unknownField(walk, key);
        continue;
      }
      if (v === null && !childSchema.nullable) continue;
      setOwn(out, key, typeof v === 'object' && v !== null ? child(v, childSchema, key, walk) : v);
    }
  }
  for (const [key, childSchema] of withDefaults(schema)) {
    if (!Object.hasOwn(out, key)) setOwn(out, key, child(cloneDefault(childSchema.default), childSchema, key, walk));
  }
  return out;
}

/** Returns the pruned and defaulted copy of `value`; a value of the wrong type is kept for ajv to report. */
function pruneAndDefault(value: unknown, schema: StructuralSchema, walk: Walk): unknown {
  if (schema.type === 'object' && isPlainObject(value)) return objectValue(value, schema, walk);
  if (schema.type === 'array' && Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v, i) => (typeof v === 'object' && v !== null ? child(v, items, i, walk) : v)) : [...value];
  }
  return value;
}

/** A flat copy of a map of scalars (labels, annotations); undefined when a value is not a scalar. */
function flatCopy(value: Record<string, unknown>): Record<string, unknown> | undefined {
  // One pass that checks and copies: a hostile map holds 100,000 keys, and each pass over it counts.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (typeof v === 'object' && v !== null) return undefined;
    setOwn(out, key, v);
  }
  return out;
}

/** A deep copy, so the result shares nothing with the input; an uncopyable value is kept as is. */
function copyOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const flat = isPlainObject(value) ? flatCopy(value) : undefined;
  if (flat) return flat;
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

/** metadata keeps ObjectMeta's fields untouched and loses any other, as the API server decodes it. */
function metadataValue(value: unknown, walk: Walk): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (OBJECT_META_FIELDS.has(key)) setOwn(out, key, copyOf(value[key]));
    else unknownField(walk, `metadata.${key}`);
  }
  return out;
}

/** Prunes and defaults a whole object of a kind whose structural schema is `schema`. */
export function pruneAndDefaultObject(object: Record<string, unknown>, schema: StructuralSchema): { object: Record<string, unknown>; warnings: Warning[] } {
  const walk: Walk = { warnings: [], path: [] };
  const pruned = objectValue(object, prepareSchema(schema), walk);
  // Sorted, so the warnings do not depend on the order the user wrote the fields in.
  walk.warnings.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { object: pruned, warnings: walk.warnings };
}
