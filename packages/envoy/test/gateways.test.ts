// A Gateway is a proxy: one Envoy configuration per Gateway, two Gateways never conflict, and inside
// one Gateway listeners that share a port share one Envoy listener (isolation: conformance/).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert } from '../src/index.js';
import { readObjects } from './golden.js';
import { type Request, clustersOf, handle } from './conformance/envoy-model.js';

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
  assert.deepEqual(clustersOf(handle(shop, get('shop.example.com', '/cart/1'))), [['svc/team-a/cart/80', 1]]);
  assert.equal(handle(shop, get('blog.example.com', '/')).type, 'not-found', "the shop proxy knows nothing of the blog's routes");
  assert.deepEqual(clustersOf(handle(blog, get('blog.example.com', '/'))), [['svc/team-b/posts/80', 1]]);
  assert.equal(handle(blog, get('shop.example.com', '/cart/1')).type, 'not-found');
  assert.ok(!r.diagnostics.some((d) => d.severity === 'error'), JSON.stringify(r.diagnostics));
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

test("with GatewayClasses in the input, only Gateways of this controller's classes are converted; without any, all are", () => {
  const gatewayClass = (name: string, controllerName: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name, generation: 3 },
    spec: { controllerName },
  });
  const gateway = (name: string, gatewayClassName: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'default' },
    spec: { gatewayClassName, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  });
  const gateways = [gateway('ours', 'extlb'), gateway('theirs', 'other'), gateway('unknown', 'missing')];
  const classes = [gatewayClass('extlb', 'extlb.dev/gateway-controller'), gatewayClass('other', 'example.com/controller')];
  const r = convert([...classes, ...gateways], { now: NOW });
  assert.deepEqual(Object.keys(r.gateways), ['default/ours']);
  assert.deepEqual(
    r.statuses.map((s) => `${s.kind} ${(s.metadata as Json).name}`),
    ['Gateway ours', 'GatewayClass extlb'],
  );
  const accepted = conditions(r, 'GatewayClass', 'extlb').Accepted;
  assert.deepEqual([accepted?.status, accepted?.reason, accepted?.observedGeneration], ['True', 'Accepted', 3]);
  assert.deepEqual(
    r.diagnostics.filter((d) => d.code === 'OtherGatewayClass').map((d) => [d.object?.name, d.message]),
    [
      ['theirs', 'GatewayClass other belongs to controller example.com/controller, so the Gateway is left to its controller'],
      ['unknown', 'GatewayClass missing is not in the input, so the Gateway is left to its controller'],
    ],
  );
  // Another controllerName makes the other class (and only it) this controller's.
  const other = convert([...classes, ...gateways], { now: NOW, controllerName: 'example.com/controller' });
  assert.deepEqual(Object.keys(other.gateways), ['default/theirs']);
  // A folder of manifests without GatewayClasses: every Gateway is converted.
  assert.deepEqual(Object.keys(convert(gateways, { now: NOW }).gateways), ['default/ours', 'default/theirs', 'default/unknown']);
  // A class of this controller with parameters is not accepted, and neither are its Gateways.
  const withParams = {
    ...gatewayClass('extlb', 'extlb.dev/gateway-controller'),
    spec: { controllerName: 'extlb.dev/gateway-controller', parametersRef: { group: 'example.com', kind: 'Config', name: 'c' } },
  };
  const rejected = convert([withParams, gateway('ours', 'extlb')], { now: NOW });
  assert.equal(conditions(rejected, 'GatewayClass', 'extlb').Accepted?.reason, 'InvalidParameters');
  assert.equal(conditions(rejected, 'Gateway', 'ours').Accepted?.reason, 'InvalidParameters');
  assert.deepEqual(Object.keys(rejected.gateways), []);
});
