// Work that can fail (a status write, a shadow Service write, a recompute), queued per object with
// controller-runtime's semantics: a key queued twice is done once; a failure requeues the key after
// an exponential backoff of its own (base × 2^failures, capped); a success forgets its failures.
// The writes themselves take a token from a TokenBucket first, so a storm of work (400 proxies
// NACKing) reaches the API server at a bounded rate while work that writes nothing is not held.

/** A token bucket: `take()` resolves at once while tokens last, then at `perSecond` on average. */
export class TokenBucket {
  private tokens: number;
  private at = Date.now();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): Promise<void> {
    // One waiter at a time, in order.
    const next = this.tail.then(async () => {
      for (;;) {
        const now = Date.now();
        this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
        this.at = now;
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) * 1000) / this.perSecond)));
      }
    });
    this.tail = next;
    return next;
  }
}

export interface WorkQueueOptions {
  /** The first retry's delay, doubled at each further failure of the same key. Default 5 ms. */
  baseDelayMs?: number;
  /** The longest retry delay. Default 5 minutes. */
  maxDelayMs?: number;
  /** Keys worked on at once. Default 8. */
  concurrency?: number;
  /** A key failed and is queued again in `delayMs`. */
  onRetry?(key: string, error: unknown, delayMs: number): void;
  /** The number of keys waiting (queued, or waiting for their retry) changed. */
  onDepth?(waiting: number): void;
}

export class WorkQueue {
  /** In the order added (a Set keeps it, and takes the first in constant time). */
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  /** Keys queued again while being worked on: done once more after. */
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, NodeJS.Timeout>();
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly o: Required<Omit<WorkQueueOptions, 'onRetry' | 'onDepth'>>;

  constructor(
    private readonly work: (key: string) => Promise<void>,
    private readonly options: WorkQueueOptions = {},
  ) {
    this.o = {
      baseDelayMs: options.baseDelayMs ?? 5,
      maxDelayMs: options.maxDelayMs ?? 300_000,
      concurrency: options.concurrency ?? 8,
    };
  }

  /** Queues `key` (once, however often it is added before it is worked on). */
  add(key: string): void {
    if (this.stopped) return;
    const timer = this.delayed.get(key);
    if (timer) {
      clearTimeout(timer);
      this.delayed.delete(key);
    }
    if (this.active.has(key)) this.dirty.add(key);
    else this.queued.add(key);
    this.depth();
    this.pump();
  }

  /** Queues `key` after its backoff: base × 2^(failures so far), capped. */
  addRateLimited(key: string, error?: unknown): void {
    if (this.stopped) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delayMs = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** n);
    this.options.onRetry?.(key, error, delayMs);
    if (this.delayed.has(key) || this.queued.has(key)) return;
    this.delayed.set(
      key,
      setTimeout(() => {
        this.delayed.delete(key);
        this.add(key);
      }, delayMs),
    );
    this.depth();
  }

  /** Forgets a key's failures: its next failure waits the base delay again. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times `key` has failed since its last success. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys queued, being worked on, or waiting for a retry. */
  waiting(): number {
    return this.queued.size + this.active.size + this.delayed.size;
  }

  private depth(): void {
    this.options.onDepth?.(this.waiting());
  }

  private pump(): void {
    while (!this.stopped && this.active.size < this.o.concurrency && this.queued.size > 0) {
      const key = this.queued.values().next().value as string;
      this.queued.delete(key);
      this.active.add(key);
      void this.run(key);
    }
    this.settle();
  }

  private async run(key: string): Promise<void> {
    try {
      await this.work(key);
      this.forget(key);
    } catch (err) {
      this.addRateLimited(key, err);
    } finally {
      this.active.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.depth();
      this.pump();
    }
  }

  private settle(): void {
    if (this.queued.size > 0 || this.active.size > 0 || this.delayed.size > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves once nothing is queued, being worked on, or waiting for a retry. */
  idle(): Promise<void> {
    if (this.waiting() === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.delayed.values()) clearTimeout(t);
    this.delayed.clear();
    this.queued.clear();
    this.settle();
  }
}
