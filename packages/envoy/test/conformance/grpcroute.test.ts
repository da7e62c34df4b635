// Gateway API conformance, GRPCRoute tests (v1.6): each upstream test's expectations, on scenarios
// written for extlb (manifests/), checked against the converted configuration with gRPC calls.
import assert from 'node:assert/strict';
import { GRPC, INFRA, Scenario, conformance, grpcRequest } from './harness.js';

conformance('GRPCExactMethodMatching', { status: 'pass' }, () => {
  const s = new Scenario('grpcroute-exact-method-matching.yaml');
  s.mustBeAccepted('same-namespace', ['exact-matching'], 'GRPCRoute');
  s.expectGrpc('same-namespace', { call: { method: 'Echo' }, backend: 'grpc-infra-backend-v1', namespace: INFRA });
  s.expectGrpc('same-namespace', { call: { method: 'EchoTwo' }, backend: 'grpc-infra-backend-v2', namespace: INFRA });
  s.expectGrpc('same-namespace', { call: { method: 'EchoThree' }, code: GRPC.UNIMPLEMENTED });
});

conformance('GRPCRouteHeaderMatching', { status: 'pass' }, () => {
  const s = new Scenario('grpcroute-header-matching.yaml');
  s.mustBeAccepted('same-namespace', ['grpc-header-matching'], 'GRPCRoute');
  const cases: [Record<string, string>, string | number][] = [
    [{ Version: 'one' }, 'grpc-infra-backend-v1'],
    [{ Version: 'two' }, 'grpc-infra-backend-v2'],
    [{ Version: 'two', Color: 'orange' }, 'grpc-infra-backend-v1'],
    [{ Version: 'two', Color: 'blue' }, 'grpc-infra-backend-v2'],
    [{ Color: 'orange' }, GRPC.UNIMPLEMENTED],
    [{ 'Some-Other-Header': 'one' }, GRPC.UNIMPLEMENTED],
    [{ Color: 'blue' }, 'grpc-infra-backend-v1'],
    [{ Color: 'green' }, 'grpc-infra-backend-v1'],
    [{ Color: 'red' }, 'grpc-infra-backend-v2'],
    [{ Color: 'yellow' }, 'grpc-infra-backend-v2'],
    [{ Color: 'purple' }, GRPC.UNIMPLEMENTED],
  ];
  for (const [metadata, want] of cases) {
    const call = { method: 'Echo', metadata };
    s.expectGrpc('same-namespace', typeof want === 'string' ? { call, backend: want } : { call, code: want });
  }
});

conformance('GRPCRouteListenerHostnameMatching', { status: 'pass' }, () => {
  const s = new Scenario('grpcroute-listener-hostname-matching.yaml');
  const gw = 'grpcroute-listener-hostname-matching';
  s.mustBeAccepted(gw, ['backend-v1', 'backend-v2', 'backend-v3'], 'GRPCRoute');
  for (const [listener, route] of [
    ['listener-1', 'backend-v1'],
    ['listener-2', 'backend-v2'],
    ['listener-3', 'backend-v3'],
    ['listener-4', 'backend-v3'],
  ] as const) {
    s.condition(s.routeParent('GRPCRoute', route, gw, listener), 'Accepted', 'True', 'Accepted');
    const l = s.listener(gw, listener);
    assert.equal(l.attachedRoutes, 1, `${listener} attachedRoutes`);
    assert.ok(
      l.supportedKinds.some((k) => k.kind === 'GRPCRoute'),
      `${listener} supports GRPCRoute: ${JSON.stringify(l.supportedKinds)}`,
    );
  }
  const cases: [string, string | number][] = [
    ['bar.com', 'grpc-infra-backend-v1'],
    ['foo.bar.com', 'grpc-infra-backend-v2'],
    ['baz.bar.com', 'grpc-infra-backend-v3'],
    ['boo.bar.com', 'grpc-infra-backend-v3'],
    ['multiple.prefixes.bar.com', 'grpc-infra-backend-v3'],
    ['multiple.prefixes.foo.com', 'grpc-infra-backend-v3'],
    ['foo.com', GRPC.UNIMPLEMENTED],
    ['no.matching.host', GRPC.UNIMPLEMENTED],
  ];
  for (const [authority, want] of cases) {
    const call = { method: 'Echo', authority };
    s.expectGrpc(gw, typeof want === 'string' ? { call, backend: want } : { call, code: want });
  }
});

conformance('GRPCRouteNamedRule', { status: 'pass' }, () => {
  const s = new Scenario('grpcroute-named-rule.yaml');
  s.mustBeAccepted('same-namespace', ['grpc-named-rules'], 'GRPCRoute');
  s.expectGrpc('same-namespace', { call: { method: 'Echo' }, backend: 'grpc-infra-backend-v1' });
  s.expectGrpc('same-namespace', { call: { method: 'EchoTwo' }, backend: 'grpc-infra-backend-v2' });
});

conformance('GRPCRouteWeight', { status: 'pass' }, () => {
  const s = new Scenario('grpcroute-weight.yaml');
  s.mustBeAccepted('same-namespace', ['weighted-backends'], 'GRPCRoute');
  s.expectGrpc('same-namespace', { call: { method: 'Echo' } });
  // The suite samples 500 calls and allows 5% either way; Envoy's weighted_clusters split exactly.
  assert.deepEqual(s.shares('same-namespace', grpcRequest({ method: 'Echo' })), {
    [`${INFRA}/grpc-infra-backend-v1`]: 0.7,
    [`${INFRA}/grpc-infra-backend-v2`]: 0.3,
  });
});
