// BackendTLSPolicy beyond the upstream suite's tests: the system CA bundle, values extlb does not
// support, policies the API server would refuse, partly valid CA references, wildcard SANs,
// targets that are not Services, mirrors, gRPC backends behind TLS, and EDS clusters. Scenarios
// run on the conformance base (its Gateways, the TLS backends and the certificate they serve).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRPC, GRPC_ECHO, INFRA, Scenario, baseWorld, caCertificate } from './conformance/harness.js';

type Json = Record<string, any>;
const HOST = 'abc.example.com';
const GW = 'same-namespace';
const ca = (name = 'tls-checks-ca-certificate') => ({ group: '', kind: 'ConfigMap', name });
const policy = (name: string, validation: Json, extra: Json = {}): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name, namespace: INFRA },
  spec: { targetRefs: [{ group: '', kind: 'Service', name: 'tls-backend' }], validation: { hostname: HOST, ...validation }, ...extra },
});
const route = (rules: Json[], kind = 'HTTPRoute'): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind,
  metadata: { name: 'r', namespace: INFRA },
  spec: { parentRefs: [{ name: GW }], rules },
});
const toTls = { backendRefs: [{ name: 'tls-backend', port: 443 }] };
const ancestor = (s: Scenario, name: string) => s.ancestor('BackendTLSPolicy', name, GW);

test('wellKnownCACertificates System trusts the proxy system bundle (the systemCaFile option)', () => {
  const s = new Scenario(undefined, { systemCaFile: '/etc/pki/bundle.pem' }, [route([toTls]), policy('system', { wellKnownCACertificates: 'System' })]);
  const cluster = (s.gateway(GW).clusters as Json[]).find((c) => c.name === `svc/${INFRA}/tls-backend/443`);
  assert.deepEqual(cluster?.transport_socket.typed_config.common_tls_context.validation_context.trusted_ca, { filename: '/etc/pki/bundle.pem' });
  s.condition(ancestor(s, 'system'), 'Accepted', 'True', 'Accepted');
  // With the backend's issuer in the system bundle the handshake verifies; without it, it fails.
  s.world = { ...baseWorld(), files: { '/etc/pki/bundle.pem': caCertificate('tls-checks-ca-certificate').crt } };
  s.expect(GW, { request: { path: '/' }, backend: 'tls-backend', upstream: { sni: HOST } });
  s.world = { ...baseWorld(), files: { '/etc/pki/bundle.pem': caCertificate('mismatch-ca-certificate').crt } };
  s.expect(GW, { request: { path: '/' }, status: 503 });
});

test('an unsupported well-known CA set, or a policy the API server would refuse, is Invalid and its Service never goes plaintext', () => {
  for (const [p, message] of [
    [
      policy('custom', { wellKnownCACertificates: 'example.com/internal-cas' }),
      /wellKnownCACertificates "example\.com\/internal-cas" is not supported; only System is/,
    ],
    [
      policy('both', { wellKnownCACertificates: 'System', caCertificateRefs: [ca()] }),
      /spec\.validation: must not contain both CACertificateRefs and WellKnownCACertificates/,
    ],
    [policy('neither', {}), /spec\.validation: must specify either CACertificateRefs or WellKnownCACertificates/],
    [
      policy('san', { caCertificateRefs: [ca()], subjectAltNames: [{ type: 'URI', hostname: HOST }] }),
      /SubjectAltName element must contain URI, if Type is set to URI/,
    ],
  ] as const) {
    const s = new Scenario(undefined, {}, [route([toTls]), p]);
    const accepted = ancestor(s, p.metadata.name).Accepted;
    assert.equal(accepted?.reason, 'Invalid', JSON.stringify(accepted));
    assert.match(accepted?.message, message);
    s.condition(s.routeParent('HTTPRoute', 'r', GW), 'ResolvedRefs', 'False', 'InvalidBackendTLS');
    s.expect(GW, { request: { path: '/' }, status: 500 });
  }
});

test('one invalid CA reference among valid ones: ResolvedRefs is False, the valid bundle is trusted', () => {
  const s = new Scenario(undefined, {}, [
    route([toTls]),
    policy('partly', { caCertificateRefs: [ca('missing'), ca(), { group: '', kind: 'Secret', name: 's' }] }),
  ]);
  const c = ancestor(s, 'partly');
  s.condition(c, 'Accepted', 'True', 'Accepted');
  s.condition(c, 'ResolvedRefs', 'False', 'InvalidCACertificateRef');
  assert.equal(
    c.ResolvedRefs?.message,
    'spec.validation.caCertificateRefs[0]: ConfigMap gateway-conformance-infra/missing not found; spec.validation.caCertificateRefs[2]: Secret is not supported as a CA certificate reference; only ConfigMap is',
  );
  s.expect(GW, { request: { path: '/' }, backend: 'tls-backend', upstream: { sni: HOST } });
});

test('a ConfigMap whose ca.crt is not PEM is an invalid reference', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'junk', namespace: INFRA }, data: { 'ca.crt': 'not a certificate' } };
  const s = new Scenario(undefined, {}, [route([toTls]), policy('junk', { caCertificateRefs: [ca('junk')] }), cm]);
  const c = ancestor(s, 'junk');
  s.condition(c, 'Accepted', 'False', 'NoValidCACertificate');
  assert.match(c.ResolvedRefs?.message, /ConfigMap gateway-conformance-infra\/junk: ca\.crt holds no PEM certificate/);
});

test('a wildcard Hostname SAN matches one label; options are reported as unsupported', () => {
  const s = new Scenario(undefined, {}, [
    route([toTls]),
    policy(
      'wild',
      { caCertificateRefs: [ca()], subjectAltNames: [{ type: 'Hostname', hostname: '*.example.com' }] },
      { options: { 'example.com/min-version': '1.3' } },
    ),
  ]);
  s.condition(ancestor(s, 'wild'), 'Accepted', 'True', 'Accepted');
  s.expect(GW, { request: { path: '/' }, backend: 'tls-backend' });
  const option = s.result.diagnostics.find((d) => d.object?.name === 'wild');
  assert.deepEqual(option && [option.code, option.path, option.message], [
    'UnsupportedValue',
    'spec.options[example.com/min-version]',
    'option "example.com/min-version" is not supported and is ignored',
  ]);
  const wildcard = new Scenario(undefined, {}, [
    route([toTls]),
    policy('deeper', { caCertificateRefs: [ca()], subjectAltNames: [{ type: 'Hostname', hostname: '*.com' }] }),
  ]);
  wildcard.expect(GW, { request: { path: '/' }, status: 503 });
});

test('targets: a missing Service is TargetNotFound, a pool is not a target BackendTLSPolicy supports', () => {
  const s = new Scenario(undefined, {}, [
    policy('absent', { caCertificateRefs: [ca()] }, { targetRefs: [{ group: '', kind: 'Service', name: 'nowhere' }] }),
    policy('pool', { caCertificateRefs: [ca()] }, { targetRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'p' }] }),
  ]);
  s.condition(ancestor(s, 'absent'), 'Accepted', 'False', 'TargetNotFound');
  const pool = ancestor(s, 'pool').Accepted;
  assert.equal(pool?.reason, 'Invalid');
  assert.match(pool?.message, /no target is of a kind a BackendTLSPolicy applies to: InferencePool\.inference\.networking\.k8s\.io p/);
});

test('a mirror to a Service whose policy cannot be honoured is dropped and reported', () => {
  const s = new Scenario(undefined, {}, [
    route([
      {
        filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'tls-backend', port: 443 } } }],
        backendRefs: [{ name: 'infra-backend-v1', port: 8080 }],
      },
    ]),
    policy('broken', { caCertificateRefs: [ca('missing')] }),
  ]);
  s.condition(s.routeParent('HTTPRoute', 'r', GW), 'ResolvedRefs', 'False', 'InvalidBackendTLS');
  const o = s.request(GW, { path: '/' });
  assert.deepEqual(o.type === 'forward' && o.upstreams.flatMap((u) => u.mirrors), []);
  // Reported against the Gateway whose route references the Service, though it never resolved.
  assert.deepEqual(
    s.status('BackendTLSPolicy', 'broken').ancestors.map((a: Json) => a.ancestorRef.name),
    [GW],
  );
});

test('a gRPC backend behind TLS: HTTP/2 offered by ALPN, and the handshake verified', () => {
  const grpcTls = (name: string, hostname: string, caName?: string) => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: INFRA },
      spec: { selector: { app: 'grpc-infra-backend-v1' }, ports: [{ name: 'btls', port: 443, targetPort: 8443 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, namespace: INFRA, labels: { 'kubernetes.io/service-name': name } },
      ports: [{ name: 'btls', port: 8443 }],
      endpoints: [{ addresses: ['10.244.6.10'] }, { addresses: ['10.244.6.11'] }],
    },
    policy(name, { hostname, caCertificateRefs: [ca(caName)] }, { targetRefs: [{ group: '', kind: 'Service', name, sectionName: 'btls' }] }),
  ];
  const s = new Scenario(undefined, {}, [
    route(
      [
        { matches: [{ method: { service: GRPC_ECHO, method: 'Echo' } }], backendRefs: [{ name: 'grpc-tls', port: 443 }] },
        { matches: [{ method: { service: GRPC_ECHO, method: 'EchoTwo' } }], backendRefs: [{ name: 'grpc-tls-host-mismatch', port: 443 }] },
        { matches: [{ method: { service: GRPC_ECHO, method: 'EchoThree' } }], backendRefs: [{ name: 'grpc-tls-cert-mismatch', port: 443 }] },
      ],
      'GRPCRoute',
    ),
    ...grpcTls('grpc-tls', HOST),
    ...grpcTls('grpc-tls-host-mismatch', 'mismatch.example.com'),
    ...grpcTls('grpc-tls-cert-mismatch', HOST, 'mismatch-ca-certificate'),
  ]);
  const cluster = (s.gateway(GW).clusters as Json[]).find((c) => c.name === `svc/${INFRA}/grpc-tls/443`);
  assert.deepEqual(cluster?.transport_socket.typed_config.common_tls_context.alpn_protocols, ['h2']);
  s.expectGrpc(GW, { call: { method: 'Echo', authority: HOST }, backend: 'grpc-tls' });
  s.expectGrpc(GW, { call: { method: 'EchoTwo', authority: HOST }, code: GRPC.UNAVAILABLE });
  s.expectGrpc(GW, { call: { method: 'EchoThree', authority: HOST }, code: GRPC.UNAVAILABLE });
});

test('EDS clusters carry the same TLS, and the model connects to their assigned endpoints', () => {
  const s = new Scenario(undefined, { endpoints: 'eds' }, [route([toTls]), policy('eds', { caCertificateRefs: [ca('mismatch-ca-certificate')] })]);
  const cluster = (s.gateway(GW).clusters as Json[]).find((c) => c.name === `svc/${INFRA}/tls-backend/443`);
  assert.equal(cluster?.type, 'EDS');
  assert.equal(cluster?.transport_socket.typed_config.sni, HOST);
  s.expect(GW, { request: { path: '/' }, status: 503 });
});

test('a value that cannot be written as JSON (a cyclic object) is reported, not thrown', () => {
  const cyclic: Json = {};
  cyclic.self = cyclic;
  const s = new Scenario(undefined, {}, [route([toTls]), policy('cyclic', { caCertificateRefs: [ca()], subjectAltNames: [{ type: cyclic, hostname: HOST }] })]);
  assert.match(ancestor(s, 'cyclic').Accepted?.message, /Unsupported value: an object that contains itself/);
});
