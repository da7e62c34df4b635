// How the benches print figures, and the waits they bound (a broken run fails instead of hanging).
import { cpus, loadavg } from 'node:os';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

export const PHASE_TIMEOUT_MS = 300_000;

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const ms = (v: number) => (v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0));
export const n = (v: number) => v.toLocaleString('en');

/** The p-th percentile of ascending `sorted` (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function withTimeout<T>(promise: Promise<T>, what: string, timeoutMs = PHASE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: ${what} did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The machine and its load, printed first: other work on the machine shows in the figures. */
export function machine(): string {
  return `${cpus().length} CPUs, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
}

/** ` [load 7.2 on 2 CPUs]` while the machine runs more than it has cores for; '' otherwise. */
export function loadNote(): string {
  const [now = 0] = loadavg();
  return now > cpus().length ? ` [load ${now.toFixed(1)} on ${cpus().length} CPUs]` : '';
}

/** A garbage collection's pause: when it started (performance.timeOrigin + startTime), how long it took in ms, and whether it was a full (mark-compact) one. */
export type Pause = readonly [start: number, ms: number, major: boolean];

/**
 * The garbage collector's pauses in this process, as they are reported: a bench process names them
 * so that a slow change can be told apart from a collection that stopped one of the processes.
 */
export class GcPauses {
  private pauses: Pause[] = [];

  constructor() {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.pauses.push([performance.timeOrigin + e.startTime, e.duration, isMajor(e)]);
    }).observe({ entryTypes: ['gc'] });
  }

  /** The pauses reported since the last call. */
  take(): Pause[] {
    return this.pauses.splice(0);
  }
}

const isMajor = (e: PerformanceEntry) => ((e as { detail?: { kind?: number } }).detail?.kind ?? 0) === constants.NODE_PERFORMANCE_GC_MAJOR;

/** How much of the window [from, to] the pauses covered: `12.3 ms`, with ` (full)` when a full collection was among them. */
export function pausedWithin(pauses: readonly Pause[], from: number, to: number): string {
  let total = 0;
  let major = false;
  for (const [start, duration, full] of pauses) {
    const overlap = Math.max(0, Math.min(to, start + duration) - Math.max(from, start));
    total += overlap;
    if (overlap > 0 && full) major = true;
  }
  return `${ms(total)} ms${major ? ' (full)' : ''}`;
}

/** A full collection, where the process runs with --expose-gc. */
export function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
