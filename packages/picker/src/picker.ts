/**
 * The reference picker's decisions, apart from any transport: given a request's headers and its
 * optional subset hint, answer an ordered endpoint list, or refuse with 503 (nothing eligible) or
 * 429 (shedding load).
 */
import { EPP } from '@extlb/types';
import { parseEndpoint, type Endpoint } from './codec.js';
import type { PoolMembers } from './pool-members.js';
import { createStrategy, type Strategy, type StrategyName } from './strategies.js';

export interface PickRequest {
  /** Lower-cased header name → values. */
  headers: ReadonlyMap<string, readonly string[]>;
  /**
   * The subset hint, when the data plane sent one: entries are `ip:port`, or a bare IP standing for
   * every port of that IP. An empty list means "nothing is eligible".
   */
  subset?: readonly string[];
}

export type PickDecision =
  | { kind: 'endpoints'; endpoints: Endpoint[] }
  | { kind: 'reject'; status: typeof EPP.status.noEndpoint | typeof EPP.status.shedding; reason: string };

export interface PickerOptions {
  /** The pool's members: the only endpoints the picker names, and the only served endpoints it counts. */
  pool: PoolMembers;
  strategy?: StrategyName;
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
  /** Served endpoints the data plane reported, per current pool member. */
  served: Record<string, number>;
  /** Served endpoints reported that were not pool members, so not kept. */
  ignoredServed: number;
  /** Streams ended with INVALID_ARGUMENT: a malformed message or one out of sequence. */
  invalidMessages: number;
  /** Streams ended with INTERNAL: the picker itself failed on a message. */
  internalErrors: number;
}

export class EndpointPicker {
  readonly maxEndpoints: number;
  readonly strategyName: StrategyName;
  private readonly pool: PoolMembers;
  private readonly strategy: Strategy;
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
    this.strategy = createStrategy(this.strategyName, strategyOptions);
  }

  /** True once the pool's members have loaded (the readiness health status). */
  ready(): boolean {
    return this.pool.ready();
  }

  pick(request: PickRequest): Pick {
    if (this.inFlight >= this.maxInFlight) {
      this.picks.shedding++;
      return { decision: { kind: 'reject', status: EPP.status.shedding, reason: `shedding load: ${this.inFlight} requests in flight` }, finish: noop };
    }
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
    const ctx = {
      header: (name: string) => request.headers.get(name)?.[0],
      outstanding: (address: string) => this.outstanding.get(address) ?? 0,
    };
    const endpoints = this.strategy.order(candidates, ctx, this.maxEndpoints);
    // Only the primary is counted as outstanding: fallbacks are used only when it fails.
    const primary = (endpoints[0] as Endpoint).address;
    this.outstanding.set(primary, (this.outstanding.get(primary) ?? 0) + 1);
    this.inFlight++;
    this.picks.picked++;
    let done = false;
    return {
      decision: { kind: 'endpoints', endpoints },
      finish: () => {
        if (done) return;
        done = true;
        this.inFlight--;
        const n = (this.outstanding.get(primary) ?? 1) - 1;
        if (n > 0) this.outstanding.set(primary, n);
        else this.outstanding.delete(primary);
      },
    };
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
