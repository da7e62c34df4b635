// Which objects this package validates: the generated table, keyed by apiVersion and kind.
import { KINDS } from './generated/structures.js';
import { CAPPED_VALIDATORS, VALIDATORS } from './generated/validators.js';
import type { CappedValidator, SchemaValidator } from './schema-errors.js';
import type { StructuralSchema } from './structural.js';
import type { ValidatedKind } from './types.js';

export interface KindEntry {
  kind: ValidatedKind;
  structure: StructuralSchema;
  validator: SchemaValidator;
  capped: CappedValidator;
}

const ENTRIES: Record<string, KindEntry> = {};
/** The entries by kind, then by apiVersion: found without building a key string per call. */
const BY_KIND = new Map<string, Map<string, KindEntry>>();
for (const [key, { kind, structure }] of Object.entries(KINDS)) {
  const entry: KindEntry = { kind, structure, validator: VALIDATORS[kind], capped: CAPPED_VALIDATORS[kind] };
  ENTRIES[key] = entry;
  const apiVersion = key.slice(0, key.length - kind.length - 1);
  let versions = BY_KIND.get(kind);
  if (!versions) {
    versions = new Map();
    BY_KIND.set(kind, versions);
  }
  versions.set(apiVersion, entry);
}

export function kindEntry(apiVersion: unknown, kind: unknown): KindEntry | undefined {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return BY_KIND.get(kind)?.get(apiVersion);
}

/** Whether `validate` checks objects of this apiVersion and kind. */
export function isValidatedKind(apiVersion: unknown, kind: unknown): kind is ValidatedKind {
  return kindEntry(apiVersion, kind) !== undefined;
}

/** Every kind, for start-up compilation and for tests. */
export function allKinds(): KindEntry[] {
  return Object.values(ENTRIES);
}
