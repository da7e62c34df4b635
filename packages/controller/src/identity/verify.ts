// Which Gateway a stream may have: the peer certificate of its gRPC call → its SPIFFE ID → the
// Gateway that ID names, compared with the Gateway the stream claims in node.cluster. The TLS
// handshake asks every client for a certificate but lets it in without one, so that a refusal can
// be a gRPC status (PERMISSION_DENIED) naming the claimed Gateway rather than a failed handshake;
// the check here is what keeps a stream from any resource. gRPC hands over the peer certificate
// only when the handshake verified it against the trust bundle in force then; it is checked again
// here against the bundle in force now and the time now, since a connection outlives both.
import { X509Certificate } from 'node:crypto';
import type { PeerAuth } from '../xds/stream.js';
import { gatewayOfIdentity } from './spiffe.js';
import { parseBundle, uriNames } from './x509.js';

export type Refusal =
  /** No certificate, or one the TLS handshake did not verify: none, expired, or from a CA the controller does not trust. */
  | 'no-trusted-certificate'
  | 'expired'
  | 'untrusted-issuer'
  /** Trusted, but names no Gateway (no SPIFFE ID of the trust domain, or more than one). */
  | 'no-gateway-identity'
  /** Trusted, naming another Gateway than the stream claims. */
  | 'other-gateway';

/** `expiresAt`: when the certificate stops being valid (ms since the epoch); a stream it admitted is verified again then. */
export type Verdict = { allowed: true; identity: string; expiresAt: number } | { allowed: false; reason: Refusal; identity?: string; message: string };

export interface TrustAnchors {
  trustDomain: string;
  /** The CA certificates trusted now. */
  cas: readonly X509Certificate[];
}

export function trustAnchors(trustDomain: string, bundlePem: string): TrustAnchors {
  return { trustDomain, cas: parseBundle(bundlePem) };
}

function issuedByTrusted(cert: X509Certificate, cas: readonly X509Certificate[]): boolean {
  return cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
}

/**
 * Whether the peer of a call may be a proxy of `claimed` (`<namespace>/<name>`). `auth` is the
 * call's `getAuthContext()`.
 */
export function verifyPeer(auth: PeerAuth | null | undefined, claimed: string, anchors: TrustAnchors, now = Date.now()): Verdict {
  const raw = auth?.transportSecurityType === 'ssl' ? auth.sslPeerCertificate?.raw : undefined;
  if (!raw) {
    return {
      allowed: false,
      reason: 'no-trusted-certificate',
      message: "no client certificate signed by the controller's CA was presented (none, expired, or from another CA); mount the Gateway's xDS identity Secret",
    };
  }
  const cert = new X509Certificate(raw);
  if (now < Date.parse(cert.validFrom) || now >= Date.parse(cert.validTo)) {
    return { allowed: false, reason: 'expired', message: `the client certificate is valid from ${cert.validFrom} to ${cert.validTo}, not now` };
  }
  if (!issuedByTrusted(cert, anchors.cas)) {
    return { allowed: false, reason: 'untrusted-issuer', message: 'the client certificate was not signed by a CA the controller trusts now' };
  }
  const gateways = uriNames(cert).flatMap((uri) => {
    const gateway = gatewayOfIdentity(anchors.trustDomain, uri);
    return gateway === undefined ? [] : [{ uri, gateway }];
  });
  const [only] = gateways;
  if (gateways.length !== 1 || !only) {
    return {
      allowed: false,
      reason: 'no-gateway-identity',
      message: `the client certificate names ${gateways.length === 0 ? 'no' : 'more than one'} Gateway of trust domain ${anchors.trustDomain}`,
    };
  }
  if (only.gateway !== claimed) {
    return { allowed: false, reason: 'other-gateway', identity: only.uri, message: `the client certificate is Gateway ${only.gateway}'s, not ${claimed}'s` };
  }
  return { allowed: true, identity: only.uri, expiresAt: Date.parse(cert.validTo) };
}
