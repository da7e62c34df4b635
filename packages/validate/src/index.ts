// @extlb/validate: the API server's pruning, defaulting, schema and CEL validation for extlb's
// kinds, with its messages.
export { validate } from './validate.js';
export { isValidatedKind } from './kinds.js';
export type { FieldError, Operation, ValidateOptions, ValidatedKind, ValidationResult, Warning } from './types.js';
