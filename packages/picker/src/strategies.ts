/**
 * How the reference picker orders eligible endpoints. Each strategy returns the candidates in
 * preference order; the picker answers with the first `maxEndpoints` of them, which Envoy then
 * walks on retries.
 */
import type { Endpoint } from './codec.js';
import { mulberry32 } from './simulator.js';

export const STRATEGIES = ['round-robin', 'least-request', 'consistent-hash', 'random'] as const;
export type StrategyName = (typeof STRATEGIES)[number];

export interface StrategyContext {
  /** Lower-cased request header name → first value. */
  header(name: string): string | undefined;
  /** Requests the picker has sent to an endpoint that have not finished yet. */
  outstanding(address: string): number;
}

export interface Strategy {
  order(candidates: readonly Endpoint[], ctx: StrategyContext, count: number): Endpoint[];
}

export interface StrategyOptions {
  /** Request header whose value keys `consistent-hash`. */
  hashHeader?: string;
  /** Seed for `random`, so runs can be repeated. */
  seed?: number;
}

export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGIES as readonly string[]).includes(name);
}

export function createStrategy(name: StrategyName, options: StrategyOptions = {}): Strategy {
  switch (name) {
    case 'round-robin':
      return roundRobin();
    case 'least-request':
      return leastRequest();
    case 'consistent-hash':
      return consistentHash((options.hashHeader ?? 'x-session-id').toLowerCase());
    case 'random':
      return random(options.seed ?? Date.now());
  }
}

function rotate(candidates: readonly Endpoint[], start: number, count: number): Endpoint[] {
  const n = Math.min(count, candidates.length);
  const out: Endpoint[] = new Array<Endpoint>(n);
  for (let i = 0; i < n; i++) out[i] = candidates[(start + i) % candidates.length] as Endpoint;
  return out;
}

function roundRobin(): Strategy {
  let next = 0;
  return {
    order(candidates, _ctx, count) {
      if (candidates.length === 0) return [];
      const start = next % candidates.length;
      next = (next + 1) % 1_000_000_007;
      return rotate(candidates, start, count);
    },
  };
}

function leastRequest(): Strategy {
  // Rotating the starting point spreads ties instead of always favouring the first endpoint.
  let next = 0;
  return {
    order(candidates, ctx, count) {
      const n = candidates.length;
      if (n === 0) return [];
      const start = next % n;
      next = (next + 1) % 1_000_000_007;
      const loads = new Array<number>(n);
      for (let i = 0; i < n; i++) loads[i] = ctx.outstanding((candidates[(start + i) % n] as Endpoint).address);
      // A selection of the `count` least loaded, in rotated order among equals (a stable partial sort).
      const want = Math.min(count, n);
      const taken = new Uint8Array(n);
      const out = new Array<Endpoint>(want);
      for (let k = 0; k < want; k++) {
        let best = -1;
        for (let i = 0; i < n; i++) if (taken[i] === 0 && (best < 0 || (loads[i] as number) < (loads[best] as number))) best = i;
        taken[best] = 1;
        out[k] = candidates[(start + best) % n] as Endpoint;
      }
      return out;
    },
  };
}

/**
 * Rendezvous hashing: every endpoint gets a score from hash(key, endpoint) and the list is sorted
 * by score. The same key always yields the same order, and removing an endpoint moves only the
 * keys it was first for — which is also what makes the fallback list stable.
 */
function consistentHash(header: string): Strategy {
  const fallback = roundRobin();
  return {
    order(candidates, ctx, count) {
      const key = ctx.header(header);
      if (key === undefined) return fallback.order(candidates, ctx, count);
      const keyHash = fnv1a(key, 0x811c9dc5);
      return candidates
        .map((e) => ({ e, score: fnv1a(e.address, keyHash) }))
        .sort((a, b) => b.score - a.score || (a.e.address < b.e.address ? -1 : 1))
        .slice(0, count)
        .map((s) => s.e);
    },
  };
}

function random(seed: number): Strategy {
  const next = mulberry32(seed);
  return {
    order(candidates, _ctx, count) {
      // A partial Fisher-Yates shuffle: only the first `count` places are drawn.
      const pool = candidates.slice();
      const n = Math.min(count, pool.length);
      for (let i = 0; i < n; i++) {
        const j = i + Math.floor(next() * (pool.length - i));
        const t = pool[i] as Endpoint;
        pool[i] = pool[j] as Endpoint;
        pool[j] = t;
      }
      return pool.slice(0, n);
    },
  };
}

/** 32-bit FNV-1a with a final avalanche, seeded so it can chain a key hash into an endpoint hash. */
function fnv1a(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
