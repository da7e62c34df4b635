// StreamAggregatedResources against a real gRPC client that plays Envoy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { type AckInfo, type NackInfo, SnapshotCache, type StreamInfo, TYPE_URL, XdsServer, type XdsServerOptions } from '../src/index.js';
import { decoded, gatewaySnapshot, names, type SotwClient, serveXds, shortType, sotwAnswer, sotwClient, sotwRequest, waitFor } from './helpers.js';

const GW = 'default/gw';
const NODE = { id: 'envoy-1', cluster: GW };

function serve(t: { after: (fn: () => unknown) => void }, options: Omit<XdsServerOptions, 'cache'> = {}) {
  return serveXds(t, 'sotw', { controlPlaneId: 'extlb-test', ...options });
}

/** Subscribes as Envoy does after start: wildcard CDS and LDS, then the EDS and RDS names they need; ACKs all. */
async function syncedEnvoy(client: SotwClient, node = NODE) {
  client.send(sotwRequest(TYPE_URL.cluster, [], { node }));
  client.send(sotwRequest(TYPE_URL.listener, []));
  const cds = await client.next();
  const lds = await client.next();
  client.send(sotwAnswer(cds));
  client.send(sotwAnswer(lds));
  const clusters = names(cds);
  const routes = decoded(lds).map((l) => (l as any).filter_chains[0].filters[0].typed_config.rds.route_config_name as string);
  client.send(sotwRequest(TYPE_URL.endpoint, clusters));
  client.send(sotwRequest(TYPE_URL.route, routes));
  // Make before break: the routes follow once the endpoints they send to are in place.
  const eds = await client.next();
  client.send(sotwAnswer(eds, clusters));
  const rds = await client.next();
  client.send(sotwAnswer(rds, routes));
  return { cds, lds, eds, rds, clusters, routes };
}

test('SotW: a proxy gets its Gateway’s configuration, wildcard for listeners and clusters and by name for routes and endpoints', async (t) => {
  const acks: AckInfo[] = [];
  const { cache, server, connect } = await serve(t, { callbacks: { onAck: (_s, a) => acks.push(a) } });
  const snapshot = gatewaySnapshot(GW, { backends: { 'default/gw/a': ['10.0.0.1:80'], 'default/gw/b': ['10.0.0.2:80', '10.0.0.3:80'] } });
  cache.setSnapshot(GW, snapshot);
  const envoy = connect();
  const { cds, lds, eds, rds } = await syncedEnvoy(envoy);

  assert.equal(cds.type_url, TYPE_URL.cluster);
  assert.deepEqual(names(cds), ['default/gw/a', 'default/gw/b']);
  assert.deepEqual(decoded(cds), snapshot.clusters, 'clusters arrive as they were set');
  assert.deepEqual(decoded(lds), snapshot.listeners);
  assert.deepEqual(names(eds).sort(), ['default/gw/a', 'default/gw/b']);
  assert.deepEqual(decoded(rds), snapshot.routes);
  assert.equal(cds.control_plane?.identifier, 'extlb-test');
  const versions = new Map(cache.getSnapshot(GW)?.types.entries() ?? []);
  for (const r of [cds, lds, eds, rds])
    assert.equal(r.version_info, versions.get(r.type_url as never)?.version, `${shortType(r.type_url)} carries its type's version`);
  assert.equal(new Set([cds.nonce, lds.nonce, eds.nonce, rds.nonce]).size, 4, 'every response has its own nonce');

  // Every ACK is recorded with its version.
  await waitFor(() => acks.length === 4);
  assert.deepEqual(acks.map((a) => shortType(a.typeUrl)).sort(), ['Cluster', 'ClusterLoadAssignment', 'Listener', 'RouteConfiguration']);
  const status = server.streams(GW);
  assert.equal(status.length, 1);
  assert.equal(status[0]?.node.id, 'envoy-1');
  for (const type of status[0]?.types ?? []) assert.equal(type.ackedVersion, type.sentVersion);
  assert.ok(acks.every((a) => a.latencyMs >= 0));
  assert.equal(server.stats().acks, 4);
  assert.equal(server.stats().pushLatency.count, 4);
});

test('SotW: a change goes out in make-before-break order and only for the types that changed; an unchanged snapshot sends nothing', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = connect();
  const synced = await syncedEnvoy(envoy);
  const { clusters, routes } = synced;

  // Everything changes at once: a new backend (cluster, endpoints) and the routes and listener using it.
  const next = gatewaySnapshot(GW, { port: 8080, backends: { 'default/gw/backend': ['10.0.0.1:8080'], 'default/gw/new': ['10.0.0.9:8080'] } });
  (next.listeners as any)[0].per_connection_buffer_limit_bytes = 65536;
  const update = cache.setSnapshot(GW, next);
  assert.deepEqual(update.changed.map(shortType), ['Cluster', 'ClusterLoadAssignment', 'Listener', 'RouteConfiguration']);
  const cds = await envoy.next();
  assert.equal(cds.type_url, TYPE_URL.cluster, 'clusters first');
  assert.deepEqual(names(cds), ['default/gw/backend', 'default/gw/new']);
  // The endpoints of the existing cluster did not change, and the new one is not subscribed yet: no EDS response.
  const lds = await envoy.next();
  assert.equal(lds.type_url, TYPE_URL.listener, 'then listeners, which name no cluster');
  // Envoy learns of the new cluster, asks for its endpoints, then ACKs.
  envoy.send(sotwRequest(TYPE_URL.endpoint, [...clusters, 'default/gw/new'], { version: synced.eds.version_info, nonce: synced.eds.nonce }));
  envoy.send(sotwAnswer(cds));
  envoy.send(sotwAnswer(lds, []));
  const eds = await envoy.next();
  assert.equal(eds.type_url, TYPE_URL.endpoint);
  assert.deepEqual(names(eds), ['default/gw/new'], 'only the newly asked-for assignment');
  assert.equal(envoy.pending, 0, 'the route naming the new cluster waits for its endpoints to be answered');
  envoy.send(sotwAnswer(eds, [...clusters, 'default/gw/new']));
  const rds = await envoy.next();
  assert.equal(rds.type_url, TYPE_URL.route, 'then the routes');
  envoy.send(sotwAnswer(rds, routes));

  const before = server.stats().responses;
  assert.deepEqual(cache.setSnapshot(GW, structuredClone(next)).changed, [], 'recomputing the same input changes nothing');
  // Only an endpoint changes now: the very next response must be that one, so nothing went out in between.
  const moved = structuredClone(next);
  (moved.endpoints as any)[1].endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 9090;
  assert.deepEqual(cache.setSnapshot(GW, moved).changed.map(shortType), ['ClusterLoadAssignment']);
  const edsChange = await envoy.next();
  assert.equal(edsChange.type_url, TYPE_URL.endpoint);
  assert.deepEqual(names(edsChange), ['default/gw/new'], 'the unchanged assignment is not resent');
  assert.equal(server.stats().responses, before + 1);
});

test('SotW: a cluster that goes is missing from the next full CDS response', async (t) => {
  const { cache, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { 'default/gw/a': ['10.0.0.1:80'], 'default/gw/b': ['10.0.0.2:80'] } }));
  const envoy = connect();
  await syncedEnvoy(envoy);
  cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { 'default/gw/a': ['10.0.0.1:80'] } }));
  const cds = await envoy.next();
  assert.equal(cds.type_url, TYPE_URL.cluster);
  assert.deepEqual(names(cds), ['default/gw/a']);
  const rds = await envoy.next();
  assert.equal(rds.type_url, TYPE_URL.route, 'the route that used it changes too');
});

test('SotW: a NACK is logged with Envoy’s detail, counted, reported for the Gateway, and the version is not sent again', async (t) => {
  const nacks: [StreamInfo, NackInfo][] = [];
  const logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const cache = new SnapshotCache();
  const server = new XdsServer({
    cache,
    callbacks: { onNack: (s, n) => nacks.push([s, n]) },
    logger: { log: (level, msg, fields) => logs.push({ level, msg, fields }) },
  });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => envoy.close());
  const { rds: accepted, routes } = await syncedEnvoy(envoy);

  const bad = gatewaySnapshot(GW);
  (bad.routes as any)[0].virtual_hosts[0].domains = ['*', '*'];
  cache.setSnapshot(GW, bad);
  const rds = await envoy.next();
  const detail = 'Only unique values for domains are permitted. Duplicate entry of domain *';
  envoy.send(sotwAnswer(rds, routes, detail, accepted.version_info));
  await waitFor(() => nacks.length === 1);
  const [stream, nack] = nacks[0] ?? [];
  assert.equal(stream?.group, GW);
  assert.equal(nack?.typeUrl, TYPE_URL.route);
  assert.equal(nack?.version, rds.version_info);
  assert.equal(nack?.errorDetail.message, detail);
  assert.equal(server.stats().nacks, 1);
  const logged = logs.find((l) => l.level === 'warn' && l.msg.includes('rejected'));
  assert.equal(logged?.fields?.error, detail);
  assert.deepEqual(
    server.nacks(GW).map((n) => [n.node, shortType(n.typeUrl), n.version, n.message]),
    [['envoy-1', 'RouteConfiguration', rds.version_info, detail]],
  );
  assert.deepEqual(server.nacks('default/other'), []);

  // The rejected version is not sent again: a fixed snapshot is the next thing the proxy gets,
  // and its ACK clears the NACK.
  const fixed = gatewaySnapshot(GW);
  (fixed.routes as any)[0].virtual_hosts[0].domains = ['example.com'];
  cache.setSnapshot(GW, fixed);
  const next = await envoy.next();
  assert.equal(next.type_url, TYPE_URL.route);
  assert.notEqual(next.version_info, rds.version_info);
  envoy.send(sotwAnswer(next, routes));
  await waitFor(() => server.nacks(GW).length === 0);
  assert.equal(envoy.pending, 0);
});

test('SotW: a request answering a superseded response is stale and gets no response', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = connect();
  const { clusters } = await syncedEnvoy(envoy);
  const first = gatewaySnapshot(GW, { backends: { 'default/gw/backend': ['10.0.0.2:8080'] } });
  const second = gatewaySnapshot(GW, { backends: { 'default/gw/backend': ['10.0.0.3:8080'] } });
  cache.setSnapshot(GW, first);
  cache.setSnapshot(GW, second);
  const r1 = await envoy.next();
  const r2 = await envoy.next();
  assert.notEqual(r1.nonce, r2.nonce);
  // The proxy answers the first one after the second was sent: stale, ignored.
  envoy.send(sotwAnswer(r1, clusters));
  await waitFor(() => server.stats().staleRequests === 1);
  envoy.send(sotwAnswer(r2, clusters));
  await waitFor(() => server.streams(GW)[0]?.types.find((t) => t.typeUrl === TYPE_URL.endpoint)?.ackedVersion === r2.version_info);
  assert.equal(envoy.pending, 0);
});

test('SotW: a proxy that reconnects with the version it holds is sent nothing new; one with an old version gets the current one', async (t) => {
  const { cache, server, connect } = await serve(t);
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const first = connect();
  const { cds, lds } = await syncedEnvoy(first);
  first.close();
  await waitFor(() => server.streams(GW).length === 0);

  const again = connect();
  again.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE, version: cds.version_info }));
  again.send(sotwRequest(TYPE_URL.listener, [], { version: 'an-older-version' }));
  const response = await again.next();
  assert.equal(response.type_url, TYPE_URL.listener, 'CDS is current and is not resent; LDS is');
  assert.equal(response.version_info, lds.version_info);
  await waitFor(() => server.streams(GW)[0]?.types.length === 2);
  const cdsStatus = server.streams(GW)[0]?.types.find((t) => t.typeUrl === TYPE_URL.cluster);
  assert.equal(cdsStatus?.ackedVersion, cds.version_info);
  assert.equal(again.pending, 0);
});

test('SotW: two Gateways’ proxies each get their own snapshot', async (t) => {
  const { cache, connect } = await serve(t);
  cache.setSnapshot('team-a/gw', gatewaySnapshot('team-a/gw'));
  cache.setSnapshot('team-b/gw', gatewaySnapshot('team-b/gw', { backends: { 'team-b/gw/x': ['10.1.0.1:80'], 'team-b/gw/y': ['10.1.0.2:80'] } }));
  const a = connect();
  const b = connect();
  const fromA = await syncedEnvoy(a, { id: 'a-1', cluster: 'team-a/gw' });
  const fromB = await syncedEnvoy(b, { id: 'b-1', cluster: 'team-b/gw' });
  assert.deepEqual(names(fromA.cds), ['team-a/gw/backend']);
  assert.deepEqual(names(fromB.cds), ['team-b/gw/x', 'team-b/gw/y']);
  assert.deepEqual(names(fromA.lds), ['team-a/gw/8080']);
  assert.deepEqual(names(fromB.lds), ['team-b/gw/8080']);

  // A change to one Gateway reaches only its proxies: b's next response is b's own change.
  cache.setSnapshot('team-a/gw', gatewaySnapshot('team-a/gw', { backends: { 'team-a/gw/backend': ['10.0.0.7:8080'] } }));
  cache.setSnapshot('team-b/gw', gatewaySnapshot('team-b/gw', { backends: { 'team-b/gw/x': ['10.1.0.1:80'] } }));
  assert.deepEqual(names(await a.next()), ['team-a/gw/backend']);
  const bNext = await b.next();
  assert.equal(bNext.type_url, TYPE_URL.cluster);
  assert.deepEqual(names(bNext), ['team-b/gw/x']);
});

test('SotW: a proxy waits for its Gateway’s first snapshot, which then arrives clusters first', async (t) => {
  const { cache, server, connect } = await serve(t);
  const envoy = connect();
  envoy.send(sotwRequest(TYPE_URL.listener, [], { node: NODE }));
  envoy.send(sotwRequest(TYPE_URL.cluster, []));
  await waitFor(() => server.streams(GW)[0]?.types.length === 2);
  assert.equal(envoy.pending, 0);
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  assert.equal((await envoy.next()).type_url, TYPE_URL.cluster);
  assert.equal((await envoy.next()).type_url, TYPE_URL.listener);
});

test('SotW: an empty Gateway still answers the wildcard requests, so Envoy finishes starting', async (t) => {
  const { cache, connect } = await serve(t);
  cache.setSnapshot(GW, {});
  const envoy = connect();
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  const cds = await envoy.next();
  assert.deepEqual(cds.resources ?? [], []);
  assert.ok(cds.version_info);
});

test('SotW: a node that names no Gateway is refused with a message saying what to set', async (t) => {
  const { server, connect } = await serve(t);
  for (const cluster of ['', 'gw', 'default/gw/extra', 'Default/gw']) {
    const envoy = connect();
    envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-x', cluster } }));
    const status = await envoy.closed();
    assert.equal(status.code, grpc.status.INVALID_ARGUMENT, cluster);
    assert.match(status.details, /node\.cluster .*"<namespace>\/<gateway>"/);
  }
  const noNode = connect();
  noNode.send(sotwRequest(TYPE_URL.cluster, []));
  assert.match((await noNode.closed()).details, /must carry the node/);
  const noType = connect();
  noType.send(sotwRequest('', [], { node: NODE }));
  assert.match((await noType.closed()).details, /type_url is required/);
  assert.equal(server.stats().streamsRejected, 6);
  assert.equal(server.stats().streamsOpen, 0);
});

test('SotW: a listener’s certificate arrives over SDS when the proxy asks for it, and again when it rotates', async (t) => {
  const { cache, connect } = await serve(t);
  const snapshot = gatewaySnapshot(GW, { tlsSecret: 'default/gw-cert' });
  cache.setSnapshot(GW, snapshot);
  const envoy = connect();
  envoy.send(sotwRequest(TYPE_URL.listener, [], { node: NODE }));
  const lds = await envoy.next();
  const tls = (decoded(lds)[0] as any).filter_chains[0].transport_socket.typed_config;
  assert.equal(tls.common_tls_context.tls_certificate_sds_secret_configs[0].name, 'default/gw-cert', 'the listener names its certificate, it does not hold it');
  envoy.send(sotwAnswer(lds));
  envoy.send(sotwRequest(TYPE_URL.secret, ['default/gw-cert']));
  const sds = await envoy.next();
  assert.equal(sds.type_url, TYPE_URL.secret);
  assert.deepEqual(decoded(sds), snapshot.secrets);
  envoy.send(sotwAnswer(sds, ['default/gw-cert']));

  const rotated = structuredClone(snapshot);
  (rotated.secrets as any)[0].tls_certificate.private_key.inline_string = '-----BEGIN PRIVATE KEY-----\nNEW\n-----END PRIVATE KEY-----\n';
  assert.deepEqual(cache.setSnapshot(GW, rotated).changed.map(shortType), ['Secret'], 'a rotation changes the secret only');
  const next = await envoy.next();
  assert.equal(next.type_url, TYPE_URL.secret);
  assert.match((decoded(next)[0] as any).tls_certificate.private_key.inline_string, /NEW/);
});

test('SotW: a request for a type the server does not serve is logged once and left unanswered', async (t) => {
  const warnings: string[] = [];
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache, logger: { log: (level, msg, fields) => level === 'warn' && warnings.push(`${msg} ${String(fields?.type)}`) } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => envoy.close());
  const runtime = 'type.googleapis.com/envoy.service.runtime.v3.Runtime';
  envoy.send(sotwRequest(runtime, ['rtds'], { node: NODE }));
  envoy.send(sotwRequest(runtime, ['rtds']));
  envoy.send(sotwRequest(TYPE_URL.cluster, []));
  assert.equal((await envoy.next()).type_url, TYPE_URL.cluster, 'the stream goes on');
  assert.deepEqual(warnings, [`xDS request for a type this server does not serve ${runtime}`]);
});
