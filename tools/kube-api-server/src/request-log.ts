// Every request the server saw, so a test can assert what a client did: which verbs on which
// objects, with which body, as which user, and what the server answered.
import type { RequestInfo, ResourceAttributes } from './request-info.js';

export interface RequestRecord extends ResourceAttributes {
  /** Milliseconds since the epoch when the request arrived. */
  time: number;
  method: string;
  path: string;
  query: Record<string, string>;
  verb: string;
  /** The authenticated user (a name from `auth.tokens`), when the request carried a known token. */
  user?: string;
  contentType?: string;
  /** The request body, parsed when it is JSON. */
  body?: unknown;
  /** The HTTP status answered (200 for a watch, from its start). */
  code?: number;
  /** Set when an injected fault handled the request: `delay`, `status`, `reset`, `reply`, `gone`, `lines` or `silent`. */
  fault?: string;
}

/** Which requests a fault or a query applies to; every given field must match. */
export interface RequestMatch {
  method?: string;
  /** One verb or several: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`. */
  verb?: string | string[];
  group?: string;
  resource?: string;
  /** `status` for the status subresource; `''` for the main resource only. */
  subresource?: string;
  namespace?: string;
  name?: string;
  user?: string;
  /** The path, exactly or as a pattern. */
  path?: string | RegExp;
}

export function matchesRequest(r: Pick<RequestRecord, keyof RequestMatch>, m: RequestMatch): boolean {
  if (m.method !== undefined && r.method !== m.method.toUpperCase()) return false;
  if (m.verb !== undefined && !(Array.isArray(m.verb) ? m.verb : [m.verb]).includes(r.verb)) return false;
  if (m.path !== undefined && !(typeof m.path === 'string' ? r.path === m.path : m.path.test(r.path))) return false;
  if (m.subresource !== undefined && (r.subresource ?? '') !== m.subresource) return false;
  for (const field of ['group', 'resource', 'namespace', 'name', 'user'] as const) {
    if (m[field] !== undefined && r[field] !== m[field]) return false;
  }
  return true;
}

export function recordOf(method: string, url: URL, info: RequestInfo): RequestRecord {
  const record: RequestRecord = { time: Date.now(), method, path: url.pathname, query: Object.fromEntries(url.searchParams), verb: info.verb };
  for (const field of ['group', 'version', 'namespace', 'resource', 'name', 'subresource'] as const) {
    const value = info[field];
    if (value !== undefined) record[field] = value;
  }
  return record;
}
