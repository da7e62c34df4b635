// Filters on backendRefs and their rules, beyond the upstream suite's cases: the order in which a
// rule's and a backendRef's changes apply on a split, what folds into the rule when one backendRef
// receives every request, the shares Envoy cannot serve as asked, redirects with response headers,
// CORS origins and WebSocket upgrades — each checked on the converted configuration with the Envoy
// model (scenario backendref-filters).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ConvertResult, convert } from '../src/index.js';
import { type Outcome, type Request, type Upstream, handle } from './conformance/envoy-model.js';
import { envoyOf, readObjects } from './golden.js';

type Json = Record<string, any>;
const objects = readObjects(fileURLToPath(new URL('./scenarios/backendref-filters/input.yaml', import.meta.url)));
const result: ConvertResult = convert(objects, { now: '2026-01-01T00:00:00Z' });
const config = envoyOf(result);
const send = (path: string, more: Partial<Request> = {}): Outcome => handle(config, { port: 8080, host: 'shop.example.com', path, ...more });

function upstreams(o: Outcome): Record<string, Upstream> {
  assert.equal(o.type, 'forward', JSON.stringify(o));
  return o.type === 'forward' ? Object.fromEntries(o.upstreams.map((u) => [u.cluster, u])) : {};
}

test("on a split, a backendRef's request changes and hostname follow the rule's; its response changes come before the rule's", () => {
  const to = upstreams(send('/split', { headers: { 'x-debug': '9', 'x-env': 'dev' } }));
  const blue = to['svc/default/blue/80'];
  const green = to['svc/default/green/80'];
  assert.ok(blue && green);
  assert.deepEqual(blue.headers, { 'x-env': 'blue', 'x-team': 'shop', 'x-debug': '1' });
  assert.equal(blue.host, 'blue.internal');
  assert.deepEqual(blue.response.headers, { 'x-served-by': 'shop', 'x-color': 'blue' });
  assert.deepEqual(green.headers, { 'x-env': 'prod', 'x-team': 'shop' });
  assert.equal(green.host, 'shop.internal');
  assert.deepEqual(green.response.headers, { 'x-served-by': 'shop' });
});

test("a mirror or an unsupported filter on a backendRef that shares its rule's requests makes its share answer 500, and the route says so", () => {
  for (const path of ['/mirror-split', '/ext-split']) {
    const to = upstreams(send(path));
    assert.equal(to['svc/default/green/80']?.response.status, 200, path);
    assert.equal(to['extlb-invalid-backend']?.response.status, 500, path);
    assert.equal(to['svc/default/blue/80'], undefined, path);
  }
  const status = result.statuses.find((s) => s.kind === 'HTTPRoute') as Json;
  const conditions = Object.fromEntries((status.status.parents[0].conditions as Json[]).map((c) => [c.type, c]));
  assert.equal(conditions.Accepted?.status, 'True');
  assert.equal(conditions.PartiallyInvalid?.status, 'True');
  assert.match(conditions.PartiallyInvalid?.message, /spec\.rules\[1\]\.backendRefs\[0\]\.filters\[0\]: extlb applies this filter on a backendRef only when/);
  const codes = result.diagnostics.filter((d) => d.path?.startsWith('spec.rules[2]')).map((d) => [d.code, d.message]);
  assert.deepEqual(codes, [['UnsupportedFilter', 'filter type ExtensionRef is not supported by extlb; requests sent to this backendRef get 500']]);
});

test('the filters of a backendRef that receives every request (the other has weight 0) apply to the route: path, headers, mirror, CORS', () => {
  const o = send('/sole/cart?id=1', { headers: { 'x-env': 'dev' } });
  const blue = upstreams(o)['svc/default/blue/80'];
  assert.ok(blue);
  assert.equal(blue.path, '/v2/cart?id=1');
  assert.equal(blue.headers['x-env'], 'blue');
  assert.deepEqual(
    blue.mirrors.map((m) => [m.cluster, m.fraction, m.path]),
    [['svc/default/shadow/80', 0.1, '/v2/cart?id=1']],
  );
  assert.equal(Object.keys(upstreams(o)).length, 1, 'green, with weight 0, gets nothing');
});

test('CORS origins: a leading *. stands for one or more labels, a missing port for the default one, other schemes and ports are refused', () => {
  const preflight = (origin: string) =>
    send('/sole', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } }) as Extract<Outcome, { type: 'direct' }>;
  for (const origin of ['https://a.example.com', 'https://a.b.example.com', 'https://a.example.com:443', 'http://localhost:3000']) {
    const o = preflight(origin);
    assert.equal(o.type, 'direct', origin);
    assert.equal(o.status, 200, origin);
    assert.equal(o.headers['access-control-allow-origin'], origin, origin);
    assert.equal(o.headers['access-control-allow-credentials'], 'true', origin);
    assert.equal(o.headers['access-control-allow-methods'], 'GET, POST', origin);
    assert.equal(o.headers['access-control-max-age'], '5', origin);
  }
  for (const origin of ['https://example.com', 'http://a.example.com', 'https://a.example.com:8443', 'http://localhost:3001', 'http://localhost']) {
    const o = preflight(origin);
    assert.equal(o.type, 'direct', `${origin}: Envoy answers the preflight itself`);
    assert.equal(o.status, 200, origin);
    assert.equal(o.headers['access-control-allow-origin'], undefined, origin);
  }
  const simple = upstreams(send('/sole', { headers: { origin: 'https://shop.example.com' } }))['svc/default/blue/80'];
  assert.equal(simple?.response.headers['access-control-allow-origin'], 'https://shop.example.com');
});

test("a backendRef's RequestRedirect makes its rule redirect, with the rule's response headers; the rule's mirror is reported as doing nothing", () => {
  const o = send('/moved/x');
  assert.equal(o.type, 'redirect');
  if (o.type !== 'redirect') return;
  assert.equal(o.status, 301);
  assert.equal(o.headers.location, 'https://shop.example.com:443/moved/x');
  assert.equal(o.headers['x-moved'], 'yes');
  const warning = result.diagnostics.find((d) => d.path === 'spec.rules[4].filters[1]');
  assert.equal(warning?.code, 'IncompatibleFilters');
  assert.equal(warning?.message, 'a backendRef that redirects forwards no request, so this RequestMirror mirrors nothing');
});

test('a redirect replacing a prefix by / leaves no double slash', () => {
  for (const [path, to] of [
    ['/old/a/b?x=1', '/a/b?x=1'],
    ['/old', '/'],
    ['/old/', '/'],
  ]) {
    const o = send(path as string);
    assert.equal(o.type === 'redirect' ? o.headers.location : o.type, `http://shop.example.com:8080${to}`, path); // the listener's port: it is not 80
  }
});

test('a route to a kubernetes.io/ws port lets the WebSocket upgrade through; other routes refuse it with 403', () => {
  const chat = upstreams(send('/chat', { upgrade: 'websocket' }))['svc/default/chat/80'];
  assert.equal(chat?.upgrade, 'websocket');
  assert.equal(chat?.protocol, 'HTTP/1.1');
  const refused = send('/split', { upgrade: 'websocket' });
  assert.equal(refused.type, 'direct');
  assert.equal(refused.type === 'direct' ? refused.status : 0, 403);
});
