// GIE v1.6.0 conformance: each upstream test's expectations on scenarios written for extlb
// (manifests/, on gie-base.yaml). Statuses are checked as the suite checks them; requests go
// through the converted configuration to a real reference picker over gRPC and on to the Pod the
// cluster's load balancer reaches with the picker's answer (gie.ts).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EPP } from '@extlb/types';
import { clusterHosts } from './endpoint-model.js';
import {
  type Delivery,
  GIE_APP,
  PRIMARY_GATEWAY,
  PickerFleet,
  type Pod,
  SECONDARY_GATEWAY,
  SELECTION_HEADER,
  gieScenario,
  podsOf,
  poolMustBeAccepted,
  poolMustHaveNoParents,
  poolMustHaveOneOf,
  routeMustBeAcceptedAndResolved,
} from './gie.js';
import { type Scenario, conformance } from './harness.js';

type Json = Record<string, any>;

const PRIMARY_PODS = 'primary-inference-model-server';
const SECONDARY_PODS = 'secondary-inference-model-server';
const PRIMARY_DEPLOYMENT = `${PRIMARY_PODS}-deployment`;
const SECONDARY_DEPLOYMENT = `${SECONDARY_PODS}-deployment`;
const FIVE_XX = [500, 501, 502, 503, 504];

/** Runs `fn` with the pickers of the scenario's world up, and stops them whatever happens. */
async function withPickers(s: Scenario, fn: (fleet: PickerFleet) => Promise<void>): Promise<void> {
  const fleet = await PickerFleet.start(s);
  try {
    await fn(fleet);
  } finally {
    await fleet.close();
  }
}

/** The request reached a Pod whose name starts with `backend` (the suite's Backend check), with 200. */
function reached(d: Delivery, backend: string, what: string): Pod {
  assert.equal(d.served.status, 200, `${what}: ${d.served.why}`);
  assert.ok(d.pod?.name.startsWith(backend), `${what}: reached ${d.pod?.name ?? d.served.host}, not a Pod of ${backend}`);
  return d.pod as Pod;
}

/** The request asked the picker of `pool` and reached the endpoint it named first. */
function followedPicker(fleet: PickerFleet, d: Delivery, pool: string, what: string): void {
  assert.equal(d.pickerEndpoint === undefined ? undefined : fleet.poolAt(d.pickerEndpoint), pool, `${what}: the picker asked`);
  const answer = d.answer as { metadata?: string };
  assert.ok(typeof answer === 'object' && typeof answer.metadata === 'string', `${what}: picker answer ${JSON.stringify(d.answer)}`);
  assert.equal(d.served.host, answer.metadata.split(',')[0], `${what}: Envoy must send the request to the endpoint the picker named`);
  assert.equal(d.served.attempts[0]?.by, 'override', `${what}: ${d.served.why}`);
}

const status = (d: Delivery) => d.served.status;

/** A request through `gateway` reached a Pod of `pods` by the picker of `pool`. */
async function reachesPool(fleet: PickerFleet, gateway: string, req: { host?: string; path: string }, pool: string, pods: string): Promise<void> {
  const what = `${req.host ?? ''}${req.path} on ${gateway}`;
  const d = await fleet.send(gateway, req);
  reached(d, pods, what);
  followedPicker(fleet, d, pool, what);
}

conformance(
  'InferencePoolAccepted',
  { status: 'pass' },
  () => {
    const s = gieScenario('inferencepool_accepted.yaml');
    poolMustHaveOneOf(s, 'primary-inference-pool', PRIMARY_GATEWAY, [{ type: 'Accepted', status: 'True' }]);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
  },
  'gie',
);

conformance(
  'InferencePoolResolvedRefsCondition',
  { status: 'pass' },
  async () => {
    const primaryRoute = `HTTPRoute/${GIE_APP}/httproute-for-primary-gw`;
    const secondaryRoute = `HTTPRoute/${GIE_APP}/httproute-for-secondary-gw`;
    const primary = { host: 'primary.example.com', path: '/primary-gateway-test' };
    const secondary = { host: 'secondary.example.com', path: '/secondary-gateway-test' };

    const both = gieScenario('inferencepool_resolvedrefs_condition.yaml');
    routeMustBeAcceptedAndResolved(both, 'httproute-for-primary-gw', PRIMARY_GATEWAY);
    routeMustBeAcceptedAndResolved(both, 'httproute-for-secondary-gw', SECONDARY_GATEWAY);
    poolMustBeAccepted(both, 'primary-inference-pool', PRIMARY_GATEWAY);
    poolMustBeAccepted(both, 'primary-inference-pool', SECONDARY_GATEWAY);
    await withPickers(both, async (fleet) => {
      reached(await fleet.send(PRIMARY_GATEWAY, primary), PRIMARY_DEPLOYMENT, 'primary Gateway');
      reached(await fleet.send(SECONDARY_GATEWAY, secondary), PRIMARY_DEPLOYMENT, 'secondary Gateway');
    });

    // The primary route is deleted: its Gateway's parent entry goes, the other stays.
    const one = gieScenario('inferencepool_resolvedrefs_condition.yaml', {}, [primaryRoute]);
    poolMustBeAccepted(one, 'primary-inference-pool', SECONDARY_GATEWAY);
    assert.deepEqual(
      (one.status('InferencePool', `${GIE_APP}/primary-inference-pool`).parents as Json[]).map((p) => p.parentRef.name),
      ['conformance-secondary'],
    );
    await withPickers(one, async (fleet) => {
      reached(await fleet.send(SECONDARY_GATEWAY, secondary), PRIMARY_DEPLOYMENT, 'secondary Gateway');
    });
    assert.equal(one.request(PRIMARY_GATEWAY, primary).type, 'not-found', 'the deleted route answers 404');

    // Both routes are deleted: the pool has no parents, and nothing routes to it.
    const none = gieScenario('inferencepool_resolvedrefs_condition.yaml', {}, [primaryRoute, secondaryRoute]);
    poolMustHaveNoParents(none, 'primary-inference-pool');
    assert.equal(none.request(SECONDARY_GATEWAY, secondary).type, 'not-found');
  },
  'gie',
);

conformance(
  'InferencePoolHTTPRoutePortValidation',
  { status: 'pass' },
  async () => {
    const s = gieScenario('inferencepool_httproute_port_validation.yaml');
    await withPickers(s, async (fleet) => {
      for (const [route, host, path] of [
        ['httproute-pool-port-unspecified', 'port-unspecified.example.com', '/test-port-unspecified'],
        ['httproute-pool-port-matching', 'port-matching.example.com', '/test-port-matching'],
        // The port of a backendRef to a pool is ignored: a port the pool does not have still serves.
        ['httproute-pool-port-non-matching', 'port-non-matching.example.com', '/test-port-non-matching'],
      ] as const) {
        routeMustBeAcceptedAndResolved(s, route, PRIMARY_GATEWAY);
        poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
        reached(await fleet.send(PRIMARY_GATEWAY, { host, path }), PRIMARY_DEPLOYMENT, route);
      }
    });
  },
  'gie',
);

conformance(
  'InferencePoolInvalidEPPService',
  { status: 'pass' },
  async () => {
    const s = gieScenario('inferencepool_invalid_epp_service.yaml');
    s.condition(s.routeParent('HTTPRoute', `${GIE_APP}/httproute-for-invalid-epp-pool`, PRIMARY_GATEWAY), 'Accepted', 'True', 'Accepted');
    poolMustHaveOneOf(s, 'pool-with-invalid-epp', PRIMARY_GATEWAY, [{ type: 'ResolvedRefs', status: 'False' }]);
    await withPickers(s, async (fleet) => {
      const plan = fleet.model(PRIMARY_GATEWAY).plan({ port: 80, host: 'example.com', path: '/invalid-epp-test' });
      assert.ok('upstream' in plan && plan.picker === undefined, 'no picker can be asked');
      const d = await fleet.send(PRIMARY_GATEWAY, { path: '/invalid-epp-test' });
      assert.ok(FIVE_XX.includes(status(d)), `5xx expected: ${d.served.why}`);
    });
  },
  'gie',
);

conformance(
  'InferencePoolMissingEPPRef',
  { status: 'pass' },
  async () => {
    const s = gieScenario('inferencepool_missing_epp_ref.yaml');
    s.condition(s.routeParent('HTTPRoute', `${GIE_APP}/httproute-for-missing-epp-ref-pool`, PRIMARY_GATEWAY), 'Accepted', 'True', 'Accepted');
    poolMustHaveOneOf(s, 'pool-with-missing-epp-ref', PRIMARY_GATEWAY, [
      { type: 'Accepted', status: 'True' },
      { type: 'Accepted', status: 'False', reason: 'EndpointPickerRefMissing' },
    ]);
    // extlb serves such a pool, round robin in the proxy, and its status says why with GIE's reason.
    poolMustHaveOneOf(s, 'pool-with-missing-epp-ref', PRIMARY_GATEWAY, [{ type: 'Accepted', status: 'True', reason: 'EndpointPickerRefMissing' }]);
    await withPickers(s, async (fleet) => {
      const seen = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const d = await fleet.send(PRIMARY_GATEWAY, { path: '/missing-epp-ref-test' });
        assert.equal(d.plan.picker, undefined, 'no picker is asked');
        seen.add(reached(d, PRIMARY_DEPLOYMENT, 'round robin').name);
      }
      assert.equal(seen.size, 3, 'round robin spreads over the pool');
    });
  },
  'gie',
);

conformance(
  'HTTPRouteInvalidInferencePoolRef',
  { status: 'pass' },
  () => {
    const s = gieScenario('httproute_invalid_inferencepool_ref.yaml');
    const c = s.routeParent('HTTPRoute', `${GIE_APP}/httproute-to-non-existent-pool`, PRIMARY_GATEWAY);
    s.condition(c, 'Accepted', 'True', 'Accepted');
    s.condition(c, 'ResolvedRefs', 'False', 'BackendNotFound');
  },
  'gie',
);

conformance(
  'HTTPRouteMultipleRulesDifferentPools',
  { status: 'pass' },
  async () => {
    const s = gieScenario('inferencepool_multiple_rules_different_pools.yaml');
    routeMustBeAcceptedAndResolved(s, 'httproute-multiple-rules-different-pools', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'secondary-inference-pool', PRIMARY_GATEWAY);
    await withPickers(s, async (fleet) => {
      await reachesPool(fleet, PRIMARY_GATEWAY, { path: '/primary' }, 'primary-inference-pool', PRIMARY_PODS);
      await reachesPool(fleet, PRIMARY_GATEWAY, { path: '/secondary' }, 'secondary-inference-pool', SECONDARY_PODS);
    });
  },
  'gie',
);

conformance(
  'HTTPRouteMultipleGatewaysDifferentPools',
  { status: 'pass' },
  async () => {
    const s = gieScenario('httproute_multiple_gateways_different_pools.yaml');
    routeMustBeAcceptedAndResolved(s, 'route-for-primary-gateway', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
    routeMustBeAcceptedAndResolved(s, 'route-for-secondary-gateway', SECONDARY_GATEWAY);
    poolMustBeAccepted(s, 'secondary-inference-pool', SECONDARY_GATEWAY);
    await withPickers(s, async (fleet) => {
      await reachesPool(fleet, PRIMARY_GATEWAY, { host: 'primary.example.com', path: '/test-primary-gateway' }, 'primary-inference-pool', PRIMARY_PODS);
      await reachesPool(
        fleet,
        SECONDARY_GATEWAY,
        { host: 'secondary.example.com', path: '/test-secondary-gateway' },
        'secondary-inference-pool',
        SECONDARY_PODS,
      );
    });
  },
  'gie',
);

/** Sends `total` requests, `concurrency` at a time, as the suite does. */
async function many(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < total; i += concurrency) {
    await Promise.all(Array.from({ length: Math.min(concurrency, total - i) }, (_, j) => one(i + j)));
  }
}

conformance(
  'GatewayFollowingEPPRouting',
  { status: 'pass' },
  async () => {
    const s = gieScenario('gateway_following_epp_routing.yaml');
    routeMustBeAcceptedAndResolved(s, 'httproute-for-primary-gw', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
    const pods = podsOf(s, PRIMARY_PODS);
    assert.equal(pods.length, 3);
    const request = (selection: string) => ({
      host: 'primary.example.com',
      path: '/primary-gateway-test',
      method: 'POST',
      headers: { [SELECTION_HEADER]: selection },
    });
    await withPickers(s, async (fleet) => {
      // What Envoy has of the picker: the pool's picker Pods, health-checked on the service the picker serves.
      const plan = fleet.model(PRIMARY_GATEWAY).plan({ port: 80, ...request(pods[0]?.ip as string) });
      assert.ok('upstream' in plan && plan.picker, 'the route asks a picker');
      const cluster = (s.gateway(PRIMARY_GATEWAY).clusters as Json[]).find((c) => c.name === plan.picker?.cluster) as Json;
      const endpoints = clusterHosts(s.gateway(PRIMARY_GATEWAY), cluster.name);
      assert.deepEqual(endpoints, ['10.244.9.10:9002']);
      assert.equal(fleet.poolAt(endpoints[0] as string), 'primary-inference-pool');
      const service = cluster.health_checks[0].grpc_health_check.service_name;
      assert.equal(await fleet.health(endpoints[0] as string, service), 1, `the picker answers SERVING for the health-checked service ${service}`);
      assert.equal(plan.picker.failureModeAllow, false, 'the primary pool fails closed');
      for (const pod of pods) {
        const d = await fleet.send(PRIMARY_GATEWAY, request(pod.ip));
        assert.equal(reached(d, PRIMARY_DEPLOYMENT, pod.name).name, pod.name);
        followedPicker(fleet, d, 'primary-inference-pool', pod.name);
      }
      for (const allowed of [[pods[2]], [pods[0], pods[1]], pods] as Pod[][]) {
        const names = allowed.map((p) => p.name);
        await many(100, 10, async (i) => {
          const d = await fleet.send(PRIMARY_GATEWAY, request(allowed.map((p) => p.ip).join(',')));
          const pod = reached(d, PRIMARY_DEPLOYMENT, `request ${i}`);
          assert.ok(names.includes(pod.name), `request ${i} reached ${pod.name}, outside ${names.join(', ')}`);
          followedPicker(fleet, d, 'primary-inference-pool', `request ${i}`);
        });
      }
    });
  },
  'gie',
);

conformance(
  'GatewayFollowingEPPRoutingWithDataParallelism',
  { status: 'pass' },
  async () => {
    const s = gieScenario('gateway_following_epp_routing_dp.yaml');
    routeMustBeAcceptedAndResolved(s, 'httproute-for-primary-gw-dp', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'dp-inference-pool', PRIMARY_GATEWAY);
    const pods = podsOf(s, 'dp-inference-model-server');
    assert.equal(pods.length, 3);
    const [a, b, c] = pods as [Pod, Pod, Pod];
    const request = (selection: string) => ({
      host: 'primary.example.com',
      path: '/primary-gateway-dp-test',
      method: 'POST',
      headers: { [SELECTION_HEADER]: selection },
    });
    await withPickers(s, async (fleet) => {
      for (const pod of pods) assert.equal(reached(await fleet.send(PRIMARY_GATEWAY, request(pod.ip)), pod.name, pod.name).name, pod.name);
      // The suite's cases: per IP, the ranks (ports) the picker may use; none listed means any of 3000, 3002, 3004.
      const cases: Record<string, string[]>[] = [{ [b.ip]: [] }, { [a.ip]: [], [c.ip]: ['3002'] }, { [a.ip]: [], [b.ip]: ['3000', '3004'], [c.ip]: [] }];
      for (const allowed of cases) {
        const selection = Object.keys(allowed)
          .sort()
          .flatMap((ip) => ((allowed[ip] as string[]).length === 0 ? [ip] : (allowed[ip] as string[]).map((p) => `${ip}:${p}`)))
          .join(',');
        const ranks = new Set<string>();
        await many(100, 10, async (i) => {
          const d = await fleet.send(PRIMARY_GATEWAY, request(selection));
          const pod = reached(d, 'dp-inference-model-server', `request ${i}`);
          followedPicker(fleet, d, 'dp-inference-pool', `request ${i}`);
          const port = (d.served.host as string).split(':')[1] as string;
          const ports = allowed[pod.ip];
          assert.ok(ports !== undefined, `request ${i} reached ${pod.name}, not in the selection ${selection}`);
          assert.ok(
            (ports.length === 0 ? ['3000', '3002', '3004'] : ports).includes(port),
            `request ${i} reached port ${port} of ${pod.name}; allowed ${ports}`,
          );
          ranks.add(d.served.host as string);
        });
        assert.ok(ranks.size > 1 || selection.split(',').length === 1, `the picker spreads over the ranks of ${selection}`);
      }
    });
  },
  'gie',
);

/** Deterministic 32-bit values (hashes of a counter), standing in for the random value Envoy draws per stream. */
function randoms(): () => number {
  let i = 0;
  return () => createHash('sha256').update(String(i++)).digest().readUInt32BE(0);
}

conformance(
  'GatewayWeightedAcrossTwoInferencePools',
  { status: 'pass' },
  async () => {
    const s = gieScenario('gateway_weighted_two_pools.yaml');
    routeMustBeAcceptedAndResolved(s, 'httproute-weighted-two-pools', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'secondary-inference-pool', PRIMARY_GATEWAY);
    const primary = podsOf(s, PRIMARY_PODS);
    const secondary = podsOf(s, SECONDARY_PODS);
    const poolOf = (cluster: string) => cluster.split('/')[2];
    const next = randoms();
    const request = (selection: string) => ({
      host: 'primary.example.com',
      path: '/weighted-two-pools-test',
      method: 'POST',
      headers: { [SELECTION_HEADER]: selection },
    });
    await withPickers(s, async (fleet) => {
      // Warm-up, pinned to each pod of both pools: eventually served by that pod. When the split
      // sends it to the other pool, that pool's picker has nothing eligible and answers 503.
      for (const pod of [...primary, ...secondary]) {
        let done = false;
        for (let attempt = 0; attempt < 50 && !done; attempt++) {
          const d = await fleet.send(PRIMARY_GATEWAY, request(`${pod.ip}:3000`), { random: next() });
          if (d.served.status === 200) {
            assert.equal(d.pod?.name, pod.name);
            done = true;
          } else assert.deepEqual(d.answer, { immediate: EPP.status.noEndpoint }, `${pod.name}: ${d.served.why}`);
        }
        assert.ok(done, `${pod.name} is never reached`);
      }
      const all = [...primary, ...secondary].map((p) => p.ip).join(',');
      let primaryHits = 0;
      let secondaryHits = 0;
      await many(200, 5, async (i) => {
        const d = await fleet.send(PRIMARY_GATEWAY, request(all), { random: next() });
        const pool = poolOf(d.served.cluster);
        followedPicker(fleet, d, pool as string, `request ${i}`);
        if (primary.some((p) => p.name === d.pod?.name) && pool === 'primary-inference-pool') primaryHits++;
        else if (secondary.some((p) => p.name === d.pod?.name) && pool === 'secondary-inference-pool') secondaryHits++;
        else assert.fail(`request ${i} to ${pool} reached ${d.pod?.name ?? d.served.why}`);
      });
      const total = primaryHits + secondaryHits;
      assert.equal(total, 200);
      const observed = primaryHits / total;
      const tolerance = Math.max(0.1, 4.5 * Math.sqrt((0.7 * 0.3) / total));
      assert.ok(Math.abs(observed - 0.7) <= tolerance, `primary share ${observed} (hits ${primaryHits}/${total}), expected 0.7 ± ${tolerance}`);
    });
  },
  'gie',
);

conformance(
  'GatewayDestinationEndpointServed',
  { status: 'pass' },
  async () => {
    // Reporting the served endpoint needs Envoy 1.38's selected_host_key.
    const s = gieScenario('gateway_destination_endpoint_served.yaml', { envoy: '1.38' });
    routeMustBeAcceptedAndResolved(s, 'httproute-for-destination-endpoint-served', PRIMARY_GATEWAY);
    poolMustBeAccepted(s, 'primary-inference-pool', PRIMARY_GATEWAY);
    await withPickers(s, async (fleet) => {
      for (const pod of podsOf(s, PRIMARY_PODS)) {
        const before = fleet.served('primary-inference-pool')[`${pod.ip}:3000`] ?? 0;
        const d = await fleet.send(PRIMARY_GATEWAY, {
          host: 'primary.example.com',
          path: '/destination-endpoint-served-test',
          method: 'POST',
          headers: { [SELECTION_HEADER]: pod.ip },
        });
        assert.equal(reached(d, PRIMARY_DEPLOYMENT, pod.name).name, pod.name);
        assert.equal(d.served.served, `${pod.ip}:3000`, 'the served endpoint Envoy records');
        assert.ok(d.served.reportedToPicker, 'and sends to the picker on the response path');
        assert.equal(fleet.served('primary-inference-pool')[`${pod.ip}:3000`], before + 1, 'the picker of the pool received it');
      }
    });
  },
  'gie',
);

conformance(
  'EppUnAvailableFailOpen',
  { status: 'pass' },
  async () => {
    const file = 'epp_unavailable_fail_open.yaml';
    const s = gieScenario(file);
    routeMustBeAcceptedAndResolved(s, 'httproute-for-failopen-pool-gw', SECONDARY_GATEWAY);
    poolMustBeAccepted(s, 'secondary-inference-pool', SECONDARY_GATEWAY);
    const pods = podsOf(s, SECONDARY_PODS);
    const target = pods[0] as Pod;
    const request = { host: 'secondary.example.com', path: '/failopen-pool-test', method: 'POST', headers: { [SELECTION_HEADER]: target.ip } };
    // Phase 1: the picker is up and pins the request to the first pod.
    await withPickers(s, async (fleet) => {
      assert.equal(reached(await fleet.send(SECONDARY_GATEWAY, request), target.name, 'picker up').name, target.name);
    });
    // Phase 2: the picker Service loses its endpoints. Upstream takes down the primary pool's
    // picker (not this route's); the pool's own picker is taken down too, which is what fail-open means.
    for (const slice of ['primary-endpoint-picker-svc-r8v2n', 'secondary-endpoint-picker-svc-r8v2n']) {
      const down = gieScenario(file, {}, [`EndpointSlice/${GIE_APP}/${slice}`]);
      await withPickers(down, async (fleet) => {
        const d = await fleet.send(SECONDARY_GATEWAY, request);
        reached(d, SECONDARY_DEPLOYMENT, `${slice} down`);
        if (slice.startsWith('secondary')) {
          assert.equal(d.answer, 'unreachable');
          assert.equal(d.plan.picker?.failureModeAllow, true, 'FailOpen is failure_mode_allow');
          assert.equal(d.served.attempts[0]?.by, 'fallback', 'the proxy picks the endpoint itself');
        }
      });
    }
  },
  'gie',
);

conformance(
  'InferencePoolAppProtocol',
  { status: 'pass' },
  async () => {
    // The suite reads the served endpoint back from the picker, which needs Envoy 1.38.
    const s = gieScenario('inferencepool_appprotocol.yaml', { envoy: '1.38' });
    const config = s.gateway(PRIMARY_GATEWAY);
    const cases = [
      [
        'httproute-for-inferencepool-appprotocol-h2c',
        'appprotocol-h2c-inference-pool',
        'appprotocol-h2c.example.com',
        '/inferencepool-app-protocol-h2c',
        '3001',
        'appprotocol-inference-model-server',
        true,
      ],
      [
        'httproute-for-inferencepool-appprotocol-http',
        'appprotocol-http-inference-pool',
        'appprotocol-http.example.com',
        '/inferencepool-app-protocol-http',
        '3000',
        'appprotocol-inference-model-server',
        false,
      ],
      [
        'httproute-for-inferencepool-appprotocol-default',
        'primary-inference-pool',
        'appprotocol-default.example.com',
        '/inferencepool-app-protocol-default',
        '3000',
        PRIMARY_PODS,
        false,
      ],
    ] as const;
    await withPickers(s, async (fleet) => {
      for (const [route, pool, host, path, port, app, h2c] of cases) {
        routeMustBeAcceptedAndResolved(s, route, PRIMARY_GATEWAY);
        poolMustBeAccepted(s, pool, PRIMARY_GATEWAY);
        // HTTP/2 without TLS towards the model servers exactly when the pool says kubernetes.io/h2c.
        const cluster = (config.clusters as Json[]).find((c) => c.name === `infpool/${GIE_APP}/${pool}`) as Json;
        const http2 =
          cluster.typed_extension_protocol_options?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']?.explicit_http_config?.http2_protocol_options;
        assert.equal(http2 !== undefined, h2c, `${pool}: HTTP/2 upstream`);
        assert.equal(cluster.transport_socket, undefined, `${pool}: cleartext`);
        for (const pod of podsOf(s, app)) {
          const selected = `${pod.ip}:${port}`;
          const d = await fleet.send(PRIMARY_GATEWAY, { host, path, method: 'POST', headers: { [SELECTION_HEADER]: selected } });
          assert.equal(reached(d, pod.name, `${pool} ${selected}`).name, pod.name);
          assert.equal(d.served.host, selected);
          assert.equal(d.served.served, selected, 'the served endpoint the picker is told');
          assert.ok(d.served.reportedToPicker);
        }
      }
    });
  },
  'gie',
);
