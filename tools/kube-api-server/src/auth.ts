// Optional authentication (bearer tokens) and authorization (a predicate over the request's
// attributes), answered with the API server's 401 and RBAC-worded 403.
import type { RequestInfo } from './request-info.js';
import { denied, unauthorized } from './status.js';

export interface AuthorizationAttributes {
  user: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface AuthOptions {
  /** Bearer token → the user it authenticates as. */
  tokens: Record<string, string>;
  /** Answer 401 to a request without a known token. Default true; with false, such a request is `system:anonymous`. */
  required?: boolean;
  /** Allow or deny a resource request; denied ones get 403. Default: allow everything. */
  authorize?: (attributes: AuthorizationAttributes) => boolean;
}

export const ANONYMOUS = 'system:anonymous';

/** The user a request authenticates as; undefined when it carries no known token. */
export function identify(authorization: string | undefined, options: AuthOptions | undefined): string | undefined {
  const token = authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  return token !== undefined && options ? options.tokens[token] : undefined;
}

/** Throws 401 or 403 when the options say so. Health probes are always open. */
export function checkAccess(info: RequestInfo, user: string | undefined, options: AuthOptions | undefined): void {
  if (!options) return;
  if (!info.resourceRequest && /^\/(healthz|livez|readyz)$/.test(info.path)) return;
  if (user === undefined && options.required !== false) throw unauthorized();
  if (!info.resourceRequest || !options.authorize) return;
  const attributes: AuthorizationAttributes = { user: user ?? ANONYMOUS, verb: info.verb, group: info.group ?? '', resource: info.resource ?? '' };
  for (const field of ['subresource', 'namespace', 'name'] as const) {
    const value = info[field];
    if (value !== undefined) attributes[field] = value;
  }
  if (options.authorize(attributes)) return;
  throw denied({ ...attributes, resource: { group: attributes.group, resource: attributes.resource } });
}
