// The provisioned bootstrap as Envoy takes it, kept as a golden: the ADS node and xDS cluster of
// `extlb bootstrap`, and the two listeners in front of the loopback admin, which answer GET /ready
// and GET /stats/prometheus and nothing else of it. UPDATE_GOLDEN=1 rewrites the golden.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadEnvoyValidator } from '@extlb/envoy/validator';
import { stringify } from 'yaml';
import { provisionedBootstrap } from '../src/provision/index.js';

const GOLDEN = join(import.meta.dirname, 'golden/provisioned-bootstrap.yaml');
type Json = Record<string, any>;

const gateway = {
  namespace: 'shop',
  name: 'edge',
  uid: 'u',
  className: 'extlb',
  listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }],
  addresses: [],
  infrastructure: { labels: {}, annotations: {} },
};

describe('the provisioned bootstrap', () => {
  const bootstrap = provisionedBootstrap(gateway, {
    xdsServer: 'extlb-controller.extlb-system.svc.cluster.local:18000',
    xdsServerName: 'extlb-controller.extlb-system.svc.cluster.local',
  }) as Json;

  it('passes the Envoy validator for both version targets', () => {
    for (const target of ['1.35', '1.38'] as const) assert.deepEqual(loadEnvoyValidator(target).validateBootstrap(bootstrap), [], target);
  });

  it('opens only GET /ready and GET /stats/prometheus of the admin, which stays on loopback', () => {
    assert.equal(bootstrap.admin.address.socket_address.address, '127.0.0.1');
    const open = bootstrap.static_resources.listeners.map((l: Json) => {
      const routes = l.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts.flatMap((vh: Json) => vh.routes);
      return [l.address.socket_address.port_value, routes.map((r: Json) => [r.match.path, r.match.headers[0].string_match.exact, r.route.cluster])];
    });
    assert.deepEqual(open, [
      [19001, [['/ready', 'GET', 'extlb-admin']]],
      [19002, [['/stats/prometheus', 'GET', 'extlb-admin']]],
    ]);
  });

  it('matches the golden', () => {
    const text = stringify(bootstrap, { lineWidth: 0 });
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, text);
    assert.deepEqual(text.split('\n'), readFileSync(GOLDEN, 'utf8').split('\n'));
  });
});
