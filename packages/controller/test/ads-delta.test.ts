// DeltaAggregatedResources against a real gRPC client that plays Envoy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type NackInfo, TYPE_URL, type XdsServerOptions } from '../src/index.js';
import { type DeltaClient, type DeltaResponse, deltaRequest, gatewaySnapshot, names, serveXds, shortType, testCodec, waitFor } from './helpers.js';

const GW = 'default/gw';
const NODE = { id: 'envoy-d', cluster: GW };
const TWO = { 'default/gw/a': ['10.0.0.1:80'], 'default/gw/b': ['10.0.0.2:80'] };

function serve(t: { after: (fn: () => unknown) => void }, callbacks: XdsServerOptions['callbacks'] = {}) {
  return serveXds(t, 'delta', { callbacks });
}

function ack(client: DeltaClient, response: DeltaResponse, extra: Parameters<typeof deltaRequest>[1] = {}) {
  client.send(deltaRequest(response.type_url, { nonce: response.nonce, ...extra }));
}

/** Versions by name, as a reconnecting client lists them in initial_resource_versions. */
function versions(response: DeltaResponse): Record<string, string> {
  return Object.fromEntries((response.resources ?? []).map((r) => [r.name, r.version]));
}

async function syncedEnvoy(client: DeltaClient, node = NODE) {
  client.send(deltaRequest(TYPE_URL.cluster, { node }));
  client.send(deltaRequest(TYPE_URL.listener));
  const cds = await client.next();
  const lds = await client.next();
  ack(client, cds, { subscribe: [] });
  ack(client, lds);
  client.send(deltaRequest(TYPE_URL.endpoint, { subscribe: names(cds) }));
  client.send(deltaRequest(TYPE_URL.route, { subscribe: [`${GW}/8080`] }));
  // Make before break: the routes follow once the endpoints they send to are in place.
  const eds = await client.next();
  ack(client, eds);
  const rds = await client.next();
  ack(client, rds);
  return { cds, lds, eds, rds };
}

test('delta: wildcard listeners and clusters, named routes and endpoints, each resource with its content version', async (t) => {
  const { cache, server, connect } = await serve(t);
  const snapshot = gatewaySnapshot(GW, { backends: TWO });
  cache.setSnapshot(GW, snapshot);
  const envoy = connect();
  const { cds, lds, eds, rds } = await syncedEnvoy(envoy);
  assert.deepEqual(
    [cds, lds, eds, rds].map((r) => shortType(r.type_url)),
    ['Cluster', 'Listener', 'ClusterLoadAssignment', 'RouteConfiguration'],
  );
  assert.deepEqual(names(cds), ['default/gw/a', 'default/gw/b']);
  assert.deepEqual(
    (cds.resources ?? []).map((r) => testCodec().decode(r.resource?.type_url ?? '', r.resource?.value ?? Buffer.alloc(0))),
    snapshot.clusters,
  );
  const held = cache.getSnapshot(GW)?.types.get(TYPE_URL.cluster);
  assert.equal(cds.system_version_info, held?.version);
  for (const r of cds.resources ?? []) assert.equal(r.version, held?.resources.get(r.name)?.version, 'a resource’s version is its content hash');
  assert.deepEqual(names(eds), ['default/gw/a', 'default/gw/b']);
  assert.deepEqual(names(rds), ['default/gw/8080']);
  await waitFor(() => server.stats().acks === 4);
});

test('delta: only changed resources go out, removed ones as removed_resources, and an unchanged snapshot sends nothing', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: TWO }));
  const envoy = connect();
  await syncedEnvoy(envoy);
  await waitFor(() => server.stats().acks === 4);

  const moved = gatewaySnapshot(GW, { backends: { ...TWO, 'default/gw/b': ['10.0.0.3:80'] } });
  assert.deepEqual(cache.setSnapshot(GW, structuredClone(moved)).changed.map(shortType), ['ClusterLoadAssignment']);
  const eds = await envoy.next();
  assert.deepEqual(names(eds), ['default/gw/b'], 'only the assignment that changed');
  assert.deepEqual(eds.removed_resources ?? [], []);
  ack(envoy, eds);
  assert.deepEqual(cache.setSnapshot(GW, structuredClone(moved)).changed, []);

  // b goes: CDS and EDS say it is removed; the route that used it changes.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { 'default/gw/a': ['10.0.0.1:80'] } }));
  const cds = await envoy.next();
  assert.equal(cds.type_url, TYPE_URL.cluster, 'the first response after an unchanged snapshot is the next change');
  assert.deepEqual(names(cds), []);
  assert.deepEqual(cds.removed_resources, ['default/gw/b']);
  const edsRemoved = await envoy.next();
  assert.equal(edsRemoved.type_url, TYPE_URL.endpoint);
  assert.deepEqual(edsRemoved.removed_resources, ['default/gw/b']);
  const rds = await envoy.next();
  assert.equal(rds.type_url, TYPE_URL.route);
  assert.deepEqual(names(rds), ['default/gw/8080']);
});

test('delta: a proxy that reconnects with initial_resource_versions gets only what changed meanwhile', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: TWO }));
  const first = connect();
  const { cds, eds } = await syncedEnvoy(first);
  first.close();
  await waitFor(() => server.streams(GW).length === 0);

  // Meanwhile b's endpoints change and a cluster c arrives.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { ...TWO, 'default/gw/b': ['10.0.0.9:80'], 'default/gw/c': ['10.0.0.4:80'] } }));
  const again = connect();
  again.send(deltaRequest(TYPE_URL.cluster, { node: NODE, initial: versions(cds) }));
  const cdsAgain = await again.next();
  assert.deepEqual(names(cdsAgain), ['default/gw/c'], 'a and b are unchanged and not resent');
  again.send(deltaRequest(TYPE_URL.endpoint, { subscribe: ['default/gw/a', 'default/gw/b', 'default/gw/c'], initial: versions(eds) }));
  const edsAgain = await again.next();
  assert.deepEqual(names(edsAgain).sort(), ['default/gw/b', 'default/gw/c']);

  // A client that held a cluster the snapshot no longer has learns it is gone.
  const third = connect();
  third.send(deltaRequest(TYPE_URL.cluster, { node: { id: 'envoy-3', cluster: GW }, initial: { ...versions(cds), 'default/gw/old': 'abc' } }));
  const cdsThird = await third.next();
  assert.deepEqual(cdsThird.removed_resources, ['default/gw/old']);
  assert.deepEqual(names(cdsThird), ['default/gw/c']);
});

test('delta: a NACK is reported with its detail and the rejected resources are not resent', async (t) => {
  const nacks: NackInfo[] = [];
  const { cache, server, connect } = await serve(t, { onNack: (_s, n) => nacks.push(n) });
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = connect();
  await syncedEnvoy(envoy);
  const bad = gatewaySnapshot(GW);
  (bad.clusters as any)[0].connect_timeout = '0s';
  cache.setSnapshot(GW, bad);
  const cds = await envoy.next();
  ack(envoy, cds, { error: 'Proto constraint validation failed (ClusterValidationError.ConnectTimeout: value must be greater than 0s)' });
  await waitFor(() => nacks.length === 1);
  assert.equal(nacks[0]?.typeUrl, TYPE_URL.cluster);
  assert.equal(nacks[0]?.version, cds.system_version_info);
  assert.match(nacks[0]?.errorDetail.message ?? '', /ConnectTimeout/);
  assert.equal(server.nacks(GW)[0]?.message, nacks[0]?.errorDetail.message);
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const fixed = await envoy.next();
  assert.equal(fixed.type_url, TYPE_URL.cluster, 'the next response is the fix, not the rejected one again');
  ack(envoy, fixed);
  await waitFor(() => server.nacks(GW).length === 0);
});

test('delta: subscribing and unsubscribing by name, and an explicit "*" for routes', async (t) => {
  const { cache, connect } = await serve(t);
  const snapshot = gatewaySnapshot(GW, { backends: TWO });
  snapshot.routes = [...(snapshot.routes ?? []), { ...(snapshot.routes?.[0] ?? {}), name: 'default/gw/extra' }];
  cache.setSnapshot(GW, snapshot);
  const envoy = connect();
  envoy.send(deltaRequest(TYPE_URL.endpoint, { node: NODE, subscribe: ['default/gw/a'] }));
  const a = await envoy.next();
  assert.deepEqual(names(a), ['default/gw/a']);
  ack(envoy, a, { unsubscribe: ['default/gw/a'], subscribe: ['default/gw/b'] });
  const b = await envoy.next();
  assert.deepEqual(names(b), ['default/gw/b']);
  ack(envoy, b, { subscribe: ['default/gw/a'] });
  assert.deepEqual(names(await envoy.next()), ['default/gw/a'], 'subscribing again sends it again');

  envoy.send(deltaRequest(TYPE_URL.route, { subscribe: ['*'] }));
  assert.deepEqual(names(await envoy.next()).sort(), ['default/gw/8080', 'default/gw/extra']);
});

test('delta: under a wildcard, a resource unsubscribed by name is sent again, as the protocol asks', async (t) => {
  const { cache, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: TWO }));
  const envoy = connect();
  envoy.send(deltaRequest(TYPE_URL.cluster, { node: NODE, subscribe: ['*', 'default/gw/a'] }));
  const cds = await envoy.next();
  assert.deepEqual(names(cds), ['default/gw/a', 'default/gw/b']);
  ack(envoy, cds, { unsubscribe: ['default/gw/a'] });
  assert.deepEqual(names(await envoy.next()), ['default/gw/a']);
});

test('delta: a legacy wildcard that later names a resource stays a wildcard; unsubscribing "*" ends it', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: TWO }));
  const envoy = connect();
  envoy.send(deltaRequest(TYPE_URL.cluster, { node: NODE }));
  const cds = await envoy.next();
  const cdsState = () => server.streams(GW)[0]?.types.find((x) => x.typeUrl === TYPE_URL.cluster);
  ack(envoy, cds, { subscribe: ['default/gw/a'] });
  await waitFor(() => cdsState()?.names === 1);
  assert.equal(cdsState()?.wildcard, true);
  ack(envoy, cds, { unsubscribe: ['*'] });
  await waitFor(() => cdsState()?.wildcard === false);
  // Only a is subscribed now: c appearing sends nothing; a changing does.
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { ...TWO, 'default/gw/c': ['10.0.0.4:80'] } }));
  const changedA = gatewaySnapshot(GW, { backends: { ...TWO, 'default/gw/c': ['10.0.0.4:80'] } });
  (changedA.clusters as any)[0].connect_timeout = '2s';
  cache.setSnapshot(GW, changedA);
  const next = await envoy.next();
  assert.deepEqual(names(next), ['default/gw/a']);
});
