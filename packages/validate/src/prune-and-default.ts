// What the API server does to an object before it validates it: drop fields the schema does not
// know (returned as warnings, the text kubectl prints), drop nulls where the schema does not allow
// them, then fill in defaults. One walk, guided by the structural schema, producing a fresh copy.
import { isPlainObject, openApiPath, own, setOwn, type Segment } from './paths.js';
import type { StructuralSchema } from './structural.js';
import type { Warning } from './types.js';

/** ObjectMeta's fields: the API server owns metadata's schema, so a CRD only says "object". */
const OBJECT_META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers',
  'managedFields',
]);

interface Walk {
  warnings: Warning[];
}

function unknownField(walk: Walk, path: Segment[]): void {
  const field = openApiPath(path);
  walk.warnings.push({ field, message: `unknown field "${field}"` });
}

/** Defaults are JSON from the schema; copy them so no two objects share one. */
function cloneDefault(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function objectValue(value: Record<string, unknown>, schema: StructuralSchema, path: Segment[], walk: Walk): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (path.length === 0 && key === 'metadata') {
      if (v !== null) setOwn(out, key, metadataValue(v, walk));
      continue;
    }
    const child = own(schema.properties, key) ?? schema.additionalProperties;
    if (!child) {
      if (schema.preserveUnknownFields) setOwn(out, key, v);
      else unknownField(walk, [...path, key]);
      continue;
    }
    if (v === null && !child.nullable) continue;
    setOwn(out, key, pruneAndDefault(v, child, [...path, key], walk));
  }
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (child.default !== undefined && !Object.hasOwn(out, key)) {
      setOwn(out, key, pruneAndDefault(cloneDefault(child.default), child, [...path, key], walk));
    }
  }
  return out;
}

/** Returns the pruned and defaulted copy of `value`; a value of the wrong type is kept for ajv to report. */
export function pruneAndDefault(value: unknown, schema: StructuralSchema, path: Segment[], walk: Walk): unknown {
  if (schema.type === 'object' && isPlainObject(value)) return objectValue(value, schema, path, walk);
  if (schema.type === 'array' && Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v, i) => (v === null ? v : pruneAndDefault(v, items, [...path, i], walk))) : [...value];
  }
  return value;
}

/** A deep copy, so the result shares nothing with the input; an uncopyable value is kept as is. */
function copyOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
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
    else unknownField(walk, ['metadata', key]);
  }
  return out;
}

/** Prunes and defaults a whole object of a kind whose structural schema is `schema`. */
export function pruneAndDefaultObject(object: Record<string, unknown>, schema: StructuralSchema): { object: Record<string, unknown>; warnings: Warning[] } {
  const walk: Walk = { warnings: [] };
  const pruned = objectValue(object, schema, [], walk);
  // Sorted, so the warnings do not depend on the order the user wrote the fields in.
  walk.warnings.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { object: pruned, warnings: walk.warnings };
}
