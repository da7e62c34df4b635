// Discovery documents: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version> and /version,
// generated from the kind table (KubernetesObjectApi finds resources through them).
import { apiVersionOf, type KindSpec, type KindTable } from './kinds.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];

export const VERSION_INFO = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0+extlb-kube-api-server',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.24.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function resources(kinds: KindSpec[]): unknown[] {
  return kinds.flatMap((k) => {
    const main: Record<string, unknown> = {
      name: k.plural,
      singularName: k.singular ?? k.kind.toLowerCase(),
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: VERBS,
    };
    if (k.shortNames) main.shortNames = k.shortNames;
    if (k.categories) main.categories = k.categories;
    return k.status ? [main, { name: `${k.plural}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: STATUS_VERBS }] : [main];
  });
}

function group(kinds: KindTable, name: string): unknown {
  const versions = kinds.versions(name).map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions, preferredVersion: versions[0] };
}

/** The discovery document at a path, or undefined when the path is not a discovery path the table has. */
export function discovery(kinds: KindTable, path: string, serverAddress: string): unknown {
  const parts = path.split('/').filter((p) => p !== '');
  if (path === '/version') return VERSION_INFO;
  if (parts[0] === 'api' && parts.length === 1) {
    return { kind: 'APIVersions', versions: kinds.versions(''), serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }
  if (parts[0] === 'apis' && parts.length === 1) return { kind: 'APIGroupList', apiVersion: 'v1', groups: kinds.groups().map((g) => group(kinds, g)) };
  if (parts[0] === 'apis' && parts.length === 2 && kinds.groups().includes(parts[1] as string)) {
    return { kind: 'APIGroup', apiVersion: 'v1', ...(group(kinds, parts[1] as string) as object) };
  }
  const [groupName, version] =
    parts[0] === 'api' && parts.length === 2 ? ['', parts[1]] : parts[0] === 'apis' && parts.length === 3 ? [parts[1], parts[2]] : [];
  if (groupName === undefined || version === undefined) return undefined;
  const served = kinds.all().filter((k) => k.group === groupName && k.version === version);
  if (served.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group: groupName, version }), resources: resources(served) };
}
