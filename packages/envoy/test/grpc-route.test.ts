// GRPCRoute beyond the upstream suite's tests: method match forms and their precedence, invalid
// values, filters, invalid backends (UNAVAILABLE), HTTP/2 to the backends and pickers behind a pool,
// the hostname rule between HTTPRoutes and GRPCRoutes, and gRPC over an HTTPS listener. Scenarios
// run on the conformance base (its Gateways, echo backends and what they serve).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { RouteRecord } from '../src/read/index.js';
import { HostnameHolders } from '../src/resolve/hostname-holders.js';
import { intersect } from '../src/resolve/hostnames.js';
import { GRPC, GRPC_ECHO, INFRA, Scenario, grpcRequest } from './conformance/harness.js';

type Json = Record<string, any>;
const meta = (name: string, created = '2026-01-01T00:00:00Z') => ({ name, namespace: INFRA, creationTimestamp: created });
const grpcRoute = (name: string, spec: Json, created?: string): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GRPCRoute',
  metadata: meta(name, created),
  spec: { parentRefs: [{ name: 'same-namespace' }], ...spec },
});
const to = (name: string, extra: Json = {}) => ({ name, port: 8080, ...extra });
const parent = (s: Scenario, route: string, kind: 'GRPCRoute' | 'HTTPRoute' = 'GRPCRoute') => s.routeParent(kind, route, 'same-namespace');

test('method matches: exact service and method, service only, method only, regex; the longest service wins, then the method', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('methods', {
      rules: [
        { matches: [{ method: { method: 'Echo' } }], backendRefs: [to('grpc-infra-backend-v3')] },
        { matches: [{ method: { service: GRPC_ECHO } }], backendRefs: [to('grpc-infra-backend-v2')] },
        { matches: [{ method: { service: GRPC_ECHO, method: 'Echo' } }], backendRefs: [to('grpc-infra-backend-v1')] },
        {
          matches: [{ method: { type: 'RegularExpression', service: 'grpc\\.health\\.v[0-9]+\\.Health', method: 'Ch.*' } }],
          backendRefs: [to('infra-backend-v1')],
        },
      ],
    }),
  ]);
  s.mustBeAccepted('same-namespace', ['methods'], 'GRPCRoute');
  s.expectGrpc('same-namespace', { call: { method: 'Echo' }, backend: 'grpc-infra-backend-v1' });
  s.expectGrpc('same-namespace', { call: { method: 'EchoTwo' }, backend: 'grpc-infra-backend-v2' });
  s.expectGrpc('same-namespace', { call: { service: 'other.Service', method: 'Echo' }, backend: 'grpc-infra-backend-v3' });
  s.expectGrpc('same-namespace', { call: { service: 'other.Service', method: 'EchoTwo' }, code: GRPC.UNIMPLEMENTED });
  s.expectGrpc('same-namespace', { call: { service: 'grpc.health.v1.Health', method: 'Check' }, backend: 'infra-backend-v1' });
  s.expectGrpc('same-namespace', { call: { service: 'grpc.health.v1.Health', method: 'Watch' }, code: GRPC.UNIMPLEMENTED });
  // A GRPCRoute takes gRPC requests only: the same path without content-type application/grpc is not routed.
  s.expect('same-namespace', { request: { path: `/${GRPC_ECHO}/Echo`, method: 'POST' }, status: 404 });
});

test('values the API server refuses drop their match; a rule left without matches, or with an HTTPRoute-only filter, is reported', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('bad', {
      rules: [
        { matches: [{ method: { service: 'bad/service', method: 'Echo' } }], backendRefs: [to('grpc-infra-backend-v1')] },
        { matches: [{ method: { type: 'Exact' } }], backendRefs: [to('grpc-infra-backend-v1')] },
        {
          matches: [{ method: { method: 'EchoTwo' } }],
          filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'x' } }],
          backendRefs: [to('grpc-infra-backend-v1')],
        },
        {
          matches: [{ method: { method: 'EchoThree' } }],
          filters: [{ type: 'ExtensionRef', extensionRef: { group: 'x.io', kind: 'F', name: 'f' } }],
          backendRefs: [to('grpc-infra-backend-v1')],
        },
      ],
    }),
  ]);
  const c = parent(s, 'bad');
  s.condition(c, 'Accepted', 'True', 'Accepted');
  s.condition(c, 'PartiallyInvalid', 'True', 'UnsupportedValue');
  assert.match(c.PartiallyInvalid?.message, /spec\.rules\[0\]\.matches\[0\]\.method\.service: service must only contain valid characters/);
  assert.match(c.PartiallyInvalid?.message, /spec\.rules\[1\]\.matches\[0\]\.method: One or both of 'service' or 'method' must be specified/);
  assert.match(c.PartiallyInvalid?.message, /spec\.rules\[2\]\.filters\[0\]\.type: Unsupported value: "URLRewrite"/);
  // Filters that cannot be applied are not skipped: the rule answers 500, UNKNOWN to a gRPC client.
  s.expectGrpc('same-namespace', { call: { method: 'EchoTwo' }, code: GRPC.UNKNOWN });
  s.expectGrpc('same-namespace', { call: { method: 'EchoThree' }, code: GRPC.UNKNOWN });
  s.expectGrpc('same-namespace', { call: { method: 'Echo' }, code: GRPC.UNIMPLEMENTED });
  const codes = s.result.diagnostics.filter((d) => d.object?.name === 'bad').map((d) => d.code);
  assert.deepEqual([...new Set(codes)].sort(), ['Invalid', 'UnsupportedFilter']);
});

test('header modifiers and mirrors apply to gRPC calls', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('filters', {
      rules: [
        {
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-tenant', value: 'a' }], remove: ['x-drop'] } },
            { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'x-served-by', value: 'extlb' }] } },
            { type: 'RequestMirror', requestMirror: { backendRef: to('grpc-infra-backend-v3') } },
          ],
          backendRefs: [to('grpc-infra-backend-v1')],
        },
      ],
    }),
  ]);
  const o = s.request('same-namespace', grpcRequest({ method: 'Echo', metadata: { 'x-drop': '1' } }));
  assert.equal(o.type, 'forward');
  if (o.type !== 'forward') return;
  assert.equal(o.upstreams[0]?.headers['x-tenant'], 'a');
  assert.equal(o.upstreams[0]?.headers['x-drop'], undefined);
  assert.equal(o.upstreams[0]?.response.headers['x-served-by'], 'extlb');
  assert.deepEqual(
    o.upstreams[0]?.mirrors.map((m) => m.cluster),
    [`svc/${INFRA}/grpc-infra-backend-v3/8080`],
  );
});

test('an invalid backend answers UNAVAILABLE for its share; with no valid backend every call does', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('half', { rules: [{ matches: [{ method: { method: 'Echo' } }], backendRefs: [to('grpc-infra-backend-v1'), to('missing')] }] }),
    grpcRoute('none', { rules: [{ matches: [{ method: { method: 'EchoTwo' } }], backendRefs: [to('missing')] }] }),
  ]);
  s.condition(parent(s, 'half'), 'ResolvedRefs', 'False', 'BackendNotFound');
  const route = s.gateway('same-namespace').routes.flatMap((rc: Json) => rc.virtual_hosts.flatMap((vh: Json) => vh.routes));
  const half = route.find((r: Json) => r.name.includes('/grpcroute/half/'));
  assert.equal(half?.route.cluster_not_found_response_code, 'SERVICE_UNAVAILABLE');
  assert.deepEqual(
    half?.route.weighted_clusters.clusters.map((c: Json) => [c.name, c.weight]),
    [
      [`svc/${INFRA}/grpc-infra-backend-v1/8080`, 1],
      ['extlb-invalid-backend', 1],
    ],
  );
  s.expectGrpc('same-namespace', { call: { method: 'EchoTwo' }, code: GRPC.UNAVAILABLE });
});

test("a GRPCRoute's Service speaks HTTP/2 whatever its appProtocol; a pool that speaks HTTP/1.1 is UnsupportedProtocol", () => {
  const pool = (name: string, appProtocol: string) => ({
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: meta(name),
    spec: {
      selector: { matchLabels: { app: name } },
      targetPorts: [{ number: 9000 }],
      appProtocol,
      endpointPickerRef: { name: 'epp', port: { number: 9002 } },
    },
  });
  const s = new Scenario(undefined, {}, [
    grpcRoute('plain', { rules: [{ matches: [{ method: { method: 'Echo' } }], backendRefs: [{ name: 'infra-backend-v2', port: 8080 }] }] }),
    grpcRoute('pools', {
      rules: [
        {
          matches: [{ method: { method: 'EchoTwo' } }],
          backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'model', port: 9000 }],
        },
        {
          matches: [{ method: { method: 'EchoThree' } }],
          backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'http1', port: 9000 }],
        },
      ],
    }),
    pool('model', 'kubernetes.io/h2c'),
    pool('http1', 'http'),
    { apiVersion: 'v1', kind: 'Service', metadata: meta('epp'), spec: { selector: { app: 'epp' }, ports: [{ name: 'grpc', port: 9002 }] } },
  ]);
  const clusters = s.gateway('same-namespace').clusters as Json[];
  const http2 = (name: string) => clusters.find((c) => c.name === name)?.typed_extension_protocol_options !== undefined;
  assert.ok(http2(`svc/${INFRA}/infra-backend-v2/8080`), 'the Service without appProtocol speaks HTTP/2 to a gRPC route');
  assert.ok(http2(`infpool/${INFRA}/model`));
  // The model server behind the pool is chosen by its picker, as for an HTTPRoute.
  const o = s.request('same-namespace', grpcRequest({ method: 'EchoTwo' }));
  assert.equal(o.type, 'forward');
  const entry = s
    .gateway('same-namespace')
    .routes.flatMap((rc: Json) => rc.virtual_hosts.flatMap((vh: Json) => vh.routes))
    .find((r: Json) => r.match.path === undefined && r.match.safe_regex?.regex.endsWith('/EchoTwo'));
  assert.ok(entry?.typed_per_filter_config, `the picker is enabled on the gRPC route: ${JSON.stringify(entry)}`);
  const resolved = s.routeParent('GRPCRoute', 'pools', 'same-namespace').ResolvedRefs;
  assert.equal(resolved?.reason, 'UnsupportedProtocol');
  assert.match(resolved?.message, /InferencePool gateway-conformance-infra\/http1 speaks HTTP\/1\.1 .*gRPC needs HTTP\/2/);
  s.expectGrpc('same-namespace', { call: { method: 'EchoThree' }, code: GRPC.UNAVAILABLE });
});

test('an HTTPRoute and a GRPCRoute never share a hostname on a listener: the older keeps it', () => {
  const httpRoute = (name: string, hostnames: string[], created: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: meta(name, created),
    spec: { parentRefs: [{ name: 'same-namespace' }], hostnames, rules: [{ backendRefs: [to('infra-backend-v1')] }] },
  });
  const s = new Scenario(undefined, {}, [
    httpRoute('web', ['*.example.com'], '2026-01-01T00:00:00Z'),
    grpcRoute('api', { hostnames: ['api.example.com'], rules: [{ backendRefs: [to('grpc-infra-backend-v1')] }] }, '2026-01-02T00:00:00Z'),
    grpcRoute('rpc', { hostnames: ['rpc.example.org'], rules: [{ backendRefs: [to('grpc-infra-backend-v2')] }] }, '2026-01-03T00:00:00Z'),
    httpRoute('late', ['rpc.example.org'], '2026-01-04T00:00:00Z'),
  ]);
  s.condition(parent(s, 'web', 'HTTPRoute'), 'Accepted', 'True', 'Accepted');
  s.condition(parent(s, 'api'), 'Accepted', 'False', 'HostnameConflict');
  s.condition(parent(s, 'rpc'), 'Accepted', 'True', 'Accepted');
  s.condition(parent(s, 'late', 'HTTPRoute'), 'Accepted', 'False', 'HostnameConflict');
  assert.equal(s.listener('same-namespace', 'http').attachedRoutes, 2);
  s.expect('same-namespace', { request: { host: 'api.example.com', path: '/' }, backend: 'infra-backend-v1' });
  // The hostname is the HTTPRoute's: even a gRPC call goes where it says.
  s.expectGrpc('same-namespace', { call: { method: 'Echo', authority: 'api.example.com' }, backend: 'infra-backend-v1' });
  s.expectGrpc('same-namespace', { call: { method: 'Echo', authority: 'rpc.example.org' }, backend: 'grpc-infra-backend-v2' });
  const conflict = s.result.diagnostics.find((d) => d.code === 'HostnameConflict' && d.object?.name === 'api');
  assert.match(conflict?.message ?? '', /^HTTPRoute gateway-conformance-infra\/web, which is older \(or first by name\), already serves these hostnames/);
});

test('a listener that allows only HTTPRoutes lists only them and refuses GRPCRoutes', () => {
  const s = new Scenario(undefined, {}, [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: meta('http-only'),
      spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } }] },
    },
    grpcRoute('refused', { parentRefs: [{ name: 'http-only' }], rules: [{ backendRefs: [to('grpc-infra-backend-v1')] }] }),
  ]);
  assert.deepEqual(s.listener('http-only', 'http').supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
  s.condition(s.routeParent('GRPCRoute', 'refused', 'http-only'), 'Accepted', 'False', 'NotAllowedByListeners');
});

test('gRPC over an HTTPS listener: the listener offers h2 by ALPN', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('secure', {
      parentRefs: [{ name: 'same-namespace-with-https-listener', sectionName: 'https-with-hostname' }],
      rules: [{ backendRefs: [to('grpc-infra-backend-v1')] }],
    }),
  ]);
  const call = { ...grpcRequest({ method: 'Echo', authority: 'second-example.org', port: 443 }), scheme: 'https' as const, sni: 'second-example.org' };
  s.expect('same-namespace-with-https-listener', { request: call, backend: 'grpc-infra-backend-v1' });
});

test('a hostname that is not one is reported; a route left with none serves nothing rather than every host', () => {
  const s = new Scenario(undefined, {}, [
    grpcRoute('some', { hostnames: ['Ok.Example.com', 'not a host'], rules: [{ backendRefs: [to('grpc-infra-backend-v1')] }] }),
    grpcRoute('none', { hostnames: [''], rules: [{ backendRefs: [to('grpc-infra-backend-v2')] }] }),
  ]);
  s.condition(parent(s, 'some'), 'PartiallyInvalid', 'True', 'UnsupportedValue');
  s.expectGrpc('same-namespace', { call: { method: 'Echo', authority: 'ok.example.com' }, backend: 'grpc-infra-backend-v1' });
  const none = parent(s, 'none').Accepted;
  assert.deepEqual([none?.status, none?.reason], ['False', 'UnsupportedValue']);
  assert.match(none?.message, /spec\.hostnames\[0\]: "" is not a hostname/);
  s.expectGrpc('same-namespace', { call: { method: 'Echo', authority: 'elsewhere.example.com' }, code: GRPC.UNIMPLEMENTED });
});

test('the hostname index finds a holder exactly when Gateway API hostnames intersect', () => {
  const label = fc.constantFrom('a', 'b', 'c');
  const host = fc.oneof(
    fc.constant('*'),
    fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => l.join('.')),
    fc.array(label, { minLength: 1, maxLength: 2 }).map((l) => `*.${l.join('.')}`),
  );
  // Two attached hostnames meet when either is `*` (any host) or they intersect.
  const meet = (a: string, b: string) => a === '*' || b === '*' || intersect(a, b) !== undefined;
  fc.assert(
    fc.property(fc.array(host, { maxLength: 6 }), host, (held, probe) => {
      const index = new HostnameHolders();
      const routes = held.map((h) => ({ name: h }) as unknown as RouteRecord);
      held.forEach((h, i) => {
        index.add(h, routes[i] as RouteRecord);
      });
      assert.equal(
        index.holder(probe) !== undefined,
        held.some((h) => meet(h, probe)),
        `${probe} against ${held.join(', ')}`,
      );
    }),
    { numRuns: 2000, seed: 5 },
  );
});
