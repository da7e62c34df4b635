// Batches changes into recomputes: a change waits `delayMs` for others to join it, but never more
// than `maxDelayMs` in all, so a steady trickle of changes cannot postpone a recompute forever. A
// batch of endpoint changes only waits `endpointDelayMs`, shorter: it is cheap to apply and Envoy
// should stop sending to a Pod that went away at once (a rollout's slices still batch, as each run
// takes what arrived meanwhile). A change that comes alone after a quiet spell (nothing changed
// for `delayMs`) waits only `loneDelayMs`: one `kubectl apply` of one route should not sit out a
// debounce meant for bursts, and a burst's second change puts its batch back on `delayMs`. An
// endpoint change that comes alone (nothing changed for `endpointDelayMs`) does not wait at all: a
// rollout's first slice goes out at once and the ones behind it batch as before. Runs never
// overlap: changes that arrive during a run are batched into the next one.

export interface Batch {
  /** The kinds that changed. */
  kinds: Set<string>;
  /** Only endpoints moved: nothing needs resolving again. */
  endpointsOnly: boolean;
}

export interface SchedulerOptions {
  delayMs?: number;
  /** The wait while only endpoints changed. Default 10 ms. */
  endpointDelayMs?: number;
  /** The wait of a change that comes alone after `delayMs` without any. Default 10 ms. */
  loneDelayMs?: number;
  maxDelayMs?: number;
  /** Kinds whose changes move endpoints only. */
  endpointKinds?: ReadonlySet<string>;
}

export class Scheduler {
  private pending = new Set<string>();
  private firstAt?: number;
  /** When the last change came (-Infinity before any). */
  private lastAt = Number.NEGATIVE_INFINITY;
  /** The pending batch is one change that came after a quiet spell: of `delayMs`, and of `endpointDelayMs`. */
  private lone = false;
  private loneEndpoint = false;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly delayMs: number;
  private readonly endpointDelayMs: number;
  private readonly loneDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly endpointKinds: ReadonlySet<string>;

  constructor(
    private readonly run: (batch: Batch) => Promise<void>,
    options: SchedulerOptions = {},
  ) {
    this.delayMs = options.delayMs ?? 100;
    this.endpointDelayMs = Math.min(options.endpointDelayMs ?? 10, this.delayMs);
    this.loneDelayMs = Math.min(options.loneDelayMs ?? 10, this.delayMs);
    this.maxDelayMs = options.maxDelayMs ?? 1000;
    this.endpointKinds = options.endpointKinds ?? new Set();
  }

  /** Notes a change of `kind` and schedules a recompute. */
  touch(kind: string): void {
    if (this.stopped) return;
    const now = Date.now();
    const first = this.pending.size === 0 && !this.running;
    this.lone = first && now - this.lastAt >= this.delayMs;
    this.loneEndpoint = first && now - this.lastAt >= this.endpointDelayMs;
    this.lastAt = now;
    this.pending.add(kind);
    this.firstAt ??= now;
    this.arm();
  }

  /**
   * Runs what is pending on the next turn instead of after the debounce: nothing else is coming
   * (the informers have just listed everything, and proxies wait for their first snapshot).
   */
  hurry(): void {
    if (this.stopped || this.running || this.pending.size === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fire(), 0);
  }

  private arm(): void {
    if (this.running || this.pending.size === 0) return;
    if (this.timer) clearTimeout(this.timer);
    const waited = Date.now() - (this.firstAt ?? Date.now());
    const delay = this.onlyEndpoints(this.pending) ? (this.loneEndpoint ? 0 : this.endpointDelayMs) : this.lone ? this.loneDelayMs : this.delayMs;
    this.timer = setTimeout(() => this.fire(), Math.max(0, Math.min(delay, this.maxDelayMs - waited)));
  }

  private fire(): void {
    this.timer = undefined;
    const kinds = this.pending;
    this.pending = new Set();
    this.firstAt = undefined;
    const endpointsOnly = this.onlyEndpoints(kinds);
    this.running = this.run({ kinds, endpointsOnly }).finally(() => {
      this.running = undefined;
      if (this.pending.size > 0) {
        this.firstAt ??= Date.now();
        this.arm();
      }
    });
  }

  private onlyEndpoints(kinds: ReadonlySet<string>): boolean {
    return [...kinds].every((k) => this.endpointKinds.has(k));
  }

  /** Whether a run is under way or pending. */
  busy(): boolean {
    return this.running !== undefined || this.timer !== undefined;
  }

  /** Resolves once no run is under way and none is pending. */
  async idle(): Promise<void> {
    while (this.running || this.timer) {
      if (this.running) await this.running;
      else await new Promise((r) => setTimeout(r, Math.min(this.delayMs, 20)));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
