/**
 * The load-aware profile: each eligible endpoint gets a weighted sum of scorer values in [0, 1],
 * and the answer is the endpoints in that order — so the second entry is the next best endpoint,
 * the one a retry should go to. Endpoints past the saturation thresholds are left out of the list
 * (the picker sheds or waits when that leaves none); endpoints whose metrics are not fresh get the
 * worst value from every scorer that reads metrics.
 *
 * Prefix affinity needs no state: the request's prompt prefix (a chained block hash, `prompt.ts`) is
 * the key of a rendezvous hash over the eligible endpoints, so every picker replica ranks the same
 * endpoints first for the same prefix, and removing an endpoint moves only the prefixes it ranked
 * first. Replicas differ only where their own views differ: the timing of their scrapes and the
 * requests each has in flight.
 */
import type { Endpoint } from './codec.js';
import { avalanche, type PromptInfo } from './prompt.js';
import type { EndpointSignals, SignalSource } from './signals.js';

export const SCORER_TYPES = ['queue', 'kv-cache', 'in-flight', 'lora-affinity', 'prefix-cache'] as const;
export type ScorerType = (typeof SCORER_TYPES)[number];

export interface ScorerConfig {
  type: ScorerType;
  weight: number;
  /** `queue` and `in-flight`: the count at which the value reaches 0. */
  max?: number;
}

export interface PrefixConfig {
  /** Bytes of prompt per block. */
  blockBytes: number;
  /** Blocks hashed; the last one keys the rendezvous hash (so this many blocks decide affinity). */
  blocks: number;
  /** Body bytes read at most to find the prompt and the model. */
  maxBytes: number;
}

export const SHEDDING_MODES = ['none', 'reject', 'queue'] as const;
export type SheddingMode = (typeof SHEDDING_MODES)[number];

export interface SheddingConfig {
  /** `reject`: 429 when every eligible endpoint is saturated; `queue`: wait for capacity first; `none`: never shed. */
  mode: SheddingMode;
  /** Queued requests at which an endpoint is saturated. */
  queue: number;
  /** KV-cache utilisation (0..1) at which an endpoint is saturated. */
  kvCache: number;
  /** `queue`: longest wait for capacity before answering 429. */
  maxWaitMs: number;
  /** `queue`: requests waiting at most; more are answered 429 at once. */
  maxQueued: number;
}

export interface LoadAwareConfig {
  scorers: ScorerConfig[];
  prefix: PrefixConfig;
  shedding: SheddingConfig;
}

/** GIE's default scheduling profile (queue 2, KV cache 2, prefix 3) plus the picker's own in-flight count and LoRA affinity. */
export const DEFAULT_LOAD_AWARE: LoadAwareConfig = {
  scorers: [
    { type: 'queue', weight: 2, max: 8 },
    { type: 'kv-cache', weight: 2 },
    { type: 'prefix-cache', weight: 3 },
    { type: 'in-flight', weight: 2, max: 16 },
    { type: 'lora-affinity', weight: 1 },
  ],
  prefix: { blockBytes: 256, blocks: 8, maxBytes: 16 * 1024 },
  shedding: { mode: 'queue', queue: 8, kvCache: 0.95, maxWaitMs: 2000, maxQueued: 1024 },
};

export interface RankContext {
  signals: SignalSource;
  /**
   * Requests this picker sent to an endpoint since its last scrape: counted as queued on top of
   * the scraped queue, so that between two scrapes the picker does not keep sending to an endpoint
   * that looked idle at the last one (nor release every waiting request onto it at once).
   */
  sentSinceScrape(address: string, scrapedAt: number): number;
  inFlight(address: string): number;
  prompt: PromptInfo | undefined;
  /** Rotates the order of endpoints that tie, for requests without a prompt. */
  rotation: number;
}

export interface Ranking {
  ranked: Endpoint[];
  /** Candidates left out as saturated. */
  saturated: number;
}

const fresh = (s: EndpointSignals): boolean => s.state === 'fresh';

/** One scorer's value for one endpoint. */
function value(scorer: ScorerConfig, s: EndpointSignals, inFlight: number, rank: number, prompt: PromptInfo | undefined): number {
  switch (scorer.type) {
    case 'queue':
      return fresh(s) ? 1 - Math.min(s.waiting, scorer.max ?? 8) / (scorer.max ?? 8) : 0;
    case 'kv-cache':
      return fresh(s) ? 1 - Math.min(1, Math.max(0, s.kvCache)) : 0;
    case 'in-flight':
      return 1 - Math.min(inFlight, scorer.max ?? 32) / (scorer.max ?? 32);
    case 'prefix-cache':
      // Rendezvous rank 0 is the endpoint the prefix lives on; rank 1 takes its overflow, so holds it too.
      return rank < 0 ? 0 : 0.5 ** rank;
    case 'lora-affinity':
      return loraValue(s, prompt?.model);
  }
}

/** 1: the adapter is loaded; 0.7: it is queued to load; 0.4: there is room to load it; 0: no room; 0.5 for all when there is nothing to go by. */
function loraValue(s: EndpointSignals, model: string | undefined): number {
  if (model === undefined) return 0.5;
  if (!fresh(s)) return 0;
  const lora = s.lora;
  if (!lora) return 0.5;
  if (lora.running.includes(model)) return 1;
  if (lora.waiting.includes(model)) return 0.7;
  if (lora.max === undefined || lora.running.length + lora.waiting.length < lora.max) return 0.4;
  return 0;
}

export function isSaturated(s: EndpointSignals, shedding: SheddingConfig): boolean {
  return shedding.mode !== 'none' && fresh(s) && (s.waiting >= shedding.queue || s.kvCache >= shedding.kvCache);
}

const endpointHashes = new Map<string, number>();

function endpointHash(address: string): number {
  let h = endpointHashes.get(address);
  if (h === undefined) {
    h = 0x811c9dc5;
    for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 0x01000193) >>> 0;
    h = avalanche(h);
    // The map only grows with distinct pool members ever seen; bound it against churn all the same.
    if (endpointHashes.size >= 65_536) endpointHashes.clear();
    endpointHashes.set(address, h);
  }
  return h;
}

/** The rendezvous weight of an endpoint for a key: the same everywhere, for every replica. */
export function rendezvousWeight(key: number, address: string): number {
  return avalanche((key ^ Math.imul(endpointHash(address), 0x9e3779b1)) >>> 0);
}

function withSent(address: string, s: EndpointSignals, sent: RankContext['sentSinceScrape']): EndpointSignals {
  if (!fresh(s)) return s;
  const n = sent(address, s.updatedAt);
  return n === 0 ? s : { ...s, waiting: s.waiting + n };
}

/** The eligible candidates in score order, saturated ones left out. */
export function rank(candidates: readonly Endpoint[], ctx: RankContext, config: LoadAwareConfig): Ranking {
  const n = candidates.length;
  const key = ctx.prompt && ctx.prompt.blocks.length > 0 ? (ctx.prompt.blocks.at(-1) as number) : undefined;
  const rows = candidates.map((endpoint, i) => ({
    endpoint,
    signals: withSent(endpoint.address, ctx.signals.signals(endpoint.address), ctx.sentSinceScrape),
    weight: key === undefined ? 0 : rendezvousWeight(key, endpoint.address),
    order: (i - ctx.rotation + n * 1024) % n,
    rank: -1,
    score: 0,
  }));
  if (key !== undefined) {
    const byWeight = rows.slice().sort((a, b) => b.weight - a.weight);
    byWeight.forEach((r, i) => {
      r.rank = i;
    });
  }
  let total = 0;
  for (const s of config.scorers) total += s.weight;
  const kept = rows.filter((r) => !isSaturated(r.signals, config.shedding));
  for (const r of kept) {
    let sum = 0;
    const inFlight = ctx.inFlight(r.endpoint.address);
    for (const s of config.scorers) if (s.weight > 0) sum += s.weight * value(s, r.signals, inFlight, r.rank, ctx.prompt);
    r.score = total > 0 ? sum / total : 0;
  }
  // Ties go by the rendezvous weight when there is a prefix (so replicas agree), else by rotation (so load spreads).
  kept.sort((a, b) => b.score - a.score || (key === undefined ? a.order - b.order : b.weight - a.weight));
  return { ranked: kept.map((r) => r.endpoint), saturated: n - kept.length };
}
