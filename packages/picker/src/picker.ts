/**
 * The reference picker's decisions, apart from any transport: given a request's headers and its
 * optional subset hint, answer an ordered endpoint list, or refuse with 503 (nothing eligible) or
 * 429 (shedding load).
 */
import { parseEndpoint, type Endpoint } from './codec.js';
import type { EndpointSource } from './endpoints.js';
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

export type PickDecision = { kind: 'endpoints'; endpoints: Endpoint[] } | { kind: 'reject'; status: 503 | 429; reason: string };

export interface PickerOptions {
  source: EndpointSource;
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

export class EndpointPicker {
  readonly maxEndpoints: number;
  private readonly source: EndpointSource;
  private readonly strategy: Strategy;
  private readonly maxInFlight: number;
  private readonly outstanding = new Map<string, number>();
  private inFlight = 0;
  private readonly served = new Map<string, number>();

  constructor(options: PickerOptions) {
    const max = options.maxEndpoints ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > 64) throw new RangeError(`maxEndpoints must be an integer in 1..64, got ${max}`);
    const inFlight = options.maxInFlight ?? Infinity;
    if (!(inFlight >= 1)) throw new RangeError(`maxInFlight must be at least 1, got ${inFlight}`);
    this.maxEndpoints = max;
    this.maxInFlight = inFlight;
    this.source = options.source;
    const strategyOptions: { hashHeader?: string; seed?: number } = {};
    if (options.hashHeader !== undefined) strategyOptions.hashHeader = options.hashHeader;
    if (options.seed !== undefined) strategyOptions.seed = options.seed;
    this.strategy = createStrategy(options.strategy ?? 'round-robin', strategyOptions);
  }

  /** True once the endpoint source has loaded (the readiness health status). */
  ready(): boolean {
    return this.source.ready();
  }

  pick(request: PickRequest): Pick {
    if (this.inFlight >= this.maxInFlight) {
      return { decision: { kind: 'reject', status: 429, reason: `shedding load: ${this.inFlight} requests in flight` }, finish: noop };
    }
    const all = this.source.endpoints();
    const candidates = request.subset === undefined ? all : restrictToSubset(all, request.subset);
    if (candidates.length === 0) {
      const reason =
        request.subset === undefined
          ? 'no ready endpoints'
          : request.subset.length === 0
            ? 'the subset hint is empty'
            : 'no endpoint in the subset hint is eligible';
      return { decision: { kind: 'reject', status: 503, reason }, finish: noop };
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

  /** Records the endpoint Envoy reports as having served a request. */
  recordServed(address: string): void {
    this.served.set(address, (this.served.get(address) ?? 0) + 1);
  }

  /** Counts of served endpoints as reported by the data plane, and requests in flight. */
  stats(): { inFlight: number; served: Record<string, number> } {
    return { inFlight: this.inFlight, served: Object.fromEntries(this.served) };
  }
}

function noop(): void {}

/** Endpoints named by the subset hint (`ip:port`, or a bare IP for every port), in the source's order. */
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
