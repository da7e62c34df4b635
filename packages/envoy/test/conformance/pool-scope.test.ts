// The Endpoint Picker Protocol's 2026 scope rule, on the converter's output: an endpoint list
// belongs to the pool whose picker named it. A rule split across two InferencePools asks only the
// picker of the pool the request went to, a retry walks on down that pool's list and never moves
// to the other pool, and the served endpoint goes back to the picker that named it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GIE_APP, PRIMARY_GATEWAY, PickerFleet, SELECTION_HEADER, podsOf } from './gie.js';
import { Scenario } from './harness.js';

type Json = Record<string, any>;

const split = (backendRefs: Json[], retry?: Json): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'split', namespace: GIE_APP },
  spec: {
    parentRefs: [{ name: 'conformance-primary', namespace: 'inference-conformance-infra' }],
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/split' } }], backendRefs, ...(retry ? { retry } : {}) }],
  },
});
const pool = (name: string, weight: number): Json => ({ group: 'inference.networking.k8s.io', kind: 'InferencePool', name, weight });

function splitRoute(s: Scenario): Json {
  const rc = (s.gateway(PRIMARY_GATEWAY).routes as Json[])[0] as Json;
  return (rc.virtual_hosts as Json[])
    .flatMap((vh) => vh.routes as Json[])
    .find((r) => r.match.prefix === '/split' || r.match.path_separated_prefix === '/split') as Json;
}

test('a split across two pools: each weighted entry turns on its own pool picker only, and no retry re-selects the cluster', () => {
  const s = new Scenario(
    undefined,
    { envoy: '1.38' },
    [split([pool('primary-inference-pool', 50), pool('secondary-inference-pool', 50)], { attempts: 2, codes: [503] })],
    {
      base: 'gie-base.yaml',
    },
  );
  const route = splitRoute(s);
  assert.ok(route.route.retry_policy, 'the rule retries');
  assert.equal(route.route.retry_policy.refresh_cluster_on_retry, undefined, 'a retry stays on the cluster the request went to');
  for (const entry of route.route.weighted_clusters.clusters as Json[]) {
    const overrides = Object.values(entry.typed_per_filter_config as Record<string, Json>).filter((c) => c.overrides);
    assert.equal(overrides.length, 1, `${entry.name}: exactly one picker`);
    const pickerCluster = overrides[0]?.overrides.grpc_service.envoy_grpc.cluster_name as string;
    const poolName = (entry.name as string).split('/')[2] as string;
    assert.match(
      pickerCluster,
      new RegExp(`^picker/${GIE_APP}/${poolName.replace('-inference-pool', '')}-endpoint-picker-svc:9002$`),
      `${entry.name} asks its own picker`,
    );
  }
  const filters = (s.gateway(PRIMARY_GATEWAY).listeners as Json[])[0]?.filter_chains[0].filters[0].typed_config.http_filters as Json[];
  for (const f of filters.filter((x) => x.name.startsWith('envoy.filters.http.ext_proc')))
    assert.equal(f.typed_config.route_cache_action, 'RETAIN', 'a picker answer never re-routes');
});

test('a retry walks on down the list of the pool the request went to, and the served endpoint goes to that pool picker', async () => {
  const s = new Scenario(
    undefined,
    { envoy: '1.38' },
    [split([pool('primary-inference-pool', 50), pool('secondary-inference-pool', 50)], { attempts: 2, codes: [503] })],
    {
      base: 'gie-base.yaml',
    },
  );
  const primary = podsOf(s, 'primary-inference-model-server').map((p) => `${p.ip}:3000`);
  const fleet = await PickerFleet.start(s, { maxEndpoints: 2 });
  try {
    for (const [random, poolName] of [
      [10, 'primary-inference-pool'],
      [60, 'secondary-inference-pool'],
    ] as const) {
      const other = poolName === 'primary-inference-pool' ? 'secondary-inference-pool' : 'primary-inference-pool';
      const otherServed = JSON.stringify(fleet.served(other));
      // The first endpoint the picker names fails with 503; Envoy retries.
      const probe = await fleet.send(PRIMARY_GATEWAY, { path: '/split' }, { random });
      const [first, second] = ((probe.answer as { metadata: string }).metadata ?? '').split(',');
      assert.ok(first && second, `the picker names two endpoints: ${JSON.stringify(probe.answer)}`);
      // The picker rotates its list; the request that matters is one whose list starts with `first`.
      let d = await fleet.send(
        PRIMARY_GATEWAY,
        { path: '/split', headers: { [SELECTION_HEADER]: `${first},${second}` } },
        { random, failing: new Map([[first, 503]]) },
      );
      for (let i = 0; i < 3 && (d.answer as { metadata: string }).metadata !== `${first},${second}`; i++) {
        d = await fleet.send(
          PRIMARY_GATEWAY,
          { path: '/split', headers: { [SELECTION_HEADER]: `${first},${second}` } },
          { random, failing: new Map([[first, 503]]) },
        );
      }
      assert.equal(fleet.poolAt(d.pickerEndpoint as string), poolName, 'only the picker of the pool the request went to is asked');
      assert.deepEqual(
        d.served.attempts.map((a) => [a.host, a.by]),
        [
          [first, 'override'],
          [second, 'override'],
        ],
        `the retry takes the next entry of the same list, on the same pool: ${d.served.why}`,
      );
      assert.equal(d.served.cluster, `infpool/${GIE_APP}/${poolName}`);
      assert.equal(d.served.status, 200);
      assert.equal(d.served.served, second);
      assert.ok(d.served.reportedToPicker);
      assert.ok((fleet.served(poolName)[second] ?? 0) >= 1, 'the picker that named the list learns the served endpoint');
      assert.equal(JSON.stringify(fleet.served(other)), otherServed, 'the other pool picker hears nothing');
      if (poolName === 'primary-inference-pool') assert.ok(primary.includes(second));
    }
  } finally {
    await fleet.close();
  }
});

test('the share of a split that answers 500 asks no picker', async () => {
  const s = new Scenario(undefined, {}, [split([pool('primary-inference-pool', 50), pool('no-such-pool', 50)])], { base: 'gie-base.yaml' });
  const entry = (splitRoute(s).route.weighted_clusters.clusters as Json[]).find((c) => c.name === 'extlb-invalid-backend') as Json;
  assert.ok(Object.values(entry.typed_per_filter_config as Record<string, Json>).every((c) => c.disabled === true));
  const fleet = await PickerFleet.start(s);
  try {
    const d = await fleet.send(PRIMARY_GATEWAY, { path: '/split' }, { random: 60 });
    assert.equal(d.plan.picker, undefined);
    assert.equal(d.served.status, 500);
    const ok = await fleet.send(PRIMARY_GATEWAY, { path: '/split' }, { random: 10 });
    assert.equal(fleet.poolAt(ok.pickerEndpoint as string), 'primary-inference-pool');
    assert.equal(ok.served.status, 200);
  } finally {
    await fleet.close();
  }
});
