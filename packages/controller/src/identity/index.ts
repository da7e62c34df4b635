// Each proxy proves which Gateway it serves. The controller keeps a small CA (a Secret in its own
// namespace, or the operator's); every replica serves xDS with a certificate from it and verifies
// each stream's client certificate against the Gateway the stream claims; the leader rotates the CA
// and keeps every served Gateway's identity Secret issued and renewed.
import { X509Certificate } from 'node:crypto';
import type { PeerAuth } from '../xds/stream.js';
import type { KubeApi } from '../cluster/api.js';
import { type CaPolicy, type CaState, DEFAULT_CA_POLICY, nextRotationAt, trustBundle } from './authority.js';
import { CaStore } from './ca-store.js';
import { RotatingServerCredentials } from './credentials.js';
import { type GatewayRef, IdentityIssuer, type IssuerReport, issueFromCa } from './gateway-secrets.js';
import { checkTrustDomain, controllerIdentity, DEFAULT_TRUST_DOMAIN } from './spiffe.js';
import { type Refusal, type TrustAnchors, trustAnchors, type Verdict, verifyPeer } from './verify.js';

export { type CaPolicy, type CaState, DEFAULT_CA_POLICY, RENEW_AT, rotate, trustBundle, caSecret, readCaSecret, CA_SECRET_TYPE } from './authority.js';
export { CaStore, type CaStoreOptions } from './ca-store.js';
export { RotatingServerCredentials, type ServingMaterial } from './credentials.js';
export {
  IDENTITY_ANNOTATION,
  IDENTITY_DIR,
  IDENTITY_SECRET_TYPE,
  IdentityIssuer,
  identitySecretName,
  type GatewayRef,
  type IssuerReport,
} from './gateway-secrets.js';
export { DEFAULT_TRUST_DOMAIN, gatewayIdentity, gatewayOfIdentity } from './spiffe.js';
export { type Refusal, type Verdict, verifyPeer, trustAnchors } from './verify.js';
export { generateCa, issueLeaf, type KeyPair } from './x509.js';

export const DEFAULT_CA_SECRET = 'extlb-xds-ca';

export interface XdsIdentityOptions {
  api: KubeApi;
  /** The controller's namespace: where the CA Secret is. */
  namespace: string;
  caSecret?: string;
  /** The CA Secret is the operator's (cert-manager's): read only, rotated by its owner. */
  externalCa?: boolean;
  trustDomain?: string;
  /** Life of proxies' and the server's certificates (default 12 h) and of a CA the controller makes (default 365 d). */
  leafLifetimeMs?: number;
  caLifetimeMs?: number;
  /** DNS names of the xDS server's certificate (the controller Service's). */
  serverNames: readonly string[];
  /** The controller's ServiceAccount, named in the server certificate's SPIFFE ID. */
  serviceAccount?: string;
  /** The Gateways whose identity Secrets the leader keeps. */
  gateways(): GatewayRef[];
  isLeader(): boolean;
  now?: () => number;
  onLeaderPass?(report: IssuerReport & { rotated: string[] }): void;
  onError?(error: unknown, what: string): void;
}

/** The longest the leader waits between passes, whatever it expects: a clock that jumped is caught within it. */
const MAX_PASS_INTERVAL_MS = 10 * 60_000;
/** After a failed pass, or one that failed some writes. */
const RETRY_MS = 5_000;

/** What `authorize` says of a stream: a StreamVerdict, with why when it refuses. */
export type StreamCheck = { allowed: true; identity: string; expiresAt: number } | ({ allowed: false } & StreamRefusal);

export interface StreamRefusal {
  /** The Gateway the stream claimed (its node.cluster). */
  group: string;
  reason: Refusal;
  message: string;
  /** The SPIFFE ID the certificate holds, when it holds one of a Gateway. */
  identity?: string;
}

export class XdsIdentity {
  readonly trustDomain: string;
  readonly policy: CaPolicy;
  private readonly store: CaStore;
  private readonly issuer: IdentityIssuer;
  private readonly now: () => number;
  private credentials?: RotatingServerCredentials;
  private anchors?: TrustAnchors;
  /** The serving certificate and key, the fingerprint of the CA that signed them, and when they are due. */
  private serving?: { certPem: string; keyPem: string; ca: string; renewAt: number; notAfter: number };
  private timer?: NodeJS.Timeout;
  private passing?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(private readonly options: XdsIdentityOptions) {
    this.trustDomain = checkTrustDomain(options.trustDomain ?? DEFAULT_TRUST_DOMAIN);
    this.policy = {
      caLifetimeMs: options.caLifetimeMs ?? DEFAULT_CA_POLICY.caLifetimeMs,
      leafLifetimeMs: options.leafLifetimeMs ?? DEFAULT_CA_POLICY.leafLifetimeMs,
    };
    if (this.policy.caLifetimeMs < 4 * this.policy.leafLifetimeMs) {
      throw new Error('the CA lifetime must be at least four certificate lifetimes, so that a rotation overlaps every certificate the old CA signed');
    }
    this.now = options.now ?? Date.now;
    this.store = new CaStore(options.api, {
      namespace: options.namespace,
      name: options.caSecret ?? DEFAULT_CA_SECRET,
      external: options.externalCa === true,
      policy: this.policy,
      now: this.now,
      onChange: () => this.kick(),
      ...(options.onError ? { onError: options.onError } : {}),
    });
    this.issuer = new IdentityIssuer(options.api, { policy: { trustDomain: this.trustDomain, leafLifetimeMs: this.policy.leafLifetimeMs }, now: this.now });
  }

  /** Loads (or makes) the CA and the serving certificate: the credentials for the xDS listener. */
  async start(): Promise<RotatingServerCredentials> {
    await this.store.load();
    await this.refreshServing();
    this.store.watch();
    this.kick();
    if (!this.credentials) throw new Error('no serving certificate');
    return this.credentials;
  }

  get ca(): CaState {
    return this.store.state;
  }

  /** When the serving certificate expires (ms since the epoch), 0 before start. */
  get servingExpiresAt(): number {
    return this.serving?.notAfter ?? 0;
  }

  /** Whether the peer of a call may be a proxy of `group`. */
  verify(auth: PeerAuth | null | undefined, group: string): Verdict {
    if (!this.anchors) return { allowed: false, reason: 'untrusted-issuer', message: 'the xDS CA is not loaded yet' };
    return verifyPeer(auth, group, this.anchors, this.now());
  }

  /**
   * The xDS server's verify step (XdsServerOptions.verify): admits a stream whose certificate is
   * its Gateway's, with the SPIFFE ID and the certificate's expiry (the server checks it again
   * then); refuses any other with a message naming the claimed Gateway and why.
   */
  authorize(auth: PeerAuth, group: string): StreamCheck {
    const verdict = this.verify(auth, group);
    if (verdict.allowed) return verdict;
    return {
      allowed: false,
      group,
      reason: verdict.reason,
      message: `xDS stream for Gateway ${group} refused: ${verdict.message}`,
      ...(verdict.identity ? { identity: verdict.identity } : {}),
    };
  }

  private serverIdentity(): string {
    return controllerIdentity(this.trustDomain, this.options.namespace, this.options.serviceAccount ?? 'extlb-controller');
  }

  /**
   * Keeps the listener's TLS current: a new serving certificate when the last is due or the
   * signing CA changed, and always the trust bundle in force now.
   */
  private async refreshServing(): Promise<void> {
    const state = this.store.state;
    const now = this.now();
    const signer = new X509Certificate(state.active.certPem).fingerprint256;
    if (!this.serving || now >= this.serving.renewAt || this.serving.ca !== signer) {
      const leaf = await issueFromCa(state, this.serverIdentity(), 'extlb xDS server', now, this.policy.leafLifetimeMs, 'server', [
        ...this.options.serverNames,
      ]);
      this.serving = { ...leaf.pair, ca: signer, renewAt: leaf.renewAfter.getTime(), notAfter: leaf.notAfter.getTime() };
    }
    const material = { certPem: this.serving.certPem, keyPem: this.serving.keyPem, trustBundlePem: trustBundle(state) };
    this.anchors = trustAnchors(this.trustDomain, material.trustBundlePem);
    if (this.credentials) this.credentials.update(material);
    else this.credentials = new RotatingServerCredentials(material);
  }

  /**
   * Runs a pass soon: the CA changed, Gateways changed, leadership was gained, or something is due.
   * Passes never overlap; one asked for during a pass runs after it.
   */
  kick(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass().finally(() => {
      this.passing = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when no pass is under way or asked for. */
  async settled(): Promise<void> {
    while (this.passing) await this.passing;
  }

  private schedule(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.kick(), Math.min(Math.max(at - this.now(), 0), MAX_PASS_INTERVAL_MS));
    this.timer.unref?.();
  }

  /** Every replica: the serving certificate and bundle. The leader: the CA's rotation, then every Gateway's Secret. */
  private async pass(): Promise<void> {
    let next = this.now() + MAX_PASS_INTERVAL_MS;
    try {
      await this.refreshServing();
      next = Math.min(next, this.serving?.renewAt ?? next);
      if (this.options.isLeader()) {
        const rotated = (await this.store.rotate()).steps;
        if (rotated.length > 0) await this.refreshServing();
        const report = await this.issuer.reconcile(this.options.gateways(), this.store.state);
        this.options.onLeaderPass?.({ ...report, rotated });
        next = Math.min(next, report.nextDueAt, nextRotationAt(this.store.state, this.policy));
        if (report.failed.length > 0) next = Math.min(next, this.now() + RETRY_MS);
      }
    } catch (err) {
      this.options.onError?.(err, "keeping the xDS CA, the serving certificate and the Gateways' identity Secrets");
      next = Math.min(next, this.now() + RETRY_MS);
    }
    this.schedule(next);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.store.stop();
  }
}
