/**
 * Live load signals: each pool member's Prometheus endpoint, scraped on an interval (with jitter,
 * so a fleet of pickers does not scrape in step), each scrape bounded by a timeout and a body size,
 * at most `concurrency` at once. What is kept per endpoint is a handful of numbers, and endpoints
 * that leave the pool leave the map, so memory follows the pool, not the traffic.
 *
 * An endpoint whose last good scrape is older than `staleAfterMs`, or whose scrapes fail, is never
 * read as idle: its state says why (`stale`, `unreachable`, `malformed`, `missing`, or `pending`
 * before the first scrape), the scorers give it their worst score, and the picker's own metrics
 * count endpoints by state.
 */
import { Agent, request } from 'node:http';
import type { Endpoint } from './codec.js';
import { matches, parsePage, parseSelector, type Sample, type Selector } from './prometheus.js';
import type { PoolMembers } from './pool-members.js';

/** The metric names of one kind of model server (GIE's model-server protocol). */
export interface MetricNames {
  /** Requests queued (a gauge). */
  waiting: string;
  /** Requests running (a gauge). */
  running: string;
  /** KV-cache utilisation, 0..1 (a gauge). */
  kvCache: string;
  /** An info gauge whose labels list LoRA adapters (`running_lora_adapters`, `waiting_lora_adapters`, `max_lora`). */
  lora?: string;
}

export const SERVER_METRICS = {
  vllm: {
    waiting: 'vllm:num_requests_waiting',
    running: 'vllm:num_requests_running',
    kvCache: 'vllm:kv_cache_usage_perc',
    lora: 'vllm:lora_requests_info',
  },
  sglang: { waiting: 'sglang:num_queue_reqs', running: 'sglang:num_running_reqs', kvCache: 'sglang:token_usage' },
  trtllm: { waiting: 'trtllm_num_requests_waiting', running: 'trtllm_num_requests_running', kvCache: 'trtllm_kv_cache_utilization' },
} as const satisfies Record<string, MetricNames>;
export type ServerKind = keyof typeof SERVER_METRICS;

export interface ScrapeOptions {
  names: MetricNames;
  /** Port of the metrics endpoint; default: the endpoint's own port. */
  port?: number;
  path: string;
  intervalMs: number;
  /** Per-endpoint deadline for one scrape, connect to last byte. */
  timeoutMs: number;
  /** Each wait is the interval times a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** A last good scrape older than this makes the endpoint `stale`. */
  staleAfterMs: number;
  /** Scrapes in flight at most, over all endpoints. */
  concurrency: number;
  /** A metrics page longer than this is refused (`malformed`). */
  maxBodyBytes: number;
}

export const DEFAULT_SCRAPE: Omit<ScrapeOptions, 'names'> = {
  path: '/metrics',
  intervalMs: 250,
  timeoutMs: 1000,
  jitter: 0.2,
  staleAfterMs: 2000,
  concurrency: 16,
  maxBodyBytes: 4 * 1024 * 1024,
};

export const SIGNAL_STATES = ['fresh', 'stale', 'unreachable', 'malformed', 'missing', 'pending'] as const;
export type SignalState = (typeof SIGNAL_STATES)[number];

export interface LoraInfo {
  running: readonly string[];
  waiting: readonly string[];
  /** Adapters the server can hold at once, when it says. */
  max: number | undefined;
}

/** What the picker knows of one endpoint's load; the numbers are those of the last good scrape. */
export interface EndpointSignals {
  state: SignalState;
  waiting: number;
  running: number;
  kvCache: number;
  lora: LoraInfo | undefined;
  /** When the last good scrape ended (ms since the epoch), 0 if none. */
  updatedAt: number;
  /** Why the last scrape failed, when it did. */
  error?: string;
}

/** Where the signals come from: the scraper, or anything else that knows the load (a test). */
export interface SignalSource {
  signals(address: string): EndpointSignals;
  /** Endpoints by state, over the current pool. */
  states(): Record<SignalState, number>;
  /** Called after each scrape that changed an endpoint's signals; returns an unsubscribe function. */
  onUpdate(listener: () => void): () => void;
  close(): Promise<void>;
}

const PENDING: EndpointSignals = { state: 'pending', waiting: 0, running: 0, kvCache: 0, lora: undefined, updatedAt: 0 };

interface Tracked {
  endpoint: Endpoint;
  signals: EndpointSignals;
  timer: NodeJS.Timeout | undefined;
  inFlight: boolean;
  removed: boolean;
}

interface Selectors {
  waiting: Selector;
  running: Selector;
  kvCache: Selector;
  lora: Selector | undefined;
  names: Set<string>;
}

function selectors(names: MetricNames): Selectors {
  const waiting = parseSelector(names.waiting);
  const running = parseSelector(names.running);
  const kvCache = parseSelector(names.kvCache);
  const lora = names.lora === undefined ? undefined : parseSelector(names.lora);
  return { waiting, running, kvCache, lora, names: new Set([waiting.name, running.name, kvCache.name, ...(lora ? [lora.name] : [])]) };
}

/** Reads the signals out of a page's samples, or says what is missing. */
export function readSignals(samples: readonly Sample[], s: Selectors): Omit<EndpointSignals, 'state' | 'updatedAt'> | string {
  const pick = (sel: Selector): Sample[] => samples.filter((x) => matches(x, sel));
  const waiting = pick(s.waiting);
  const running = pick(s.running);
  const kv = pick(s.kvCache);
  const missing = [
    [s.waiting, waiting],
    [s.running, running],
    [s.kvCache, kv],
  ]
    .filter(([, found]) => (found as Sample[]).length === 0)
    .map(([sel]) => (sel as Selector).name);
  if (missing.length > 0) return `no ${missing.join(', ')} on the page`;
  // Several series (one per model or engine) add up; the cache is as full as its fullest engine.
  const sum = (xs: Sample[]): number => xs.reduce((t, x) => t + x.value, 0);
  const values = { waiting: sum(waiting), running: sum(running), kvCache: Math.max(...kv.map((x) => x.value)) };
  for (const [k, v] of Object.entries(values)) if (!Number.isFinite(v) || v < 0) return `${k} is ${v}`;
  return { ...values, lora: s.lora ? readLora(pick(s.lora)) : undefined };
}

/** vLLM's LoRA info gauge: its value is a timestamp, so the newest series is the current one. */
function readLora(series: Sample[]): LoraInfo | undefined {
  const latest = series.reduce<Sample | undefined>((best, x) => (best === undefined || x.value > best.value ? x : best), undefined);
  if (!latest) return undefined;
  const list = (v: string | undefined): string[] =>
    (v ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter((a) => a !== '');
  const max = Number(latest.labels.max_lora);
  return {
    running: list(latest.labels.running_lora_adapters),
    waiting: list(latest.labels.waiting_lora_adapters),
    max: Number.isInteger(max) && max > 0 ? max : undefined,
  };
}

/** Scrapes every member of a pool; start it with `start()`. */
export class MetricsScraper implements SignalSource {
  private readonly tracked = new Map<string, Tracked>();
  private readonly queue: Tracked[] = [];
  private active = 0;
  private closed = false;
  private readonly agent: Agent;
  private readonly selectors: Selectors;
  private readonly listeners = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  /** Scrapes by outcome since start. */
  readonly counts = { ok: 0, unreachable: 0, malformed: 0, missing: 0 };

  constructor(
    private readonly pool: PoolMembers,
    private readonly options: ScrapeOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.selectors = selectors(options.names);
    // One kept-alive connection per endpoint: a scrape every few hundred ms should not open a socket each time.
    this.agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, timeout: options.timeoutMs * 4 });
  }

  start(): this {
    this.sync(this.pool.endpoints());
    this.unsubscribe = this.pool.onChange((endpoints) => this.sync(endpoints));
    return this;
  }

  signals(address: string): EndpointSignals {
    const t = this.tracked.get(address);
    if (!t) return PENDING;
    const s = t.signals;
    if (s.state === 'fresh' && this.now() - s.updatedAt > this.options.staleAfterMs) return { ...s, state: 'stale' };
    return s;
  }

  states(): Record<SignalState, number> {
    const out = Object.fromEntries(SIGNAL_STATES.map((s) => [s, 0])) as Record<SignalState, number>;
    for (const address of this.tracked.keys()) out[this.signals(address).state]++;
    return out;
  }

  onUpdate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    for (const t of this.tracked.values()) this.untrack(t);
    this.tracked.clear();
    this.queue.length = 0;
    this.listeners.clear();
    this.agent.destroy();
  }

  private sync(endpoints: readonly Endpoint[]): void {
    if (this.closed) return;
    const current = new Set<string>();
    for (const endpoint of endpoints) {
      current.add(endpoint.address);
      if (this.tracked.has(endpoint.address)) continue;
      const t: Tracked = { endpoint, signals: PENDING, timer: undefined, inFlight: false, removed: false };
      this.tracked.set(endpoint.address, t);
      this.enqueue(t);
    }
    for (const [address, t] of this.tracked) {
      if (current.has(address)) continue;
      this.untrack(t);
      this.tracked.delete(address);
    }
  }

  private untrack(t: Tracked): void {
    t.removed = true;
    if (t.timer) clearTimeout(t.timer);
    t.timer = undefined;
  }

  private schedule(t: Tracked): void {
    if (t.removed || this.closed) return;
    const { intervalMs, jitter } = this.options;
    const wait = intervalMs * (1 - jitter + 2 * jitter * Math.random());
    t.timer = setTimeout(() => {
      t.timer = undefined;
      this.enqueue(t);
    }, wait);
    t.timer.unref();
  }

  private enqueue(t: Tracked): void {
    if (t.removed || this.closed || t.inFlight) return;
    t.inFlight = true;
    this.queue.push(t);
    this.drain();
  }

  private drain(): void {
    while (this.active < this.options.concurrency && this.queue.length > 0) {
      const t = this.queue.shift() as Tracked;
      if (t.removed) continue;
      this.active++;
      void this.scrape(t).finally(() => {
        this.active--;
        t.inFlight = false;
        this.schedule(t);
        this.drain();
      });
    }
  }

  private async scrape(t: Tracked): Promise<void> {
    const result = await fetchPage(t.endpoint, this.options, this.agent);
    if (t.removed || this.closed) return;
    if (typeof result !== 'string') {
      this.fail(t, result.state, result.error);
      return;
    }
    const page = parsePage(result, this.selectors.names);
    if (page.errors.length > 0) {
      this.fail(t, 'malformed', page.errors.join('; '));
      return;
    }
    const read = readSignals(page.samples, this.selectors);
    if (typeof read === 'string') {
      this.fail(t, read.startsWith('no ') ? 'missing' : 'malformed', read);
      return;
    }
    this.counts.ok++;
    t.signals = { state: 'fresh', ...read, updatedAt: this.now() };
    for (const l of this.listeners) l();
  }

  private fail(t: Tracked, state: 'unreachable' | 'malformed' | 'missing', error: string): void {
    this.counts[state]++;
    // The numbers of the last good scrape stay for the record; the state says they are not to be trusted.
    t.signals = { ...t.signals, state, error };
  }
}

/** GETs one metrics page: its text, or why not. */
type Failed = { state: 'unreachable' | 'malformed'; error: string };

function fetchPage(endpoint: Endpoint, options: ScrapeOptions, agent: Agent): Promise<string | Failed> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: string | Failed): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = request(
      { host: endpoint.ip, port: options.port ?? endpoint.port, path: options.path, method: 'GET', agent, headers: { accept: 'text/plain' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          done({ state: 'unreachable', error: `HTTP ${res.statusCode}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > options.maxBodyBytes) {
            req.destroy();
            done({ state: 'malformed', error: `the page is larger than ${options.maxBodyBytes} bytes` });
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
        res.on('error', (err) => done({ state: 'unreachable', error: err.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ state: 'unreachable', error: `no complete answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    req.on('error', (err) => done({ state: 'unreachable', error: err.message }));
    req.end();
  });
}
