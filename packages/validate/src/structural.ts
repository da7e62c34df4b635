// The structural facts of a kind's schema that the runtime walks (pruning, defaulting, list types,
// CEL). tools/codegen writes one per kind into generated/structures.ts; ajv checks the rest.

/** One `x-kubernetes-validations` entry. */
export interface CelRuleSpec {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema;
  items?: StructuralSchema;
  default?: unknown;
  nullable?: boolean;
  rules?: CelRuleSpec[];
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  preserveUnknownFields?: boolean;
  /** An integer or a string; integers reach CEL as ints. */
  intOrString?: boolean;
  /** An object with more properties than this is refused, and nothing inside it is validated. */
  maxProperties?: number;
}

const prepared = new WeakSet<StructuralSchema>();

/**
 * Gives every `properties` record under `schema` a null prototype, once, so that looking up a key
 * from user input ("__proto__", "constructor") finds nothing inherited. The walks index
 * `properties` directly afterwards, which is what keeps them fast.
 */
export function prepareSchema(schema: StructuralSchema): StructuralSchema {
  if (prepared.has(schema)) return schema;
  prepared.add(schema);
  if (schema.properties) {
    Object.setPrototypeOf(schema.properties, null);
    for (const child of Object.values(schema.properties)) prepareSchema(child);
  }
  if (schema.additionalProperties) prepareSchema(schema.additionalProperties);
  if (schema.items) prepareSchema(schema.items);
  return schema;
}

/** The schema of property `key`; only for prepared schemas. */
export function propertyOf(schema: StructuralSchema, key: string): StructuralSchema | undefined {
  return schema.properties?.[key];
}
