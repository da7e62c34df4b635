// Peer addresses held back after one of their connections kept opening streams past its own rate.
// A client that does so again soon after is held twice as long each time, up to a bound; one that
// behaves for a while (five times the longest hold) starts again from the first hold.

interface Record {
  /** When the current hold ends (`now()` time). */
  until: number;
  /** The length of the last hold. */
  ms: number;
  /** When the address last offended. */
  at: number;
}

export class AddressHolds {
  private readonly records = new Map<string, Record>();

  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Holds `address` back; returns for how long. */
  hold(address: string): number {
    const t = this.now();
    if (this.records.size > 10_000) this.sweep(t);
    const last = this.records.get(address);
    const ms = last && t - last.at < this.forgetMs ? Math.min(this.maxMs, Math.max(last.ms * 2, this.firstMs)) : this.firstMs;
    this.records.set(address, { until: t + ms, ms, at: t });
    return ms;
  }

  /** How long `address` is still held back, 0 when it is not. */
  heldFor(address: string): number {
    const record = this.records.get(address);
    return record ? Math.max(0, record.until - this.now()) : 0;
  }

  private get forgetMs(): number {
    return this.maxMs * 5;
  }

  private sweep(t: number): void {
    for (const [address, r] of this.records) if (t - r.at >= this.forgetMs) this.records.delete(address);
  }
}
