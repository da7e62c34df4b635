// Make before break (issue 15, fault 6): a listener or route that names a new cluster reaches the
// proxy only once that cluster and its endpoints have, so no request meets a warming cluster (503).
// The client is a model of Envoy's documented subscription order, over real gRPC, both variants.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TYPE_URL, type SnapshotResources } from '../src/index.js';
import { EnvoyModel } from './envoy-model.js';
import { gatewaySnapshot, serveXds } from './helpers.js';

const GW = 'default/gw';
const NODE = { id: 'envoy-mbb', cluster: GW };

/** A TCP listener whose tcp_proxy sends to `cluster` (a TCPRoute's shape). */
function withTcpListener(s: SnapshotResources, cluster: string): SnapshotResources {
  const listener = {
    '@type': TYPE_URL.listener,
    name: `${GW}/tcp`,
    address: { socket_address: { address: '0.0.0.0', port_value: 9000 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.tcp_proxy',
            typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tcp', cluster },
          },
        ],
      },
    ],
  };
  return { ...s, listeners: [...(s.listeners ?? []), listener] };
}

for (const variant of ['sotw', 'delta'] as const) {
  test(`${variant}: a route that starts using a new backend goes out only after that backend's cluster and endpoints`, async (t) => {
    const { cache, server } = await serveXds(t, variant);
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'] } }));
    const envoy = new EnvoyModel(`127.0.0.1:${server.port}`, variant, NODE);
    t.after(() => envoy.close());
    await envoy.until(() => envoy.routes.size === 1 && envoy.usable.has(`${GW}/a`));

    // The route now splits traffic onto a backend the proxy has never heard of.
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'], [`${GW}/new`]: ['10.0.0.9:80'] } }));
    await envoy.until(() => JSON.stringify(envoy.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/new`));
    assert.deepEqual(envoy.violations, [], `applied in this order: ${envoy.log.join(' | ')}`);
    assert.ok(envoy.usable.has(`${GW}/new`), 'the new cluster warmed');
    assert.ok(server.stats().heldForWarming > 0, 'the route waited');

    // And back: the route leaves the backend; nothing it names is missing at any moment.
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/b`]: ['10.0.0.2:80'] } }));
    await envoy.until(() => JSON.stringify(envoy.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/b`));
    assert.deepEqual(envoy.violations, [], `applied in this order: ${envoy.log.join(' | ')}`);
  });

  test(`${variant}: a TCP listener naming a new cluster waits for its endpoints; the other listeners are not removed meanwhile`, async (t) => {
    const { cache, server } = await serveXds(t, variant);
    const base = gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'] } });
    cache.setSnapshot(GW, base);
    const envoy = new EnvoyModel(`127.0.0.1:${server.port}`, variant, NODE);
    t.after(() => envoy.close());
    await envoy.until(() => envoy.routes.size === 1);

    const next = gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'], [`${GW}/tcp`]: ['10.0.0.7:9000'] } });
    cache.setSnapshot(GW, withTcpListener(next, `${GW}/tcp`));
    await envoy.until(() => envoy.listeners.has(`${GW}/tcp`));
    assert.deepEqual(envoy.violations, [], `applied in this order: ${envoy.log.join(' | ')}`);
    assert.ok(envoy.listeners.has(`${GW}/8080`), 'the HTTP listener stayed');
  });

  test(`${variant}: a backend removed and then used again waits for its cluster anew, though the proxy answered for it before`, async (t) => {
    const { cache, server } = await serveXds(t, variant);
    const a = gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'] } });
    cache.setSnapshot(GW, a);
    const envoy = new EnvoyModel(`127.0.0.1:${server.port}`, variant, NODE);
    t.after(() => envoy.close());
    await envoy.until(() => envoy.usable.has(`${GW}/a`) && JSON.stringify(envoy.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/a`));
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/b`]: ['10.0.0.2:80'] } }));
    await envoy.until(() => !envoy.usable.has(`${GW}/a`) && JSON.stringify(envoy.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/b`));
    const held = server.stats().heldForWarming;
    // Back to the first backend: its cluster is new to the proxy again.
    cache.setSnapshot(GW, a);
    await envoy.until(() => JSON.stringify(envoy.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/a`));
    assert.deepEqual(envoy.violations, [], `applied in this order: ${envoy.log.join(' | ')}`);
    assert.ok(server.stats().heldForWarming > held, 'the route waited for the cluster sent again');
  });

  test(`${variant}: a proxy slow to answer still gets its route, once it has answered for the new cluster and endpoints`, async (t) => {
    const { cache, server } = await serveXds(t, variant);
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/a`]: ['10.0.0.1:80'] } }));
    const slow = new EnvoyModel(`127.0.0.1:${server.port}`, variant, { ...NODE, id: 'slow' }, { ackDelayMs: 30 });
    t.after(() => slow.close());
    await slow.until(() => slow.routes.size === 1);
    cache.setSnapshot(GW, gatewaySnapshot(GW, { backends: { [`${GW}/c`]: ['10.0.0.3:80'] } }));
    await slow.until(() => JSON.stringify(slow.routes.get(`${GW}/8080`) ?? {}).includes(`${GW}/c`));
    assert.deepEqual(slow.violations, []);
  });
}
