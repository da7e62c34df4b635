// The upstream TLSRoute tests (Gateway API v1.6, and BackendTLSPolicyTLSRouteTerminate from its
// main branch): listener and route statuses, and where a TLS connection goes by its SNI
// (stream-model.ts: tls_inspector, server_names, tcp_proxy; terminated with the listener's
// certificate, or passed through untouched).
import assert from 'node:assert/strict';
import { APP, INFRA, Scenario, certificate, conformance } from './harness.js';
import { backend, expectBackend, expectRejected, gateway, noAcceptedParents, route, toBackends, zeroRoutes } from './stream-fixtures.js';

type Json = Record<string, any>;

const passthrough = (name: string, port: number, hostname?: string, kinds: string[] = ['TLSRoute']): Json => ({
  name,
  protocol: 'TLS',
  port,
  ...(hostname ? { hostname } : {}),
  allowedRoutes: { namespaces: { from: 'Same' }, kinds: kinds.map((kind) => ({ kind })) },
  tls: { mode: 'Passthrough' },
});
const terminate = (name: string, port: number, hostname: string): Json => ({
  name,
  protocol: 'TLS',
  port,
  hostname,
  allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'TLSRoute' }] },
  tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls-terminate-checks-certificate' }] },
});

/** The Secret the terminating listeners serve (the upstream suite makes it at setup). */
function terminateCertificate(): Json {
  const c = certificate('tls-terminate-checks-certificate', ['tls.example.com', 'terminate.example.com']);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'tls-terminate-checks-certificate', namespace: INFRA },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': c.crt, 'tls.key': c.key },
  };
}

/** The suite's tcp-backend: TLS on 8443, plaintext on 3000. */
function tcpBackend(): Json[] {
  const [svc, slice] = backend('tcp-backend', { port: 8443 }) as [Json, Json];
  svc.spec.ports = [
    { name: 'tls', protocol: 'TCP', port: 8443, targetPort: 8443 },
    { name: 'plain', protocol: 'TCP', port: 3000, targetPort: 3000 },
  ];
  slice.ports = [
    { name: 'tls', port: 8443, protocol: 'TCP' },
    { name: 'plain', port: 3000, protocol: 'TCP' },
  ];
  return [svc, slice];
}

const tls = (sni: string) => ({ tls: { sni } });

conformance('TLSRouteSimpleSameNamespace', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...tcpBackend(),
    gateway('gateway-tlsroute', [passthrough('https', 443, '*.example.com')]),
    route('TLSRoute', 'gateway-conformance-infra-test', toBackends([{ name: 'gateway-tlsroute' }], [{ name: 'tcp-backend', port: 8443 }], ['abc.example.com'])),
  ]);
  s.mustBeAccepted('gateway-tlsroute', ['gateway-conformance-infra-test'], 'TLSRoute');
  const u = expectBackend(s, 'gateway-tlsroute', { port: 443, ...tls('abc.example.com') }, 'tcp-backend');
  // Passed through: the backend terminates the client's own TLS, SNI and all.
  assert.deepEqual(u.backendTls, { by: 'client', sni: 'abc.example.com' });
  expectRejected(s, 'gateway-tlsroute', { port: 443, ...tls('other.example.com') });
});

conformance('TLSRouteTerminateSimpleSameNamespace', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    ...tcpBackend(),
    terminateCertificate(),
    gateway('gateway-tlsroute-terminate', [terminate('tlsterminate', 8443, 'tls.example.com')]),
    route(
      'TLSRoute',
      'tlsroute-terminated-test',
      toBackends([{ name: 'gateway-tlsroute-terminate' }], [{ name: 'tcp-backend', port: 3000 }], ['tls.example.com']),
    ),
  ]);
  s.mustBeAccepted('gateway-tlsroute-terminate', ['tlsroute-terminated-test'], 'TLSRoute');
  const u = expectBackend(s, 'gateway-tlsroute-terminate', { port: 8443, ...tls('tls.example.com') }, 'tcp-backend');
  assert.equal(u.backendTls, undefined, 'terminated on the Gateway: plaintext to the backend');
  assert.equal(s.connect('gateway-tlsroute-terminate', { port: 8443 }).type, 'no-chain', 'a plaintext client has no SNI, so no chain');
  // Envoy terminates TLS there but speaks no HTTP: the chain is tcp_proxy's.
  const asHttp = s.request('gateway-tlsroute-terminate', { port: 8443, scheme: 'https', sni: 'tls.example.com', host: 'tls.example.com', path: '/' });
  assert.equal(asHttp.type, 'protocol-error', JSON.stringify(asHttp));
});

conformance('TLSRouteMixedTerminationSameNamespace', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-mixed-termination';
  const s = new Scenario(undefined, {}, [
    ...tcpBackend(),
    terminateCertificate(),
    gateway(gw, [terminate('tls-terminate', 8883, 'tls.example.com'), passthrough('tls-passthrough', 8883, 'abc.example.com')]),
    route(
      'TLSRoute',
      'gateway-conformance-mixed-passthroughroute',
      toBackends([{ name: gw, sectionName: 'tls-passthrough' }], [{ name: 'tcp-backend', port: 8443 }], ['abc.example.com']),
    ),
    route(
      'TLSRoute',
      'gateway-conformance-mixed-terminateroute',
      toBackends([{ name: gw, sectionName: 'tls-terminate' }], [{ name: 'tcp-backend', port: 3000 }], ['tls.example.com']),
    ),
  ]);
  s.mustBeAccepted(gw, ['gateway-conformance-mixed-passthroughroute', 'gateway-conformance-mixed-terminateroute'], 'TLSRoute');
  s.mustHaveListeners(gw, [
    { name: 'tls-terminate', supportedKinds: ['TLSRoute'], attachedRoutes: 1, conditions: { Accepted: ['True', 'Accepted'] } },
    { name: 'tls-passthrough', supportedKinds: ['TLSRoute'], attachedRoutes: 1, conditions: { Accepted: ['True', 'Accepted'] } },
  ]);
  const terminated = expectBackend(s, gw, { port: 8883, ...tls('tls.example.com') }, 'tcp-backend');
  assert.equal(terminated.backendTls, undefined);
  assert.equal(terminated.cluster, `svc/${INFRA}/tcp-backend/3000`);
  const passed = expectBackend(s, gw, { port: 8883, ...tls('abc.example.com') }, 'tcp-backend');
  assert.deepEqual(passed.backendTls, { by: 'client', sni: 'abc.example.com' });
  assert.equal(passed.cluster, `svc/${INFRA}/tcp-backend/8443`);
});

conformance(
  'TLSRouteListenerMixedTerminationNotSupported',
  {
    status: 'unsupported',
    why: 'for implementations without mixed termination on one port; extlb serves both modes on one port by SNI (TLSRouteMixedTerminationSameNamespace)',
  },
  () => {
    const gw = 'gateway-tlsroute-mixed-termination-not-supported';
    const s = new Scenario(undefined, {}, [
      terminateCertificate(),
      gateway(gw, [terminate('tls-terminate', 8443, 'terminate.example.com'), passthrough('tls-passthrough', 8443, 'passthrough.example.com')]),
    ]);
    // The test expects ProtocolConflict on both listeners; extlb accepts both instead.
    s.mustHaveListeners(gw, [
      { name: 'tls-terminate', supportedKinds: ['TLSRoute'], attachedRoutes: 0, conditions: { Accepted: ['True', 'Accepted'], Conflicted: ['False'] } },
      { name: 'tls-passthrough', supportedKinds: ['TLSRoute'], attachedRoutes: 0, conditions: { Accepted: ['True', 'Accepted'], Conflicted: ['False'] } },
    ]);
  },
);

conformance(
  'TLSRouteListenerTerminateNotSupported',
  { status: 'unsupported', why: 'for implementations without TLS termination on TLS listeners; extlb terminates (TLSRouteTerminateSimpleSameNamespace)' },
  () => {
    const gw = 'gateway-tlsroute-terminate-not-supported';
    const s = new Scenario(undefined, {}, [terminateCertificate(), gateway(gw, [terminate('tls-terminate', 8443, 'terminate.example.com')])]);
    // The test expects Accepted=False/UnsupportedValue; extlb accepts and programs the listener.
    s.mustHaveListeners(gw, [
      { name: 'tls-terminate', supportedKinds: ['TLSRoute'], attachedRoutes: 0, conditions: { Accepted: ['True', 'Accepted'], Programmed: ['True'] } },
    ]);
  },
);

conformance('TLSRouteListenerTerminateSupportedKinds', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-terminate-supported';
  const s = new Scenario(undefined, {}, [terminateCertificate(), gateway(gw, [terminate('tls-terminate', 8443, 'terminate.example.com')])]);
  s.mustHaveListeners(gw, [{ name: 'tls-terminate', supportedKinds: ['TLSRoute'], attachedRoutes: 0, conditions: { Accepted: ['True', 'Accepted'] } }]);
  // Programmed with no route yet: the port is open and closes every connection.
  const o = s.connect(gw, { port: 8443, tls: { sni: 'terminate.example.com' } });
  assert.ok(o.type === 'forward' && o.upstreams.length === 0 && o.closed === 1, JSON.stringify(o));
});

conformance('TLSRouteListenerPassthroughSupportedKinds', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-passthrough-supported-kind';
  const s = new Scenario(undefined, {}, [gateway(gw, [passthrough('tls-passthrough', 443, undefined, ['TCPRoute', 'TLSRoute'])])]);
  s.mustHaveListeners(gw, [
    { name: 'tls-passthrough', supportedKinds: ['TLSRoute'], attachedRoutes: 0, conditions: { ResolvedRefs: ['False', 'InvalidRouteKinds'] } },
  ]);
  const kinds = s.listener(gw, 'tls-passthrough').supportedKinds.map((k) => k.kind);
  assert.deepEqual(kinds, ['TLSRoute'], 'TCPRoute is not a kind a TLS listener supports');
});

conformance('TLSRouteHostnameIntersection', { status: 'pass' }, () => {
  const r = (name: string, gw: string, hostname: string, service: string) =>
    route('TLSRoute', name, toBackends([{ name: gw }], [{ name: service, port: 443 }], [hostname]));
  const s = new Scenario(undefined, {}, [
    gateway('gw-tlsroute-exact-hostname-x-1', [passthrough('listener-exact-hostname', 443, 'abc.example.com')]),
    gateway('gw-tlsroute-more-specific-wc-hostname-x-2', [passthrough('listener-more-specific-wc-hostname', 443, '*.example.com')]),
    gateway('gw-tlsroute-less-specific-wc-hostname-x-3', [passthrough('listener-less-specific-wc-hostname', 443, '*.com')]),
    gateway('gw-tlsroute-empty-hostname-x-4', [passthrough('listener-empty-hostname', 443)]),
    r('tlsroute-more-specific-wc-hostname-x-1', 'gw-tlsroute-exact-hostname-x-1', '*.example.com', 'tls-backend'),
    r('tlsroute-exact-hostname-x-2', 'gw-tlsroute-more-specific-wc-hostname-x-2', 'abc.example.com', 'tls-backend'),
    r('tlsroute-less-specific-wc-hostname-x-2', 'gw-tlsroute-more-specific-wc-hostname-x-2', '*.com', 'tls-backend-2'),
    r('tlsroute-exact-hostname-x-3', 'gw-tlsroute-less-specific-wc-hostname-x-3', 'abc.example.com', 'tls-backend'),
    r('tlsroute-more-specific-wc-hostname-x-3', 'gw-tlsroute-less-specific-wc-hostname-x-3', '*.example.com', 'tls-backend-2'),
    r('tlsroute-exact-hostname-x-4', 'gw-tlsroute-empty-hostname-x-4', 'abc.example.com', 'tls-backend'),
    r('tlsroute-less-specific-wc-hostname-x-4', 'gw-tlsroute-empty-hostname-x-4', '*.com', 'tls-backend-2'),
  ]);
  const cases: [string, string[]][] = [
    ['gw-tlsroute-exact-hostname-x-1', ['tlsroute-more-specific-wc-hostname-x-1']],
    ['gw-tlsroute-more-specific-wc-hostname-x-2', ['tlsroute-exact-hostname-x-2', 'tlsroute-less-specific-wc-hostname-x-2']],
    ['gw-tlsroute-less-specific-wc-hostname-x-3', ['tlsroute-exact-hostname-x-3', 'tlsroute-more-specific-wc-hostname-x-3']],
    ['gw-tlsroute-empty-hostname-x-4', ['tlsroute-exact-hostname-x-4', 'tlsroute-less-specific-wc-hostname-x-4']],
  ];
  for (const [gw, routes] of cases) {
    s.mustBeAccepted(gw, routes, 'TLSRoute');
    for (const name of routes) s.condition(s.routeParent('TLSRoute', name, gw), 'ResolvedRefs', 'True');
    expectBackend(s, gw, { port: 443, ...tls('abc.example.com') }, 'tls-backend');
  }
  expectRejected(s, 'gw-tlsroute-exact-hostname-x-1', { port: 443, ...tls('non.matching.com') });
  for (const gw of ['gw-tlsroute-more-specific-wc-hostname-x-2', 'gw-tlsroute-less-specific-wc-hostname-x-3']) {
    expectBackend(s, gw, { port: 443, ...tls('other.example.com') }, 'tls-backend-2');
    expectRejected(s, gw, { port: 443, ...tls('non.matching.com') });
  }
  expectBackend(s, 'gw-tlsroute-empty-hostname-x-4', { port: 443, ...tls('other.example.com') }, 'tls-backend-2');
});

conformance('TLSRouteInvalidBackendRefNonexistent', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-invalid-backend-ref-nonexistent';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [passthrough('tls', 443)]),
    route('TLSRoute', 'invalid-backend-ref-nonexistent', toBackends([{ name: gw }], [{ name: 'nonexistent-service', port: 443 }], ['abc.example.com'])),
  ]);
  s.mustBeAccepted(gw, ['invalid-backend-ref-nonexistent'], 'TLSRoute');
  s.condition(s.routeParent('TLSRoute', 'invalid-backend-ref-nonexistent', gw), 'ResolvedRefs', 'False', 'BackendNotFound');
  expectRejected(s, gw, { port: 443, ...tls('abc.example.com') });
});

conformance('TLSRouteInvalidBackendRefUnknownKind', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-invalid-backend-ref-unknown-kind';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [passthrough('tls', 443)]),
    route(
      'TLSRoute',
      'invalid-backend-ref-unknown-kind',
      toBackends([{ name: gw }], [{ group: 'unknownkind.example.com', kind: 'NonExistent', name: 'tls-backend', port: 443 }], ['abc.example.com']),
    ),
  ]);
  s.mustBeAccepted(gw, ['invalid-backend-ref-unknown-kind'], 'TLSRoute');
  s.condition(s.routeParent('TLSRoute', 'invalid-backend-ref-unknown-kind', gw), 'ResolvedRefs', 'False', 'InvalidKind');
  expectRejected(s, gw, { port: 443, ...tls('abc.example.com') });
});

conformance('TLSRouteInvalidNoMatchingListenerHostname', { status: 'pass' }, () => {
  const s = new Scenario(undefined, {}, [
    gateway('gateway-tls-exact-hostname', [passthrough('tls', 443, 'www.example.com')]),
    gateway('gateway-tls-wildcard-hostname', [passthrough('tls', 443, '*.example.com')]),
    route(
      'TLSRoute',
      'tlsroute-hostname-mismatch-1',
      toBackends([{ name: 'gateway-tls-exact-hostname' }], [{ name: 'tls-backend', port: 443 }], ['www.nomatch.com', '*.nomatch.com']),
    ),
    route(
      'TLSRoute',
      'tlsroute-hostname-mismatch-2',
      toBackends([{ name: 'gateway-tls-wildcard-hostname' }], [{ name: 'tls-backend', port: 443 }], ['www.different.com', '*.different.com']),
    ),
  ]);
  s.condition(s.routeParent('TLSRoute', 'tlsroute-hostname-mismatch-1', 'gateway-tls-exact-hostname'), 'Accepted', 'False', 'NoMatchingListenerHostname');
  s.condition(s.routeParent('TLSRoute', 'tlsroute-hostname-mismatch-2', 'gateway-tls-wildcard-hostname'), 'Accepted', 'False', 'NoMatchingListenerHostname');
  noAcceptedParents(s, 'TLSRoute', 'tlsroute-hostname-mismatch-1');
  noAcceptedParents(s, 'TLSRoute', 'tlsroute-hostname-mismatch-2');
  zeroRoutes(s, 'gateway-tls-exact-hostname');
  zeroRoutes(s, 'gateway-tls-wildcard-hostname');
});

conformance('TLSRouteInvalidNoMatchingListener', { status: 'pass' }, () => {
  const r = (name: string, parent: Json) => route('TLSRoute', name, toBackends([parent], [{ name: 'tls-backend', port: 443 }], ['tls.example.com']));
  const s = new Scenario(undefined, {}, [
    gateway('gateway-tlsroute-tls-passthrough-only', [passthrough('tls-passthrough', 443)]),
    gateway('gateway-tlsroute-http-only', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
    gateway('gateway-tlsroute-https-only', [
      { name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls-validity-checks-certificate' }] } },
    ]),
    r('tlsroute-not-allowed-protocol-http', { name: 'gateway-tlsroute-http-only' }),
    r('tlsroute-not-allowed-protocol-https', { name: 'gateway-tlsroute-https-only' }),
    r('tlsroute-no-matching-section-name', { name: 'gateway-tlsroute-tls-passthrough-only', sectionName: 'nonexistent-listener' }),
  ]);
  s.condition(s.routeParent('TLSRoute', 'tlsroute-not-allowed-protocol-http', 'gateway-tlsroute-http-only'), 'Accepted', 'False', 'NotAllowedByListeners');
  s.condition(s.routeParent('TLSRoute', 'tlsroute-not-allowed-protocol-https', 'gateway-tlsroute-https-only'), 'Accepted', 'False', 'NotAllowedByListeners');
  s.condition(s.routeParent('TLSRoute', 'tlsroute-no-matching-section-name', 'gateway-tlsroute-tls-passthrough-only'), 'Accepted', 'False', 'NoMatchingParent');
  for (const name of ['tlsroute-not-allowed-protocol-http', 'tlsroute-not-allowed-protocol-https', 'tlsroute-no-matching-section-name'])
    noAcceptedParents(s, 'TLSRoute', name);
  zeroRoutes(s, 'gateway-tlsroute-http-only');
  zeroRoutes(s, 'gateway-tlsroute-https-only');
});

conformance('TLSRouteInvalidReferenceGrant', { status: 'pass' }, () => {
  const gw = 'gateway-tlsroute-referencegrant';
  // Grants that each miss one fact: the namespace they live in, the from group, kind or namespace, the to group, kind or name.
  const grant = (name: string, namespace: string, from: Json, to: Json): Json => ({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: INFRA, ...from }],
      to: [{ group: '', kind: 'Service', name: 'tls-backend', ...to }],
    },
  });
  const s = new Scenario(undefined, {}, [
    grant('reference-grant-wrong-namespace', INFRA, {}, {}),
    grant('reference-grant-wrong-from-group', APP, { group: 'not-the-group-youre-looking-for' }, {}),
    grant('reference-grant-wrong-from-kind', APP, { kind: 'Gateway' }, {}),
    grant('reference-grant-wrong-from-namespace', APP, { namespace: 'not-the-namespace-youre-looking-for' }, {}),
    grant('reference-grant-wrong-to-group', APP, {}, { group: 'not-the-group-youre-looking-for' }),
    grant('reference-grant-wrong-to-kind', APP, {}, { kind: 'Gateway' }),
    grant('reference-grant-wrong-to-name', APP, {}, { name: 'not-the-service-youre-looking-for' }),
    gateway(gw, [passthrough('tls', 443)]),
    route('TLSRoute', 'gateway-conformance-infra-test', toBackends([{ name: gw }], [{ name: 'tls-backend', namespace: APP, port: 443 }], ['abc.example.com'])),
  ]);
  s.mustBeAccepted(gw, ['gateway-conformance-infra-test'], 'TLSRoute');
  s.condition(s.routeParent('TLSRoute', 'gateway-conformance-infra-test', gw), 'ResolvedRefs', 'False', 'RefNotPermitted');
  expectRejected(s, gw, { port: 443, ...tls('abc.example.com') });
});

conformance('BackendTLSPolicyTLSRouteTerminate', { status: 'pass' }, () => {
  const gw = 'gateway-btls-tlsroute-terminate';
  const [svc, slice] = backend('btls-terminate-tls-backend', { port: 8443 }) as [Json, Json];
  svc.spec.ports[0].name = 'btls';
  slice.ports[0].name = 'btls';
  // The Pods serve the suite's TLS backend certificate (abc.example.com), as base.yaml's TLS backends do.
  slice.endpoints = [{ addresses: ['10.244.4.10'], conditions: { ready: true } }];
  const s = new Scenario(undefined, {}, [
    svc,
    slice,
    terminateCertificate(),
    gateway(gw, [terminate('tls-terminate', 8443, 'tls.example.com')]),
    route(
      'TLSRoute',
      'backendtlspolicy-tlsroute-terminate',
      toBackends([{ name: gw }], [{ name: 'btls-terminate-tls-backend', port: 8443 }], ['tls.example.com']),
    ),
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'btls-tlsroute-terminate-test', namespace: INFRA },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'btls-terminate-tls-backend', sectionName: 'btls' }],
        validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'tls-checks-ca-certificate' }], hostname: 'abc.example.com' },
      },
    },
  ]);
  s.mustBeAccepted(gw, ['backendtlspolicy-tlsroute-terminate'], 'TLSRoute');
  const a = s.ancestor('BackendTLSPolicy', 'btls-tlsroute-terminate-test', gw);
  s.condition(a, 'Accepted', 'True', 'Accepted');
  s.condition(a, 'ResolvedRefs', 'True', 'ResolvedRefs');
  // Terminated on the Gateway, then TLS again to the backend, as the policy says.
  const u = expectBackend(s, gw, { port: 8443, ...tls('tls.example.com') }, 'btls-terminate-tls-backend');
  assert.deepEqual(u.backendTls, { by: 'envoy', sni: 'abc.example.com' });
});
