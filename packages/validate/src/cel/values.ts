// Kubernetes hands CEL integer fields as CEL ints; JavaScript numbers would be CEL doubles and
// `p.number == 80` would find no overload. Convert, guided by the schema, before evaluation.
import { isPlainObject, keysOf, setOwn } from '../paths.js';
import { prepareSchema, propertyOf, type StructuralSchema } from '../structural.js';

const hasIntegers = new WeakMap<StructuralSchema, boolean>();

/** Whether any field at or under `schema` is an integer; subtrees without one are passed as they are. */
function containsIntegers(schema: StructuralSchema): boolean {
  let known = hasIntegers.get(schema);
  if (known === undefined) {
    known =
      schema.type === 'integer' ||
      schema.intOrString === true ||
      Object.values(schema.properties ?? {}).some(containsIntegers) ||
      (schema.additionalProperties !== undefined && containsIntegers(schema.additionalProperties)) ||
      (schema.items !== undefined && containsIntegers(schema.items));
    hasIntegers.set(schema, known);
  }
  return known;
}

export function toCelValue(value: unknown, schema: StructuralSchema): unknown {
  return convert(value, prepareSchema(schema));
}

function convert(value: unknown, schema: StructuralSchema): unknown {
  if (!containsIntegers(schema)) return value;
  if (schema.type === 'integer' || schema.intOrString) return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => convert(v, schema.items!)) : value;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of keysOf(value)) {
    const child = propertyOf(schema, key) ?? schema.additionalProperties;
    setOwn(out, key, child ? convert(value[key], child) : value[key]);
  }
  return out;
}
