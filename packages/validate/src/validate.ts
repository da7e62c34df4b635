// validate(): the API server's admission-time treatment of one object, in its order: prune unknown
// fields and disallowed nulls, default, validate the schema (and list types), then run the CEL
// rules unless a blocking schema error makes them meaningless.
import { celErrors, compileAllRules } from './cel/rules.js';
import { Correlated } from './correlation.js';
import { ErrorList, rulesSkipped } from './field-errors.js';
import { allKinds, kindEntry, type KindEntry } from './kinds.js';
import { listTypeErrors } from './list-types.js';
import { objectMetaErrors } from './object-meta.js';
import { isPlainObject, withKeyMemo } from './paths.js';
import { pruneAndDefaultObject } from './prune-and-default.js';
import { schemaErrors } from './schema-errors.js';
import { semanticWarnings } from './semantics.js';
import type { FieldError, ValidateOptions, ValidationResult } from './types.js';

// Compile every CEL rule once, at load: a rule that does not compile fails the import, not a request.
for (const entry of allKinds()) compileAllRules(entry.structure);

function notAnObject(object: unknown): ValidationResult {
  const detail = 'must be a Kubernetes object (a JSON object with apiVersion and kind)';
  const shown = Array.isArray(object) ? 'array' : object === null ? 'null' : typeof object;
  const error: FieldError = { field: '', type: 'Invalid value', detail, message: `<nil>: Invalid value: ${JSON.stringify(shown)}: ${detail}` };
  return { kind: undefined, valid: false, object, errors: [error], omittedErrors: 0, warnings: [] };
}

/** The old object as the API server holds it (already pruned and defaulted), on UPDATE only. */
function oldObjectOf(entry: KindEntry, options: ValidateOptions): Record<string, unknown> | undefined {
  if (options.operation !== 'UPDATE' || !isPlainObject(options.oldObject)) return undefined;
  const old = options.oldObject;
  if (kindEntry(old.apiVersion, old.kind) !== entry) return undefined;
  // Only compared with, never returned: it may share the caller's old object.
  return pruneAndDefaultObject(old, entry.structure, true).object;
}

function run(object: unknown, options: ValidateOptions): ValidationResult {
  if (!isPlainObject(object)) return notAnObject(object);
  const entry = kindEntry(object.apiVersion, object.kind);
  if (!entry) return { kind: undefined, valid: true, object, errors: [], omittedErrors: 0, warnings: [] };
  const { structure } = entry;
  const { object: pruned, warnings } = pruneAndDefaultObject(object, structure, options.shareInput === true);
  const old = oldObjectOf(entry, options);
  const history = old && new Correlated(pruned, old, structure);
  const errors = new ErrorList(options.maxErrors);
  objectMetaErrors(pruned.metadata, errors);
  schemaErrors(entry.validator, entry.capped, structure, pruned, errors, history && ((pointer) => history.ratchets(pointer)));
  listTypeErrors(structure, pruned, errors);
  if (errors.blocking) errors.push(rulesSkipped());
  else celErrors(structure, pruned, history, errors);
  // Appended one by one: spread as arguments, a long list passes what a call can take.
  for (const warning of semanticWarnings(entry.kind, pruned, object)) warnings.push(warning);
  return { kind: entry.kind, valid: errors.size === 0, object: pruned, errors: errors.listed, omittedErrors: errors.omitted, warnings };
}

/** Validates one object; never throws, whatever the input. */
export function validate(object: unknown, options: ValidateOptions = {}): ValidationResult {
  try {
    return withKeyMemo(() => run(object, options));
  } catch (err) {
    // Only a bug (or an exotic input such as a throwing getter) lands here; report it, do not crash.
    const detail = `validator failed: ${err instanceof Error ? err.message : String(err)}`;
    const error: FieldError = { field: '', type: 'Internal error', detail, message: `<nil>: Internal error: ${detail}` };
    return { kind: undefined, valid: false, object, errors: [error], omittedErrors: 0, warnings: [] };
  }
}
