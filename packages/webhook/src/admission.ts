// AdmissionReview in, AdmissionReview out: the part of the webhook that knows no HTTP.
import { isValidatedKind, validate, type FieldError, type ValidationResult } from '@extlb/validate';
import { boundWarnings, clip, MAX_CAUSE_MESSAGE, MAX_CAUSES, MAX_FIELD, omittedErrorsCause } from './bounds.js';
import { diff } from './json-patch.js';
import { ADMISSION_API_VERSION, type AdmissionRequest, type AdmissionResponse, type AdmissionReview, type Status } from './types.js';

/** A request body that is not an AdmissionReview the webhook can answer; the server sends 400. */
export class BadRequestError extends Error {}

/**
 * Deeper than any real object (a BackendPool with managedFields is under 20 levels) and shallow
 * enough that no recursive walk over the object can exhaust the stack.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, found by scanning the text so
 * that neither JSON.parse nor a later walk ever meets the pathological case, and without
 * allocating per node as a walk over the parsed value would. Strings, most of a big body, are
 * skipped by indexOf from quote to quote rather than read a character at a time.
 */
function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the first one not escaped by an odd number of backslashes.
      for (;;) {
        const quote = text.indexOf('"', i + 1);
        if (quote < 0) return false; // unterminated: JSON.parse refuses it
        let backslashes = 0;
        while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
        i = quote;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** A value from the body, quoted for a message: short, whatever the body holds. */
const quoted = (value: unknown) => clip(JSON.stringify(value) ?? 'unset', 100);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/**
 * Parses and checks a request body. JSON.parse keeps a `__proto__` member as plain data (it never
 * sets a prototype), and the depth check stops pathological nesting before anything parses it.
 */
export function parseAdmissionReview(body: string, maxDepth = MAX_JSON_DEPTH): AdmissionReview {
  if (exceedsDepth(body, maxDepth)) throw new BadRequestError(`request body nests deeper than ${maxDepth} levels`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new BadRequestError(`request body is not valid JSON: ${clip((err as Error).message, 200)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError(`request body must be an AdmissionReview object, not ${describe(value)}`);
  }
  const review = value as Record<string, unknown>;
  if (review.kind !== 'AdmissionReview' || review.apiVersion !== ADMISSION_API_VERSION) {
    throw new BadRequestError(
      `expected apiVersion ${ADMISSION_API_VERSION} and kind AdmissionReview, got apiVersion ${quoted(review.apiVersion)} and kind ${quoted(review.kind)}`,
    );
  }
  const request = review.request as Record<string, unknown> | undefined;
  if (request === undefined) throw new BadRequestError('AdmissionReview.request is missing');
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new BadRequestError(`AdmissionReview.request must be an object, not ${describe(request)}`);
  }
  if (typeof request.uid !== 'string' || request.uid === '') throw new BadRequestError('AdmissionReview.request.uid must be a non-empty string');
  if (typeof request.operation !== 'string' || !OPERATIONS.has(request.operation)) {
    throw new BadRequestError(`AdmissionReview.request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, not ${quoted(request.operation)}`);
  }
  return value as AdmissionReview;
}

export type Verdict = 'allowed' | 'denied';

export interface ReviewOptions {
  /** Answer as the mutating webhook: defaults as a JSON Patch, never a denial for invalid input. */
  mutate?: boolean;
}

export interface ReviewResult {
  review: AdmissionReview;
  /** The kind the request names when it is one the webhook validates, else undefined. */
  kind: ValidationResult['kind'];
  verdict: Verdict;
  /** On a denial, how many errors the object has: the answer lists at most MAX_CAUSES of them. */
  errorCount?: number;
}

function kindOfRequest(request: AdmissionRequest): { apiVersion: unknown; kind: unknown } {
  const object = request.object as { apiVersion?: unknown; kind?: unknown } | null | undefined;
  if (object && typeof object === 'object' && object.kind !== undefined) return { apiVersion: object.apiVersion, kind: object.kind };
  const gvk = request.kind;
  return { apiVersion: gvk?.group ? `${gvk.group}/${gvk.version}` : gvk?.version, kind: gvk?.kind };
}

function objectName(request: AdmissionRequest): string {
  if (typeof request.name === 'string' && request.name !== '') return request.name;
  const meta = (request.object as { metadata?: { name?: unknown; generateName?: unknown } } | undefined)?.metadata;
  if (typeof meta?.name === 'string') return meta.name;
  return typeof meta?.generateName === 'string' ? meta.generateName : '';
}

/** apimachinery's field.ErrorType names, keyed by the text its String() prints. */
const CAUSE_TYPES: Record<string, string> = {
  'Not found': 'FieldValueNotFound',
  'Required value': 'FieldValueRequired',
  'Duplicate value': 'FieldValueDuplicate',
  'Invalid value': 'FieldValueInvalid',
  'Unsupported value': 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  'Too long': 'FieldValueTooLong',
  'Too many': 'FieldValueTooMany',
  'Internal error': 'InternalError',
};

/** The part of a field error after `field: `, as metav1.StatusCause.message carries it. */
function errorBody(e: FieldError): string {
  // The API server prints an error on the object itself (field "") as `<nil>: ...`.
  const prefix = e.field === '' ? '<nil>: ' : `${e.field}: `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}

/**
 * metav1.Status as apimachinery's errors.NewInvalid builds it: `Kind.group "name" is invalid: ...`,
 * several messages (deduplicated) inside brackets, one cause per field error. `omitted` errors
 * past the listed ones are counted in a last cause, and long messages and paths are cut, so that
 * the status stays small (see bounds.ts).
 */
export function invalidStatus(kind: string, group: string, name: string, errors: readonly FieldError[], omitted = 0): Status {
  const causes = errors.map((e) => ({
    type: Object.hasOwn(CAUSE_TYPES, e.type) ? CAUSE_TYPES[e.type] : e.type,
    message: clip(errorBody(e), MAX_CAUSE_MESSAGE),
    field: clip(e.field, MAX_FIELD),
  }));
  const messages = errors.map((e) => clip(e.message, MAX_CAUSE_MESSAGE));
  if (omitted > 0) {
    const rest = omittedErrorsCause(errors.length, omitted);
    causes.push(rest);
    messages.push(`<nil>: ${rest.message}`);
  }
  const unique = [...new Set(messages)];
  const qualified = group ? `${kind}.${group}` : kind;
  const aggregate = unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
  const shownName = clip(name, MAX_FIELD);
  return {
    status: 'Failure',
    code: 422,
    reason: 'Invalid',
    message: `${qualified} ${JSON.stringify(shownName)} is invalid: ${aggregate}`,
    details: { name: shownName, group, kind, causes },
  };
}

function answer(request: AdmissionRequest, response: Omit<AdmissionResponse, 'uid'>): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid: request.uid, ...response } };
}

/**
 * Answers one AdmissionReview. DELETE, CONNECT and objects of kinds the validators do not cover
 * are allowed unchanged: the webhook configuration decides what is sent here, and a kind added to
 * it later must not start failing closed.
 */
export function reviewAdmission(review: AdmissionReview, options: ReviewOptions = {}): ReviewResult {
  const request = review.request;
  if (!request) throw new BadRequestError('AdmissionReview.request is missing');
  const { apiVersion, kind } = kindOfRequest(request);
  if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !isValidatedKind(apiVersion, kind)) {
    return { review: answer(request, { allowed: true }), kind: undefined, verdict: 'allowed' };
  }
  const result = validate(request.object, {
    operation: request.operation,
    ...(request.operation === 'UPDATE' ? { oldObject: request.oldObject } : {}),
    maxErrors: MAX_CAUSES,
    // The parsed review is the webhook's own and nothing changes it: no need to copy its megabytes.
    shareInput: true,
  });
  if (options.mutate) {
    // Only a valid object is defaulted here; the validating webhook denies the others with reasons.
    const ops = result.valid ? diff(request.object, result.object, { removals: false }) : [];
    const response: Omit<AdmissionResponse, 'uid'> = { allowed: true };
    if (ops.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
    }
    return { review: answer(request, response), kind, verdict: 'allowed' };
  }
  const warnings =
    result.warnings.length > 0
      ? {
          warnings: boundWarnings(
            result.warnings.map((w) => w.message),
            { distinct: true },
          ),
        }
      : {};
  if (result.valid) return { review: answer(request, { allowed: true, ...warnings }), kind, verdict: 'allowed' };
  const group = typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const status = invalidStatus(kind, group, objectName(request), result.errors, result.omittedErrors);
  const errorCount = result.errors.length + result.omittedErrors;
  return { review: answer(request, { allowed: false, status, ...warnings }), kind, verdict: 'denied', errorCount };
}
