// The upstream TCPRoute tests (Gateway API v1.6): TCPRoute statuses, and where connections go
// (stream-model.ts: tcp_proxy and weighted clusters, as Envoy documents them).
import assert from 'node:assert/strict';
import { INFRA, Scenario, WEB, conformance } from './harness.js';
import { backend, expectBackend, expectRejected, gateway, route, shares, toBackends, zeroRoutes } from './stream-fixtures.js';

const tcp = (name: string, port: number) => ({ name, protocol: 'TCP', port, allowedRoutes: { kinds: [{ kind: 'TCPRoute' }] } });

conformance('TCPRouteInvalidBackendRefNonexistent', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    gateway('tcp-gateway-invalid-backend', [tcp('tcp', 9300)]),
    route(
      'TCPRoute',
      'tcp-route-invalid-backend-ref-nonexistent',
      toBackends([{ name: 'tcp-gateway-invalid-backend', sectionName: 'tcp' }], [{ name: 'nonexistent-service', port: 8080 }]),
    ),
  ]);
  const c = s.routeParent('TCPRoute', 'tcp-route-invalid-backend-ref-nonexistent', 'tcp-gateway-invalid-backend');
  s.condition(c, 'ResolvedRefs', 'False', 'BackendNotFound');
  expectRejected(s, 'tcp-gateway-invalid-backend', { port: 9300 });
});

conformance('TCPRouteInvalidCrossNamespaceBackendRef', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-invalid-xns-backend', { namespace: WEB, port: 3000 }),
    gateway('tcp-invalid-cross-namespace-backend-ref-gateway', [tcp('tcp', 9321)]),
    route(
      'TCPRoute',
      'tcp-invalid-cross-namespace-backend-ref',
      toBackends(
        [{ name: 'tcp-invalid-cross-namespace-backend-ref-gateway', sectionName: 'tcp' }],
        [{ name: 'tcp-invalid-xns-backend', namespace: WEB, port: 3000 }],
      ),
    ),
  ]);
  s.mustBeAccepted('tcp-invalid-cross-namespace-backend-ref-gateway', ['tcp-invalid-cross-namespace-backend-ref'], 'TCPRoute');
  const c = s.routeParent('TCPRoute', 'tcp-invalid-cross-namespace-backend-ref', 'tcp-invalid-cross-namespace-backend-ref-gateway');
  s.condition(c, 'ResolvedRefs', 'False', 'RefNotPermitted');
  expectRejected(s, 'tcp-invalid-cross-namespace-backend-ref-gateway', { port: 9321 });
});

conformance('TCPRouteInvalidNonTCPListener', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-echo-backend', { port: 8080 }),
    gateway('tcp-mixed-protocol-gateway', [
      { name: 'only-allow-http-routes', protocol: 'HTTP', port: 5300, allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } },
    ]),
    route(
      'TCPRoute',
      'tcp-route',
      toBackends([{ name: 'tcp-mixed-protocol-gateway', sectionName: 'only-allow-http-routes' }], [{ name: 'tcp-echo-backend', port: 8080 }]),
    ),
  ]);
  s.condition(s.routeParent('TCPRoute', 'tcp-route', 'tcp-mixed-protocol-gateway'), 'Accepted', 'False', 'NotAllowedByListeners');
  zeroRoutes(s, 'tcp-mixed-protocol-gateway');
});

conformance('TCPRouteMultipleRoutesAttachment', { status: 'pass' }, () => {
  const parent = [{ name: 'tcp-multi-route-attach-gateway', sectionName: 'tcp' }];
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-attach-backend-1', { port: 3000 }),
    ...backend('tcp-attach-backend-2', { port: 3000 }),
    gateway('tcp-multi-route-attach-gateway', [tcp('tcp', 9310)]),
    route('TCPRoute', 'tcproute-attach-older', toBackends(parent, [{ name: 'tcp-attach-backend-1', port: 3000 }]), { created: '2026-01-01T00:00:00Z' }),
    // Applied a second later by the test.
    route('TCPRoute', 'tcproute-attach-newer', toBackends(parent, [{ name: 'tcp-attach-backend-2', port: 3000 }]), { created: '2026-01-01T00:00:01Z' }),
  ]);
  for (const r of ['tcproute-attach-older', 'tcproute-attach-newer'])
    s.condition(s.routeParent('TCPRoute', r, 'tcp-multi-route-attach-gateway'), 'Accepted', 'True', 'Accepted');
  s.mustHaveListeners('tcp-multi-route-attach-gateway', [
    { name: 'tcp', supportedKinds: ['TCPRoute'], attachedRoutes: 2, conditions: { Accepted: ['True', 'Accepted'] } },
  ]);
  // Every connection reaches the older route's backend, never the newer one's.
  expectBackend(s, 'tcp-multi-route-attach-gateway', { port: 9310 }, 'tcp-attach-backend-1');
});

conformance('TCPRouteParentRefAttachAll', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-echo-attach-all', { port: 3000 }),
    gateway('tcp-attach-all-gateway', [tcp('one', 9310), tcp('two', 9311), tcp('three', 9312), tcp('four', 9313)]),
    route('TCPRoute', 'tcp-route-attach-all', toBackends([{ name: 'tcp-attach-all-gateway' }], [{ name: 'tcp-echo-attach-all', port: 3000 }])),
  ]);
  const parents = s.status('TCPRoute', 'tcp-route-attach-all').parents as Record<string, any>[];
  assert.equal(parents.length, 1);
  assert.deepEqual(parents[0]?.parentRef, { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: INFRA, name: 'tcp-attach-all-gateway' });
  s.condition(s.routeParent('TCPRoute', 'tcp-route-attach-all', 'tcp-attach-all-gateway'), 'Accepted', 'True', 'Accepted');
  for (const port of [9310, 9311, 9312, 9313]) expectBackend(s, 'tcp-attach-all-gateway', { port }, 'tcp-echo-attach-all');
});

conformance('TCPRouteParentRefPortAndSectionName', { status: 'pass' }, () => {
  const gw = 'tcp-multi-listener-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-echo-one', { port: 3000 }),
    ...backend('tcp-echo-two', { port: 3000 }),
    ...backend('tcp-echo-three', { port: 3000 }),
    gateway(gw, [tcp('one', 9330), tcp('two', 9331), tcp('three', 9332)]),
    route('TCPRoute', 'tcp-route-by-port', toBackends([{ name: gw, port: 9330 }], [{ name: 'tcp-echo-one', port: 3000 }])),
    route('TCPRoute', 'tcp-route-by-section', toBackends([{ name: gw, sectionName: 'two' }], [{ name: 'tcp-echo-two', port: 3000 }])),
    route('TCPRoute', 'tcp-route-by-section-and-port', toBackends([{ name: gw, sectionName: 'three', port: 9332 }], [{ name: 'tcp-echo-three', port: 3000 }])),
  ]);
  for (const r of ['tcp-route-by-port', 'tcp-route-by-section', 'tcp-route-by-section-and-port'])
    s.condition(s.routeParent('TCPRoute', r, gw), 'Accepted', 'True', 'Accepted');
  expectBackend(s, gw, { port: 9330 }, 'tcp-echo-one');
  expectBackend(s, gw, { port: 9331 }, 'tcp-echo-two');
  expectBackend(s, gw, { port: 9332 }, 'tcp-echo-three');
});

conformance('TCPRouteReferenceGrant', { status: 'pass' }, () => {
  const gw = 'tcp-reference-grant-gateway';
  const grant = {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: 'tcp-reference-grant', namespace: WEB },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'TCPRoute', namespace: INFRA }],
      to: [{ group: '', kind: 'Service', name: 'tcp-reference-grant-backend' }],
    },
  };
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-reference-grant-backend', { namespace: WEB, port: 3000 }),
    grant,
    gateway(gw, [tcp('tcp', 9320)]),
    route(
      'TCPRoute',
      'tcp-reference-grant',
      toBackends([{ name: gw, sectionName: 'tcp' }], [{ name: 'tcp-reference-grant-backend', namespace: WEB, port: 3000 }]),
    ),
  ]);
  s.mustBeAccepted(gw, ['tcp-reference-grant'], 'TCPRoute');
  expectBackend(s, gw, { port: 9320 }, `${WEB}/tcp-reference-grant-backend`);
  // The test deletes the ReferenceGrant.
  const after = s.after((objects) => objects.filter((o) => o.kind !== 'ReferenceGrant' || o.metadata.name !== 'tcp-reference-grant'));
  after.condition(after.routeParent('TCPRoute', 'tcp-reference-grant', gw), 'ResolvedRefs', 'False', 'RefNotPermitted');
  expectRejected(after, gw, { port: 9320 });
});

conformance('TCPRouteWeightedRouting', { status: 'pass' }, () => {
  const gw = 'tcp-weighted-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('tcp-backend-v1', { port: 3000 }),
    ...backend('tcp-backend-v2', { port: 3000 }),
    ...backend('tcp-backend-v3', { port: 3000 }),
    gateway(gw, [tcp('tcp', 9340)]),
    route(
      'TCPRoute',
      'tcp-weighted-route',
      toBackends(
        [{ name: gw, sectionName: 'tcp' }],
        [
          { name: 'tcp-backend-v1', port: 3000, weight: 70 },
          { name: 'tcp-backend-v2', port: 3000, weight: 30 },
          { name: 'tcp-backend-v3', port: 3000, weight: 0 },
        ],
      ),
    ),
  ]);
  s.mustBeAccepted(gw, ['tcp-weighted-route'], 'TCPRoute');
  assert.deepEqual(shares(s, gw, { port: 9340 }), { [`${INFRA}/tcp-backend-v1`]: 0.7, [`${INFRA}/tcp-backend-v2`]: 0.3 });
});
