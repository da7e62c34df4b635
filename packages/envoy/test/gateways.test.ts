// A Gateway is a proxy: one Envoy configuration per Gateway, and inside one Gateway, listeners that
// share a port keep their routes apart (listener isolation).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert } from '../src/index.js';
import { readObjects } from './golden.js';
import { type Request, clustersOf, route } from './router.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const scenario = (name: string) => readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url)));

function conditions(r: ReturnType<typeof convert>, kind: string, name: string): Record<string, Json> {
  const s = r.statuses.find((x) => x.kind === kind && (x.metadata as Json).name === name) as Json;
  return Object.fromEntries(s.status.conditions.map((c: Json) => [c.type, c]));
}

test('two Gateways on the same port are two proxies, each Accepted and Programmed, each serving only its own routes', () => {
  const r = convert(scenario('two-gateways-same-port'), { now: NOW });
  assert.deepEqual(Object.keys(r.gateways), ['team-a/shop', 'team-b/blog']);
  for (const name of ['shop', 'blog']) {
    const c = conditions(r, 'Gateway', name);
    assert.equal(c.Accepted?.status, 'True', `${name} Accepted`);
    assert.equal(c.Programmed?.status, 'True', `${name} Programmed`);
  }
  const shop = r.gateways['team-a/shop'];
  const blog = r.gateways['team-b/blog'];
  assert.ok(shop && blog);
  assert.deepEqual(
    shop.clusters.map((c) => c.name),
    ['svc/team-a/cart/80'],
  );
  assert.deepEqual(
    blog.clusters.map((c) => c.name),
    ['svc/team-b/posts/80'],
  );
  const get = (host: string, path: string): Request => ({ port: 8080, host, path });
  assert.deepEqual(clustersOf(route(shop, get('shop.example.com', '/cart/1'))), [['svc/team-a/cart/80', 1]]);
  assert.equal(route(shop, get('blog.example.com', '/')).type, 'not-found', "the shop proxy knows nothing of the blog's routes");
  assert.deepEqual(clustersOf(route(blog, get('blog.example.com', '/'))), [['svc/team-b/posts/80', 1]]);
  assert.equal(route(blog, get('shop.example.com', '/cart/1')).type, 'not-found');
  assert.ok(!r.diagnostics.some((d) => d.severity === 'error'), JSON.stringify(r.diagnostics));
});

test('listener isolation: a request is served only by the routes of the most specific listener its Host matches', () => {
  const r = convert(scenario('listener-isolation'), { now: NOW });
  const gw = r.gateways['default/gw'];
  assert.ok(gw);
  // The upstream suite's expectations (GatewayHTTPListenerIsolation): host, path → which route, or 404.
  const cases: [string, string, string | undefined][] = [
    ['bar.com', '/empty-hostname', 'attaches-to-empty-hostname-with-hostname-intersection'],
    ['bar.com', '/wildcard-example-com', undefined],
    ['bar.com', '/wildcard-foo-example-com', undefined],
    ['bar.com', '/abc-foo-example-com', undefined],
    ['foo.example.com', '/wildcard-example-com', 'attaches-to-wildcard-example-com-with-hostname-intersection'],
    ['foo.example.com', '/empty-hostname', undefined],
    ['foo.example.com', '/wildcard-foo-example-com', undefined],
    ['foo.example.com', '/abc-foo-example-com', undefined],
    ['foo.foo.example.com', '/wildcard-foo-example-com', 'attaches-to-wildcard-foo-example-com-with-hostname-intersection'],
    ['foo.foo.example.com', '/empty-hostname', undefined],
    ['foo.foo.example.com', '/wildcard-example-com', undefined],
    ['foo.foo.example.com', '/abc-foo-example-com', undefined],
    ['abc.foo.example.com', '/abc-foo-example-com', 'attaches-to-abc-foo-example-com-with-hostname-intersection'],
    ['abc.foo.example.com', '/empty-hostname', undefined],
    ['abc.foo.example.com', '/wildcard-example-com', undefined],
    ['abc.foo.example.com', '/wildcard-foo-example-com', undefined],
  ];
  for (const [host, path, expected] of cases) {
    const o = route(gw, { port: 80, host, path });
    if (expected === undefined) assert.equal(o.type, 'not-found', `${host}${path} must answer 404, got ${o.type === 'route' ? o.route : o.type}`);
    else assert.equal(o.type === 'route' ? o.route.split('/')[1] : o.type, expected, `${host}${path}`);
  }
  const listeners = (r.statuses.find((s) => s.kind === 'Gateway') as Json).status.listeners as Json[];
  assert.deepEqual(
    listeners.map((l) => [l.name, l.attachedRoutes]),
    [
      ['empty-hostname', 1],
      ['wildcard-example-com', 1],
      ['wildcard-foo-example-com', 1],
      ['abc-foo-example-com', 1],
    ],
  );
});

test('listeners of one Gateway that share a port and protocol share one Envoy listener; HTTP and HTTPS on one port conflict', () => {
  const gateway = (listeners: Json[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'default' },
    spec: { gatewayClassName: 'extlb', listeners },
  });
  const shared = convert(
    [
      gateway([
        { name: 'a', port: 80, protocol: 'HTTP', hostname: 'a.example.com' },
        { name: 'b', port: 80, protocol: 'HTTP', hostname: 'b.example.com' },
      ]),
    ],
    { now: NOW },
  );
  assert.equal(shared.gateways['default/gw']?.listeners.length, 1);
  const mixed = convert(
    [
      gateway([
        { name: 'a', port: 80, protocol: 'HTTP' },
        { name: 'b', port: 80, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }] } },
      ]),
    ],
    { now: NOW },
  );
  const b = ((mixed.statuses[0] as Json).status.listeners as Json[])[1] as Json;
  const conflicted = b.conditions.find((c: Json) => c.type === 'Conflicted');
  assert.equal(conflicted.status, 'True');
  assert.equal(conflicted.reason, 'ProtocolConflict');
  const same = convert(
    [
      gateway([
        { name: 'a', port: 80, protocol: 'HTTP', hostname: 'x.example.com' },
        { name: 'b', port: 80, protocol: 'HTTP', hostname: 'x.example.com' },
      ]),
    ],
    { now: NOW },
  );
  const sb = ((same.statuses[0] as Json).status.listeners as Json[])[1] as Json;
  assert.equal(sb.conditions.find((c: Json) => c.type === 'Conflicted').reason, 'HostnameConflict');
});
