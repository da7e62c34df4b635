// Statuses as the leader merges and compares them: what counts as a change (and is written), what
// does not, and the entries and times kept from the object's current status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeStatus, sameStatus } from '../src/index.js';

const CONTROLLER = 'extlb.dev/gateway-controller';
const accepted = (status: string, time: string) => ({ type: 'Accepted', status, reason: 'Accepted', lastTransitionTime: time, observedGeneration: 1 });

test('sameStatus: key order and undefined fields are no change; any value, entry or order of a list is', () => {
  const a = { parents: [{ parentRef: { name: 'gw', namespace: 'shop' }, controllerName: CONTROLLER, conditions: [accepted('True', 't0')] }] };
  const reordered = {
    parents: [{ conditions: [accepted('True', 't0')], controllerName: CONTROLLER, parentRef: { namespace: 'shop', name: 'gw', port: undefined } }],
  };
  assert.ok(sameStatus(a, reordered));
  assert.ok(sameStatus(undefined, {}), 'no status is an empty one');
  assert.ok(!sameStatus(a, { parents: [{ ...a.parents[0], conditions: [accepted('False', 't0')] }] }), 'a condition status');
  assert.ok(!sameStatus(a, { parents: [] }), 'an entry gone');
  assert.ok(
    !sameStatus({ conditions: [accepted('True', 't0'), accepted('False', 't0')] }, { conditions: [accepted('False', 't0'), accepted('True', 't0')] }),
    'list order',
  );
  assert.ok(!sameStatus({ addresses: [{ value: '10.0.0.1' }] }, { addresses: { 0: { value: '10.0.0.1' } } }), 'a list is not an object');
  assert.ok(!sameStatus({ observedGeneration: 1 }, { observedGeneration: '1' }), 'a number is not its text');
  assert.ok(!sameStatus({ a: null }, {}), 'null is a value, unlike undefined');
});

test('mergeStatus keeps the other controllers’ entries and the times of unchanged conditions, so a recompute writes nothing', () => {
  const theirs = { parentRef: { name: 'gw' }, controllerName: 'example.com/other', conditions: [accepted('True', 'their-time')] };
  const current = { parents: [theirs, { parentRef: { name: 'gw' }, controllerName: CONTROLLER, conditions: [accepted('True', 't0')] }] };
  const desired = { parents: [{ parentRef: { name: 'gw' }, controllerName: CONTROLLER, conditions: [accepted('True', 't1')] }] };
  const merged = mergeStatus('HTTPRoute', current, desired, CONTROLLER);
  assert.ok(sameStatus(merged, current), 'unchanged: the time of the condition is kept');
  const flipped = mergeStatus('HTTPRoute', current, { parents: [{ ...desired.parents[0], conditions: [accepted('False', 't1')] }] }, CONTROLLER);
  assert.deepEqual(flipped.parents, [theirs, { ...desired.parents[0], conditions: [accepted('False', 't1')] }], 'a changed condition takes the new time');
});
