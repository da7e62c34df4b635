// The loopback debug endpoints over real HTTP, fed by a real xDS server with a real ADS client:
// per-type versions sent, ACKed and NACKed (with Envoy's message), the served snapshot decoded from
// the bytes on the wire, and no byte of a private key in anything they answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeCertificate } from '@extlb/kube-api-server';
import { type ConfigDump, type DebugHealth, type ProxiesReport, REDACTED, SnapshotCache, startDebugServer, TYPE_URL } from '../src/index.js';
import { gatewaySnapshot, keyForms, names, serveXds, sotwAnswer, sotwRequest, waitFor } from './helpers.js';

const GW = 'shop/edge';
const NODE = { id: 'envoy-a', cluster: GW };

function withSecrets(key: string) {
  const snapshot = gatewaySnapshot(GW, { tlsSecret: 'shop/edge-tls' });
  const cert = makeCertificate('edge.shop.example');
  return {
    ...snapshot,
    secrets: [
      {
        '@type': TYPE_URL.secret,
        name: 'shop/edge-tls',
        tls_certificate: { certificate_chain: { inline_string: cert.cert }, private_key: { inline_string: key } },
      },
      {
        '@type': TYPE_URL.secret,
        name: 'shop/edge-tls-bytes',
        tls_certificate: {
          certificate_chain: { inline_bytes: Buffer.from(cert.cert).toString('base64') },
          private_key: { inline_bytes: Buffer.from(key).toString('base64') },
        },
      },
    ],
  };
}

async function get<T>(port: number, path: string): Promise<{ code: number; body: T; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  const text = await res.text();
  return { code: res.status, body: JSON.parse(text) as T, text };
}

test('debug endpoints: a connected proxy per type, a NACK with its message, the snapshot with keys redacted', async (t) => {
  const { key } = makeCertificate('edge.shop.example');
  const { cache, server, connect } = await serveXds(t, 'sotw');
  cache.setSnapshot(GW, withSecrets(key));
  const debug = await startDebugServer({
    port: 0,
    source: {
      replica: 'extlb-controller-0',
      isLeader: () => true,
      streams: () => server.streams(),
      cache,
      notReady: () => undefined,
      servingExpiresAt: () => Date.now() + 3600_000,
    },
  });
  t.after(() => debug.server.close());

  const envoy = connect();
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: NODE }));
  envoy.send(sotwRequest(TYPE_URL.listener, []));
  const cds = await envoy.next();
  const lds = await envoy.next();
  envoy.send(sotwAnswer(cds));
  // The listener is refused, as Envoy refuses one it cannot load.
  envoy.send(sotwAnswer(lds, [], 'Error adding/updating listener(s) shop/edge/8080: duplicate address', ''));
  envoy.send(sotwRequest(TYPE_URL.endpoint, names(cds)));
  const eds = await envoy.next();
  envoy.send(sotwAnswer(eds, names(cds)));
  envoy.send(sotwRequest(TYPE_URL.secret, ['shop/edge-tls']));
  const sds = await envoy.next();
  envoy.send(sotwAnswer(sds, ['shop/edge-tls']));
  await waitFor(() => server.streams()[0]?.types.find((t) => t.typeUrl === TYPE_URL.secret)?.ackedVersion !== undefined);

  const proxies = await get<ProxiesReport>(debug.port, '/debug/proxies');
  assert.equal(proxies.code, 200);
  assert.equal(proxies.body.replica, 'extlb-controller-0');
  assert.deepEqual(proxies.body.gateways, [{ gateway: GW, version: cache.getSnapshot(GW)?.version }]);
  const [proxy] = proxies.body.proxies;
  assert.ok(proxy);
  assert.equal(proxy.gateway, GW);
  assert.equal(proxy.node, 'envoy-a');
  assert.equal(proxy.inSync, false, 'a NACKed type is not in sync');
  const byType = Object.fromEntries(proxy.types.map((ty) => [ty.type, ty]));
  assert.deepEqual(Object.keys(byType).sort(), ['clusters', 'endpoints', 'listeners', 'secrets']);
  for (const kind of ['clusters', 'endpoints', 'secrets'] as const) {
    const ty = byType[kind];
    assert.equal(ty?.served, cache.getSnapshot(GW)?.types.get(ty?.typeUrl as never)?.version, kind);
    assert.equal(ty?.acked, ty?.served, kind);
    assert.equal(ty?.inSync, true, kind);
  }
  assert.equal(byType.listeners?.acked, undefined);
  assert.equal(byType.listeners?.sent, lds.version_info);
  assert.equal(byType.listeners?.nacked?.version, lds.version_info);
  assert.match(byType.listeners?.nacked?.message ?? '', /duplicate address/);

  const dump = await get<ConfigDump>(debug.port, `/debug/config?gateway=${GW}`);
  assert.equal(dump.code, 200);
  assert.deepEqual(Object.keys(dump.body.types), ['clusters', 'endpoints', 'listeners', 'routes', 'secrets']);
  assert.equal(dump.body.types.clusters?.resources.length, 1);
  const secrets = dump.body.types.secrets?.resources as any[];
  assert.deepEqual(
    secrets.map((s) => [s.name, s.tls_certificate.private_key]),
    [
      ['shop/edge-tls', { redacted: REDACTED }],
      ['shop/edge-tls-bytes', { redacted: REDACTED }],
    ],
  );
  assert.match(secrets[0].tls_certificate.certificate_chain.inline_string, /BEGIN CERTIFICATE/, 'certificates are public and stay');

  const only = await get<ConfigDump>(debug.port, `/debug/config?gateway=${GW}&type=secrets`);
  assert.deepEqual(Object.keys(only.body.types), ['secrets']);
  for (const text of [proxies.text, dump.text, only.text]) for (const form of keyForms(key)) assert.ok(!text.includes(form), 'no private-key bytes');

  assert.equal((await get(debug.port, '/debug/config?gateway=shop/nope')).code, 404);
  assert.equal((await get(debug.port, '/debug/config?gateway=nope')).code, 400);
  assert.equal((await get(debug.port, `/debug/config?gateway=${GW}&type=pods`)).code, 400);
  const health = await get<DebugHealth>(debug.port, '/debug/health');
  assert.equal(health.body.ready, true);
  assert.equal(health.body.xdsCertificate?.valid, true);
});

test('debug endpoints listen on loopback only', async () => {
  const source = {
    replica: 'r',
    isLeader: () => false,
    streams: () => [],
    cache: new SnapshotCache(),
    notReady: () => 'starting',
    servingExpiresAt: () => undefined,
  };
  for (const host of ['0.0.0.0', '::', '10.1.2.3']) await assert.rejects(startDebugServer({ host, port: 0, source }), /loopback only/);
  const ok = await startDebugServer({ host: '127.0.0.1', port: 0, source });
  const health = await get<DebugHealth>(ok.port, '/debug/health');
  assert.deepEqual(health.body, { replica: 'r', ready: false, reason: 'starting', leader: false });
  ok.server.close();
});
