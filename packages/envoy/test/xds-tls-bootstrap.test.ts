// The bootstrap's mutual TLS to the xDS server: the Gateway's identity over file-based SDS (the
// files of its identity Secret's mount, watched for Kubernetes' `..data` swaps), the server's name
// pinned; Envoy's protos and load rules accept it, and the SDS files it names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adsBootstrap, XDS_IDENTITY, xdsIdentitySdsFiles } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';

type Json = Record<string, any>;
const gateway = { kind: 'Gateway', namespace: 'shop', name: 'edge' };

test('adsBootstrap with xdsTls: client certificate and pinned CA over file-based SDS, the server name checked', () => {
  const bootstrap = adsBootstrap(gateway, { xdsServer: 'xds.example:18000', xdsTls: { serverName: 'xds.example' } }) as Json;
  for (const version of ['1.35', '1.38'] as const) assert.deepEqual(loadEnvoyValidator(version).validateBootstrap(bootstrap), [], `Envoy ${version}`);
  const tls = bootstrap.static_resources.clusters[0].transport_socket.typed_config;
  assert.equal(tls.sni, 'xds.example');
  const common = tls.common_tls_context;
  assert.deepEqual(common.alpn_protocols, ['h2'], 'gRPC');
  const sources = [common.tls_certificate_sds_secret_configs[0], common.combined_validation_context.validation_context_sds_secret_config].map(
    (s: Json) => s.sds_config.path_config_source,
  );
  assert.deepEqual(
    sources.map((s: Json) => [s.path, s.watched_directory.path]),
    [
      [`${XDS_IDENTITY.dir}/${XDS_IDENTITY.sdsCertificate}`, XDS_IDENTITY.dir],
      [`${XDS_IDENTITY.dir}/${XDS_IDENTITY.sdsValidation}`, XDS_IDENTITY.dir],
    ],
  );
  assert.deepEqual(common.combined_validation_context.default_validation_context.match_typed_subject_alt_names, [
    { san_type: 'DNS', matcher: { exact: 'xds.example' } },
  ]);
  const plain = adsBootstrap(gateway, { xdsServer: 'xds.example:18000' }) as Json;
  assert.equal(plain.static_resources.clusters[0].transport_socket, undefined, 'without xdsTls, plain text');
});

test('the SDS files name the Secret the bootstrap asks for and the files of the mount, as Envoy reads a Secret', () => {
  const files = xdsIdentitySdsFiles('/mnt/id');
  const validator = loadEnvoyValidator('1.38');
  const cert = JSON.parse(files[XDS_IDENTITY.sdsCertificate] as string).resources[0];
  const ca = JSON.parse(files[XDS_IDENTITY.sdsValidation] as string).resources[0];
  assert.deepEqual([cert.name, ca.name], [XDS_IDENTITY.clientSecret, XDS_IDENTITY.caSecret]);
  assert.deepEqual(cert.tls_certificate, {
    certificate_chain: { filename: '/mnt/id/tls.crt' },
    private_key: { filename: '/mnt/id/tls.key' },
    watched_directory: { path: '/mnt/id' },
  });
  assert.deepEqual(ca.validation_context, { trusted_ca: { filename: '/mnt/id/ca.crt' }, watched_directory: { path: '/mnt/id' } });
  for (const { '@type': type, ...secret } of [cert, ca]) {
    assert.equal(type, 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret');
    assert.deepEqual(validator.validateMessage('envoy.extensions.transport_sockets.tls.v3.Secret', secret), []);
  }
});

test("an SDS secret over ADS must still be among the secrets; one from a file is the file's", () => {
  const bootstrap = adsBootstrap(gateway, { xdsServer: 'xds.example:18000', xdsTls: { serverName: 'xds.example' } }) as Json;
  const overAds = structuredClone(bootstrap);
  overAds.static_resources.clusters[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].sds_config = {
    ads: {},
    resource_api_version: 'V3',
  };
  assert.ok(
    loadEnvoyValidator('1.38')
      .validateBootstrap(overAds)
      .some((i) => i.message === `SDS secret ${XDS_IDENTITY.clientSecret} is not among the secrets`),
  );
});
