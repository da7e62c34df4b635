// The hold on an address whose connection flooded streams: 5 s, doubled on each offence soon after,
// at most 60 s, and forgotten after a quiet spell. On a clock the test moves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressHolds } from '../src/xds/address-hold.js';

test('an address offending again soon is held twice as long each time, at most the bound, and starts over after a quiet spell', () => {
  let now = 0;
  const holds = new AddressHolds(5000, 60_000, () => now);
  assert.equal(holds.heldFor('10.0.0.1'), 0);
  const lengths = [];
  for (let i = 0; i < 6; i++) {
    lengths.push(holds.hold('10.0.0.1'));
    now += lengths.at(-1) ?? 0;
  }
  assert.deepEqual(lengths, [5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  now = 1_000_000;
  assert.equal(holds.hold('10.0.0.1'), 5000, 'forgotten after five times the longest hold');
  now += 1000;
  assert.equal(holds.heldFor('10.0.0.1'), 4000);
  assert.equal(holds.heldFor('10.0.0.2'), 0, 'other addresses are not held');
  now += 4000;
  assert.equal(holds.heldFor('10.0.0.1'), 0);
});
