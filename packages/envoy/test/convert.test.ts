import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { convert, toBootstrap, toXds, type ConvertResult } from '../src/index.js';
import { parseDuration } from '../src/gateway-duration.js';
import { envoyDuration } from '../src/envoy/proto-duration.js';
import { intersect } from '../src/resolve/hostnames.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { envoyOf, readObjects } from './golden.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const scenario = (name: string) => readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url)));

function routes(r: ConvertResult): Json[] {
  return (envoyOf(r).routes as Json[]).flatMap((rc) => rc.virtual_hosts.flatMap((vh: Json) => vh.routes));
}
function filters(r: ConvertResult): string[] {
  return (envoyOf(r).listeners[0] as Json).filter_chains[0].filters[0].typed_config.http_filters.map((f: Json) => f.name);
}
function status(r: ConvertResult, kind: string, name: string): Json {
  const s = r.statuses.find((x) => x.kind === kind && (x.metadata as Json).name === name);
  assert.ok(s, `no status for ${kind} ${name}`);
  return s as Json;
}
function conditions(s: Json, list: 'parents' | 'ancestors' = 'parents', i = 0): Record<string, Json> {
  return Object.fromEntries(s.status[list][i].conditions.map((c: Json) => [c.type, c]));
}

test('Gateway API durations convert to Envoy durations', () => {
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1.5s'), undefined);
  assert.equal(envoyDuration(90_000), '90s');
  assert.equal(envoyDuration(1500), '1.500s');
  assert.equal(envoyDuration(0), '0s');
});

test('hostnames intersect as Gateway API says', () => {
  assert.equal(intersect(undefined, 'a.example.com'), 'a.example.com');
  assert.equal(intersect('*.example.com', 'a.example.com'), 'a.example.com');
  assert.equal(intersect('a.example.com', '*.example.com'), 'a.example.com');
  assert.equal(intersect('*.example.com', 'example.com'), undefined);
  assert.equal(intersect('a.example.com', 'b.example.com'), undefined);
  assert.equal(intersect('*.example.com', '*.example.com'), '*.example.com');
});

test('a client-sent endpoint header is stripped before the picker runs', () => {
  for (const name of ['header-source', 'backendpool-picker', 'legacy-mode']) {
    const r = convert(scenario(name), { now: NOW, envoy: name === 'legacy-mode' ? 'legacy' : '1.35' });
    const names = filters(r);
    const strip = names.indexOf('envoy.filters.http.header_mutation');
    assert.ok(strip >= 0 && strip < names.findIndex((n) => n.startsWith('envoy.filters.http.ext_proc')), `${name}: ${names.join(', ')}`);
    const mutation = (envoyOf(r).listeners[0] as Json).filter_chains[0].filters[0].typed_config.http_filters[strip].typed_config;
    assert.deepEqual(mutation.mutations.request_mutations, [{ remove: 'x-gateway-destination-endpoint' }]);
  }
});

test('retries let Envoy walk the picker list: maxEndpoints - 1 retries with a per-try timeout', () => {
  const r = convert(scenario('backendpool-picker'), { now: NOW, perTryTimeout: '3s' });
  const policy = routes(r)[0]?.route.retry_policy;
  assert.equal(policy.num_retries, 2);
  assert.equal(policy.per_try_timeout, '3s');
  assert.deepEqual(policy.retry_on.split(',').sort(), ['5xx', 'connect-failure', 'reset']);
  assert.equal(routes(r)[0]?.route.timeout, '9s', 'the route timeout leaves room for every attempt');
});

test('the ext_proc filter is disabled by default and enabled per route with the backend picker', () => {
  const r = convert(scenario('mixed-pool-and-service'), { now: NOW });
  const hcm = (envoyOf(r).listeners[0] as Json).filter_chains[0].filters[0].typed_config;
  const ext = hcm.http_filters.find((f: Json) => f.name === 'envoy.filters.http.ext_proc/200ms');
  assert.equal(ext.disabled, true);
  assert.deepEqual(ext.typed_config.metadata_options.receiving_namespaces.untyped, ['envoy.lb']);
  const [pool, svc] = routes(r)[0]!.route.weighted_clusters.clusters;
  assert.equal(pool.typed_per_filter_config['envoy.filters.http.ext_proc/200ms'].overrides.grpc_service.envoy_grpc.cluster_name, 'picker/default/picker:9002');
  assert.equal(svc.typed_per_filter_config['envoy.filters.http.ext_proc/200ms'].disabled, true, 'the Service share never calls a picker');
});

test('weights carry over, invalid backends answer 500 for their share', () => {
  const w = convert(scenario('weighted-70-30'), { now: NOW });
  assert.deepEqual(
    routes(w)[0]?.route.weighted_clusters.clusters.map((c: Json) => [c.name, c.weight]),
    [
      ['bpool/default/blue', 70],
      ['bpool/default/green', 30],
    ],
  );
  const u = convert(scenario('unknown-backend-kind'), { now: NOW });
  const ra = routes(u)[0]?.route;
  assert.deepEqual(
    ra.weighted_clusters.clusters.map((c: Json) => [c.name, c.weight]),
    [
      ['bpool/default/llm', 2],
      ['extlb-invalid-backend', 2],
    ],
  );
  assert.equal(ra.cluster_not_found_response_code, 'INTERNAL_SERVER_ERROR');
  const rs = conditions(status(u, 'HTTPRoute', 'mixed'));
  assert.equal(rs.Accepted?.status, 'True');
  assert.equal(rs.ResolvedRefs?.status, 'False');
  assert.equal(rs.ResolvedRefs?.reason, 'InvalidKind');
});

test('cross-namespace refs need a ReferenceGrant', () => {
  const r = convert(scenario('cross-namespace-refs'), { now: NOW });
  assert.equal(conditions(status(r, 'HTTPRoute', 'granted')).ResolvedRefs?.status, 'True');
  const denied = conditions(status(r, 'HTTPRoute', 'denied')).ResolvedRefs;
  assert.equal(denied?.reason, 'RefNotPermitted');
  const d = r.diagnostics.find((x) => x.code === 'RefNotPermitted');
  assert.deepEqual(d?.object, { kind: 'HTTPRoute', namespace: 'app-b', name: 'denied' });
  assert.equal(d?.path, 'spec.rules[0].backendRefs[0]');
});

test('the oldest policy wins; the newer one is Conflicted, a policy without target is TargetNotFound', () => {
  const r = convert(scenario('conflicting-policies'), { now: NOW });
  assert.equal(conditions(status(r, 'LoadBalancerPolicy', 'older'), 'ancestors').Accepted?.reason, 'Accepted');
  assert.equal(conditions(status(r, 'LoadBalancerPolicy', 'newer'), 'ancestors').Accepted?.reason, 'Conflicted');
  assert.equal(conditions(status(r, 'LoadBalancerPolicy', 'orphan'), 'ancestors').Accepted?.reason, 'TargetNotFound');
  const cluster = envoyOf(r).clusters.find((c) => c.name === 'bpool/default/llm') as Json;
  assert.equal(cluster.load_balancing_policy.policies[0].typed_extension_config.name, 'envoy.load_balancing_policies.ring_hash');
  assert.deepEqual(routes(r)[0]?.route.hash_policy, [{ header: { header_name: 'x-session' } }]);
});

test('a missing picker: FailClose answers 500, FailOpen goes to the fallback policy without ext_proc', () => {
  const r = convert(scenario('missing-picker-service'), { now: NOW });
  const clusters = routes(r)[0]?.route.weighted_clusters.clusters.map((c: Json) => c.name);
  assert.deepEqual(clusters, ['bpool/default/open', 'extlb-invalid-backend']);
  assert.ok(!filters(r).some((n) => n.startsWith('envoy.filters.http.ext_proc')));
  assert.ok(filters(r).includes('envoy.filters.http.header_mutation'));
  assert.equal(conditions(status(r, 'BackendPool', 'closed')).ResolvedRefs?.reason, 'InvalidExtensionRef');
  assert.ok(r.diagnostics.some((d) => d.severity === 'error' && d.path === 'spec.loadBalancer.external.refs[0]'));
});

test('InferencePool failureMode maps to per-route failure_mode_allow', () => {
  const r = convert(scenario('inferencepool-failure-modes'), { now: NOW });
  const byName = Object.fromEntries(routes(r).map((x) => [x.name, x]));
  const allow = (n: string) => byName[n].typed_per_filter_config['envoy.filters.http.ext_proc/200ms'].overrides.failure_mode_allow;
  assert.equal(allow('default/open/rule/0/match/0'), true);
  assert.equal(allow('default/closed/rule/0/match/0'), false);
});

test('served-endpoint reporting needs 1.38; on 1.35 it is left out', () => {
  const input = scenario('served-endpoint-1.38');
  const key = (r: ConvertResult) =>
    (envoyOf(r).clusters.find((c) => c.name === 'bpool/default/llm') as Json).load_balancing_policy.policies[0].typed_extension_config.typed_config
      .selected_host_key;
  assert.deepEqual(key(convert(input, { envoy: '1.38', now: NOW })), { key: 'envoy.lb', path: [{ key: 'x-gateway-destination-endpoint-served' }] });
  const old = convert(input, { envoy: '1.35', now: NOW });
  assert.equal(key(old), undefined);
  assert.ok(
    old.diagnostics.some((d) => d.code === 'ServedEndpointNeeds138'),
    JSON.stringify(old.diagnostics),
  );
});

test('dns mode emits a headless Service per pool; eds mode emits ClusterLoadAssignments', () => {
  const dns = convert(scenario('backendpool-picker'), { endpoints: 'dns', now: NOW });
  const svc = envoyOf(dns).manifests[0] as Json;
  assert.equal(svc.spec.clusterIP, 'None');
  assert.deepEqual(svc.spec.selector, { app: 'llm' });
  const cluster = envoyOf(dns).clusters.find((c) => c.name === 'bpool/default/llm') as Json;
  assert.equal(cluster.type, 'STRICT_DNS');
  assert.equal(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, 'extlb-bpool-llm.default.svc.cluster.local');
  const eds = convert(scenario('backendpool-picker'), { endpoints: 'eds', now: NOW });
  assert.equal((envoyOf(eds).clusters.find((c) => c.name === 'bpool/default/llm') as Json).type, 'EDS');
  assert.equal((envoyOf(eds).endpoints[0] as Json).endpoints[0].lb_endpoints.length, 3);
  assert.throws(() => toBootstrap(envoyOf(eds)), /EDS clusters need an xDS server/);
  const bootstrap = toBootstrap(envoyOf(eds), { xdsServer: '[fd00::1]:18000' }) as Json;
  assert.ok(bootstrap.dynamic_resources.ads_config);
  assert.deepEqual(bootstrap.node, { id: 'default/gw', cluster: 'default/gw' }, 'an ADS client must announce its node; the cluster names the Gateway');
  assert.equal(bootstrap.static_resources.clusters.at(-1).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, 'fd00::1');
});

test('legacy mode: ORIGINAL_DST with a warning that there is no fallback list', () => {
  const r = convert(scenario('legacy-mode'), { envoy: 'legacy', now: NOW });
  const c = envoyOf(r).clusters.find((x) => x.name === 'bpool/default/llm') as Json;
  assert.equal(c.type, 'ORIGINAL_DST');
  assert.deepEqual(c.original_dst_lb_config, { use_http_header: true, http_header_name: 'x-gateway-destination-endpoint' });
  assert.ok(r.diagnostics.some((d) => d.code === 'LegacyNoFallback' && d.severity === 'warning'));
});

test('match precedence: exact, then regex, then the longest prefix; ties by route age', () => {
  const r = convert(scenario('route-features'), { now: NOW });
  const names = (envoyOf(r).routes[0] as Json).virtual_hosts[0].routes.map((x: Json) => x.name);
  assert.equal(names[0], 'default/shop/rule/0/match/1', 'Exact /login');
  assert.equal(names[1], 'default/shop/rule/2/match/0', 'RegularExpression');
  assert.equal(names[names.length - 1], 'default/shop/rule/3/match/0', 'the / prefix comes last');
});

test('Gateway status: attached routes per listener; a TCP listener is served for TCPRoutes, an SCTP one is not accepted', () => {
  const r = convert(scenario('route-features'), { now: NOW });
  const listeners = status(r, 'Gateway', 'web').status.listeners as Json[];
  assert.deepEqual(
    listeners.map((l) => [l.name, l.attachedRoutes]),
    [
      ['http', 2],
      ['https', 1],
      ['tcp', 0],
    ],
  );
  const tcp = Object.fromEntries(listeners[2]?.conditions.map((c: Json) => [c.type, c]));
  assert.equal(tcp.Accepted.status, 'True');
  assert.deepEqual(listeners[2]?.supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'TCPRoute' }]);
  const objects = scenario('route-features').map((o) => {
    const x = o as Json;
    if (x.kind !== 'Gateway') return o;
    return { ...x, spec: { ...x.spec, listeners: x.spec.listeners.map((l: Json) => (l.protocol === 'TCP' ? { ...l, protocol: 'SCTP' } : l)) } };
  });
  const sctp = (status(convert(objects, { now: NOW }), 'Gateway', 'web').status.listeners as Json[]).find((l) => l.name === 'tcp');
  const accepted = ((sctp?.conditions ?? []) as Json[]).find((c) => c.type === 'Accepted');
  assert.equal(accepted?.status, 'False');
  assert.equal(accepted?.reason, 'UnsupportedProtocol');
  assert.deepEqual(sctp?.supportedKinds, []);
});

test('gatewayClassNames converts only those Gateways; routes to other classes get no status entry from us', () => {
  const objects = scenario('backendpool-picker');
  const mine = convert(objects, { now: NOW, gatewayClassNames: ['extlb'] });
  assert.equal(envoyOf(mine).listeners.length, 1);
  const theirs = convert(objects, { now: NOW, gatewayClassNames: ['someone-else'] });
  assert.deepEqual(Object.keys(theirs.gateways), []);
  assert.deepEqual(status(theirs, 'HTTPRoute', 'chat').status.parents, []);
  assert.ok(theirs.diagnostics.some((d) => d.code === 'OtherGatewayClass' && d.path === 'spec.parentRefs[0]'));
});

test('invalid input gives diagnostics with object and field path, never an exception', () => {
  const r = convert(
    [
      null,
      {
        apiVersion: 'extlb.dev/v1alpha1',
        kind: 'BackendPool',
        metadata: { name: 'p' },
        spec: { selector: { matchLabels: { a: 'b' } }, targetPorts: [{ number: 'x' }] },
      },
      {
        apiVersion: 'extlb.dev/v1alpha1',
        kind: 'LoadBalancerPolicy',
        metadata: { name: 'q' },
        spec: { targetRefs: [{ group: '', kind: 'Service', name: 's' }], loadBalancer: { type: 'External' } },
      },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r' }, spec: { rules: 'nope' } },
    ],
    { now: NOW },
  );
  const paths = r.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.object?.kind ?? ''} ${d.path ?? ''}`);
  assert.ok(paths.includes('BackendPool spec.targetPorts[0].number'), paths.join('\n'));
  assert.ok(paths.includes('LoadBalancerPolicy spec.loadBalancer'), paths.join('\n'));
  assert.ok(paths.includes('HTTPRoute spec.rules'), paths.join('\n'));
});

test('output is byte-identical whatever the input order', () => {
  const objects = [
    ...scenario('route-features'),
    ...scenario('conflicting-policies'),
    ...scenario('cross-namespace-refs'),
    ...scenario('weighted-70-30'),
    ...scenario('grpc-and-backend-tls'),
  ];
  const render = (r: ConvertResult) =>
    JSON.stringify([Object.entries(r.gateways).map(([name, c]) => [name, toBootstrap(c), toXds(c)]), r.statuses, r.diagnostics]);
  const expected = render(convert(objects, { now: NOW }));
  fc.assert(
    fc.property(fc.shuffledSubarray(objects, { minLength: objects.length, maxLength: objects.length }), (shuffled) => {
      assert.equal(render(convert(shuffled, { now: NOW })), expected);
    }),
    { numRuns: 40, seed: 7 },
  );
});

test('random values anywhere in the objects never crash the converter, and what it emits always loads', () => {
  const validator = loadEnvoyValidator('1.35');
  const base = [
    ...scenario('mixed-pool-and-service'),
    ...scenario('route-features'),
    ...scenario('conflicting-policies'),
    ...scenario('grpc-and-backend-tls'),
  ] as Json[];
  // Every path to a value in the inputs, so that mutations hit fields the converter reads.
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    if (at.length > 1) paths.push(at);
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        walk(x, [...at, i]);
      });
    } else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  base.forEach((o, i) => {
    walk(o, [i]);
  });
  const anything = fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.integer({ min: -5, max: 70000 }),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
    fc.constant('/'),
    fc.constant('External'),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(paths.length - 1), anything), { minLength: 1, maxLength: 4 }), (mutations) => {
      const objects = structuredClone(base);
      for (const [which, value] of mutations) {
        const path = paths[which] as (string | number)[];
        let node: any = objects;
        for (const k of path.slice(0, -1)) {
          if (node === null || typeof node !== 'object') break;
          node = node[k];
        }
        if (node !== null && typeof node === 'object') node[path[path.length - 1] as string] = value;
      }
      const r = convert(objects, { now: NOW });
      for (const config of Object.values(r.gateways)) {
        assert.deepEqual(validator.validateBootstrap(toBootstrap(config)), []);
        assert.deepEqual(validator.validateXds(toXds(config)), []);
      }
    }),
    { numRuns: 300, seed: 4 },
  );
});

test('a route whose rules break on invalid values says so: PartiallyInvalid, or Accepted=False with no rule left', () => {
  const gateway = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'a' },
    spec: { gatewayClassName: 'x', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] },
  };
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'a' }, spec: { ports: [{ port: 80 }] } };
  const route = (rules: Json[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'a' },
    spec: { parentRefs: [{ name: 'gw' }], rules },
  });
  const badRegex = { matches: [{ path: { type: 'RegularExpression', value: '/(a' } }], backendRefs: [{ name: 's', port: 80 }] };
  const good = { matches: [{ path: { type: 'PathPrefix', value: '/ok' } }], backendRefs: [{ name: 's', port: 80 }] };
  const message = 'spec.rules[0].matches[0].path.value: "/(a" is not a valid RE2 regular expression: missing closing ): `/(a`';

  const none = conditions(status(convert([gateway, service, route([badRegex])], { now: NOW }), 'HTTPRoute', 'r'));
  assert.deepEqual([none.Accepted?.status, none.Accepted?.reason, none.Accepted?.message], ['False', 'UnsupportedValue', message]);
  assert.equal(none.PartiallyInvalid, undefined);

  const result = convert([gateway, service, route([badRegex, good])], { now: NOW });
  const partly = conditions(status(result, 'HTTPRoute', 'r'));
  assert.equal(partly.Accepted?.status, 'True');
  assert.deepEqual([partly.PartiallyInvalid?.status, partly.PartiallyInvalid?.reason, partly.PartiallyInvalid?.message], ['True', 'UnsupportedValue', message]);
  assert.deepEqual(
    routes(result).map((r) => r.match.path_separated_prefix),
    ['/ok'],
  );
});
