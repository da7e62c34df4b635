// The CA's state and how it rotates, as pure functions of the state and the time; its Secret's
// form. A new CA is trusted before it signs and an old one stays trusted until every certificate it
// signed has expired, so no verifier ever meets a certificate from a CA it does not trust yet:
//
//   T            a new CA is made and added to the trust bundle (pending: trusted, not signing)
//   T + leaf     it becomes the active CA and signs; the old one is retired (trusted, not signing)
//   T + 2·leaf   the old one leaves the bundle: every certificate it signed expired by then
//
// `leaf` is the longest life of any certificate the CA signs: every proxy's Secret (rewritten as
// soon as the bundle changes, and at each renewal) and every replica (which watches the CA Secret)
// has the new bundle long before the new CA signs anything.
import { X509Certificate } from 'node:crypto';
import { type KeyPair, generateCa, parseBundle } from './x509.js';

export interface CaPolicy {
  /** Life of a CA the controller makes. */
  caLifetimeMs: number;
  /** Longest life of a certificate it signs (proxies' and the xDS server's). */
  leafLifetimeMs: number;
}

export const DEFAULT_CA_POLICY: CaPolicy = { caLifetimeMs: 365 * 24 * 3600_000, leafLifetimeMs: 12 * 3600_000 };

/** A certificate is renewed once this share of its life has passed. */
export const RENEW_AT = 2 / 3;
/** Certificates start this long before they are made, for clocks a little behind. */
export const BACKDATE_MS = 5 * 60_000;

export interface CaState {
  /** The CA that signs. */
  active: KeyPair;
  /** The next CA: trusted now, signing from `signsAfter`. */
  pending?: { pair: KeyPair; signsAfter: Date };
  /** The previous CA: trusted until `trustedUntil`, when the last certificate it signed has expired. */
  retired?: { certPem: string; trustedUntil: Date };
  /** Made by the operator (cert-manager): the controller never rotates it and trusts `extraTrust` too. */
  external?: boolean;
  extraTrust?: string;
}

/** Every CA certificate a verifier must trust now, PEM. */
export function trustBundle(state: CaState): string {
  const pems = [state.active.certPem, state.pending?.pair.certPem, state.retired?.certPem, state.extraTrust];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const pem of pems) {
    if (!pem) continue;
    for (const cert of parseBundle(pem)) {
      if (seen.has(cert.fingerprint256)) continue;
      seen.add(cert.fingerprint256);
      out.push(cert.toString().trim());
    }
  }
  return `${out.join('\n')}\n`;
}

/** When a certificate the controller made was made (its start is backdated) and when it expires. */
export const lifeOf = (cert: X509Certificate) => ({ from: Date.parse(cert.validFrom) + BACKDATE_MS, to: Date.parse(cert.validTo) });

/** When the active CA starts its successor: at 2/3 of its life, and no later than two leaf lives (and a margin) before it expires. */
export function rotationStartsAt(state: CaState, policy: CaPolicy): number {
  const { from, to } = lifeOf(new X509Certificate(state.active.certPem));
  return Math.min(from + (to - from) * RENEW_AT, to - 3 * policy.leafLifetimeMs);
}

/** A new CA valid for the policy's CA lifetime. */
export async function newCa(now: number, policy: CaPolicy): Promise<KeyPair> {
  return generateCa(`extlb xDS CA ${new Date(now).toISOString()}`, { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + policy.caLifetimeMs) });
}

/**
 * The state the CA should be in at `now`, and whether that is a change. Steps: a retired CA whose
 * certificates have all expired leaves; a pending CA whose time has come becomes active (the
 * active one retires); an active CA due for rotation gets a pending successor.
 */
export async function rotate(state: CaState, now: number, policy: CaPolicy): Promise<{ state: CaState; changed: boolean; steps: string[] }> {
  if (state.external) return { state, changed: false, steps: [] };
  let next: CaState = { ...state };
  const steps: string[] = [];
  if (next.retired && now >= next.retired.trustedUntil.getTime()) {
    next = { ...next, retired: undefined };
    delete next.retired;
    steps.push('retired CA no longer trusted');
  }
  if (next.pending && now >= next.pending.signsAfter.getTime() && !next.retired) {
    next = { active: next.pending.pair, retired: { certPem: next.active.certPem, trustedUntil: new Date(now + policy.leafLifetimeMs) } };
    steps.push('pending CA now signs; the previous one is retired');
  }
  if (!next.pending && !next.retired && now >= rotationStartsAt(next, policy)) {
    next = { ...next, pending: { pair: await newCa(now, policy), signsAfter: new Date(now + policy.leafLifetimeMs) } };
    steps.push('new CA trusted; it signs after one leaf lifetime');
  }
  return { state: next, changed: steps.length > 0, steps };
}

/** The next time `rotate` has something to do. */
export function nextRotationAt(state: CaState, policy: CaPolicy): number {
  if (state.external) return Number.POSITIVE_INFINITY;
  if (state.retired) return state.retired.trustedUntil.getTime();
  if (state.pending) return state.pending.signsAfter.getTime();
  return rotationStartsAt(state, policy);
}

// ---- The Secret -----------------------------------------------------------------------------

export const CA_SECRET_TYPE = 'extlb.dev/xds-ca';
const PENDING_SIGNS_AFTER = 'extlb.dev/pending-signs-after';
const RETIRED_TRUSTED_UNTIL = 'extlb.dev/retired-trusted-until';

type Json = Record<string, unknown>;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString() : undefined);

/** The CA Secret's body: the active CA as `tls.crt`/`tls.key`, the bundle as `ca.crt`, the pending and retired CAs beside them. */
export function caSecret(namespace: string, name: string, state: CaState): Json {
  const data: Record<string, string> = { 'tls.crt': b64(state.active.certPem), 'tls.key': b64(state.active.keyPem), 'ca.crt': b64(trustBundle(state)) };
  const annotations: Record<string, string> = {};
  if (state.pending) {
    data['pending.crt'] = b64(state.pending.pair.certPem);
    data['pending.key'] = b64(state.pending.pair.keyPem);
    annotations[PENDING_SIGNS_AFTER] = state.pending.signsAfter.toISOString();
  }
  if (state.retired) {
    data['retired.crt'] = b64(state.retired.certPem);
    annotations[RETIRED_TRUSTED_UNTIL] = state.retired.trustedUntil.toISOString();
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'extlb', 'app.kubernetes.io/component': 'xds-ca' }, annotations },
    type: CA_SECRET_TYPE,
    data,
  };
}

function time(value: unknown, what: string): Date {
  const t = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) throw new Error(`${what} is not a time: ${JSON.stringify(value)}`);
  return new Date(t);
}

/** Reads a CA Secret: the controller's own, or (external) one the operator's tooling keeps (`tls.crt`, `tls.key`, optional `ca.crt`). */
export function readCaSecret(secret: Json, external: boolean): CaState {
  const meta = (secret.metadata ?? {}) as Json;
  const where = `Secret ${String(meta.namespace)}/${String(meta.name)}`;
  const data = (secret.data ?? {}) as Json;
  const certPem = unb64(data['tls.crt']);
  const keyPem = unb64(data['tls.key']);
  if (!certPem || !keyPem) throw new Error(`${where} has no data["tls.crt"] and data["tls.key"]: it cannot be the xDS CA`);
  const [cert] = parseBundle(certPem);
  if (!cert?.ca) throw new Error(`${where} data["tls.crt"] is not a CA certificate (basicConstraints CA:TRUE)`);
  if (external) return { active: { certPem, keyPem }, external: true, extraTrust: unb64(data['ca.crt']) ?? '' };
  const annotations = (meta.annotations ?? {}) as Json;
  const state: CaState = { active: { certPem, keyPem } };
  const pendingCert = unb64(data['pending.crt']);
  const pendingKey = unb64(data['pending.key']);
  if (pendingCert && pendingKey) {
    state.pending = {
      pair: { certPem: pendingCert, keyPem: pendingKey },
      signsAfter: time(annotations[PENDING_SIGNS_AFTER], `${where} annotation ${PENDING_SIGNS_AFTER}`),
    };
  }
  const retiredCert = unb64(data['retired.crt']);
  if (retiredCert)
    state.retired = { certPem: retiredCert, trustedUntil: time(annotations[RETIRED_TRUSTED_UNTIL], `${where} annotation ${RETIRED_TRUSTED_UNTIL}`) };
  return state;
}
