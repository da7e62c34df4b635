// The work queue's semantics, as controller-runtime's: a key added twice is worked once; a failure
// requeues the key with a backoff of its own that doubles; a success forgets the failures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket, WorkQueue } from '../src/index.js';

test('a failing key is retried with a doubling backoff of its own, and forgotten on success', async () => {
  const delays: number[] = [];
  const done: string[] = [];
  let failuresLeft = 3;
  const q = new WorkQueue(
    async (key) => {
      if (key === 'flaky' && failuresLeft-- > 0) throw new Error('500 from the API server');
      done.push(key);
    },
    { baseDelayMs: 2, concurrency: 1, onRetry: (_key, _err, delayMs) => delays.push(delayMs) },
  );
  q.add('flaky');
  // Queued behind it, twice: worked once.
  q.add('steady');
  q.add('steady');
  await q.idle();
  assert.deepEqual(delays, [2, 4, 8]);
  assert.deepEqual(done.sort(), ['flaky', 'steady'], 'each key once, the flaky one once it worked');
  assert.equal(q.retries('flaky'), 0, 'a success forgets');
  assert.equal(q.waiting(), 0);
});

test('a key added while it is worked on is worked once more after, not twice at once', async () => {
  let running = 0;
  let most = 0;
  let runs = 0;
  let release: () => void = () => {};
  const q = new WorkQueue(async () => {
    runs += 1;
    running += 1;
    most = Math.max(most, running);
    if (runs === 1) await new Promise<void>((r) => (release = r));
    running -= 1;
  });
  q.add('k');
  await new Promise((r) => setImmediate(r));
  q.add('k');
  q.add('k');
  release();
  await q.idle();
  assert.equal(runs, 2);
  assert.equal(most, 1);
});

test('a token bucket lets a burst through at once, then the rest at its rate', async () => {
  const bucket = new TokenBucket(20, 2);
  const taken: number[] = [];
  const all = Array.from({ length: 5 }, (_, i) => bucket.take().then(() => taken.push(i)));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(taken, [0, 1], 'the burst at once');
  await Promise.all(all);
  assert.deepEqual(taken, [0, 1, 2, 3, 4], 'the rest in order, as tokens come');
});
