// The upstream UDPRoute tests (Gateway API v1.6): UDPRoute statuses, and where datagram sessions
// go (stream-model.ts: a UDP listener's udp_proxy, as Envoy documents it).
import assert from 'node:assert/strict';
import { APP, INFRA, Scenario, conformance } from './harness.js';
import { backend, expectBackend, expectRejected, gateway, route, shares, toBackends, zeroRoutes } from './stream-fixtures.js';

const udp = (name: string, port: number) => ({ name, protocol: 'UDP', port, allowedRoutes: { kinds: [{ kind: 'UDPRoute' }] } });
const u = (port: number) => ({ port, transport: 'udp' as const });

conformance('UDPRoute', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...backend('coredns', { port: 53, protocol: 'UDP' }),
    gateway('udp-gateway', [udp('coredns', 5300)]),
    route('UDPRoute', 'udp-coredns', toBackends([{ name: 'udp-gateway', sectionName: 'coredns' }], [{ name: 'coredns', port: 53 }])),
  ]);
  s.mustBeAccepted('udp-gateway', ['udp-coredns'], 'UDPRoute');
  expectBackend(s, 'udp-gateway', u(5300), 'coredns');
  // UDP only: nothing listens for TCP on the port.
  assert.equal(s.connect('udp-gateway', { port: 5300 }).type, 'no-listener');
});

conformance('UDPRouteInvalidBackendRefNonexistent', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    gateway('udp-gateway-invalid-backend', [udp('udp', 5300)]),
    route(
      'UDPRoute',
      'udp-route-invalid-backend-ref-nonexistent',
      toBackends([{ name: 'udp-gateway-invalid-backend', sectionName: 'udp' }], [{ name: 'nonexistent-service', port: 8080 }]),
    ),
  ]);
  s.condition(
    s.routeParent('UDPRoute', 'udp-route-invalid-backend-ref-nonexistent', 'udp-gateway-invalid-backend'),
    'ResolvedRefs',
    'False',
    'BackendNotFound',
  );
  expectRejected(s, 'udp-gateway-invalid-backend', u(5300));
});

conformance('UDPRouteInvalidCrossNamespaceBackendRef', { status: 'pass' }, () => {
  const gw = 'udp-gateway-invalid-cross-namespace-backend-ref';
  const s = new Scenario(undefined, {}, [
    ...backend('udp-echo-no-reference-grant', { namespace: APP, port: 8080, protocol: 'UDP' }),
    gateway(gw, [udp('udp', 5300)]),
    route(
      'UDPRoute',
      'udp-route-invalid-cross-namespace-backend-ref',
      toBackends([{ name: gw, sectionName: 'udp' }], [{ name: 'udp-echo-no-reference-grant', namespace: APP, port: 8080 }]),
    ),
  ]);
  s.condition(s.routeParent('UDPRoute', 'udp-route-invalid-cross-namespace-backend-ref', gw), 'ResolvedRefs', 'False', 'RefNotPermitted');
  expectRejected(s, gw, u(5300));
});

conformance('UDPRouteMultipleRoutesAttachment', { status: 'pass' }, () => {
  const gw = 'udp-multi-route-attach-gateway';
  const parent = [{ name: gw, sectionName: 'udp' }];
  const s = new Scenario(undefined, {}, [
    ...backend('udp-attach-backend-1', { port: 8080, protocol: 'UDP' }),
    ...backend('udp-attach-backend-2', { port: 8080, protocol: 'UDP' }),
    gateway(gw, [udp('udp', 5301)]),
    route('UDPRoute', 'udproute-attach-older', toBackends(parent, [{ name: 'udp-attach-backend-1', port: 8080 }]), { created: '2026-01-01T00:00:00Z' }),
    route('UDPRoute', 'udproute-attach-newer', toBackends(parent, [{ name: 'udp-attach-backend-2', port: 8080 }]), { created: '2026-01-01T00:00:01Z' }),
  ]);
  for (const r of ['udproute-attach-older', 'udproute-attach-newer']) s.condition(s.routeParent('UDPRoute', r, gw), 'Accepted', 'True', 'Accepted');
  s.mustHaveListeners(gw, [{ name: 'udp', supportedKinds: ['UDPRoute'], attachedRoutes: 2, conditions: { Accepted: ['True', 'Accepted'] } }]);
  expectBackend(s, gw, u(5301), 'udp-attach-backend-1');
});

conformance('UDPRouteNotAllowedByListeners', { status: 'pass' }, () => {
  const gw = 'udproute-tls-only-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('coredns', { port: 53, protocol: 'UDP' }),
    gateway(gw, [{ name: 'tls', port: 443, protocol: 'TLS', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'Same' } } }]),
    route('UDPRoute', 'udproute-not-allowed-by-listeners', toBackends([{ name: gw, sectionName: 'tls' }], [{ name: 'coredns', port: 53 }])),
  ]);
  s.condition(s.routeParent('UDPRoute', 'udproute-not-allowed-by-listeners', gw), 'Accepted', 'False', 'NotAllowedByListeners');
  zeroRoutes(s, gw);
});

conformance('UDPRouteParentRefAttachAllListeners', { status: 'pass' }, () => {
  const gw = 'udp-attach-all-listeners-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('udp-echo-attach-all', { port: 8080, protocol: 'UDP' }),
    gateway(gw, [udp('udp-1', 5310), udp('udp-2', 5311), udp('udp-3', 5312)]),
    route('UDPRoute', 'udp-route-attach-all', toBackends([{ name: gw }], [{ name: 'udp-echo-attach-all', port: 8080 }])),
  ]);
  s.condition(s.routeParent('UDPRoute', 'udp-route-attach-all', gw), 'Accepted', 'True', 'Accepted');
  for (const port of [5310, 5311, 5312]) expectBackend(s, gw, u(port), 'udp-echo-attach-all');
});

conformance('UDPRouteParentRefPortAndSectionName', { status: 'pass' }, () => {
  const gw = 'udp-multi-listener-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('udp-echo-by-port', { port: 8080, protocol: 'UDP' }),
    ...backend('udp-echo-by-section', { port: 8080, protocol: 'UDP' }),
    ...backend('udp-echo-by-section-and-port', { port: 8080, protocol: 'UDP' }),
    gateway(gw, [udp('by-port', 5320), udp('by-section', 5321), udp('by-section-and-port', 5322)]),
    route('UDPRoute', 'udp-route-by-port', toBackends([{ name: gw, port: 5320 }], [{ name: 'udp-echo-by-port', port: 8080 }])),
    route('UDPRoute', 'udp-route-by-section', toBackends([{ name: gw, sectionName: 'by-section' }], [{ name: 'udp-echo-by-section', port: 8080 }])),
    route(
      'UDPRoute',
      'udp-route-by-section-and-port',
      toBackends([{ name: gw, sectionName: 'by-section-and-port', port: 5322 }], [{ name: 'udp-echo-by-section-and-port', port: 8080 }]),
    ),
  ]);
  for (const r of ['udp-route-by-port', 'udp-route-by-section', 'udp-route-by-section-and-port'])
    s.condition(s.routeParent('UDPRoute', r, gw), 'Accepted', 'True', 'Accepted');
  expectBackend(s, gw, u(5320), 'udp-echo-by-port');
  expectBackend(s, gw, u(5321), 'udp-echo-by-section');
  expectBackend(s, gw, u(5322), 'udp-echo-by-section-and-port');
});

conformance('UDPRouteReferenceGrant', { status: 'pass' }, () => {
  const gw = 'udp-gateway-reference-grant';
  const s = new Scenario(undefined, {}, [
    ...backend('udp-echo-reference-grant', { namespace: APP, port: 8080, protocol: 'UDP' }),
    {
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'udp-reference-grant', namespace: APP },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'UDPRoute', namespace: INFRA }],
        to: [{ group: '', kind: 'Service', name: 'udp-echo-reference-grant' }],
      },
    },
    gateway(gw, [udp('udp', 5300)]),
    route(
      'UDPRoute',
      'udp-route-reference-grant',
      toBackends([{ name: gw, sectionName: 'udp' }], [{ name: 'udp-echo-reference-grant', namespace: APP, port: 8080 }]),
    ),
  ]);
  s.mustBeAccepted(gw, ['udp-route-reference-grant'], 'UDPRoute');
  s.condition(s.routeParent('UDPRoute', 'udp-route-reference-grant', gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  expectBackend(s, gw, u(5300), `${APP}/udp-echo-reference-grant`);
});

conformance('UDPRouteWeightedRouting', { status: 'pass' }, () => {
  const gw = 'udp-weighted-gateway';
  const s = new Scenario(undefined, {}, [
    ...backend('udp-backend-v1', { port: 8080, protocol: 'UDP' }),
    ...backend('udp-backend-v2', { port: 8080, protocol: 'UDP' }),
    ...backend('udp-backend-v3', { port: 8080, protocol: 'UDP' }),
    gateway(gw, [udp('udp', 5302)]),
    route(
      'UDPRoute',
      'udp-weighted-route',
      toBackends(
        [{ name: gw, sectionName: 'udp' }],
        [
          { name: 'udp-backend-v1', port: 8080, weight: 70 },
          { name: 'udp-backend-v2', port: 8080, weight: 30 },
          { name: 'udp-backend-v3', port: 8080, weight: 0 },
        ],
      ),
    ),
  ]);
  s.mustBeAccepted(gw, ['udp-weighted-route'], 'UDPRoute');
  const got = shares(s, gw, u(5302));
  assert.deepEqual(Object.keys(got).sort(), [`${INFRA}/udp-backend-v1`, `${INFRA}/udp-backend-v2`]);
  assert.ok(Math.abs((got[`${INFRA}/udp-backend-v1`] ?? 0) - 0.7) < 1e-9 && Math.abs((got[`${INFRA}/udp-backend-v2`] ?? 0) - 0.3) < 1e-9, JSON.stringify(got));
});
