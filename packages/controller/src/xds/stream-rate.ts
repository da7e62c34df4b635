// Streams a connection may open, as a token bucket per connection: an Envoy opens one ADS stream
// and keeps it, so a connection opening and resetting thousands is refused cheaply, before any
// request is decoded, and the other clients keep their share of the event loop.

interface Bucket {
  tokens: number;
  at: number;
}

export class StreamRate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes a token for a new stream of `connection`; false when it has none left. */
  take(connection: string): boolean {
    const t = this.now();
    let bucket = this.buckets.get(connection);
    if (!bucket) {
      // A full bucket is the same as none: the map holds only connections that opened streams lately.
      if (this.buckets.size > 10_000) this.sweep(t);
      bucket = { tokens: this.burst, at: t };
      this.buckets.set(connection, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((t - bucket.at) / 1000) * this.perSecond);
    bucket.at = t;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  private sweep(t: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
  }
}
