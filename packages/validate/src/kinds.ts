// Which objects this package validates: the generated table, keyed by apiVersion and kind.
import { KINDS } from './generated/structures.js';
import { VALIDATORS } from './generated/validators.js';
import { own } from './paths.js';
import type { SchemaValidator } from './schema-errors.js';
import type { StructuralSchema } from './structural.js';
import type { ValidatedKind } from './types.js';

export interface KindEntry {
  kind: ValidatedKind;
  structure: StructuralSchema;
  validator: SchemaValidator;
}

const ENTRIES: Record<string, KindEntry> = {};
for (const [key, { kind, structure }] of Object.entries(KINDS)) {
  ENTRIES[key] = { kind, structure, validator: VALIDATORS[kind] };
}

export function kindEntry(apiVersion: unknown, kind: unknown): KindEntry | undefined {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return own(ENTRIES, `${apiVersion}/${kind}`);
}

/** Whether `validate` checks objects of this apiVersion and kind. */
export function isValidatedKind(apiVersion: unknown, kind: unknown): kind is ValidatedKind {
  return kindEntry(apiVersion, kind) !== undefined;
}

/** Every kind, for start-up compilation and for tests. */
export function allKinds(): KindEntry[] {
  return Object.values(ENTRIES);
}
