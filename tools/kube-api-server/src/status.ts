// Errors as the API server returns them: `Status` objects with its reasons, codes and wording.
import { type GroupResource, qualifiedResource } from './kinds.js';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A request that ends in a Status; thrown anywhere in request handling, answered by the router. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
  get code(): number {
    return this.status.code;
  }
}

export function failure(code: number, reason: string, message: string, details?: StatusDetails): ApiError {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) status.details = details;
  return new ApiError(status);
}

function resourceDetails(gr: GroupResource, name?: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== undefined && name !== '') details.name = name;
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return failure(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, resourceDetails(gr, name));
}

/** A path that names no resource the server knows. */
export function noSuchResource(): ApiError {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return failure(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, resourceDetails(gr, name));
}

export const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, why: string): ApiError {
  return failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, resourceDetails(gr, name));
}

export interface FieldError {
  field: string;
  /** `FieldValueRequired`, `FieldValueInvalid`, `FieldValueForbidden`, … */
  reason: string;
  /** The field error's text after the field path, e.g. `Required value: name or generateName is required`. */
  message: string;
}

const FIELD_TYPES: Record<string, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotSupported: 'Unsupported value',
};

/** A field error in the API server's words: `Required value: detail`, `Invalid value: "x": detail`. */
export function fieldError(field: string, reason: keyof typeof FIELD_TYPES, detail: string, value?: unknown): FieldError {
  const type = FIELD_TYPES[reason];
  const shown = value === undefined ? '' : `${typeof value === 'string' ? JSON.stringify(value) : String(value)}: `;
  return { field, reason, message: `${type}: ${shown}${detail}` };
}

/** 422: `Kind.group "name" is invalid: field: message` (several errors go in brackets, as the API server aggregates them). */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const texts = errors.map((e) => `${e.field}: ${e.message}`);
  const what = texts.length === 1 ? `: ${texts[0]}` : texts.length > 1 ? `: [${texts.join(', ')}]` : '';
  const details: StatusDetails = {
    name,
    ...(group ? { group } : {}),
    kind,
    causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
  };
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid${what}`, details);
}

export function badRequest(message: string): ApiError {
  return failure(400, 'BadRequest', message);
}

/** 410 Expired: a resourceVersion or continue token older than the history the server keeps. */
export function expired(message: string): ApiError {
  return failure(410, 'Expired', message);
}

export function tooOldResourceVersion(requested: number, oldest: number): ApiError {
  return expired(`too old resource version: ${requested} (${oldest})`);
}

export function timeout(message: string, retryAfterSeconds: number, causes?: StatusCause[]): ApiError {
  return failure(504, 'Timeout', `Timeout: ${message}`, { ...(causes ? { causes } : {}), retryAfterSeconds });
}

/** A method the path does not take, such as PUT on a collection. */
export function methodNotAllowed(): ApiError {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function methodNotSupported(gr: GroupResource, verb: string): ApiError {
  return failure(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualifiedResource(gr)}"`, resourceDetails(gr));
}

export function unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
  return failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, {
    causes: [{ reason: 'UnexpectedServerResponse', message: contentType }],
  });
}

export function unauthorized(): ApiError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** 403: `services "x" is forbidden: <why>`. */
export function forbidden(gr: GroupResource, name: string | undefined, why: string, causes?: StatusCause[]): ApiError {
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return failure(403, 'Forbidden', `${subject} is forbidden: ${why}`, { ...resourceDetails(gr, name), ...(causes ? { causes } : {}) });
}

export interface DeniedRequest {
  user: string;
  verb: string;
  resource: GroupResource;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** 403 in RBAC's wording: `User "u" cannot get resource "services" in API group "" in the namespace "ns"`. */
export function denied(r: DeniedRequest): ApiError {
  const resource = r.subresource ? `${r.resource.resource}/${r.subresource}` : r.resource.resource;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return forbidden(r.resource, r.name, `User "${r.user}" cannot ${r.verb} resource "${resource}" in API group "${r.resource.group}" ${scope}`);
}

export function internalError(message: string): ApiError {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ reason: '', message }] });
}

export function success(gr: GroupResource, name: string, uid: string | undefined): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { ...resourceDetails(gr, name), ...(uid ? { uid } : {}) }, code: 200 };
}
