// TLS certificates as SDS Secrets (named after their Kubernetes Secret, delivered over ADS, or
// inlined as static secrets by a bootstrap), so neither a listener nor a cluster holds a private
// key and a rotated certificate rebuilds neither: the certificates HTTPS servers present, and the
// client certificate clusters present to their backends. Also the downstream TLS of an HTTPS
// server, with the client validation the Gateway asks for (its CA bundles inline: they are public).
import type { DiagnosticCode } from '../diagnostics.js';
import type { CertificateRef, ServerTls } from '../resolve/index.js';
import type { BuildContext } from './context.js';
import { NAME, TYPE } from './names.js';
import type { CoreV3, TlsV3 } from './types.js';

/** Where SDS secrets come from: the ADS stream (a bootstrap drops it for static ones). */
const SDS_SOURCE: CoreV3.ConfigSource = { ads: {}, resource_api_version: 'V3' };

function secretName(c: CertificateRef): string {
  return `${c.namespace}/${c.name}`;
}

/** What goes on without a certificate whose PEM the lookup no longer has. */
export interface MissingCertificate {
  code: DiagnosticCode;
  /** What is served or connected without it. */
  consequence: string;
}

/** Adds the certificate's SDS Secret to the configuration; false when its PEM is not there. */
function addSecret(c: CertificateRef, ctx: BuildContext, missing: MissingCertificate): boolean {
  const name = secretName(c);
  if (ctx.secrets.has(name)) return true;
  const pair = ctx.certificates.keyPair(c.namespace, c.name);
  if (!pair) {
    // The resolve stage checked this Secret; a lookup that no longer has it is out of date.
    ctx.diags.error(missing.code, `Secret ${name} has no certificate and key to present; ${missing.consequence}`, ctx.gateway.ref);
    return false;
  }
  ctx.secrets.set(name, {
    name,
    tls_certificate: { certificate_chain: { inline_string: pair.certificateChain }, private_key: { inline_string: pair.privateKey } },
  });
  return true;
}

/** `tls_certificate_sds_secret_configs` naming these certificates, each added to the configuration's secrets once. */
export function sdsCertificates(certificates: CertificateRef[], ctx: BuildContext, missing: MissingCertificate): TlsV3.SdsSecretConfig[] {
  return certificates.filter((c) => addSecret(c, ctx, missing)).map((c) => ({ name: secretName(c), sds_config: SDS_SOURCE }));
}

/** The CA certificates client certificates are checked against, one PEM bundle. */
function trustedCa(tls: NonNullable<ServerTls['clientValidation']>, ctx: BuildContext): string {
  return tls.caCertificates
    .flatMap((c) => ctx.certificates.caBundle(c.namespace, c.name) ?? [])
    .map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`))
    .join('');
}

/** `http`: an HTTPS server, which offers HTTP/2 and HTTP/1.1 by ALPN; `stream`: a terminating TLS listener, which offers none (what is inside is not Envoy's to speak). */
export function downstreamTls(tls: ServerTls, ctx: BuildContext, carries: 'http' | 'stream' = 'http'): CoreV3.TransportSocket {
  const common: TlsV3.CommonTlsContext = {
    // HTTP/2 must be offered by ALPN: gRPC clients (GRPCRoute) need it over TLS.
    ...(carries === 'http' ? { alpn_protocols: ['h2', 'http/1.1'] } : {}),
    tls_certificate_sds_secret_configs: sdsCertificates(tls.certificates, ctx, {
      code: 'InvalidCertificateRef',
      consequence: 'the listener is served without it',
    }),
  };
  const context: TlsV3.DownstreamTlsContext = { common_tls_context: common };
  const validation = tls.clientValidation;
  if (validation) {
    const vc: TlsV3.CertificateValidationContext = { trusted_ca: { inline_string: trustedCa(validation, ctx) } };
    // AllowInsecureFallback: a certificate is asked for but neither required nor trusted.
    if (validation.mode === 'AllowInsecureFallback') vc.trust_chain_verification = 'ACCEPT_UNTRUSTED';
    common.validation_context = vc;
    if (validation.mode === 'AllowValidOnly') context.require_client_certificate = true;
  }
  return { name: NAME.tls, typed_config: { '@type': TYPE.downstreamTls, ...context } };
}
