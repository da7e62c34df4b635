// What the API server does to an object before it validates it: drop fields the schema does not
// know (returned as warnings, the text kubectl prints), drop nulls where the schema does not allow
// them, then fill in defaults. One walk, guided by the structural schema, producing a fresh copy,
// or, when the caller allows it, a copy of only what changed that shares the rest with the input.
import { isPlainObject, keysOf, openApiPath, setOwn, type Segment } from './paths.js';
import { prepareSchema, type StructuralSchema } from './structural.js';
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
  /**
   * Whether a value the walk leaves as it is may be the input's own, not a copy: a 3 MiB map of
   * labels or a deep managedFields then costs a look, not a copy.
   */
  share: boolean;
}

/** The warning for unknown field `key` of the object at `at` (its path, as openApiPath writes it). */
function unknownField(walk: Walk, at: string, key: string): void {
  const field = at ? `${at}.${key}` : key;
  walk.warnings.push({ field, message: `unknown field "${field}"` });
}

/** Defaults are JSON from the schema; objects are copied so no two results share one. */
function cloneDefault(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (JSON.parse(JSON.stringify(value)) as unknown) : value;
}

/** What the walk needs at one schema node, worked out once per node so a walk looks nothing up twice. */
interface PruneNode {
  isObject: boolean;
  isArray: boolean;
  nullable: boolean;
  preserveUnknownFields: boolean;
  /** Child nodes by property name (null prototype: keys come from user input). */
  properties: Record<string, PruneNode> | undefined;
  additional: PruneNode | undefined;
  items: PruneNode | undefined;
  /** The properties that have a default, with it. */
  defaults: { key: string; node: PruneNode; value: unknown }[];
}

const nodes = new WeakMap<StructuralSchema, PruneNode>();

function nodeOf(schema: StructuralSchema): PruneNode {
  let node = nodes.get(schema);
  if (node) return node;
  prepareSchema(schema);
  let properties: Record<string, PruneNode> | undefined;
  const defaults: PruneNode['defaults'] = [];
  if (schema.properties) {
    properties = Object.create(null) as Record<string, PruneNode>;
    for (const [key, child] of Object.entries(schema.properties)) {
      const childNode = nodeOf(child);
      properties[key] = childNode;
      if (child.default !== undefined) defaults.push({ key, node: childNode, value: child.default });
    }
  }
  node = {
    isObject: schema.type === 'object',
    isArray: schema.type === 'array',
    nullable: schema.nullable === true,
    preserveUnknownFields: schema.preserveUnknownFields === true,
    properties,
    additional: schema.additionalProperties ? nodeOf(schema.additionalProperties) : undefined,
    items: schema.items ? nodeOf(schema.items) : undefined,
    defaults,
  };
  nodes.set(schema, node);
  return node;
}

function child(value: unknown, node: PruneNode, key: string | number, walk: Walk): unknown {
  walk.path.push(key);
  const out = pruneAndDefault(value, node, walk);
  walk.path.pop();
  return out;
}

/**
 * Objects up to this many keys are copied whole with a spread, the fastest copy of a small object;
 * V8 spreads an object of very many keys (a hostile map) far slower than it sets them one by one.
 */
const SPREAD_KEYS = 64;

/** Whether every key of `value` is a field the schema keeps as it is: no unknown field, no null to drop. */
function keepsEveryKey(value: Record<string, unknown>, keys: string[], node: PruneNode): boolean {
  const { properties, additional } = node;
  if (!properties && additional) {
    // A map: every key is kept; only a null it does not allow goes.
    if (additional.nullable) return true;
    for (let i = 0; i < keys.length; i++) if (value[keys[i]!] === null) return false;
    return true;
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const childNode = properties?.[key] ?? additional;
    if (!childNode || (value[key] === null && !childNode.nullable)) return false;
  }
  return true;
}

/** A copy of `value`'s own keys `keys`, by the faster way for its size. */
function shallowCopy(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  if (keys.length <= SPREAD_KEYS) return { ...value };
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) setOwn(out, keys[i]!, value[keys[i]!]);
  return out;
}

/**
 * An object whose every key the schema keeps: a copy of it, or with `walk.share` the object itself
 * unless something below it changed. The objects and lists below are walked in their turn.
 */
function keptObject(value: Record<string, unknown>, keys: string[], node: PruneNode, walk: Walk): Record<string, unknown> | undefined {
  const { properties, additional } = node;
  let out = walk.share ? undefined : shallowCopy(value, keys);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = value[key];
    if (typeof v !== 'object' || v === null) continue;
    const walked = child(v, (properties?.[key] ?? additional)!, key, walk);
    if (walked === v && out === undefined) continue;
    out ??= shallowCopy(value, keys);
    setOwn(out, key, walked);
  }
  return out;
}

function objectValue(value: Record<string, unknown>, node: PruneNode, walk: Walk, atRoot: boolean): Record<string, unknown> {
  const keys = keysOf(value);
  const { properties, additional } = node;
  let out: Record<string, unknown> | undefined;
  // The common case: every key kept. A shared map is never copied, so its size does not matter.
  if (!atRoot && (walk.share || keys.length <= SPREAD_KEYS) && keepsEveryKey(value, keys, node)) {
    out = keptObject(value, keys, node, walk);
  } else {
    out = {};
    let at: string | undefined;
    for (const key of keys) {
      const v = value[key];
      if (atRoot && key === 'metadata') {
        if (v !== null) setOwn(out, key, metadataValue(v, walk));
        continue;
      }
      const childNode = properties?.[key] ?? additional;
      if (!childNode) {
        if (node.preserveUnknownFields) setOwn(out, key, v);
        else {
          at ??= openApiPath(walk.path);
          unknownField(walk, at, key);
        }
        continue;
      }
      if (v === null && !childNode.nullable) continue;
      setOwn(out, key, typeof v === 'object' && v !== null ? child(v, childNode, key, walk) : v);
    }
  }
  const { defaults } = node;
  for (let i = 0; i < defaults.length; i++) {
    const d = defaults[i]!;
    if (Object.hasOwn(out ?? value, d.key)) continue;
    out ??= shallowCopy(value, keys);
    // A scalar default is set as it is; an object one is copied and walked for the defaults inside it.
    setOwn(out, d.key, typeof d.value === 'object' && d.value !== null ? child(cloneDefault(d.value), d.node, d.key, walk) : d.value);
  }
  return out ?? value;
}

/** Returns the pruned and defaulted copy of `value`; a value of the wrong type is kept for ajv to report. */
function pruneAndDefault(value: unknown, node: PruneNode, walk: Walk): unknown {
  if (node.isObject && isPlainObject(value)) return objectValue(value, node, walk, false);
  if (node.isArray && Array.isArray(value)) {
    const items = node.items;
    if (!items) return walk.share ? value : [...value];
    let out = walk.share ? undefined : value.slice();
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v !== 'object' || v === null) continue;
      const walked = child(v, items, i, walk);
      if (walked === v && out === undefined) continue;
      out ??= value.slice();
      out[i] = walked;
    }
    return out ?? value;
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
  const keys = Object.keys(value);
  if (walk.share && keys.every((key) => OBJECT_META_FIELDS.has(key))) return value;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (OBJECT_META_FIELDS.has(key)) setOwn(out, key, walk.share ? value[key] : copyOf(value[key]));
    else unknownField(walk, 'metadata', key);
  }
  return out;
}

/**
 * Sorted warnings without repeats. Two unknown fields can have one path ("a.b" under spec, and "b"
 * under spec.a), and so one message, which kubectl shows once; after the sort they are adjacent.
 */
function distinct(sorted: Warning[]): Warning[] {
  let out: Warning[] | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const w = sorted[i]!;
    const previous = sorted[i - 1]!;
    if (w.field === previous.field && w.message === previous.message) out ??= sorted.slice(0, i);
    else out?.push(w);
  }
  return out ?? sorted;
}

/**
 * Prunes and defaults a whole object of a kind whose structural schema is `schema`. The input is
 * never changed; with `share`, the result holds the input's own values wherever they are kept as
 * they are, so neither may be changed afterwards while the other is in use.
 */
export function pruneAndDefaultObject(
  object: Record<string, unknown>,
  schema: StructuralSchema,
  share = false,
): { object: Record<string, unknown>; warnings: Warning[] } {
  const walk: Walk = { warnings: [], path: [], share };
  const pruned = objectValue(object, nodeOf(schema), walk, true);
  // Sorted, so the warnings do not depend on the order the user wrote the fields in.
  if (walk.warnings.length > 1) walk.warnings.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { object: pruned, warnings: distinct(walk.warnings) };
}
