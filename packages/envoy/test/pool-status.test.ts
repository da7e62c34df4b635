// InferencePool (and BackendPool) status as GIE v1.6 defines it: one parent entry per Gateway,
// the reason that says how a pool without endpointPickerRef is served, HTTPRouteNotAccepted for a
// Gateway that only rejected the pool's routes; and the served endpoint the protocol asks for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { convert, toBootstrap } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';

const gateway = (name: string, listener: Json = {}): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name, namespace: 'infra' },
  spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } }, ...listener }] },
});
const route = (name: string, gateways: string[]): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace: 'models' },
  spec: {
    parentRefs: gateways.map((g) => ({ name: g, namespace: 'infra' })),
    rules: [{ backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llm' }] }],
  },
});
const inferencePool = (picker: boolean): Json => ({
  apiVersion: 'inference.networking.k8s.io/v1',
  kind: 'InferencePool',
  metadata: { name: 'llm', namespace: 'models' },
  spec: {
    selector: { matchLabels: { app: 'llm' } },
    targetPorts: [{ number: 8000 }],
    ...(picker ? { endpointPickerRef: { name: 'epp', port: { number: 9002 } } } : {}),
  },
});
const pickerService: Json[] = [
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'epp', namespace: 'models' }, spec: { selector: { app: 'epp' }, ports: [{ port: 9002 }] } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'epp-1', namespace: 'models', labels: { 'kubernetes.io/service-name': 'epp' } },
    ports: [{ name: '', port: 9002 }],
    endpoints: [{ addresses: ['10.0.9.1'] }],
  },
];

function poolParents(r: ReturnType<typeof convert>): Json[] {
  const s = r.statuses.find((x) => x.kind === 'InferencePool') as Json;
  return s.status.parents;
}
const accepted = (parent: Json) => (parent.conditions as Json[]).find((c) => c.type === 'Accepted') as Json;

test('an InferencePool without endpointPickerRef is served round robin, and its status says so with EndpointPickerRefMissing', () => {
  const r = convert([gateway('gw'), route('r', ['gw']), inferencePool(false)], { now: NOW });
  const [parent] = poolParents(r);
  assert.equal(accepted(parent as Json).status, 'True');
  assert.equal(accepted(parent as Json).reason, 'EndpointPickerRefMissing');
  assert.match(accepted(parent as Json).message, /round robin/);
  assert.equal(r.ir.gateways[0]?.backends['infpool/models/llm']?.lb.type, 'RoundRobin');
});

test('a LoadBalancerPolicy that balances a pool without endpointPickerRef is named in its Accepted message', () => {
  const policy = {
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'LoadBalancerPolicy',
    metadata: { name: 'llm-lb', namespace: 'models', labels: { 'gateway.networking.k8s.io/policy': 'Direct' } },
    spec: { targetRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llm' }], loadBalancer: { type: 'LeastRequest' } },
  };
  const r = convert([gateway('gw'), route('r', ['gw']), inferencePool(false), policy], { now: NOW });
  const a = accepted(poolParents(r)[0] as Json);
  assert.equal(a.reason, 'EndpointPickerRefMissing');
  assert.match(a.message, /LoadBalancerPolicy models\/llm-lb balances its endpoints \(LeastRequest\)/);
  assert.equal(
    r.diagnostics.find((d) => d.code === 'NoEndpointPicker'),
    undefined,
    'no warning: the policy says how the pool is balanced',
  );
});

test('one parent entry per Gateway, whatever the number of routes; a Gateway that only rejected the routes says HTTPRouteNotAccepted', () => {
  // gw-same admits routes of its own namespace only, so it rejects these routes.
  const objects = [
    gateway('gw-a'),
    gateway('gw-same', { allowedRoutes: { namespaces: { from: 'Same' } } }),
    route('r1', ['gw-a', 'gw-same']),
    route('r2', ['gw-a']),
    inferencePool(true),
    ...pickerService,
  ];
  const parents = poolParents(convert(objects, { now: NOW }));
  assert.deepEqual(
    parents.map((p) => [p.parentRef.name, accepted(p).status, accepted(p).reason]),
    [
      ['gw-a', 'True', 'Accepted'],
      ['gw-same', 'False', 'HTTPRouteNotAccepted'],
    ],
  );
  assert.match(accepted(parents[1] as Json).message, /HTTPRoute models\/r1/);
  // No route left: no parents.
  assert.deepEqual(poolParents(convert([gateway('gw-a'), inferencePool(true), ...pickerService], { now: NOW })), []);
});

test('an InferencePool reports the served endpoint to its picker on Envoy 1.38, and says it cannot on older targets', () => {
  const objects = [gateway('gw'), route('r', ['gw']), inferencePool(true), ...pickerService];
  const cluster = (r: ReturnType<typeof convert>) =>
    ((Object.values(r.gateways)[0]?.clusters ?? []) as Json[]).find((c) => c.name === 'infpool/models/llm') as Json;
  const policy = (r: ReturnType<typeof convert>) => cluster(r).load_balancing_policy.policies[0].typed_extension_config.typed_config;

  const v138 = convert(objects, { now: NOW, envoy: '1.38' });
  assert.deepEqual(policy(v138).selected_host_key, { key: 'envoy.lb', path: [{ key: 'x-gateway-destination-endpoint-served' }] });
  assert.equal(
    v138.diagnostics.find((d) => d.code === 'ServedEndpointNeeds138'),
    undefined,
  );
  assert.deepEqual(loadEnvoyValidator('1.38').validateBootstrap(toBootstrap(Object.values(v138.gateways)[0] as never)), []);

  const v135 = convert(objects, { now: NOW });
  assert.equal(policy(v135).selected_host_key, undefined);
  const warning = v135.diagnostics.find((d) => d.code === 'ServedEndpointNeeds138');
  assert.equal(warning?.severity, 'warning');
  assert.equal(
    warning?.message,
    'the Endpoint Picker Protocol asks the proxy to tell the picker which endpoint served each request, which needs Envoy 1.38 (selected_host_key); for target 1.35 the picker is never told',
  );
  assert.deepEqual(warning?.object, { kind: 'InferencePool', namespace: 'models', name: 'llm' });
});
