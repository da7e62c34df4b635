// Each Gateway's xDS identity: a short-lived client certificate naming the Gateway, in a Secret in
// the Gateway's namespace, owned by the Gateway (deleting it deletes the Secret), which its Envoy
// Pods mount. The Secret carries everything Envoy needs to use it and to pin the controller's CA,
// with file-based SDS so a renewal reaches a running Envoy without a restart:
//
//   tls.crt, tls.key                   the client certificate (and its issuer when that is not a root) and key
//   ca.crt                             the CAs trusted now: Envoy verifies the xDS server against them
//   tls-certificate.sds.json           SDS resources naming those files; Envoy's bootstrap points at
//   validation-context.sds.json        these and watches the mount directory for moves
//
// Kubernetes writes a Secret volume atomically: the files are symlinks into `..data`, itself a
// symlink to a timestamped directory, and an update renames a new `..data` into place — a move in
// the mount directory, which is what Envoy's `watched_directory` reacts to.
import { createHash, X509Certificate } from 'node:crypto';
import { XDS_IDENTITY, xdsIdentitySdsFiles } from '@extlb/envoy';
import { ApiError, type JsonObject, type KubeApi } from '../cluster/api.js';
import { BACKDATE_MS, type CaState, lifeOf, RENEW_AT, trustBundle } from './authority.js';
import { gatewayIdentity } from './spiffe.js';
import { type KeyPair, issueLeaf, parseBundle, uriNames } from './x509.js';

export const IDENTITY_SECRET_TYPE = 'extlb.dev/xds-identity';
/** On a Gateway whose Envoy the operator runs: `"true"` asks the controller to issue the Gateway's identity Secret. */
export const IDENTITY_ANNOTATION = 'extlb.dev/xds-identity';
/** Where Envoy Pods mount the identity Secret: its SDS files name the files under it. */
export const IDENTITY_DIR = XDS_IDENTITY.dir;

const IDENTITY_URI_ANNOTATION = 'extlb.dev/identity';
const NOT_AFTER_ANNOTATION = 'extlb.dev/not-after';
const RENEW_AFTER_ANNOTATION = 'extlb.dev/renew-after';
const MANAGED_BY = 'app.kubernetes.io/managed-by';
const COMPONENT = 'app.kubernetes.io/component';
const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

export interface GatewayRef {
  namespace: string;
  name: string;
  uid: string;
}

/** `<gateway>-xds-identity`; a name too long for that gets a hash of the whole in its place. */
export function identitySecretName(gateway: string): string {
  const name = `${gateway}-xds-identity`;
  if (name.length <= 253) return name;
  return `${gateway.slice(0, 253 - 22).replace(/[-.]+$/, '')}-${createHash('sha256').update(gateway).digest('hex').slice(0, 8)}-xds-id`;
}

function labelValue(value: string): string {
  if (value.length <= 63) return value;
  return `${value.slice(0, 54).replace(/[-_.]+$/, '')}-${createHash('sha256').update(value).digest('hex').slice(0, 8)}`;
}

/** The SDS files of a Secret mounted where Envoy Pods mount it. */
const sdsFiles = () => xdsIdentitySdsFiles(IDENTITY_DIR);

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString() : '');

interface IssuedLeaf {
  pair: KeyPair;
  notAfter: Date;
  renewAfter: Date;
}

/** The Secret of a Gateway's identity. */
export function identitySecret(gateway: GatewayRef, identity: string, leaf: IssuedLeaf, bundlePem: string): JsonObject {
  const data: Record<string, string> = { 'tls.crt': b64(leaf.pair.certPem), 'tls.key': b64(leaf.pair.keyPem), 'ca.crt': b64(bundlePem) };
  for (const [k, v] of Object.entries(sdsFiles())) data[k] = b64(v);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: identitySecretName(gateway.name),
      namespace: gateway.namespace,
      labels: { [MANAGED_BY]: 'extlb', [COMPONENT]: 'xds-identity', [GATEWAY_NAME_LABEL]: labelValue(gateway.name) },
      annotations: {
        [IDENTITY_URI_ANNOTATION]: identity,
        [NOT_AFTER_ANNOTATION]: leaf.notAfter.toISOString(),
        [RENEW_AFTER_ANNOTATION]: leaf.renewAfter.toISOString(),
      },
      ownerReferences: [
        { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: gateway.name, uid: gateway.uid, controller: true, blockOwnerDeletion: false },
      ],
    },
    type: IDENTITY_SECRET_TYPE,
    data,
  };
}

export interface IssuePolicy {
  trustDomain: string;
  leafLifetimeMs: number;
}

/** A certificate from the active CA (a proxy's, naming `identity`, or the xDS server's), never outliving the CA; renewal due at 2/3 of its life. */
export async function issueFromCa(
  ca: CaState,
  identity: string,
  commonName: string,
  now: number,
  lifetimeMs: number,
  usage: 'client' | 'server' = 'client',
  dnsNames: string[] = [],
): Promise<IssuedLeaf> {
  const caCert = new X509Certificate(ca.active.certPem);
  const notBefore = new Date(now - BACKDATE_MS);
  const notAfter = new Date(Math.min(now + lifetimeMs, Date.parse(caCert.validTo)));
  const pair = await issueLeaf(ca.active, { usage, commonName, uris: identity ? [identity] : [], dnsNames, notBefore, notAfter });
  // A CA that is not a root (an operator's intermediate) goes with the certificate, so a verifier holding the root can build the chain.
  const certPem = caCert.issuer === caCert.subject ? pair.certPem : `${pair.certPem.trim()}\n${ca.active.certPem.trim()}\n`;
  const renewAfter = new Date(now + (notAfter.getTime() - now) * RENEW_AT);
  return { pair: { certPem, keyPem: pair.keyPem }, notAfter, renewAfter };
}

/** Why a Gateway's Secret must get a new certificate, or undefined when its certificate is good. */
export function renewalReason(secret: JsonObject, identity: string, bundlePem: string, now: number): string | undefined {
  const data = (secret.data ?? {}) as JsonObject;
  let cert: X509Certificate | undefined;
  try {
    [cert] = parseBundle(unb64(data['tls.crt']));
  } catch {
    cert = undefined;
  }
  if (!cert) return 'it has no certificate';
  if (!uriNames(cert).includes(identity)) return 'its certificate names another identity';
  const { from, to } = lifeOf(cert);
  if (now >= from + (to - from) * RENEW_AT) return `its certificate is past ${Math.round(RENEW_AT * 100)}% of its life (valid until ${cert.validTo})`;
  const trusted = parseBundle(bundlePem);
  if (!trusted.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey))) return 'its certificate is from a CA no longer trusted';
  return undefined;
}

/** Whether a Secret's bundle and SDS files are what they should be (the certificate aside). */
function filesCurrent(secret: JsonObject, bundlePem: string): boolean {
  const data = (secret.data ?? {}) as JsonObject;
  if (unb64(data['ca.crt']) !== bundlePem) return false;
  return Object.entries(sdsFiles()).every(([k, v]) => unb64(data[k]) === v);
}

export interface IssuerReport {
  issued: string[];
  refreshed: string[];
  deleted: string[];
  failed: { secret: string; error: string }[];
  /** The earliest renewal due among the Secrets kept: when to look again. */
  nextDueAt: number;
}

export interface IssuerOptions {
  policy: IssuePolicy;
  now?: () => number;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** The leader's writer of Gateways' identity Secrets: issues, renews, refreshes bundles, deletes those no Gateway wants. */
export class IdentityIssuer {
  private readonly now: () => number;

  constructor(
    private readonly api: KubeApi,
    private readonly options: IssuerOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async reconcile(gateways: readonly GatewayRef[], ca: CaState): Promise<IssuerReport> {
    const report: IssuerReport = { issued: [], refreshed: [], deleted: [], failed: [], nextDueAt: Number.POSITIVE_INFINITY };
    const list = await this.api.request<{ items?: JsonObject[] }>('GET', '/api/v1/secrets', {
      query: { fieldSelector: `type=${IDENTITY_SECRET_TYPE}`, labelSelector: `${MANAGED_BY}=extlb` },
    });
    const existing = new Map<string, JsonObject>();
    for (const s of list.items ?? []) {
      const m = (s.metadata ?? {}) as JsonObject;
      existing.set(keyOf(String(m.namespace), String(m.name)), s);
    }
    const bundle = trustBundle(ca);
    const wanted = new Set<string>();
    for (const gateway of gateways) {
      const name = identitySecretName(gateway.name);
      const key = keyOf(gateway.namespace, name);
      wanted.add(key);
      try {
        const outcome = await this.ensure(gateway, existing.get(key), ca, bundle);
        if (outcome.wrote === 'issued') report.issued.push(key);
        if (outcome.wrote === 'refreshed') report.refreshed.push(key);
        report.nextDueAt = Math.min(report.nextDueAt, outcome.dueAt);
      } catch (err) {
        report.failed.push({ secret: key, error: err instanceof Error ? err.message : String(err) });
      }
    }
    for (const [key, secret] of existing) {
      if (wanted.has(key)) continue;
      const m = (secret.metadata ?? {}) as JsonObject;
      try {
        await this.api.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(String(m.namespace))}/secrets/${encodeURIComponent(String(m.name))}`, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: m.uid } },
        });
        report.deleted.push(key);
      } catch (err) {
        if (!(err instanceof ApiError && (err.status === 404 || err.status === 409))) report.failed.push({ secret: key, error: (err as Error).message });
      }
    }
    return report;
  }

  private async ensure(
    gateway: GatewayRef,
    secret: JsonObject | undefined,
    ca: CaState,
    bundle: string,
  ): Promise<{ wrote?: 'issued' | 'refreshed'; dueAt: number }> {
    const { trustDomain, leafLifetimeMs } = this.options.policy;
    const identity = gatewayIdentity(trustDomain, gateway.namespace, gateway.name);
    const now = this.now();
    const path = `/api/v1/namespaces/${encodeURIComponent(gateway.namespace)}/secrets`;
    const reason = secret ? renewalReason(secret, identity, bundle, now) : 'there is none';
    const owned = secret && JSON.stringify(((secret.metadata ?? {}) as JsonObject).ownerReferences ?? []).includes(gateway.uid);
    if (!reason && secret && owned) {
      const dueAt = Date.parse(String(((secret.metadata as JsonObject).annotations as JsonObject | undefined)?.[RENEW_AFTER_ANNOTATION] ?? '')) || now;
      if (filesCurrent(secret, bundle)) return { dueAt };
      // Same certificate and key; a new bundle (a CA added or retired) or SDS files.
      const data: JsonObject = { ...(secret.data as JsonObject), 'ca.crt': b64(bundle) };
      for (const [k, v] of Object.entries(sdsFiles())) data[k] = b64(v);
      await this.api.request('PUT', `${path}/${encodeURIComponent(String((secret.metadata as JsonObject).name))}`, { body: { ...secret, data } });
      return { wrote: 'refreshed', dueAt };
    }
    const leaf = await issueFromCa(ca, identity, `${gateway.namespace}/${gateway.name}`, now, leafLifetimeMs);
    const body = identitySecret(gateway, identity, leaf, bundle);
    if (secret) {
      (body.metadata as JsonObject).resourceVersion = (secret.metadata as JsonObject).resourceVersion;
      await this.api.request('PUT', `${path}/${encodeURIComponent(identitySecretName(gateway.name))}`, { body });
    } else {
      await this.api.request('POST', path, { body });
    }
    return { wrote: 'issued', dueAt: leaf.renewAfter.getTime() };
  }
}
