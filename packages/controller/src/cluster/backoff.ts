// The backoff client-go's reflector waits before a restart or a relist (its exponential backoff
// manager): each step waits the current delay plus up to `jitter` of it more, at random; the delay
// doubles up to `maxMs`; a step that comes `resetAfterMs` after the one before starts over.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A step this long after the previous one starts from `initialMs` again. Default 2 minutes. */
  resetAfterMs?: number;
  /** The most a wait is stretched, as a share of the delay. Default 1 (up to twice the delay). */
  jitter?: number;
  random?: () => number;
  now?: () => number;
}

export class Backoff {
  private delayMs: number;
  private steppedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: BackoffOptions) {
    this.delayMs = options.initialMs;
  }

  /** How long to wait before the next try; each call is one step. */
  next(): number {
    const { initialMs, maxMs, resetAfterMs = 120_000, jitter = 1, random = Math.random, now = Date.now } = this.options;
    const at = now();
    if (at - this.steppedAt > resetAfterMs) this.delayMs = initialMs;
    this.steppedAt = at;
    const delay = this.delayMs;
    this.delayMs = Math.min(delay * 2, maxMs);
    return Math.round(delay * (1 + jitter * random()));
  }

  /** Starts over: the next step waits `initialMs` (plus jitter). */
  reset(): void {
    this.delayMs = this.options.initialMs;
    this.steppedAt = Number.NEGATIVE_INFINITY;
  }
}
