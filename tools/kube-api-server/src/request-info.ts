// What a request is about, read from its method and path as the API server's RequestInfoFactory
// does: group, version, namespace, resource, name, subresource and verb.

/** The parts of a resource path. */
export interface ResourceAttributes {
  group?: string;
  version?: string;
  namespace?: string;
  resource?: string;
  name?: string;
  subresource?: string;
}

export interface RequestInfo extends ResourceAttributes {
  /** False for discovery, /version, /healthz and other paths that name no resource. */
  resourceRequest: boolean;
  path: string;
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; the lower-case method otherwise. */
  verb: string;
  /** Path segments after the subresource: no resource here has any, so such a path is a 404. */
  extra?: string[];
}

/** Subresources of a namespace that stay on the namespace (`/api/v1/namespaces/x/status`). */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const VERBS: Record<string, [string, string]> = {
  GET: ['get', 'list'],
  HEAD: ['get', 'list'],
  POST: ['create', 'create'],
  PUT: ['update', 'update'],
  PATCH: ['patch', 'patch'],
  DELETE: ['delete', 'deletecollection'],
};

export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  const nonResource: RequestInfo = { resourceRequest: false, path, verb: method.toLowerCase() };
  let rest: string[];
  const info: RequestInfo = { resourceRequest: true, path, verb: '' };
  if (parts[0] === 'api' && parts.length >= 3) {
    Object.assign(info, { group: '', version: parts[1] });
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    Object.assign(info, { group: parts[1], version: parts[2] });
    rest = parts.slice(3);
  } else return nonResource;

  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
  }
  [info.resource, info.name, info.subresource] = rest;
  if (rest.length > 3) info.extra = rest.slice(3);
  const [item, collection] = VERBS[method] ?? [method.toLowerCase(), method.toLowerCase()];
  info.verb = info.name ? item : collection;
  if ((info.verb === 'list' || info.verb === 'get') && isTrue(url.searchParams.get('watch'))) info.verb = 'watch';
  return info;
}

/** A boolean query parameter as the API server parses one. */
export function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1' || value === 't' || value === 'True';
}
