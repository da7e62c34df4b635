// Downstream TLS of an HTTPS server: its certificates as SDS Secrets (named after their Kubernetes
// Secret, delivered over ADS, or inlined as static secrets by a bootstrap), so a listener never
// holds a private key and a rotated certificate does not rebuild the listener; and the client
// validation the Gateway asks for, with its CA bundles inline (they are public).
import type { JsonObject } from '../json.js';
import type { CertificateRef, ServerTls } from '../resolve/index.js';
import type { BuildContext } from './context.js';
import { NAME, TYPE } from './names.js';

/** Where a listener's SDS secrets come from: the ADS stream (a bootstrap drops it for static ones). */
const SDS_SOURCE = { ads: {}, resource_api_version: 'V3' };

function secretName(c: CertificateRef): string {
  return `${c.namespace}/${c.name}`;
}

/** Adds the certificate's SDS Secret to the configuration; false when its PEM is not there. */
function addSecret(c: CertificateRef, ctx: BuildContext): boolean {
  const name = secretName(c);
  if (ctx.secrets.has(name)) return true;
  const pair = ctx.certificates.keyPair(c.namespace, c.name);
  if (!pair) {
    // The resolve stage checked this Secret; a lookup that no longer has it is out of date.
    ctx.diags.error('InvalidCertificateRef', `Secret ${name} has no certificate to serve; the listener is served without it`, ctx.gateway.ref);
    return false;
  }
  ctx.secrets.set(name, {
    name,
    tls_certificate: { certificate_chain: { inline_string: pair.certificateChain }, private_key: { inline_string: pair.privateKey } },
  });
  return true;
}

/** The CA certificates client certificates are checked against, one PEM bundle. */
function trustedCa(tls: NonNullable<ServerTls['clientValidation']>, ctx: BuildContext): string {
  return tls.caCertificates
    .flatMap((c) => ctx.certificates.caBundle(c.namespace, c.name) ?? [])
    .map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`))
    .join('');
}

export function downstreamTls(tls: ServerTls, ctx: BuildContext): JsonObject {
  const common: JsonObject = {
    // HTTP/2 must be offered by ALPN: gRPC clients (GRPCRoute) need it over TLS.
    alpn_protocols: ['h2', 'http/1.1'],
    tls_certificate_sds_secret_configs: tls.certificates.filter((c) => addSecret(c, ctx)).map((c) => ({ name: secretName(c), sds_config: SDS_SOURCE })),
  };
  const context: JsonObject = { common_tls_context: common };
  const validation = tls.clientValidation;
  if (validation) {
    const vc: JsonObject = { trusted_ca: { inline_string: trustedCa(validation, ctx) } };
    // AllowInsecureFallback: a certificate is asked for but neither required nor trusted.
    if (validation.mode === 'AllowInsecureFallback') vc.trust_chain_verification = 'ACCEPT_UNTRUSTED';
    common.validation_context = vc;
    if (validation.mode === 'AllowValidOnly') context.require_client_certificate = true;
  }
  return { name: NAME.tls, typed_config: { '@type': TYPE.downstreamTls, ...context } };
}
