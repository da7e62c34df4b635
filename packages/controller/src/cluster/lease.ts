// Leader election with a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it (and
// controller-runtime's defaults: 15 s lease, 10 s renew deadline, 2 s retry). Every replica runs
// the data plane; only the leader writes to the API. Expiry is judged by when this replica last saw
// the Lease change, not by the holder's clock, so clock skew between nodes does not matter.
import { ApiError, type JsonObject, type KubeApi } from './api.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** This replica's identity, written as the Lease's holderIdentity. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading?(): void;
  onStoppedLeading?(): void;
  onError?(error: unknown): void;
  now?(): number;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A MicroTime, as the API server writes it: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private timer?: NodeJS.Timeout;
  private leading = false;
  /** When this replica last renewed the Lease as its holder. */
  private renewedAt = 0;
  /** The Lease as last read, and when it was last seen to change. */
  private observed?: string;
  private observedAt = 0;
  private running = false;
  /** What the last tick announced. */
  private announced = false;

  constructor(
    private readonly api: KubeApi,
    private readonly options: LeaderElectionOptions,
  ) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether this replica may write now: it holds the Lease and renewed it within the renew
   * deadline. Checked before every write, so a replica that cannot renew stops writing at once,
   * before another one can take the Lease over.
   */
  isLeader(): boolean {
    return this.leading && this.now() - this.renewedAt < this.renewDeadlineMs;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.tick();
  }

  /** Stops electing; a leader gives the Lease up, so another replica need not wait for it to expire. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    this.setLeading(false);
    this.announced = false;
    try {
      const lease = await this.api.request<JsonObject>('GET', this.path());
      const spec = (lease.spec ?? {}) as LeaseSpec;
      if (spec.holderIdentity === this.options.identity) {
        await this.api.request('PUT', this.path(), { body: { ...lease, spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1 } } });
      }
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private path(name = this.options.name): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.options.namespace)}/leases/${encodeURIComponent(name)}`;
  }

  /**
   * Announces a change of `isLeader()`. `was` is what it said before this tick: a renewal that
   * comes after the renew deadline passed is a new start (writes refused in between are redone).
   */
  private announce(was: boolean): void {
    const is = this.isLeader();
    if (is && !was) this.options.onStartedLeading?.();
    else if (!is && was) this.options.onStoppedLeading?.();
  }

  private setLeading(leading: boolean): void {
    const was = this.isLeader();
    this.leading = leading;
    this.announce(was);
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    const was = this.leading && this.now() - this.renewedAt < this.renewDeadlineMs && this.announced;
    try {
      const held = await this.tryAcquireOrRenew();
      if (held) this.renewedAt = this.now();
      this.leading = held;
    } catch (err) {
      this.options.onError?.(err);
    }
    // Past the renew deadline without a renewal, leadership is gone whatever the API says later.
    if (this.leading && !this.isLeader()) this.leading = false;
    this.announced = this.isLeader();
    this.announce(was);
    if (this.running) {
      this.timer = setTimeout(() => void this.tick(), this.retryPeriodMs);
      this.timer.unref?.();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const spec: LeaseSpec = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    let lease: JsonObject;
    try {
      lease = await this.api.request<JsonObject>('GET', this.path());
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.options.name, namespace: this.options.namespace }, spec };
      try {
        await this.api.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.options.namespace)}/leases`, { body });
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) return false; // another replica created it first
        throw e;
      }
    }
    const current = (lease.spec ?? {}) as LeaseSpec;
    const record = JSON.stringify(current);
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = now;
    }
    const mine = current.holderIdentity === this.options.identity;
    const durationMs = (current.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000)) * 1000;
    const heldByOther = !mine && current.holderIdentity !== undefined && current.holderIdentity !== '' && this.observedAt + durationMs > now;
    if (heldByOther) return false;
    if (mine && current.acquireTime) spec.acquireTime = current.acquireTime;
    spec.leaseTransitions = (current.leaseTransitions ?? 0) + (mine ? 0 : 1);
    try {
      // The resourceVersion makes this a compare-and-swap: if another replica wrote first, 409.
      await this.api.request('PUT', this.path(), { body: { ...lease, spec } });
      this.observed = JSON.stringify(spec);
      this.observedAt = now;
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return false;
      throw err;
    }
  }
}
