// The scheduler's debounce: a batch of endpoint changes only is not held for the long debounce
// routes and Gateways get, nor is a change that comes alone after a quiet spell, and a batch that
// mixes kinds, or a burst, is one full recompute after the long one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Batch, Scheduler } from '../src/reconcile/scheduler.js';

const HOUR = 3_600_000;

describe('Scheduler', () => {
  it('runs an endpoint-only batch after the short endpoint debounce, not the long one', { timeout: 30_000 }, async () => {
    let ran!: (b: Batch) => void;
    const batch = new Promise<Batch>((resolve) => {
      ran = resolve;
    });
    const s = new Scheduler(async (b) => ran(b), { delayMs: HOUR, maxDelayMs: HOUR, endpointDelayMs: 1, endpointKinds: new Set(['EndpointSlice']) });
    s.touch('EndpointSlice');
    s.touch('EndpointSlice');
    const b = await batch;
    assert.equal(b.endpointsOnly, true);
    assert.deepEqual([...b.kinds], ['EndpointSlice']);
    await s.stop();
  });

  it('runs an endpoint change that comes alone at once; the ones right behind it wait the endpoint debounce, batched', { timeout: 30_000 }, async () => {
    const runs: { batch: Batch; at: number }[] = [];
    const s = new Scheduler(async (b) => void runs.push({ batch: b, at: Date.now() }), {
      delayMs: HOUR,
      maxDelayMs: HOUR,
      endpointDelayMs: 400,
      endpointKinds: new Set(['EndpointSlice']),
    });
    let touched = Date.now();
    s.touch('EndpointSlice');
    await s.idle();
    assert.equal(runs.length, 1);
    const lone = (runs[0]?.at ?? 0) - touched;
    assert.ok(lone < 400, `the lone endpoint change ran after ${lone} ms, not after the 400 ms endpoint debounce`);
    touched = Date.now();
    s.touch('EndpointSlice');
    s.touch('EndpointSlice');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(runs.length, 1, 'changes right after another wait for the endpoint debounce');
    await s.idle();
    assert.equal(runs.length, 2, 'as one batch');
    assert.ok((runs[1]?.at ?? 0) - touched >= 399, 'run after it');
    assert.equal(runs[1]?.batch.endpointsOnly, true);
    await s.stop();
  });

  it('holds a batch with any other kind for the full debounce, as one full recompute', { timeout: 30_000 }, async () => {
    const runs: Batch[] = [];
    const s = new Scheduler(async (b) => void runs.push(b), { delayMs: 50, maxDelayMs: 50, endpointDelayMs: 1, endpointKinds: new Set(['EndpointSlice']) });
    s.touch('EndpointSlice');
    s.touch('HTTPRoute');
    await s.idle();
    assert.equal(runs.length, 1);
    assert.deepEqual(
      runs.map((b) => [b.endpointsOnly, [...b.kinds].sort()]),
      [[false, ['EndpointSlice', 'HTTPRoute']]],
    );
    await s.stop();
  });

  it('runs a change that comes alone after a quiet spell after the short wait; a burst waits the debounce', { timeout: 30_000 }, async () => {
    const runs: { batch: Batch; at: number }[] = [];
    const s = new Scheduler(async (b) => void runs.push({ batch: b, at: Date.now() }), { delayMs: 400, maxDelayMs: HOUR, loneDelayMs: 1 });
    let touched = Date.now();
    s.touch('HTTPRoute');
    await s.idle();
    assert.equal(runs.length, 1);
    const lone = (runs[0]?.at ?? 0) - touched;
    assert.ok(lone < 400, `the lone change ran after ${lone} ms, not after the 400 ms debounce`);
    // Within the debounce of the last change: not quiet, so it waits.
    touched = Date.now();
    s.touch('HTTPRoute');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(runs.length, 1, 'a change right after another waits for its debounce');
    await s.idle();
    assert.ok((runs[1]?.at ?? 0) - touched >= 399, 'and runs after it');
    // After a quiet spell, a burst: the second change puts the batch back on the debounce.
    await new Promise((r) => setTimeout(r, 450));
    touched = Date.now();
    s.touch('HTTPRoute');
    s.touch('Gateway');
    await s.idle();
    assert.equal(runs.length, 3);
    assert.deepEqual([...(runs[2]?.batch.kinds ?? [])].sort(), ['Gateway', 'HTTPRoute'], 'the burst is one batch');
    assert.ok((runs[2]?.at ?? 0) - touched >= 399, 'run after the debounce');
    await s.stop();
  });

  it('runs what is pending at once when hurried, and debounces what comes after as before', { timeout: 30_000 }, async () => {
    const runs: Batch[] = [];
    const s = new Scheduler(async (b) => void runs.push(b), { delayMs: HOUR, maxDelayMs: HOUR });
    s.touch('HTTPRoute');
    s.touch('Gateway');
    s.hurry();
    await s.idle();
    assert.deepEqual(
      runs.map((b) => [...b.kinds].sort()),
      [['Gateway', 'HTTPRoute']],
    );
    s.touch('HTTPRoute');
    assert.equal(s.busy(), true, 'a later change waits for its debounce');
    assert.equal(runs.length, 1);
    await s.stop();
  });
});
