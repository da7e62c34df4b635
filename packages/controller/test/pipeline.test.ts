// The controller's pipeline applies the converter's output size limit: a Gateway whose
// configuration would pass it gets an OutputTooLarge error and keeps serving its last snapshot,
// instead of the controller building (and sending) a configuration no proxy should load.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Pipeline } from '../src/reconcile/pipeline.js';
import { pickerEstate } from '../../envoy/test/picker-estate.js';

const NOW = '2026-01-01T00:00:00Z';
const CLASSES = ['extlb'];
const GROUP = 'default/gw';

describe('Pipeline', () => {
  it('keeps the last snapshot of a Gateway whose new configuration is past the size limit, and says why', () => {
    const small = pickerEstate({ routes: 1, rules: 2, matches: 2, pools: 2 });
    const large = pickerEstate({ routes: 1, rules: 16, matches: 8, pools: 8 });
    const sizeOf = (objects: unknown[]) =>
      JSON.stringify(new Pipeline({ controllerName: 'extlb.dev/gateway' }).full(objects, CLASSES, NOW).snapshots.get(GROUP)).length;
    const limit = 4 * sizeOf(small);
    assert.ok(sizeOf(large) > 2 * limit, 'the large estate is well past the limit');

    const pipeline = new Pipeline({ controllerName: 'extlb.dev/gateway', maxOutputBytes: limit });
    const first = pipeline.full(small, CLASSES, NOW);
    const served = first.snapshots.get(GROUP);
    assert.ok((served?.routes?.length ?? 0) > 0, 'the small estate is converted');
    assert.deepEqual(
      first.diagnostics.filter((d) => d.code === 'OutputTooLarge'),
      [],
    );

    const second = pipeline.full(large, CLASSES, NOW);
    assert.equal(second.snapshots.get(GROUP), served, 'the Gateway keeps its last snapshot');
    const tooLarge = second.diagnostics.filter((d) => d.code === 'OutputTooLarge');
    assert.equal(tooLarge.length, 1);
    assert.match(tooLarge[0]?.message ?? '', new RegExp(`more than ${limit} bytes`));

    // The kept snapshot's clusters are not the new IR's, so an endpoint-only recompute leaves it be.
    assert.equal(pipeline.endpointsOnly([])?.snapshots.get(GROUP), served);
  });

  it('gives a Gateway that was never converted no snapshot when it is past the limit', () => {
    const pipeline = new Pipeline({ controllerName: 'extlb.dev/gateway', maxOutputBytes: 1000 });
    const r = pipeline.full(pickerEstate({ routes: 1, rules: 4, matches: 4, pools: 4 }), CLASSES, NOW);
    assert.equal(r.snapshots.has(GROUP), false);
    assert.ok(r.diagnostics.some((d) => d.code === 'OutputTooLarge'));
  });
});
