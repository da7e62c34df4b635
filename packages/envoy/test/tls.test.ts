// HTTPS listeners: a certificate reaches the output only from a Secret that was checked, as an SDS
// secret the listener names (never a private key in the listener), and Envoy's load rules for TLS
// are checked by the validator.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ConvertResult, convert, toBootstrap, toXds } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { readObjects } from './golden.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const objects = readObjects(fileURLToPath(new URL('./scenarios/route-features/input.yaml', import.meta.url))) as Json[];
const secret = objects.find((o) => o.kind === 'Secret') as Json;
const validator = loadEnvoyValidator('1.35');

/** route-features with its certificate Secret replaced. */
function withSecret(replacement: Json | undefined): ConvertResult {
  return convert([...objects.filter((o) => o !== secret), ...(replacement ? [replacement] : [])], { now: NOW });
}

function httpsListener(r: ConvertResult): Json {
  const s = r.statuses.find((x) => x.kind === 'Gateway') as Json;
  return s.status.listeners.find((l: Json) => l.name === 'https');
}

test('a checked certificate is an SDS secret: the bootstrap holds it as a static secret, xDS sends it, no listener holds the key', () => {
  const r = withSecret(secret);
  const config = r.gateways['default/web'] as NonNullable<ConvertResult['gateways'][string]>;
  assert.deepEqual(
    config.secrets.map((s) => s.name),
    ['default/shop-cert'],
  );
  const key = secret.stringData['tls.key'] as string;
  assert.equal((config.secrets[0] as Json).tls_certificate.private_key.inline_string, key);
  assert.ok(!JSON.stringify(config.listeners).includes('PRIVATE KEY'), 'no listener carries a private key');

  const bootstrap = toBootstrap(config) as Json;
  assert.deepEqual(
    bootstrap.static_resources.secrets.map((s: Json) => s.name),
    ['default/shop-cert'],
  );
  const tls = (l: Json) => l.filter_chains.find((c: Json) => c.transport_socket).transport_socket.typed_config.common_tls_context;
  const https = (list: Json[]) => list.find((l) => l.name === 'default/web/8443') as Json;
  assert.deepEqual(tls(https(bootstrap.static_resources.listeners)).tls_certificate_sds_secret_configs, [{ name: 'default/shop-cert' }]);
  const xds = toXds(config) as Json;
  assert.deepEqual(tls(https(xds.listeners)).tls_certificate_sds_secret_configs, [
    { name: 'default/shop-cert', sds_config: { ads: {}, resource_api_version: 'V3' } },
  ]);
  assert.equal(xds.secrets[0]['@type'], 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret');
  assert.deepEqual(validator.validateBootstrap(bootstrap), []);
  assert.deepEqual(validator.validateXds(xds), []);
});

test('a Secret that is not a usable certificate is InvalidCertificateRef, and nothing of it reaches the output', () => {
  const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const cases: [string, Json | undefined][] = [
    ['Secret default/shop-cert not found', undefined],
    ['Secret default/shop-cert is of type Opaque; a certificate must be in a Secret of type kubernetes.io/tls', { ...secret, type: 'Opaque' }],
    ['Secret default/shop-cert needs both tls.crt and tls.key', { ...secret, stringData: { 'tls.crt': secret.stringData['tls.crt'] } }],
    [
      'Secret default/shop-cert is not a usable certificate: tls.crt holds no PEM certificate',
      { ...secret, stringData: { ...secret.stringData, 'tls.crt': 'not a certificate' } },
    ],
    [
      'Secret default/shop-cert is not a usable certificate: tls.key holds no PEM private key that can be parsed',
      { ...secret, stringData: { ...secret.stringData, 'tls.key': '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' } },
    ],
    [
      'Secret default/shop-cert is not a usable certificate: tls.key is not the private key of the first certificate in tls.crt',
      { ...secret, stringData: { ...secret.stringData, 'tls.key': otherKey } },
    ],
  ];
  for (const [message, replacement] of cases) {
    const r = withSecret(replacement);
    const found = r.diagnostics.filter((d) => d.code === 'InvalidCertificateRef');
    assert.deepEqual(
      found.map((d) => [d.message, d.path]),
      [[message, 'spec.listeners[1].tls.certificateRefs[0]']],
    );
    const conditions = Object.fromEntries(httpsListener(r).conditions.map((c: Json) => [c.type, c]));
    assert.equal(conditions.ResolvedRefs.reason, 'InvalidCertificateRef', message);
    assert.equal(conditions.Programmed.status, 'False', message);
    const config = r.gateways['default/web'] as NonNullable<ConvertResult['gateways'][string]>;
    assert.deepEqual(config.secrets, [], message);
    assert.ok(!config.listeners.some((l) => l.name === 'default/web/8443'), `${message}: the HTTPS listener is not served`);
  }
});

test('the validator refuses TLS that Envoy would not load', () => {
  const config = withSecret(secret).gateways['default/web'] as NonNullable<ConvertResult['gateways'][string]>;
  const bootstrap = toBootstrap(config) as Json;
  const missing = structuredClone(bootstrap);
  missing.static_resources.secrets = [];
  assert.ok(
    validator.validateBootstrap(missing).some((i) => i.message === 'Unknown static secret: default/shop-cert'),
    'a static secret the listener names must exist',
  );
  const broken = structuredClone(bootstrap);
  broken.static_resources.secrets[0].tls_certificate.private_key.inline_string = 'nothing';
  assert.ok(
    validator.validateBootstrap(broken).some((i) => i.message.startsWith('Failed to load the certificate of secret default/shop-cert')),
    'inline PEM must load',
  );
  const xds = toXds(config) as Json;
  const noCertificate = structuredClone(xds);
  for (const l of noCertificate.listeners) {
    for (const c of l.filter_chains) if (c.transport_socket) c.transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs = [];
  }
  assert.ok(
    validator.validateXds(noCertificate).some((i) => i.message === 'No TLS certificates found for server context'),
    'a server context needs a certificate',
  );
  const unsent = structuredClone(xds);
  unsent.secrets = [];
  assert.ok(
    validator.validateXds(unsent).some((i) => i.message === 'SDS secret default/shop-cert is not among the secrets'),
    'an SDS secret must be sent',
  );
});
