// Work that can fail (a status write, a shadow Service write, a recompute), queued per object with
// controller-runtime's semantics: a key queued twice is done once; a failure requeues the key after
// an exponential backoff of its own (base × 2^failures, capped); a success forgets its failures.
// Every start also takes a token from one bucket, so a storm of work (400 proxies NACKing) reaches
// the API server at a bounded rate.

export interface WorkQueueOptions {
  /** The first retry's delay, doubled at each further failure of the same key. Default 5 ms. */
  baseDelayMs?: number;
  /** The longest retry delay. Default 5 minutes. */
  maxDelayMs?: number;
  /** Work started per second, on average, and at once. Default 50 per second, 500 at once. */
  perSecond?: number;
  burst?: number;
  /** Keys worked on at once. Default 8. */
  concurrency?: number;
  /** A key failed and is queued again in `delayMs`. */
  onRetry?(key: string, error: unknown, delayMs: number): void;
  /** The number of keys waiting (queued, or waiting for their retry) changed. */
  onDepth?(waiting: number): void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  /** Keys queued again while being worked on: done once more after. */
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, NodeJS.Timeout>();
  private tokens: number;
  private refilledAt = Date.now();
  private tokenTimer?: NodeJS.Timeout;
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
      perSecond: options.perSecond ?? 50,
      burst: options.burst ?? 500,
      concurrency: options.concurrency ?? 8,
    };
    this.tokens = this.o.burst;
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
    else if (!this.queued.has(key)) {
      this.queued.add(key);
      this.queue.push(key);
    }
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

  private takeToken(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.refilledAt) * this.o.perSecond) / 1000);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private pump(): void {
    while (!this.stopped && this.active.size < this.o.concurrency && this.queue.length > 0) {
      if (!this.takeToken()) {
        if (!this.tokenTimer) {
          const waitMs = Math.ceil(((1 - this.tokens) * 1000) / this.o.perSecond);
          this.tokenTimer = setTimeout(() => {
            this.tokenTimer = undefined;
            this.pump();
          }, waitMs);
        }
        return;
      }
      const key = this.queue.shift() as string;
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
    if (this.queue.length > 0 || this.active.size > 0 || this.delayed.size > 0) return;
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
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    this.queue.length = 0;
    this.queued.clear();
    this.settle();
  }
}
