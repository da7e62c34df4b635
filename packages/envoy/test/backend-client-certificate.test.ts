// A Gateway's backend client certificate (spec.tls.backend.clientCertificateRef): resolved onto the
// IR Gateway, presented by every TLS cluster of that Gateway as an SDS secret (the listeners'
// naming and delivery), to backends the Envoy model checks it with; an invalid reference is a
// Gateway condition and leaves the backends without a client certificate. Scenarios run on the
// conformance base (its Gateways, the TLS backends, the certificate Secrets).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toBootstrap, toXds } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { INFRA, Scenario, WEB, baseWorld, caCertificate, tlsBackendCertificate } from './conformance/harness.js';

type Json = Record<string, any>;
const GW = 'same-namespace';
const HOST = 'abc.example.com';
const CLIENT = 'tls-checks-client-certificate';
const ADS = { ads: {}, resource_api_version: 'V3' };

const policy = (service: string): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name: service, namespace: INFRA },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: service }],
    validation: { hostname: HOST, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'tls-checks-ca-certificate' }] },
  },
});
const route: Json = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'r', namespace: INFRA },
  spec: {
    parentRefs: [{ name: GW }],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/one' } }], backendRefs: [{ name: 'tls-backend', port: 443 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/two' } }], backendRefs: [{ name: 'tls-backend-2', port: 443 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/plain' } }], backendRefs: [{ name: 'infra-backend-v1', port: 8080 }] },
    ],
  },
};
const grant: Json = {
  apiVersion: 'gateway.networking.k8s.io/v1beta1',
  kind: 'ReferenceGrant',
  metadata: { name: 'client-certificate', namespace: WEB },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: INFRA }], to: [{ group: '', kind: 'Secret' }] },
};

/** The base's `same-namespace` Gateway with this backend client certificate reference, routing to two TLS Services and a cleartext one. */
function withClientCertificate(ref: Json | undefined, extra: Json[] = []): Scenario {
  const changes = ref ? [{ kind: 'Gateway', name: GW, apply: (g: Json) => (g.spec.tls = { backend: { clientCertificateRef: ref } }) }] : [];
  return new Scenario(undefined, {}, [route, policy('tls-backend'), policy('tls-backend-2'), ...extra], { changes });
}

const cluster = (list: Json[], service: string) => list.find((c) => c.name === `svc/${INFRA}/${service}/${service.startsWith('tls') ? 443 : 8080}`) as Json;
const presented = (c: Json) => c.transport_socket?.typed_config.common_tls_context.tls_certificate_sds_secret_configs;

test('every TLS cluster of the Gateway presents its client certificate as one SDS secret; cleartext clusters present none', () => {
  const s = withClientCertificate({ name: CLIENT });
  s.condition(s.gatewayConditions(GW), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const ir = s.result.ir.gateways.find((g) => g.name === `${INFRA}/${GW}`);
  assert.deepEqual(ir?.backendClientCertificate, { namespace: INFRA, name: CLIENT });
  const config = s.gateway(GW);
  const xds = toXds(config) as Json;
  for (const service of ['tls-backend', 'tls-backend-2'])
    assert.deepEqual(presented(cluster(xds.clusters, service)), [{ name: `${INFRA}/${CLIENT}`, sds_config: ADS }]);
  assert.equal(cluster(xds.clusters, 'infra-backend-v1').transport_socket, undefined);
  // One secret however many clusters name it; the key is in it, never in a cluster.
  assert.deepEqual(
    config.secrets.map((x) => x.name),
    [`${INFRA}/${CLIENT}`],
  );
  const secret = s.object('Secret', CLIENT);
  assert.equal((config.secrets[0] as Json).tls_certificate.private_key.inline_string, Buffer.from(secret.data['tls.key'], 'base64').toString());
  assert.ok(!JSON.stringify(config.clusters).includes('PRIVATE KEY'), 'no cluster carries a private key');
  // A bootstrap names it as a static secret.
  const bootstrap = toBootstrap(config) as Json;
  assert.deepEqual(presented(cluster(bootstrap.static_resources.clusters, 'tls-backend')), [{ name: `${INFRA}/${CLIENT}` }]);
  assert.deepEqual(
    bootstrap.static_resources.secrets.map((x: Json) => x.name),
    [`${INFRA}/${CLIENT}`],
  );
});

test('a backend that requires a client certificate from its CA accepts the Gateway’s, and refuses a connection without one (503)', () => {
  const clients = { ca: caCertificate('tls-checks-ca-certificate').crt, required: true };
  const endpoints = Object.fromEntries(
    ['10.244.4.10:8443', '10.244.4.11:8443'].map((a) => [a, { tls: { certificate: tlsBackendCertificate().crt, clients } }]),
  );
  const world = { ...baseWorld(), endpoints: { ...baseWorld().endpoints, ...endpoints } };
  const request = { path: '/one' };
  const s = withClientCertificate({ name: CLIENT });
  s.world = world;
  const pem = Buffer.from(s.object('Secret', CLIENT).data['tls.crt'], 'base64').toString();
  s.expect(GW, { request, backend: 'tls-backend', upstream: { sni: HOST, clientCertificate: pem } });
  const without = withClientCertificate(undefined);
  without.world = world;
  without.expect(GW, { request, status: 503 });
  const failure = without.request(GW, request);
  assert.match(failure.type === 'forward' ? String(failure.upstreams[0]?.failure) : '', /requires a client certificate and Envoy presents none/);
});

test('a Secret in another namespace is presented when a ReferenceGrant allows it; without one the Gateway says RefNotPermitted', () => {
  const ref = { name: 'certificate', namespace: WEB };
  const granted = withClientCertificate(ref, [grant]);
  granted.condition(granted.gatewayConditions(GW), 'ResolvedRefs', 'True', 'ResolvedRefs');
  assert.deepEqual(presented(cluster(granted.gateway(GW).clusters, 'tls-backend')), [{ name: `${WEB}/certificate`, sds_config: ADS }]);

  const refused = withClientCertificate(ref);
  refused.condition(refused.gatewayConditions(GW), 'ResolvedRefs', 'False', 'RefNotPermitted');
  const d = refused.diagnostic('RefNotPermitted', 'Gateway', GW);
  assert.equal(d.path, 'spec.tls.backend.clientCertificateRef');
  assert.equal(presented(cluster(refused.gateway(GW).clusters, 'tls-backend')), undefined);
  assert.deepEqual(refused.gateway(GW).secrets, []);
});

test('an invalid reference is InvalidClientCertificateRef: the Gateway stays Accepted, its backends get no client certificate', () => {
  const opaque: Json = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'opaque', namespace: INFRA }, type: 'Opaque', data: { token: 'eA==' } };
  for (const [ref, message] of [
    [{ name: 'missing' }, `Secret ${INFRA}/missing not found`],
    [{ name: 'opaque' }, `Secret ${INFRA}/opaque is of type Opaque; a certificate must be in a Secret of type kubernetes.io/tls`],
    [{ group: '', kind: 'ConfigMap', name: 'tls-checks-ca-certificate' }, 'refers to a ConfigMap; only Secrets are supported'],
  ] as const) {
    const s = withClientCertificate(ref, [opaque]);
    const conditions = s.gatewayConditions(GW);
    s.condition(conditions, 'ResolvedRefs', 'False', 'InvalidClientCertificateRef');
    s.condition(conditions, 'Accepted', 'True', 'Accepted');
    assert.match(conditions.ResolvedRefs?.message, new RegExp(`^spec\\.tls\\.backend\\.clientCertificateRef: ${message.replaceAll('.', '\\.')}`));
    assert.equal(s.result.ir.gateways.find((g) => g.name === `${INFRA}/${GW}`)?.backendClientCertificate, undefined, message);
    for (const service of ['tls-backend', 'tls-backend-2']) assert.equal(presented(cluster(s.gateway(GW).clusters, service)), undefined, message);
    assert.deepEqual(s.gateway(GW).secrets, [], message);
  }
});

test('the validator refuses a client context Envoy would not load: an unknown secret, or two certificates', () => {
  const config = withClientCertificate({ name: CLIENT }).gateway(GW);
  const validator = loadEnvoyValidator('1.35');
  const unsent = toXds(config) as Json;
  unsent.secrets = [];
  assert.ok(validator.validateXds(unsent).some((i) => i.message === `SDS secret ${INFRA}/${CLIENT} is not among the secrets`));
  const two = toBootstrap(config) as Json;
  const configs = presented(cluster(two.static_resources.clusters, 'tls-backend'));
  configs.push({ ...configs[0] });
  assert.ok(validator.validateBootstrap(two).some((i) => i.message === 'Multiple TLS certificates are not supported for client contexts'));
  const unknown = toBootstrap(config) as Json;
  unknown.static_resources.secrets = [];
  assert.ok(validator.validateBootstrap(unknown).some((i) => i.message === `Unknown static secret: ${INFRA}/${CLIENT}`));
});
