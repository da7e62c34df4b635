/**
 * The reference picker's decisions, apart from any transport: given a request's headers and its
 * optional subset hint, answer an ordered endpoint list, or refuse with 503 (nothing eligible) or
 * 429 (shedding load).
 */
import { EPP } from '@extlb/types';
import { parseEndpoint, type Endpoint } from './codec.js';
import type { PoolMembers } from './pool-members.js';
import { PromptReader, type PromptInfo } from './prompt.js';
import { DEFAULT_LOAD_AWARE, rank, type LoadAwareConfig } from './scoring.js';
import type { SignalSource } from './signals.js';
import { createStrategy, STRATEGIES, type Strategy } from './strategies.js';

/** How the picker orders endpoints: one of the strategies, or the scorers of the load-aware profile. */
export const PROFILES = [...STRATEGIES, 'load-aware'] as const;
export type ProfileName = (typeof PROFILES)[number];

export function isProfileName(name: string): name is ProfileName {
  return (PROFILES as readonly string[]).includes(name);
}

export interface PickRequest {
  /** Lower-cased header name → values. */
  headers: ReadonlyMap<string, readonly string[]>;
  /**
   * The subset hint, when the data plane sent one: entries are `ip:port`, or a bare IP standing for
   * every port of that IP. An empty list means "nothing is eligible".
   */
  subset?: readonly string[];
  /** What the load-aware profile read of the request body (see `promptReader`). */
  prompt?: PromptInfo;
}

export type PickDecision =
  | { kind: 'endpoints'; endpoints: Endpoint[] }
  | { kind: 'reject'; status: typeof EPP.status.noEndpoint | typeof EPP.status.shedding; reason: string };

export interface PickerOptions {
  /** The pool's members: the only endpoints the picker names, and the only served endpoints it counts. */
  pool: PoolMembers;
  strategy?: ProfileName;
  /** The load-aware profile's scorers, prefix reading and shedding. Default `DEFAULT_LOAD_AWARE`. */
  loadAware?: LoadAwareConfig;
  /** The endpoints' load, for the load-aware profile (`startPicker` scrapes them when not given). */
  signals?: SignalSource;
  /** Most endpoints per answer (the primary plus fallbacks). Default 1. */
  maxEndpoints?: number;
  hashHeader?: string;
  seed?: number;
  /** Requests in flight above which the picker sheds load with 429. Default: never. */
  maxInFlight?: number;
}

/** One decision in flight; `finish` must be called exactly once when its request ends. */
export interface Pick {
  decision: PickDecision;
  finish(): void;
}

/** What the picker has counted since it started. */
export interface PickerStats {
  /** Requests picked for whose stream has not ended yet. */
  inFlight: number;
  /** Decisions by outcome: endpoints named, 503 for no eligible endpoint, 429 for shedding load. */
  picks: { picked: number; noEndpoint: number; shedding: number };
  /** Load-aware: decisions that waited for an endpoint below the saturation thresholds, and requests waiting now. */
  queued: number;
  waiting: number;
  /** Served endpoints the data plane reported, per current pool member. */
  served: Record<string, number>;
  /** Served endpoints reported that were not pool members, so not kept. */
  ignoredServed: number;
  /** Streams ended with INVALID_ARGUMENT: a malformed message or one out of sequence. */
  invalidMessages: number;
  /** Streams ended with INTERNAL: the picker itself failed on a message. */
  internalErrors: number;
}

interface Waiter {
  request: PickRequest;
  resolve(pick: Pick): void;
  timer: NodeJS.Timeout;
}

export class EndpointPicker {
  readonly maxEndpoints: number;
  readonly strategyName: ProfileName;
  readonly loadAware: LoadAwareConfig | undefined;
  private readonly pool: PoolMembers;
  private readonly strategy: Strategy | undefined;
  private readonly signals: SignalSource | undefined;
  private readonly waiters: Waiter[] = [];
  private queuedTotal = 0;
  private rotation = 0;
  /** Load-aware: primaries sent to each endpoint since the scrape its signals come from. */
  private readonly sent = new Map<string, { scrapedAt: number; count: number }>();
  private unsubscribeSignals: (() => void) | undefined;
  private readonly maxInFlight: number;
  private readonly outstanding = new Map<string, number>();
  private inFlight = 0;
  private readonly picks = { picked: 0, noEndpoint: 0, shedding: 0 };
  private readonly served = new Map<string, number>();
  private ignoredServed = 0;
  private invalidMessages = 0;
  private internalErrors = 0;
  /** The member list `memberAddresses` was built from; a new list from the pool means it changed. */
  private members: readonly Endpoint[] | undefined;
  private memberAddresses = new Set<string>();

  constructor(options: PickerOptions) {
    const max = options.maxEndpoints ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > 64) throw new RangeError(`maxEndpoints must be an integer in 1..64, got ${max}`);
    const inFlight = options.maxInFlight ?? Infinity;
    if (!(inFlight >= 1)) throw new RangeError(`maxInFlight must be at least 1, got ${inFlight}`);
    this.maxEndpoints = max;
    this.maxInFlight = inFlight;
    this.pool = options.pool;
    const strategyOptions: { hashHeader?: string; seed?: number } = {};
    if (options.hashHeader !== undefined) strategyOptions.hashHeader = options.hashHeader;
    if (options.seed !== undefined) strategyOptions.seed = options.seed;
    this.strategyName = options.strategy ?? 'round-robin';
    if (this.strategyName === 'load-aware') {
      if (!options.signals) throw new TypeError("the load-aware profile needs the endpoints' signals (options.signals)");
      this.loadAware = options.loadAware ?? DEFAULT_LOAD_AWARE;
      this.signals = options.signals;
      // New metrics may free an endpoint for the requests waiting for one.
      this.unsubscribeSignals = this.signals.onUpdate(() => this.serveWaiters());
    } else {
      this.strategy = createStrategy(this.strategyName, strategyOptions);
    }
  }

  /**
   * A reader for the request body when the profile uses what is in it (the prompt's prefix, the
   * model), else undefined: then the picker decides on the request headers alone.
   */
  promptReader(): PromptReader | undefined {
    const config = this.loadAware;
    if (!config) return undefined;
    const wants = (type: string): boolean => config.scorers.some((s) => s.type === type && s.weight > 0);
    const prefix = wants('prefix-cache');
    const model = wants('lora-affinity');
    if (!prefix && !model) return undefined;
    return new PromptReader({ blockBytes: config.prefix.blockBytes, blocks: prefix ? config.prefix.blocks : 0, model, maxBytes: config.prefix.maxBytes });
  }

  /** Stops waiting: requests still waiting for capacity are answered 429. */
  close(): void {
    this.unsubscribeSignals?.();
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.resolve(this.shed('the picker is shutting down'));
    }
  }

  /** True once the pool's members have loaded (the readiness health status). */
  ready(): boolean {
    return this.pool.ready();
  }

  /** Decides for one request, at once (queue shedding answers 429 here instead of waiting). */
  pick(request: PickRequest): Pick {
    return this.decide(request, false) as Pick;
  }

  /**
   * Decides for one request. The answer is at once, except with the load-aware profile's `queue`
   * shedding when every eligible endpoint is saturated: then it comes when one has room, or as a
   * 429 after `maxWaitMs` (the promise never rejects).
   */
  pickOrWait(request: PickRequest): Pick | Promise<Pick> {
    return this.decide(request, true);
  }

  private decide(request: PickRequest, wait: boolean): Pick | Promise<Pick> {
    if (this.inFlight >= this.maxInFlight) return this.shed(`shedding load: ${this.inFlight} requests in flight`);
    const all = this.pool.endpoints();
    const candidates = request.subset === undefined ? all : restrictToSubset(all, request.subset);
    if (candidates.length === 0) {
      const reason =
        request.subset === undefined
          ? 'no ready endpoints'
          : request.subset.length === 0
            ? 'the subset hint is empty'
            : 'no endpoint in the subset hint is eligible';
      this.picks.noEndpoint++;
      return { decision: { kind: 'reject', status: EPP.status.noEndpoint, reason }, finish: noop };
    }
    if (this.loadAware) return this.pickLoadAware(request, candidates, this.loadAware, wait);
    this.deciding = request;
    return this.picked((this.strategy as Strategy).order(candidates, this.strategyContext, this.maxEndpoints));
  }

  /** The request a strategy is ordering endpoints for, read by `strategyContext` (one context for every decision). */
  private deciding: PickRequest | undefined;
  private readonly strategyContext = {
    header: (name: string) => this.deciding?.headers.get(name)?.[0],
    outstanding: (address: string) => this.outstanding.get(address) ?? 0,
  };

  private pickLoadAware(request: PickRequest, candidates: readonly Endpoint[], config: LoadAwareConfig, wait: boolean): Pick | Promise<Pick> {
    const ranked = this.ranked(request, candidates, config);
    if (ranked.length > 0) return this.picked(ranked);
    const reason = `every eligible endpoint is saturated (${candidates.length}: queue >= ${config.shedding.queue} or KV cache >= ${config.shedding.kvCache})`;
    if (!wait || config.shedding.mode !== 'queue' || this.waiters.length >= config.shedding.maxQueued) return this.shed(`shedding load: ${reason}`);
    this.queuedTotal++;
    return new Promise<Pick>((resolve) => {
      const waiter: Waiter = {
        request,
        resolve,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(this.shed(`shedding load: waited ${config.shedding.maxWaitMs} ms and ${reason}`));
        }, config.shedding.maxWaitMs),
      };
      this.waiters.push(waiter);
    });
  }

  private ranked(request: PickRequest, candidates: readonly Endpoint[], config: LoadAwareConfig): Endpoint[] {
    this.rotation = (this.rotation + 1) % 1_000_000_007;
    const ctx = {
      signals: this.signals as SignalSource,
      inFlight: (address: string) => this.outstanding.get(address) ?? 0,
      prompt: request.prompt,
      rotation: this.rotation,
      sentSinceScrape: (address: string, scrapedAt: number) => {
        const s = this.sent.get(address);
        return s !== undefined && s.scrapedAt === scrapedAt ? s.count : 0;
      },
    };
    const ranked = rank(candidates, ctx, config).ranked.slice(0, this.maxEndpoints);
    const primary = ranked[0];
    if (primary) {
      const scrapedAt = (this.signals as SignalSource).signals(primary.address).updatedAt;
      const s = this.sent.get(primary.address);
      if (s !== undefined && s.scrapedAt === scrapedAt) s.count++;
      else {
        // Bounded by the pool: entries of endpoints that left go when the map outgrows it.
        if (this.sent.size > 2 * candidates.length + 64) this.sent.clear();
        this.sent.set(primary.address, { scrapedAt, count: 1 });
      }
    }
    return ranked;
  }

  /** Waiting requests, first come first served, while an endpoint has room. */
  private serveWaiters(): void {
    const config = this.loadAware;
    if (!config) return;
    while (this.waiters.length > 0) {
      const w = this.waiters[0] as Waiter;
      const all = this.pool.endpoints();
      const candidates = w.request.subset === undefined ? all : restrictToSubset(all, w.request.subset);
      const ranked = this.ranked(w.request, candidates, config);
      if (ranked.length === 0) return;
      this.waiters.shift();
      clearTimeout(w.timer);
      w.resolve(this.picked(ranked));
    }
  }

  private shed(reason: string): Pick {
    this.picks.shedding++;
    return { decision: { kind: 'reject', status: EPP.status.shedding, reason }, finish: noop };
  }

  private picked(endpoints: Endpoint[]): Pick {
    // Only the primary is counted as outstanding: fallbacks are used only when it fails.
    const primary = (endpoints[0] as Endpoint).address;
    this.outstanding.set(primary, (this.outstanding.get(primary) ?? 0) + 1);
    this.inFlight++;
    this.picks.picked++;
    return new PickInFlight(this, { kind: 'endpoints', endpoints }, primary);
  }

  /** @internal A pick's request ended (its `finish`, once): its primary has one request fewer outstanding. */
  finished(primary: string): void {
    this.inFlight--;
    const n = (this.outstanding.get(primary) ?? 1) - 1;
    if (n > 0) this.outstanding.set(primary, n);
    else this.outstanding.delete(primary);
    if (this.waiters.length > 0) this.serveWaiters();
  }

  /**
   * Records the endpoint the data plane reports as having served a request. Only pool members are
   * counted: the value comes off the network, and keeping every distinct one would let a client
   * grow the picker's memory without bound. Envoy reports a host's address exactly as the pool
   * spells it, so membership is an exact match.
   */
  recordServed(address: string): void {
    if (!this.isMember(address)) {
      this.ignoredServed++;
      return;
    }
    this.served.set(address, (this.served.get(address) ?? 0) + 1);
  }

  /** Counts a stream ended for a malformed or out-of-sequence message. */
  recordInvalidMessage(): void {
    this.invalidMessages++;
  }

  /** Counts a stream ended because the picker failed on a message. */
  recordInternalError(): void {
    this.internalErrors++;
  }

  stats(): PickerStats {
    return {
      inFlight: this.inFlight,
      picks: { ...this.picks },
      queued: this.queuedTotal,
      waiting: this.waiters.length,
      served: Object.fromEntries(this.served),
      ignoredServed: this.ignoredServed,
      invalidMessages: this.invalidMessages,
      internalErrors: this.internalErrors,
    };
  }

  private isMember(address: string): boolean {
    const current = this.pool.endpoints();
    if (current !== this.members) {
      this.members = current;
      this.memberAddresses = new Set(current.map((e) => e.address));
      // Counts of endpoints that left the pool leave with them, so the map never outgrows the pool.
      for (const known of this.served.keys()) if (!this.memberAddresses.has(known)) this.served.delete(known);
    }
    return this.memberAddresses.has(address);
  }
}

function noop(): void {}

/** A pick that named endpoints, until its request ends (a class, not a closure per decision). */
class PickInFlight implements Pick {
  private done = false;
  constructor(
    private readonly picker: EndpointPicker,
    readonly decision: PickDecision,
    private readonly primary: string,
  ) {}

  finish(): void {
    if (this.done) return;
    this.done = true;
    this.picker.finished(this.primary);
  }
}

/** Endpoints named by the subset hint (`ip:port`, or a bare IP for every port), in the pool's order. */
export function restrictToSubset(all: readonly Endpoint[], subset: readonly string[]): Endpoint[] {
  const addresses = new Set<string>();
  const ips = new Set<string>();
  for (const raw of subset) {
    const text = raw.trim();
    const full = parseEndpoint(text);
    if (typeof full !== 'string') {
      addresses.add(full.address);
      continue;
    }
    // A bare IP: borrow the endpoint parser for its canonical form by giving it a dummy port.
    const bare = parseEndpoint(text.includes(':') ? `[${text}]:1` : `${text}:1`);
    if (typeof bare !== 'string') ips.add(bare.ip);
  }
  return all.filter((e) => addresses.has(e.address) || ips.has(e.ip));
}
