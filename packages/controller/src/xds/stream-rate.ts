// Streams a connection may open, as a token bucket per connection (and one for the whole server):
// an Envoy opens one ADS stream and keeps it, so a connection opening and resetting thousands is
// refused cheaply, before gRPC sees the stream, and the other clients keep their share of the
// event loop.

export class RateBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.at = now();
  }

  /** Takes a token; false when none is left. */
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.at) / 1000) * this.perSecond);
    this.at = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
