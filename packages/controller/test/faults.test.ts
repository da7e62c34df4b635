// Faults: proxies that vanish mid-push, garbage on the wire, callbacks that throw, a control
// plane that stops and comes back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SnapshotCache, TYPE_URL, XdsServer } from '../src/index.js';
import { bigSnapshot, gatewaySnapshot, names, shortType, type SotwClient, sotwAnswer, sotwClient, sotwRequest, waitFor } from './helpers.js';

const GW = 'default/gw';

async function subscribeAll(client: SotwClient, node: { id: string; cluster: string }) {
  client.send(sotwRequest(TYPE_URL.cluster, [], { node }));
  client.send(sotwRequest(TYPE_URL.listener, []));
}

test('proxies that disconnect in the middle of a push leave the others served and nothing behind', async (t) => {
  const cache = new SnapshotCache();
  const closed: string[] = [];
  const server = new XdsServer({ cache, callbacks: { onStreamClose: (s) => closed.push(s.node.id) } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, bigSnapshot(GW, 2000, 'v1'));
  const clients = Array.from({ length: 6 }, () => sotwClient(`127.0.0.1:${port}`));
  t.after(() => {
    for (const c of clients) c.close();
  });
  clients.forEach((c, i) => {
    subscribeAll(c, { id: `envoy-${i}`, cluster: GW });
  });
  await waitFor(() => server.streams(GW).length === 6 && server.streams(GW).every((s) => s.types.length === 2));
  const initial = await Promise.all(clients.map(async (c) => [await c.next(), await c.next()]));
  for (const [cds, lds] of initial) {
    assert.equal(cds?.type_url, TYPE_URL.cluster);
    assert.equal(lds?.type_url, TYPE_URL.listener);
  }

  // A new version goes out to all six; three of them drop their connection while it is being written.
  cache.setSnapshot(GW, bigSnapshot(GW, 2000, 'v2'));
  const leaving = clients.slice(0, 3);
  for (const c of leaving) c.close();
  const staying = clients.slice(3);
  for (const c of staying) {
    const cds = await c.next();
    assert.equal(cds.type_url, TYPE_URL.cluster);
    assert.equal(names(cds).length, 2000);
  }
  await waitFor(() => server.stats().streamsOpen === 3);
  assert.deepEqual(closed.sort(), ['envoy-0', 'envoy-1', 'envoy-2']);
  assert.deepEqual(
    server
      .streams(GW)
      .map((s) => s.node.id)
      .sort(),
    ['envoy-3', 'envoy-4', 'envoy-5'],
  );

  // The server keeps pushing to the ones left.
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  for (const c of staying) {
    const cds = await c.next();
    assert.deepEqual(names(cds), [`${GW}/backend`]);
  }
});

test('a client that sends bytes that are not a DiscoveryRequest gets an error, and the server serves on', async (t) => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  t.after(() => raw.close());
  const call = raw.makeBidiStreamRequest(
    '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
    (b: Buffer) => b,
    (b: Buffer) => b,
  );
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.on('error', () => {});
  call.write(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
  assert.notEqual((await status).code, grpc.status.OK);

  const envoy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => envoy.close());
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-ok', cluster: GW } }));
  assert.equal((await envoy.next()).type_url, TYPE_URL.cluster);
});

test('a callback that throws is logged and the stream carries on', async (t) => {
  const cache = new SnapshotCache();
  const errors: string[] = [];
  const server = new XdsServer({
    cache,
    callbacks: {
      onStreamOpen: () => {
        throw new Error('metrics backend down');
      },
      onResponse: () => {
        throw new Error('metrics backend down');
      },
    },
    logger: { log: (level, msg) => level === 'error' && errors.push(msg) },
  });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const envoy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => envoy.close());
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-1', cluster: GW } }));
  const cds = await envoy.next();
  assert.equal(cds.type_url, TYPE_URL.cluster);
  assert.deepEqual(errors, ['xDS onStreamOpen callback threw', 'xDS onResponse callback threw']);
});

test('a control plane that stops ends its streams with UNAVAILABLE; a restarted one with the same snapshot sends a reconnecting proxy nothing it holds', async (t) => {
  const cache = new SnapshotCache();
  const snapshot = gatewaySnapshot(GW);
  cache.setSnapshot(GW, snapshot);
  const first = new XdsServer({ cache });
  const { port } = await first.start();
  const envoy = sotwClient(`127.0.0.1:${port}`);
  t.after(() => envoy.close());
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-1', cluster: GW } }));
  const cds = await envoy.next();
  envoy.send(sotwAnswer(cds));
  await waitFor(() => first.stats().acks === 1);
  await first.stop({ graceMs: 1000 });
  const status = await envoy.closed();
  assert.equal(status.code, grpc.status.UNAVAILABLE);
  assert.match(status.details, /shutting down/);

  // Another replica, which computed the same snapshot on its own.
  const otherCache = new SnapshotCache();
  otherCache.setSnapshot(GW, structuredClone(snapshot));
  const second = new XdsServer({ cache: otherCache });
  const { port: port2 } = await second.start();
  t.after(() => second.stop({ graceMs: 100 }));
  const back = sotwClient(`127.0.0.1:${port2}`);
  t.after(() => back.close());
  back.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-1', cluster: GW }, version: cds.version_info }));
  back.send(sotwRequest(TYPE_URL.listener, [], {}));
  const next = await back.next();
  assert.equal(shortType(next.type_url), 'Listener', 'the clusters it holds are current on the new replica too: only LDS, which it asked for fresh, comes');
  assert.equal(second.streams(GW)[0]?.types.find((x) => x.typeUrl === TYPE_URL.cluster)?.ackedVersion, cds.version_info);
});

test('start refuses unusable addresses and stop is safe to repeat', async () => {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  await assert.rejects(server.start(), /already started/);
  const other = new XdsServer({ cache });
  await assert.rejects(other.start({ port }), new RegExp(`xDS server cannot listen on 127\\.0\\.0\\.1:${port}`));
  await server.stop({ graceMs: 100 });
  await server.stop({ graceMs: 100 });
});
