// SnapshotCache: content-hash versions, what counts as a change, consistency checks, and the
// converter's real output accepted as a snapshot.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SnapshotCache, SnapshotError, type SnapshotResources, TYPE_URL } from '../src/index.js';
import { ResourceMap } from '../src/xds/resource-map.js';
import type { EncodedResource } from '../src/xds/snapshot.js';
import { gatewaySnapshot, scenarioNames, scenarioXds, shortType } from './helpers.js';

const GW = 'default/gw';

function rejected(fn: () => unknown): SnapshotError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SnapshotError, String(err));
    return err;
  }
  assert.fail('the snapshot was accepted');
}

test('versions come from content: the same input twice changes nothing, and each type changes on its own', () => {
  const cache = new SnapshotCache();
  const first = cache.setSnapshot(GW, gatewaySnapshot(GW));
  assert.deepEqual(first.changed.map(shortType), ['Cluster', 'ClusterLoadAssignment', 'Listener', 'RouteConfiguration', 'Secret']);
  const held = cache.getSnapshot(GW);
  assert.deepEqual(cache.setSnapshot(GW, gatewaySnapshot(GW)), { version: first.version, changed: [] });
  assert.equal(cache.getSnapshot(GW), held, 'an unchanged input keeps the snapshot it had');

  const moved = gatewaySnapshot(GW, { backends: { 'default/gw/backend': ['10.0.0.2:8080'] } });
  const update = cache.setSnapshot(GW, moved);
  assert.deepEqual(update.changed, [TYPE_URL.endpoint]);
  assert.notEqual(update.version, first.version);
  const now = cache.getSnapshot(GW);
  assert.equal(now?.types.get(TYPE_URL.cluster), held?.types.get(TYPE_URL.cluster), 'unchanged types are the same objects');
  assert.notEqual(now?.types.get(TYPE_URL.endpoint)?.version, held?.types.get(TYPE_URL.endpoint)?.version);
});

test('a resource written with its fields in another order has the same version', () => {
  const cache = new SnapshotCache();
  const a = gatewaySnapshot(GW);
  cache.setSnapshot(GW, a);
  const version = cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.resources.get('default/gw/backend')?.version;
  const cluster = a.clusters?.[0] ?? {};
  const reordered: SnapshotResources = { ...a, clusters: [Object.fromEntries(Object.entries(cluster).reverse())] };
  assert.deepEqual(cache.setSnapshot(GW, reordered).changed, []);
  assert.equal(cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.resources.get('default/gw/backend')?.version, version);
});

test('a snapshot made from the last one reads only its new objects', () => {
  const cache = new SnapshotCache();
  const first = gatewaySnapshot(GW);
  // How often each listener, route and cluster object is turned into JSON (JSON.stringify asks
  // toJSON; the codec, which reads enumerable fields only, never sees it).
  let reads = 0;
  for (const r of [...(first.listeners ?? []), ...(first.routes ?? []), ...(first.clusters ?? [])]) {
    Object.defineProperty(r, 'toJSON', {
      value(this: Record<string, unknown>) {
        reads++;
        return { ...this };
      },
    });
  }
  cache.setSnapshot(GW, first);
  const once = reads;
  assert.equal(once, 3, 'each read once, when first set');
  const moved = gatewaySnapshot(GW, { backends: { 'default/gw/backend': ['10.0.0.2:8080'] } });
  // As an endpoint-only recompute does: the same listener, route and cluster objects, new assignments.
  assert.deepEqual(cache.setSnapshot(GW, { ...first, endpoints: moved.endpoints }).changed, [TYPE_URL.endpoint]);
  assert.equal(reads, once, 'objects already set are not read again');
  assert.deepEqual(
    cache.setSnapshot(GW, structuredClone({ ...first, endpoints: moved.endpoints })).changed,
    [],
    'equal content in new objects is still no change',
  );
});

test('a list given again as the same list is not looked at: what an endpoint change costs does not grow with the listeners, routes and clusters', () => {
  const cache = new SnapshotCache();
  const first = gatewaySnapshot(GW);
  let reads = 0;
  const watched = (list: readonly Record<string, unknown>[] | undefined) =>
    (list ?? []).map(
      (r) =>
        new Proxy(r, {
          get(target, key, receiver) {
            reads++;
            return Reflect.get(target, key, receiver);
          },
          ownKeys(target) {
            reads++;
            return Reflect.ownKeys(target);
          },
        }),
    );
  const lists: SnapshotResources = { ...first, listeners: watched(first.listeners), routes: watched(first.routes), clusters: watched(first.clusters) };
  cache.setSnapshot(GW, lists);
  assert.ok(reads > 0, 'read when first set');
  reads = 0;
  const moved = gatewaySnapshot(GW, { backends: { 'default/gw/backend': ['10.0.0.2:8080'] } });
  assert.deepEqual(cache.setSnapshot(GW, { ...lists, endpoints: moved.endpoints }).changed, [TYPE_URL.endpoint]);
  assert.equal(reads, 0, 'the listeners, routes and clusters were not read again');
  // The references are still checked against the lists that changed.
  const error = rejected(() => cache.setSnapshot(GW, { ...lists, endpoints: [] }));
  assert.ok(
    error.issues.some((i) => i.kind === 'clusters' && /ClusterLoadAssignment/.test(i.message)),
    error.message,
  );
  assert.equal(reads, 0);
});

test('identical resources are encoded once for every Gateway holding them, and released when no snapshot does', () => {
  const cache = new SnapshotCache();
  const shared = (gw: string) => {
    const s = gatewaySnapshot(gw, { backends: { 'shared/backend': ['10.9.0.1:80'] } });
    return s;
  };
  cache.setSnapshot('a/gw', shared('a/gw'));
  const alone = cache.encodedCount;
  cache.setSnapshot('b/gw', shared('b/gw'));
  assert.equal(cache.encodedCount, alone + 2, 'b adds its listener and route; the cluster and its endpoints are shared');
  assert.equal(
    cache.getSnapshot('a/gw')?.types.get(TYPE_URL.cluster)?.resources.get('shared/backend'),
    cache.getSnapshot('b/gw')?.types.get(TYPE_URL.cluster)?.resources.get('shared/backend'),
  );
  assert.equal(cache.clearSnapshot('a/gw'), true);
  assert.equal(cache.clearSnapshot('a/gw'), false);
  assert.equal(cache.encodedCount, alone);
  cache.setSnapshot('b/gw', {});
  assert.equal(cache.encodedCount, 0);
  assert.deepEqual(cache.groups(), ['b/gw']);
});

test('a snapshot must hold what its listeners and clusters ask for over ADS; the previous one stays', () => {
  const cache = new SnapshotCache();
  const good = gatewaySnapshot(GW, { tlsSecret: 'default/cert' });
  cache.setSnapshot(GW, good);
  const before = cache.getSnapshot(GW);
  const err = rejected(() => cache.setSnapshot(GW, { listeners: good.listeners, clusters: good.clusters }));
  assert.deepEqual(
    err.issues.map((i) => [i.kind, i.name, i.path, i.message]),
    [
      [
        'listeners',
        'default/gw/8080',
        'filter_chains[0].filters[0].typed_config.rds',
        'asks for RouteConfiguration "default/gw/8080" over ADS, which the snapshot does not have',
      ],
      [
        'clusters',
        'default/gw/backend',
        'eds_cluster_config',
        'asks for ClusterLoadAssignment "default/gw/backend" over ADS, which the snapshot does not have',
      ],
      [
        'listeners',
        'default/gw/8080',
        'filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs',
        'asks for Secret "default/cert" over ADS, which the snapshot does not have',
      ],
    ],
  );
  assert.match(err.message, /^xDS snapshot for default\/gw rejected \(the previous one stays in use\):\n {2}listeners "default\/gw\/8080" filter_chains/);
  assert.equal(cache.getSnapshot(GW), before);

  // References to other config sources (a file, another management server) are not this server's to serve.
  const elsewhere = structuredClone(good);
  (elsewhere.clusters as any)[0].eds_cluster_config = { service_name: 'svc', eds_config: { path_config_source: { path: '/etc/eds.yaml' } } };
  elsewhere.endpoints = [];
  assert.deepEqual(cache.setSnapshot(GW, elsewhere).changed.map(shortType), ['Cluster', 'ClusterLoadAssignment']);
  // An EDS cluster with a service_name asks for that name.
  const renamed = structuredClone(good);
  (renamed.clusters as any)[0].eds_cluster_config.service_name = 'default/gw/other';
  assert.match(rejected(() => cache.setSnapshot(GW, renamed)).message, /ClusterLoadAssignment "default\/gw\/other"/);
});

test('TLS keys travel as Secrets over SDS, never inline in a listener or cluster', () => {
  const cache = new SnapshotCache();
  const inline = gatewaySnapshot(GW);
  (inline.listeners as any)[0].filter_chains[0].transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: { tls_certificates: [{ certificate_chain: { inline_string: 'CERT' }, private_key: { inline_string: 'KEY' } }] },
    },
  };
  const err = rejected(() => cache.setSnapshot(GW, inline));
  assert.deepEqual(
    err.issues.map((i) => [i.kind, i.path, i.message]),
    [
      [
        'listeners',
        'filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates[0].private_key',
        'a TLS private key must reach Envoy over SDS (a Secret), never inline',
      ],
    ],
  );
  // The same key in a Secret is how it should go.
  assert.ok(cache.setSnapshot(GW, gatewaySnapshot(GW, { tlsSecret: 'default/cert' })).changed.includes(TYPE_URL.secret));
});

test('every bad resource is reported at once, with its list, name and field path', () => {
  const cache = new SnapshotCache();
  const snapshot = gatewaySnapshot(GW) as Record<string, unknown>;
  const clusters = [...((snapshot.clusters as Record<string, unknown>[]) ?? [])];
  clusters.push(
    { ...clusters[0] },
    { '@type': TYPE_URL.cluster, name: 'typo', conect_timeout: '1s' },
    { '@type': TYPE_URL.listener, name: 'wrong-type' },
    { '@type': TYPE_URL.cluster },
    'not an object' as never,
  );
  const err = rejected(() => cache.setSnapshot(GW, { ...snapshot, clusters, extras: [] } as SnapshotResources));
  assert.deepEqual(
    err.issues.map((i) => [i.kind, i.name, i.path, i.message]),
    [
      ['extras', '', '', 'unknown list; expected listeners, routes, clusters, endpoints or secrets'],
      ['clusters', 'default/gw/backend', '', 'is in the list twice (again at [1])'],
      ['clusters', 'typo', 'conect_timeout', 'unknown field "conect_timeout" in envoy.config.cluster.v3.Cluster'],
      ['clusters', 'wrong-type', '@type', `must be ${TYPE_URL.cluster}, got "${TYPE_URL.listener}"`],
      ['clusters', '', '[4].name', 'must be a non-empty string'],
      ['clusters', '', '[5]', 'must be an object'],
    ],
  );
  assert.equal(cache.encodedCount, 0, 'nothing of a rejected snapshot stays in the cache');
  assert.equal(rejected(() => cache.setSnapshot(GW, { listeners: {} as never })).issues[0]?.message, 'must be a list');
  assert.equal(
    rejected(() => cache.setSnapshot(GW, { clusters: [{ '@type': TYPE_URL.cluster, name: 'n', big: 1n }] })).issues[0]?.message,
    'is not JSON (Do not know how to serialize a BigInt)',
  );
});

test('a new list made of the objects of the last one is checked for names given twice, and releases what it drops', () => {
  const cache = new SnapshotCache();
  const snapshot = gatewaySnapshot(GW) as Record<string, unknown>;
  const clusters = (snapshot.clusters as Record<string, unknown>[]) ?? [];
  const first = clusters[0] as Record<string, unknown>;
  cache.setSnapshot(GW, snapshot as SnapshotResources);
  const encoded = cache.encodedCount;
  const versionOfFirst = () => cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster)?.resources.get(String(first.name))?.version;
  const version = versionOfFirst();
  // The very object the last snapshot held, twice; then beside a new object of its name.
  for (const list of [
    [...clusters, first],
    [...clusters, { ...first, connect_timeout: '9s' }],
  ]) {
    const err = rejected(() => cache.setSnapshot(GW, { ...snapshot, clusters: list } as SnapshotResources));
    assert.deepEqual(
      err.issues.map((i) => [i.kind, i.name, i.message]),
      [['clusters', first.name, `is in the list twice (again at [${clusters.length}])`]],
    );
    assert.equal(cache.encodedCount, encoded, 'the refused snapshot left nothing in the cache');
  }
  // The object replaced by one of other content: the old encoding goes, the new one comes.
  const changed = { ...first, connect_timeout: '9s' };
  assert.deepEqual(cache.setSnapshot(GW, { ...snapshot, clusters: [changed, ...clusters.slice(1)] } as SnapshotResources).changed, [TYPE_URL.cluster]);
  assert.equal(cache.encodedCount, encoded, 'one encoding for another');
  assert.notEqual(versionOfFirst(), version);
  // And back: the same objects as the first time, in a new list.
  assert.deepEqual(cache.setSnapshot(GW, { ...snapshot, clusters: [...clusters] } as SnapshotResources).changed, [TYPE_URL.cluster]);
  assert.equal(versionOfFirst(), version, 'the version of the first time');
  assert.equal(cache.encodedCount, encoded);
});

test('the converter’s output for every scenario is accepted as a snapshot, and again unchanged', () => {
  for (const name of scenarioNames) {
    const cache = new SnapshotCache();
    const xds = scenarioXds(name) as SnapshotResources;
    const first = cache.setSnapshot(name, xds);
    assert.ok(first.changed.length > 0, name);
    const counts = Object.fromEntries([...(cache.getSnapshot(name)?.types ?? [])].map(([t, r]) => [shortType(t), r.resources.size]));
    assert.equal(counts.Listener, xds.listeners?.length, name);
    assert.equal(counts.Cluster, xds.clusters?.length, name);
    assert.equal(counts.ClusterLoadAssignment, xds.endpoints?.length, name);
    assert.deepEqual(cache.setSnapshot(name, scenarioXds(name) as SnapshotResources).changed, [], `${name}: converting the same input again sends nothing`);
  }
});

/** What a snapshot's type holds, name by name: what a proxy would be sent. */
function held(cache: SnapshotCache, typeUrl: string): Map<string, string> {
  const resources = cache.getSnapshot(GW)?.types.get(typeUrl as (typeof TYPE_URL)[keyof typeof TYPE_URL])?.resources ?? new Map();
  return new Map([...resources].map(([name, r]) => [name, r.version]));
}

/** A backend's endpoints as gatewaySnapshot writes them: `n` backends, each with its address. */
function backends(n: number, address: (i: number) => string): Record<string, string[]> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${GW}/backend-${i}`, [address(i)]]));
}

test('assignments replaced in place, change after change, give what a fresh cache gives, and leave earlier versions as they were', () => {
  const n = 40;
  const base = gatewaySnapshot(GW, { backends: backends(n, (i) => `10.0.0.${i}:8080`) });
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, base);
  let endpoints = [...(base.endpoints ?? [])];
  let seed = 7;
  const random = (m: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % m;
  };
  for (let step = 0; step < 120; step++) {
    const before = cache.getSnapshot(GW)?.types.get(TYPE_URL.endpoint);
    const frozen = new Map([...(before?.resources ?? [])].map(([name, r]) => [name, r.version]));
    // Up to 8 assignments replaced: by new content, by the content they had (a new object), or by
    // the content of an earlier step; enough steps to fold the replacements more than once.
    const next = [...endpoints];
    for (let k = random(8) + 1; k > 0; k--) {
      const i = random(n);
      const address = `10.0.${random(3)}.${i}:8080`;
      next[i] = gatewaySnapshot(GW, { backends: { [`${GW}/backend-${i}`]: [address] } }).endpoints?.[0] as Record<string, unknown>;
    }
    endpoints = next;
    cache.setSnapshot(GW, { ...base, endpoints });
    const fresh = new SnapshotCache();
    fresh.setSnapshot(GW, structuredClone({ ...base, endpoints }));
    const now = cache.getSnapshot(GW)?.types.get(TYPE_URL.endpoint);
    assert.equal(now?.version, fresh.getSnapshot(GW)?.types.get(TYPE_URL.endpoint)?.version, `step ${step}: the version a fresh cache gives`);
    assert.deepEqual(held(cache, TYPE_URL.endpoint), held(fresh, TYPE_URL.endpoint), `step ${step}: the resources a fresh cache holds`);
    assert.equal(cache.encodedCount, fresh.encodedCount, `step ${step}: what was replaced was released`);
    if (now !== before) {
      // Only the names whose version changed are the change a stream in step looks at.
      const changed = [...held(cache, TYPE_URL.endpoint)].filter(([name, v]) => frozen.get(name) !== v).map(([name]) => name);
      assert.deepEqual([...(now?.changes ?? [])].sort(), changed.sort(), `step ${step}: the change`);
    }
    assert.deepEqual(new Map([...(before?.resources ?? [])].map(([name, r]) => [name, r.version])), frozen, `step ${step}: the last version is as it was`);
  }
});

test('an assignment replaced by one of another name, or by one that does not encode, is checked as a whole list is', () => {
  const base = gatewaySnapshot(GW, { backends: backends(3, (i) => `10.0.0.${i}:8080`) });
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, base);
  const encoded = cache.encodedCount;
  const endpoints = base.endpoints ?? [];
  const first = endpoints[0] as Record<string, unknown>;
  // The first assignment now names the second's cluster: the second's name is given twice.
  const renamed = [{ ...first, cluster_name: endpoints[1]?.cluster_name }, ...endpoints.slice(1)];
  assert.deepEqual(
    rejected(() => cache.setSnapshot(GW, { ...base, endpoints: renamed })).issues.map((i) => [i.kind, i.name, i.message]),
    [
      ['endpoints', `${GW}/backend-1`, 'is in the list twice (again at [1])'],
      ['clusters', `${GW}/backend-0`, `asks for ClusterLoadAssignment "${GW}/backend-0" over ADS, which the snapshot does not have`],
    ],
  );
  const broken = [{ ...first, endpoints: [{ lb_endpoints: 'none' }] }, ...endpoints.slice(1)];
  const err = rejected(() => cache.setSnapshot(GW, { ...base, endpoints: broken }));
  assert.deepEqual(
    err.issues.map((i) => [i.kind, i.name]),
    [
      ['endpoints', `${GW}/backend-0`],
      ['clusters', `${GW}/backend-0`],
    ],
  );
  assert.match(err.issues[0]?.path ?? '', /lb_endpoints/);
  assert.equal(cache.encodedCount, encoded, 'the refused snapshots left nothing in the cache');
  assert.deepEqual(cache.setSnapshot(GW, { ...base, endpoints: [...endpoints] }).changed, [], 'the last snapshot stayed');
});

test('a ResourceMap with replacements reads as the map it stands for, in its order, and leaves the one it came from as it was', () => {
  const r = (name: string, version: string) => ({ name, version }) as EncodedResource;
  const names = Array.from({ length: 20 }, (_, i) => `r${i}`);
  const plain = new Map(names.map((name) => [name, r(name, 'v0')]));
  let map = ResourceMap.of(new Map(plain));
  const versions: Map<string, string>[] = [];
  const made: ResourceMap[] = [];
  const read = (m: ReadonlyMap<string, EncodedResource>) => new Map([...m].map(([name, e]) => [name, e.version]));
  // One replacement at a time: past two (an eighth of 20) they are folded into a map of their own.
  for (const [step, name] of ['r3', 'r7', 'r3', 'r11', 'r0', 'r19'].entries()) {
    versions.push(read(map));
    made.push(map);
    const fresh = r(name, `v${step + 1}`);
    map = map.replacing(new Map([[name, fresh]]));
    plain.set(name, fresh);
    assert.deepEqual([...map.keys()], names, 'the names and their order stay');
    assert.deepEqual(read(map), read(plain));
    assert.deepEqual([...map.values()], [...plain.values()]);
    const each: string[] = [];
    map.forEach((e, name) => {
      each.push(`${name}=${e.version}`);
    });
    assert.deepEqual(
      each,
      [...plain].map(([name, e]) => `${name}=${e.version}`),
    );
    assert.equal(map.get(name), fresh);
    assert.equal(map.size, 20);
    assert.equal(map.has('r20'), false);
    assert.equal(map.get('r20'), undefined);
  }
  // Each map made on the way still reads as it did then.
  assert.deepEqual(made.map(read), versions);
});
