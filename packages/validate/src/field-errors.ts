// apimachinery's field.Error, rendered the way the API server prints it
// (k8s.io/apimachinery/pkg/util/validation/field/errors.go: Error() and ErrorBody()).
import type { FieldError } from './types.js';

/** ErrorTypeTypeInvalid errors: they print as "Invalid value" but block the CEL rules. */
const TYPE_INVALID = new WeakSet<FieldError>();

/** Marks a bad value that the message leaves out (TooMany with an unknown count). */
export const OMIT = Symbol('omit');

const GO_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** Go's %q (strconv.Quote) for the characters user input can hold: controls as \n or \x01. */
export function goQuote(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what Go escapes
  const body = s.replace(/[\\"\x00-\x1f\x7f\u2028\u2029]/g, (c) => {
    if (c === '\\' || c === '"') return `\\${c}`;
    const named = GO_ESCAPES[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
  return `"${body}"`;
}

/** Go's %v / %q / json.Marshal of a decoded JSON value, as ErrorBody chooses between them. */
export function formatBadValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)) ?? 'null';
  } catch {
    // Too deep or cyclic: Go would fall back to %#v; a type name is the honest short answer.
    return Array.isArray(value) ? '[...]' : '{...}';
  }
}

function make(field: string, type: string, body: string, detail: string): FieldError {
  const text = detail ? `${body}: ${detail}` : body;
  // A nil field.Path (the object itself) prints as "<nil>".
  return { field, type, detail, message: `${field || '<nil>'}: ${text}` };
}

/** Types whose body never shows the value. */
function bare(field: string, type: string, detail: string): FieldError {
  return make(field, type, type, detail);
}

function withValue(field: string, type: string, value: unknown, detail: string): FieldError {
  const body = value === OMIT ? type : `${type}: ${formatBadValue(value)}`;
  return make(field, type, body, detail);
}

export const fieldError = {
  required: (field: string, detail = '') => bare(field, 'Required value', detail),
  forbidden: (field: string, detail: string) => bare(field, 'Forbidden', detail),
  invalid: (field: string, value: unknown, detail: string) => withValue(field, 'Invalid value', value, detail),
  /** ErrorTypeTypeInvalid prints as "Invalid value" too; kept apart so blocking checks can tell. */
  typeInvalid: (field: string, value: unknown, detail: string) => {
    const e = withValue(field, 'Invalid value', value, detail);
    TYPE_INVALID.add(e);
    return e;
  },
  notSupported: (field: string, value: unknown, supported: string[]) =>
    withValue(field, 'Unsupported value', value, supported.length ? `supported values: ${supported.map(goQuote).join(', ')}` : ''),
  tooLong: (field: string, max: number) =>
    bare(field, 'Too long', max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long'),
  tooMany: (field: string, actual: number, max: number) =>
    withValue(field, 'Too many', actual >= 0 ? actual : OMIT, max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items'),
  duplicate: (field: string, value: unknown) => withValue(field, 'Duplicate value', value, ''),
};

/**
 * The error types after which the API server skips the CEL rules (apiextensions-apiserver
 * strategy.go, hasBlockingErr): the object does not have the shape the rules were written for.
 */
function isBlocking(e: FieldError): boolean {
  return e.type === 'Unsupported value' || e.type === 'Required value' || e.type === 'Too long' || e.type === 'Too many' || TYPE_INVALID.has(e);
}

/**
 * The errors of one validation, in the order they are found. The first `limit` are built and
 * listed; past it they are only counted, so a caller that shows a few of 100,000 errors does not
 * pay to format them all. Whether any of them blocks the CEL rules is known either way.
 */
export class ErrorList {
  readonly listed: FieldError[] = [];
  /** Errors found past the limit: counted, never built. */
  omitted = 0;
  /** Whether any error found, listed or not, is one after which the CEL rules are skipped. */
  blocking = false;

  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  get size(): number {
    return this.listed.length + this.omitted;
  }

  push(e: FieldError): void {
    this.add(isBlocking(e), () => e);
  }

  /** How many more errors will be listed; past them, errors are only counted. */
  get room(): number {
    return Math.max(0, this.limit - this.listed.length);
  }

  /** Counts `n` errors found past the listed ones, which are therefore never built; `blocking` if any of them is. */
  count(n: number, blocking: boolean): void {
    if (this.listed.length < this.limit) throw new Error('ErrorList.count: an error that would be listed must be built');
    if (blocking) this.blocking = true;
    this.omitted += n;
  }

  /** Adds the error `make` builds, calling it only if the error is listed; `blocking` is isBlocking of it. */
  add(blocking: boolean, make: () => FieldError): void {
    if (blocking) this.blocking = true;
    if (this.listed.length < this.limit) this.listed.push(make());
    else this.omitted++;
  }
}

/** What the API server adds when it skipped the rules; its field.Path is nil, printed "<nil>". */
export function rulesSkipped(): FieldError {
  const detail = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
  return { field: '', type: 'Invalid value', detail, message: `<nil>: Invalid value: null: ${detail}` };
}
