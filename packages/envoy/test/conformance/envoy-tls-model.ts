// The TLS handshake of the Envoy model: what Envoy's downstream TLS transport socket
// (DownstreamTlsContext) does with a client on the filter chain SNI chose. A TLS chain needs a TLS
// client and a plain chain a plain one; the server presents the SDS secrets the chain names (they
// must be in the configuration, or Envoy would not have loaded it); with a validation context the
// client's certificate is asked for — required with `require_client_certificate`, checked against
// `trusted_ca` unless `trust_chain_verification` is ACCEPT_UNTRUSTED. Fields it does not know fail.
import { X509Certificate } from 'node:crypto';
import type { EnvoyConfig } from '../../src/index.js';

type Json = Record<string, any>;

export interface TlsClient {
  scheme?: 'http' | 'https';
  /** The client's certificate (PEM), when it presents one. */
  clientCertificate?: string;
}

export type Handshake = { ok: true; certificates: string[] } | { ok: false; reason: string };

const DOWNSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';

function known(o: Json, fields: string[], what: string): void {
  for (const k of Object.keys(o)) if (!fields.includes(k)) throw new Error(`the TLS model does not know ${what}.${k}`);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Whether a CA of the bundle issued and signed the certificate, and it is valid now. */
function trusted(certificate: X509Certificate, bundle: string): boolean {
  const now = Date.now();
  if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo)) return false;
  return (bundle.match(PEM_CERTIFICATE) ?? []).some((pem) => {
    const ca = new X509Certificate(pem);
    return certificate.checkIssued(ca) && certificate.verify(ca.publicKey);
  });
}

export function handshake(config: EnvoyConfig, chain: Json, client: TlsClient): Handshake {
  const ts = chain.transport_socket as Json | undefined;
  if (!ts) return client.scheme === 'https' ? { ok: false, reason: 'the filter chain does not speak TLS' } : { ok: true, certificates: [] };
  const tls = ts.typed_config as Json;
  if (tls['@type'] !== DOWNSTREAM_TLS) throw new Error(`the TLS model does not know transport socket ${tls['@type']}`);
  known(tls, ['@type', 'common_tls_context', 'require_client_certificate'], 'DownstreamTlsContext');
  if (client.scheme !== 'https') return { ok: false, reason: 'a plaintext client on a TLS filter chain' };
  const common = tls.common_tls_context as Json;
  // ALPN decides the HTTP version, which envoy-model.ts checks; any offer completes the handshake.
  known(common, ['alpn_protocols', 'tls_certificate_sds_secret_configs', 'validation_context'], 'CommonTlsContext');
  const certificates = (common.tls_certificate_sds_secret_configs as Json[]).map((c) => {
    const secret = config.secrets.find((s) => s.name === c.name);
    if (!secret) throw new Error(`secret ${c.name} is not in the configuration; Envoy would not load it`);
    return String(c.name);
  });
  const validation = common.validation_context as Json | undefined;
  if (!validation) return { ok: true, certificates };
  known(validation, ['trusted_ca', 'trust_chain_verification'], 'CertificateValidationContext');
  if (client.clientCertificate === undefined) {
    return tls.require_client_certificate === true ? { ok: false, reason: 'a client certificate is required' } : { ok: true, certificates };
  }
  if (validation.trust_chain_verification === 'ACCEPT_UNTRUSTED') return { ok: true, certificates };
  if (!trusted(new X509Certificate(client.clientCertificate), validation.trusted_ca.inline_string)) {
    return { ok: false, reason: 'the client certificate is not issued by a trusted CA' };
  }
  return { ok: true, certificates };
}
