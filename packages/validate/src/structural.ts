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
}
