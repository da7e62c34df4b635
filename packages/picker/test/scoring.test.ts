// The load-aware profile's scorers, one at a time and together: the answer is the score order,
// saturated endpoints are left out, endpoints without fresh metrics rank as the worst, and two
// pickers that share nothing rank the same prefix alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEndpointList, type Endpoint } from '../src/codec.js';
import { EndpointPicker } from '../src/picker.js';
import { staticEndpoints } from '../src/pool-members.js';
import { DEFAULT_LOAD_AWARE, rank, rendezvousWeight, type LoadAwareConfig, type ScorerConfig } from '../src/scoring.js';
import { SIGNAL_STATES, type EndpointSignals, type SignalSource, type SignalState } from '../src/signals.js';

const ENDPOINTS = parseEndpointList('10.0.0.1:8000,10.0.0.2:8000,10.0.0.3:8000,10.0.0.4:8000').endpoints as Endpoint[];
const [A, B, C, D] = ENDPOINTS.map((e) => e.address) as [string, string, string, string];

/** Signals the test sets per endpoint (the scorers' input; the scraper that makes them is tested in signals.test.ts). */
class FixedSignals implements SignalSource {
  readonly values = new Map<string, EndpointSignals>();
  private listeners = new Set<() => void>();
  set(address: string, v: Partial<EndpointSignals>): this {
    this.values.set(address, { state: 'fresh', waiting: 0, running: 0, kvCache: 0, lora: undefined, updatedAt: 1, ...v });
    for (const l of this.listeners) l();
    return this;
  }
  signals(address: string): EndpointSignals {
    return this.values.get(address) ?? { state: 'pending', waiting: 0, running: 0, kvCache: 0, lora: undefined, updatedAt: 0 };
  }
  states(): Record<SignalState, number> {
    const out = Object.fromEntries(SIGNAL_STATES.map((s) => [s, 0])) as Record<SignalState, number>;
    for (const e of ENDPOINTS) out[this.signals(e.address).state]++;
    return out;
  }
  /** A new scrape with the same values: the endpoints' data is as of now. */
  rescrape(): void {
    for (const [address, v] of this.values) this.values.set(address, { ...v, updatedAt: v.updatedAt + 1 });
  }
  onUpdate(l: () => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  async close() {}
}

function only(scorers: ScorerConfig[], shedding: Partial<LoadAwareConfig['shedding']> = {}): LoadAwareConfig {
  return { ...DEFAULT_LOAD_AWARE, scorers, shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'none', ...shedding } };
}

function order(signals: SignalSource, config: LoadAwareConfig, extra: { inFlight?: Record<string, number>; blocks?: number[]; model?: string } = {}) {
  const prompt = extra.blocks || extra.model ? { blocks: extra.blocks ?? [], bytesRead: 0, ...(extra.model ? { model: extra.model } : {}) } : undefined;
  const ranking = rank(ENDPOINTS, { signals, inFlight: (a) => extra.inFlight?.[a] ?? 0, prompt, rotation: 0, sentSinceScrape: () => 0 }, config);
  return { order: ranking.ranked.map((e) => e.address), saturated: ranking.saturated };
}

test('queue: fewer waiting requests first', () => {
  const s = new FixedSignals().set(A, { waiting: 6 }).set(B, { waiting: 0 }).set(C, { waiting: 3 }).set(D, { waiting: 1 });
  assert.deepEqual(order(s, only([{ type: 'queue', weight: 1, max: 8 }])).order, [B, D, C, A]);
});

test('kv-cache: lower utilisation first', () => {
  const s = new FixedSignals().set(A, { kvCache: 0.2 }).set(B, { kvCache: 0.9 }).set(C, { kvCache: 0.5 }).set(D, { kvCache: 0.1 });
  assert.deepEqual(order(s, only([{ type: 'kv-cache', weight: 1 }])).order, [D, A, C, B]);
});

test("in-flight: the picker's own count of requests in flight, fewer first", () => {
  const s = new FixedSignals();
  for (const e of ENDPOINTS) s.set(e.address, {});
  assert.deepEqual(order(s, only([{ type: 'in-flight', weight: 1, max: 16 }]), { inFlight: { [A]: 5, [B]: 2, [C]: 9, [D]: 0 } }).order, [D, B, A, C]);
});

test('lora-affinity: the adapter loaded, then queued to load, then room to load it, then no room', () => {
  const s = new FixedSignals()
    .set(A, { lora: { running: ['x', 'y'], waiting: [], max: 2 } })
    .set(B, { lora: { running: ['x'], waiting: [], max: 4 } })
    .set(C, { lora: { running: ['y'], waiting: [], max: 2 } })
    .set(D, { lora: { running: [], waiting: ['y'], max: 2 } });
  assert.deepEqual(order(s, only([{ type: 'lora-affinity', weight: 1 }]), { model: 'y' }).order, [A, C, D, B]);
  // A request for an adapter nobody has goes where there is room for it: A holds its 2 adapters already.
  const z = order(s, only([{ type: 'lora-affinity', weight: 1 }]), { model: 'z' }).order;
  assert.deepEqual([z.slice(0, 3).sort(), z[3]], [[B, C, D].sort(), A]);
});

test('prefix-cache: the endpoints ranked by the rendezvous weight of the prefix key', () => {
  const s = new FixedSignals();
  for (const e of ENDPOINTS) s.set(e.address, {});
  const key = 0xdeadbeef;
  const expected = [A, B, C, D].sort((x, y) => rendezvousWeight(key, y) - rendezvousWeight(key, x));
  assert.deepEqual(order(s, only([{ type: 'prefix-cache', weight: 1 }]), { blocks: [1, 2, key] }).order, expected);
  // Removing an endpoint moves only the prefixes it ranked first.
  const without = rank(
    ENDPOINTS.filter((e) => e.address !== expected[3]),
    { signals: s, inFlight: () => 0, prompt: { blocks: [key], bytesRead: 0 }, rotation: 0, sentSinceScrape: () => 0 },
    only([{ type: 'prefix-cache', weight: 1 }]),
  );
  assert.deepEqual(
    without.ranked.map((e) => e.address),
    expected.slice(0, 3),
  );
});

test('weights: the weighted sum decides; a loaded prefix home loses to the next endpoint', () => {
  const s = new FixedSignals();
  for (const e of ENDPOINTS) s.set(e.address, {});
  const key = 12345;
  const byPrefix = [A, B, C, D].sort((x, y) => rendezvousWeight(key, y) - rendezvousWeight(key, x));
  const config = only([
    { type: 'prefix-cache', weight: 3 },
    { type: 'queue', weight: 2, max: 4 },
  ]);
  assert.equal(order(s, config, { blocks: [key] }).order[0], byPrefix[0]);
  s.set(byPrefix[0] as string, { waiting: 4 });
  // Home: 3×1 + 2×0 = 3; second: 3×0.5 + 2 = 3.5; third: 3×0.25 + 2 = 2.75; fourth: 3×0.125 + 2 = 2.375.
  const loaded = order(s, config, { blocks: [key] }).order;
  assert.deepEqual(loaded, [byPrefix[1], byPrefix[0], byPrefix[2], byPrefix[3]], 'the second-ranked prefix home takes the overflow');
});

test('endpoints whose metrics are not fresh score as the worst, never as idle', () => {
  for (const state of ['stale', 'unreachable', 'malformed', 'missing', 'pending'] as const) {
    const s = new FixedSignals().set(A, { state, waiting: 0, kvCache: 0 }).set(B, { waiting: 5, kvCache: 0.7 }).set(C, { waiting: 7 }).set(D, { kvCache: 0.9 });
    const got = order(
      s,
      only([
        { type: 'queue', weight: 1, max: 8 },
        { type: 'kv-cache', weight: 1 },
      ]),
    ).order;
    assert.equal(got.at(-1), A, `${state}: last`);
  }
});

test('saturated endpoints are left out of the answer; the count says how many', () => {
  const s = new FixedSignals().set(A, { waiting: 9 }).set(B, { kvCache: 0.97 }).set(C, {}).set(D, { state: 'stale', waiting: 50 });
  const got = order(s, only([{ type: 'queue', weight: 1 }], { mode: 'reject', queue: 8, kvCache: 0.95 }));
  assert.deepEqual(got.order, [C, D], 'a stale endpoint is not known to be saturated, so it stays, last');
  assert.equal(got.saturated, 2);
});

test('active-active: two pickers that share nothing answer the same ordered list for the same prefix', () => {
  const s1 = new FixedSignals();
  const s2 = new FixedSignals();
  for (const [i, e] of ENDPOINTS.entries()) {
    s1.set(e.address, { waiting: i % 2, kvCache: 0.1 * i });
    s2.set(e.address, { waiting: i % 2, kvCache: 0.1 * i });
  }
  const make = (signals: SignalSource) =>
    new EndpointPicker({ pool: staticEndpoints(ENDPOINTS.map((e) => e.address)), strategy: 'load-aware', signals, maxEndpoints: 3 });
  const p1 = make(s1);
  const p2 = make(s2);
  for (let key = 1; key <= 200; key++) {
    if (key % 4 === 0) {
      s1.rescrape();
      s2.rescrape();
    }
    const request = { headers: new Map(), prompt: { blocks: [key * 7919], bytesRead: 0 } };
    const a = p1.pick(request);
    const b = p2.pick(request);
    assert.equal(a.decision.kind, 'endpoints');
    assert.deepEqual(a.decision, b.decision, `prefix key ${key}`);
    a.finish();
    b.finish();
  }
  // Each replica counts only its own sends since the last scrape: one that sent elsewhere meanwhile
  // still names the same primary for a prefix (the prefix weighs more than a few sends).
  const p3 = make(s1);
  for (let i = 0; i < 3; i++) p3.pick({ headers: new Map() }).finish();
  let same = 0;
  for (let key = 1; key <= 200; key++) {
    if (key % 4 === 0) {
      s1.rescrape();
      s2.rescrape();
    }
    const request = { headers: new Map(), prompt: { blocks: [key * 104729], bytesRead: 0 } };
    const a = p2.pick(request);
    const c = p3.pick(request);
    if (a.decision.kind === 'endpoints' && c.decision.kind === 'endpoints' && a.decision.endpoints[0]?.address === c.decision.endpoints[0]?.address) same++;
    a.finish();
    c.finish();
  }
  assert.equal(same, 200);
});
