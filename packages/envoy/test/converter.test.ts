// The Converter: one composition of the stages, fed changes and proxy facts. Statuses are settled
// after the Envoy stage (a refused configuration is not Programmed), an EndpointSlice change
// rebuilds only the ClusterLoadAssignments of the Gateways it feeds (and gives what a full
// conversion of the same objects gives), and proxy facts change statuses without any stage.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type ConvertOptions, Converter, type ConverterUpdate, convert, MAX_CONDITION_MESSAGE, toXds } from '../src/index.js';
import { readObjects } from './golden.js';
import { pickerEstate } from './picker-estate.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';

function gateway(name: string): Json {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'default', generation: 3 },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  };
}
function route(name: string, parent: string, service: string): Json {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: { parentRefs: [{ name: parent }], rules: [{ backendRefs: [{ name: service, port: 80 }] }] },
  };
}
function service(name: string): Json {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } };
}
function slice(name: string, svc: string, ips: string[]): Json {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: ips.map((ip) => ({ addresses: [ip] })),
  };
}
const estate = () => [
  gateway('a'),
  gateway('b'),
  route('ra', 'a', 'sa'),
  route('rb', 'b', 'sb'),
  service('sa'),
  service('sb'),
  slice('sa-1', 'sa', ['10.0.0.1']),
  slice('sb-1', 'sb', ['10.0.1.1']),
];
const programmed = (statuses: readonly Json[], name: string) =>
  statuses.find((s) => s.kind === 'Gateway' && s.metadata.name === name)?.status.conditions.find((c: Json) => c.type === 'Programmed');

describe('Converter', () => {
  it('says a Gateway past the output limit is not Programmed, with why (convert() too)', () => {
    const objects = pickerEstate({ routes: 1, rules: 8, matches: 8, pools: 8 });
    const r = convert(objects, { now: NOW, maxOutputBytes: 2000 });
    assert.deepEqual(Object.keys(r.gateways), []);
    const p = programmed(r.statuses, 'gw');
    assert.equal(p.status, 'False');
    assert.equal(p.reason, 'Invalid');
    assert.match(p.message, /more than 2000 bytes/);
  });

  it('keeps serving the last configuration of a Gateway that grows past the limit', () => {
    const small = pickerEstate({ routes: 1, rules: 1, matches: 1, pools: 1 });
    const size = JSON.stringify(convert(small, { now: NOW }).gateways['default/gw']).length;
    const converter = new Converter({ now: NOW, maxOutputBytes: 4 * size });
    const first = converter.update({ objects: small });
    const served = first.gateways.get('default/gw');
    assert.ok(served);
    assert.equal(programmed(first.statuses, 'gw').status, 'True');
    const second = converter.update({ objects: pickerEstate({ routes: 1, rules: 8, matches: 8, pools: 8 }) });
    assert.equal(second.gateways.get('default/gw'), served, 'the previous configuration stays');
    assert.equal(programmed(second.statuses, 'gw').status, 'False');
    assert.ok(second.diagnostics.some((d) => d.code === 'OutputTooLarge'));
  });

  it('rebuilds only the endpoints a changed EndpointSlice feeds, as a full conversion would', () => {
    // Every update stamps a new time on every condition; that alone changes no status.
    let tick = 0;
    const converter = new Converter({ now: () => `2026-01-01T00:00:${String(tick++ % 60).padStart(2, '0')}Z`, endpoints: 'eds' });
    const first = converter.update({ objects: estate() });
    const a = first.gateways.get('default/a');
    const b = first.gateways.get('default/b');
    assert.ok(a && b);
    const moved = slice('sa-1', 'sa', ['10.0.0.1', '10.0.0.2']);
    const next = converter.update({ updated: [moved] });
    assert.equal(next.kind, 'endpoints');
    assert.deepEqual(next.changedGateways, ['default/a']);
    assert.equal(next.gateways.get('default/b'), b, 'Gateway b is not rebuilt');
    const a2 = next.gateways.get('default/a');
    assert.equal(a2?.listeners, a.listeners, 'listeners, routes and clusters are the last ones');
    assert.equal(a2?.clusters, a.clusters);
    const full = convert([...estate().filter((o) => o.metadata.name !== 'sa-1'), moved], { now: NOW, endpoints: 'eds' });
    assert.deepEqual(toXds(a2 as never), toXds(full.gateways['default/a'] as never));
    assert.deepEqual(next.statuses, full.statuses);
    // A slice gone, and one added for a Service no Gateway uses: the first rebuilds a, the second nothing.
    const gone = converter.update({ deleted: [moved] });
    assert.deepEqual(gone.changedGateways, ['default/a']);
    assert.deepEqual(gone.gateways.get('default/a')?.endpoints[0]?.endpoints ?? [], []);
    assert.deepEqual(converter.update({ added: [slice('other-1', 'other', ['10.9.9.9'])] }).changedGateways, []);
  });

  it('changes nothing an earlier update handed out when endpoints change', () => {
    // An endpoint update changes the Converter's slices, statuses and maps in place where they are
    // its own, and must copy what an earlier update handed out: its Gateways map, each Gateway's
    // assignment list, its statuses and diagnostics lists.
    const limit = JSON.stringify(convert(estate(), { now: NOW, endpoints: 'eds' }).gateways['default/b']).length + 300;
    const converter = new Converter({ now: NOW, endpoints: 'eds', maxOutputBytes: limit });
    const snapshot = (u: ConverterUpdate) =>
      JSON.stringify({
        gateways: [...u.gateways],
        changedGateways: u.changedGateways,
        statuses: u.statuses,
        changedStatuses: u.changedStatuses,
        diagnostics: u.diagnostics,
        ir: u.ir,
        needs: u.needs,
      });
    const seen: { u: ConverterUpdate; json: string }[] = [];
    const step = (change: Parameters<Converter['update']>[0]) => {
      const u = converter.update(change);
      seen.push({ u, json: snapshot(u) });
      return u;
    };
    step({ objects: estate() });
    assert.deepEqual(step({ updated: [slice('sa-1', 'sa', ['10.0.0.1', '10.0.0.2'])] }).changedGateways, ['default/a']);
    const bad = step({ updated: [slice('sa-1', 'sa', ['10.0.0.1', 'not-an-ip'])] });
    assert.ok(
      bad.diagnostics.some((d) => d.object?.name === 'sa-1'),
      'a finding about the slice',
    );
    converter.setProxyFacts('default/b', { infrastructure: { addresses: [{ type: 'IPAddress', value: '192.0.2.7' }], available: true } });
    const facts = step({ updated: [slice('sb-1', 'sb', ['10.0.1.2'])] });
    const addresses = (u: ConverterUpdate) => (u.statuses as Json[]).find((s) => s.kind === 'Gateway' && s.metadata.name === 'b')?.status.addresses;
    assert.deepEqual(addresses(facts), [{ type: 'IPAddress', value: '192.0.2.7' }], 'the statuses after the facts carry them');
    assert.equal(addresses(bad), undefined);
    assert.ok(!step({ deleted: [slice('sa-1', 'sa', [])] }).diagnostics.some((d) => d.object?.name === 'sa-1'), 'the finding goes with the slice');
    const many = Array.from({ length: 20 }, (_, i) => `10.0.1.${i + 10}`);
    const refused = step({ updated: [slice('sb-1', 'sb', many)] });
    assert.equal(programmed(refused.statuses, 'b').status, 'False', 'b grew past the limit');
    assert.equal(programmed(facts.statuses, 'b').status, 'True');
    assert.deepEqual(
      seen.map(({ u }) => u.kind),
      ['full', 'endpoints', 'endpoints', 'endpoints', 'endpoints', 'endpoints'],
    );
    for (const [i, { u, json }] of seen.entries()) assert.equal(snapshot(u), json, `update ${i} is as it was handed out`);
  });

  it('builds a route update after endpoint updates from the slices they left', () => {
    // The slices endpoint updates change are the Converter's own, not the Inputs of the last full
    // update: a Gateway a route update builds again must see them.
    const converter = new Converter({ now: NOW, endpoints: 'eds' });
    converter.update({ objects: estate() });
    const grown = slice('sa-1', 'sa', ['10.0.0.1', '10.0.0.2']);
    assert.equal(converter.update({ updated: [grown] }).kind, 'endpoints');
    const moved = {
      ...route('ra', 'a', 'sa'),
      spec: { parentRefs: [{ name: 'a' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], backendRefs: [{ name: 'sa', port: 80 }] }] },
    };
    const next = converter.update({ updated: [moved] });
    assert.deepEqual(next.resolvedGateways, ['default/a']);
    const held = estate().map((o) => (o.kind === 'HTTPRoute' && o.metadata.name === 'ra' ? moved : o.metadata.name === 'sa-1' ? grown : o));
    assert.deepEqual(Object.fromEntries(next.gateways), convert(held, { now: NOW, endpoints: 'eds' }).gateways);
  });

  it('rebuilds the endpoints of a split UDPRoute when a slice of one of its backends changes', () => {
    const udp = (name: string): Json => ({
      ...service(name),
      spec: { ports: [{ name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' }] },
    });
    const udpSlice = (name: string, svc: string, ips: string[]): Json => ({ ...slice(name, svc, ips), ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] });
    const objects = [
      { ...gateway('a'), spec: { gatewayClassName: 'extlb', listeners: [{ name: 'dns', port: 53, protocol: 'UDP' }] } },
      {
        apiVersion: 'gateway.networking.k8s.io/v1alpha2',
        kind: 'UDPRoute',
        metadata: { name: 'dns', namespace: 'default' },
        spec: {
          parentRefs: [{ name: 'a' }],
          rules: [
            {
              backendRefs: [
                { name: 'dns-a', port: 53, weight: 3 },
                { name: 'dns-b', port: 53, weight: 1 },
              ],
            },
          ],
        },
      },
      udp('dns-a'),
      udp('dns-b'),
      udpSlice('dns-a-1', 'dns-a', ['10.0.4.1']),
      udpSlice('dns-b-1', 'dns-b', ['10.0.5.1']),
    ];
    const converter = new Converter({ now: NOW, endpoints: 'eds' });
    const split = (endpoints: readonly Json[] | undefined) => endpoints?.find((c) => c.cluster_name.startsWith('udp-split/'));
    const before = split(converter.update({ objects }).gateways.get('default/a')?.endpoints);
    assert.equal(before?.endpoints[0].lb_endpoints.length, 2, 'the split has both backends’ endpoints');
    const grown = udpSlice('dns-a-1', 'dns-a', ['10.0.4.1', '10.0.4.2']);
    const next = converter.update({ updated: [grown] });
    assert.equal(next.kind, 'endpoints');
    const full = convert([...objects.filter((o) => o.metadata.name !== 'dns-a-1'), grown], { now: NOW, endpoints: 'eds' });
    const after = split(next.gateways.get('default/a')?.endpoints);
    assert.deepEqual(after, split(full.gateways['default/a']?.endpoints));
    assert.equal(after?.endpoints[0].lb_endpoints.length, 3);
  });

  it('resolves again when anything but EndpointSlices changes', () => {
    const converter = new Converter({ now: NOW, endpoints: 'eds' });
    converter.update({ objects: estate() });
    const next = converter.update({ deleted: [route('rb', 'b', 'sb')] });
    assert.equal(next.kind, 'full');
    assert.deepEqual(
      next.statuses,
      convert(
        estate().filter((o) => o.metadata.name !== 'rb'),
        { now: NOW, endpoints: 'eds' },
      ).statuses,
    );
  });

  it('reports what resolving a backend first found while a route uses it, and not once none does', () => {
    const pool: Json = {
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name: 'llm', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'llm' } }, targetPorts: [{ number: 8000 }] },
    };
    const poolRoute = route('rp', 'a', 'sa');
    poolRoute.spec.rules = [{ backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llm' }] }];
    const objects = [...estate(), pool, poolRoute];
    const converter = new Converter({ now: NOW });
    const warned = (u: { diagnostics: readonly { code: string }[] }) => u.diagnostics.some((d) => d.code === 'NoEndpointPicker');
    assert.ok(warned(converter.update({ objects })));
    // Routes alone change: the backends of before are kept, their findings only while used.
    const without = converter.update({ deleted: [poolRoute] });
    assert.equal(warned(without), false);
    assert.deepEqual(
      without.diagnostics,
      convert(
        objects.filter((o) => o !== poolRoute),
        { now: NOW },
      ).diagnostics,
    );
    assert.equal(warned(converter.update({ updated: [route('ra', 'a', 'sb')] })), false);
    const again = converter.update({ added: [poolRoute] });
    assert.ok(warned(again));
    assert.deepEqual(again.diagnostics, convert([...objects.filter((o) => o.metadata.name !== 'ra'), route('ra', 'a', 'sb')], { now: NOW }).diagnostics);
  });

  it('merges proxy facts into the Gateway status without a recompute', () => {
    const converter = new Converter({ now: NOW, endpoints: 'eds' });
    const first = converter.update({ objects: estate() });
    assert.equal(programmed(first.statuses, 'a').status, 'True');
    const long = 'x'.repeat(1_000_000);
    const changed = converter.setProxyFacts('default/a', {
      rejected: [{ typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', message: long, proxies: 2 }],
    });
    assert.equal(changed.length, 1);
    const p = programmed(changed, 'a');
    assert.equal(p.status, 'False');
    assert.equal(p.reason, 'Invalid');
    assert.equal(p.observedGeneration, 3);
    assert.match(p.message, /^Envoy rejected the Cluster update: x+… \(1000\d+ characters, cut\)$/);
    assert.ok(p.message.length <= MAX_CONDITION_MESSAGE);
    assert.deepEqual(
      converter.setProxyFacts('default/a', { rejected: [{ typeUrl: 'x.Cluster', message: long, proxies: 2 }] }),
      [],
      'the same words change nothing',
    );

    // Infrastructure: its addresses; Programmed only once available. Setting it keeps the NACK.
    const infra = converter.setProxyFacts('default/b', {
      infrastructure: {
        addresses: [{ type: 'IPAddress', value: '192.0.2.7' }],
        available: false,
        problem: { reason: 'AddressNotAssigned', message: 'no address yet' },
      },
    });
    const b = infra[0] as Json;
    assert.deepEqual(b.status.addresses, [{ type: 'IPAddress', value: '192.0.2.7' }]);
    assert.equal(programmed(infra, 'b').reason, 'AddressNotAssigned');
    const up = converter.setProxyFacts('default/b', { infrastructure: { addresses: [{ type: 'IPAddress', value: '192.0.2.7' }], available: true } });
    assert.equal(programmed(up, 'b').status, 'True');
    assert.deepEqual(converter.setProxyFacts('default/b', { infrastructure: { addresses: [{ type: 'IPAddress', value: '192.0.2.7' }], available: true } }), []);
    // The NACK goes: a's status is the converter's again, and stays so across updates.
    assert.equal(programmed(converter.setProxyFacts('default/a', { rejected: [] }), 'a').status, 'True');
    const again = converter.update({ updated: [slice('sb-1', 'sb', ['10.0.1.2'])] });
    assert.deepEqual((again.statuses as Json[]).find((s) => s.metadata.name === 'b')?.status.addresses, [{ type: 'IPAddress', value: '192.0.2.7' }]);
  });

  it('says which shadow Services, ConfigMaps and classes the controller must write or watch', () => {
    const objects = [
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'mine' }, spec: { controllerName: 'example.com/gw' } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'theirs' }, spec: { controllerName: 'other.example/gw' } },
      { ...gateway('a'), spec: { gatewayClassName: 'mine', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
      {
        apiVersion: 'extlb.dev/v1alpha1',
        kind: 'BackendPool',
        metadata: { name: 'llm', namespace: 'default', uid: 'u-1' },
        spec: { selector: { matchLabels: { app: 'llm' } }, targetPorts: [{ number: 8000 }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'BackendTLSPolicy',
        metadata: { name: 'tls', namespace: 'default' },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: 'sa' }],
          validation: { hostname: 'sa.example', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
        },
      },
    ];
    const r = new Converter({ now: NOW, controllerName: 'example.com/gw' }).update({ objects });
    assert.deepEqual(r.needs.gatewayClasses, ['mine']);
    assert.deepEqual(r.needs.configMaps, ['default/ca']);
    assert.equal(r.needs.shadowServices.length, 1);
    const svc = r.needs.shadowServices[0] as Json;
    assert.deepEqual(svc.spec.selector, { app: 'llm' });
    assert.deepEqual(svc.metadata.ownerReferences, [
      { apiVersion: 'extlb.dev/v1alpha1', kind: 'BackendPool', name: 'llm', uid: 'u-1', controller: true, blockOwnerDeletion: false },
    ]);
    assert.deepEqual([...r.gateways.keys()], ['default/a'], 'the class naming this controller is converted');
  });
});

/** A small deterministic generator (mulberry32), so a failing sequence can be replayed by its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const idOf = (o: Json) => [o.apiVersion, o.kind, o.metadata?.namespace ?? 'default', o.metadata?.name].join('|');

/** Every leaf value under a key, across the estate: what a mutation swaps a leaf for. */
function valuesByKey(objects: Json[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const walk = (v: unknown, k: string) => {
    if (Array.isArray(v)) for (const x of v) walk(x, k);
    else if (v && typeof v === 'object') for (const [kk, x] of Object.entries(v)) walk(x, kk);
    else out.set(k, [...(out.get(k) ?? []), v]);
  };
  for (const o of objects) walk(o, '');
  return out;
}

/**
 * One object changed at a random place below its identity: a leaf swapped for another value the
 * estate has under the same key (another Service, Gateway, namespace, port, hostname...), or
 * changed outright; a list item dropped or repeated; a label map emptied.
 */
function mutate(o: Json, rand: () => number, values: Map<string, unknown[]>): Json {
  const copy = structuredClone(o);
  const slots: { parent: any; key: string | number }[] = [];
  const walk = (v: any, depth: number) => {
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (depth === 0 && (k === 'apiVersion' || k === 'kind')) continue;
      if (depth === 1 && v === copy.metadata && (k === 'name' || k === 'namespace')) continue;
      // An update keeps the object's identity: its metadata stays an object with its name.
      if (!(depth === 0 && k === 'metadata')) slots.push({ parent: v, key: Array.isArray(v) ? Number(k) : k });
      walk(x, depth + 1);
    }
  };
  walk(copy, 0);
  const slot = slots[Math.floor(rand() * slots.length)];
  if (!slot) return copy;
  const { parent, key } = slot;
  const current = parent[key];
  const r = rand();
  if (Array.isArray(parent) && r < 0.3) parent.splice(Number(key), 1);
  else if (Array.isArray(parent) && r < 0.4) parent.push(structuredClone(current));
  else if (current && typeof current === 'object') parent[key] = Array.isArray(current) ? [] : {};
  else {
    const pool = (values.get(String(key)) ?? []).filter((x) => x !== current);
    if (pool.length > 0 && r < 0.8) parent[key] = pool[Math.floor(rand() * pool.length)];
    else if (typeof current === 'number') parent[key] = current + 1;
    else if (typeof current === 'boolean') parent[key] = !current;
    else parent[key] = `${String(current)}x`;
  }
  return copy;
}

/**
 * Estates that have every kind of edge between objects: ReferenceGrants across namespaces,
 * routes on ListenerSets, policies on Services and pools, Secrets and ConfigMaps for TLS, pickers.
 */
const INCREMENTAL_SCENARIOS: [string, ConvertOptions][] = [
  ['cross-namespace-refs', { endpoints: 'eds' }],
  ['l4-listeners', { endpoints: 'eds' }],
  ['grpc-and-backend-tls', {}],
  ['grpc-and-backend-tls', { endpoints: 'eds' }],
  ['conflicting-policies', { endpoints: 'eds' }],
  ['service-policy-external', { endpoints: 'eds' }],
  ['two-gateways-same-port', {}],
  ['picker-failover', { endpoints: 'eds' }],
  ['listener-isolation', {}],
  ['dns-endpoints', { endpoints: 'dns' }],
  ['route-features', {}],
];

const GATEWAY_API = 'gateway.networking.k8s.io/v1';
const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

/**
 * An estate for routes moving about: two Gateways with listeners on shared and separate ports
 * (with and without hostnames, one taking routes from its own namespace only), a ListenerSet of
 * another namespace on the first, HTTPRoutes and GRPCRoutes that share Services (a GRPCRoute turns
 * a Service's backend to HTTP/2 for every route using it) and hostnames (the older kind keeps a
 * hostname), some with several parents.
 */
function movesEstate(): Json[] {
  const ns = (name: string, labels: Json = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  const svc = (name: string, appProtocol?: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080, ...(appProtocol ? { appProtocol } : {}) }] },
  });
  const gw = (name: string, listeners: Json[], extra: Json = {}) => ({
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name, namespace: 'default', generation: 1 },
    spec: { gatewayClassName: 'extlb', listeners, ...extra },
  });
  const route = (kind: string, name: string, i: number, parentRefs: Json[], hostnames: string[], service: string) => ({
    apiVersion: GATEWAY_API,
    kind,
    metadata: { name, namespace: i % 3 === 2 ? 'team' : 'default', generation: 1, creationTimestamp: `2026-01-01T00:00:0${i}Z` },
    spec: {
      parentRefs,
      hostnames,
      rules: [
        kind === 'GRPCRoute'
          ? { matches: [{ method: { service: `svc.${name}` } }], backendRefs: [{ name: service, namespace: 'default', port: 80 }] }
          : { matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ name: service, namespace: 'default', port: 80 }] },
      ],
    },
  });
  return [
    { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
    ns('default'),
    ns('team', { listeners: 'allowed' }),
    {
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'team-to-default', namespace: 'default' },
      spec: {
        from: [
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team' },
          { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'team' },
        ],
        to: [{ group: '', kind: 'Service' }],
      },
    },
    gw(
      'a',
      [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'web', port: 80, protocol: 'HTTP', hostname: 'web.example.com', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'alt', port: 8080, protocol: 'HTTP', hostname: '*.alt.example.com', allowedRoutes: { namespaces: { from: 'Same' } } },
      ],
      { allowedListeners: { namespaces: { from: 'Selector', selector: { matchLabels: { listeners: 'allowed' } } } } },
    ),
    gw('b', [
      { name: 'http', port: 80, protocol: 'HTTP', hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } },
      { name: 'rpc', port: 9090, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
    ]),
    {
      apiVersion: GATEWAY_API,
      kind: 'ListenerSet',
      metadata: { name: 'extra', namespace: 'team', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        parentRef: { name: 'a', namespace: 'default' },
        listeners: [
          { name: 'team', port: 8081, protocol: 'HTTP', hostname: 'team.example.com', allowedRoutes: { namespaces: { from: 'All' } } },
          { name: 'shared', port: 80, protocol: 'HTTP', hostname: 'shared.example.com', allowedRoutes: { namespaces: { from: 'All' } } },
        ],
      },
    },
    svc('plain'),
    svc('other'),
    svc('h2', 'kubernetes.io/h2c'),
    slice('plain-1', 'plain', ['10.0.0.1']),
    slice('other-1', 'other', ['10.0.0.2']),
    slice('h2-1', 'h2', ['10.0.0.3']),
    route('HTTPRoute', 'r0', 0, [{ name: 'a', namespace: 'default' }], [], 'plain'),
    route('HTTPRoute', 'r1', 1, [{ name: 'a', namespace: 'default', sectionName: 'web' }], ['web.example.com'], 'other'),
    route('HTTPRoute', 'r2', 2, [{ kind: 'ListenerSet', name: 'extra', namespace: 'team', sectionName: 'team' }], [], 'plain'),
    route('GRPCRoute', 'g3', 3, [{ name: 'b', namespace: 'default', sectionName: 'rpc' }], [], 'h2'),
    route(
      'GRPCRoute',
      'g4',
      4,
      [
        { name: 'b', namespace: 'default' },
        { name: 'a', namespace: 'default', port: 80 },
      ],
      ['api.example.com'],
      'other',
    ),
    route('HTTPRoute', 'r5', 5, [{ name: 'b', namespace: 'default', sectionName: 'http' }], ['api.example.com', 'www.example.com'], 'plain'),
    route('HTTPRoute', 'r6', 6, [{ name: 'a', namespace: 'default', sectionName: 'alt' }], ['x.alt.example.com'], 'other'),
    route('GRPCRoute', 'g7', 7, [{ kind: 'ListenerSet', name: 'extra', namespace: 'team' }], ['shared.example.com'], 'plain'),
  ];
}

/** Where a route can be pointed: every listener, port, Gateway and ListenerSet of the estates, and some that are not there. */
const PARENTS: Json[] = [
  { name: 'a', namespace: 'default' },
  { name: 'a', namespace: 'default', sectionName: 'web' },
  { name: 'a', namespace: 'default', sectionName: 'alt' },
  { name: 'a', namespace: 'default', port: 8080 },
  { name: 'b', namespace: 'default' },
  { name: 'b', namespace: 'default', sectionName: 'rpc' },
  { name: 'b', namespace: 'default', sectionName: 'nope' },
  { kind: 'ListenerSet', name: 'extra', namespace: 'team' },
  { kind: 'ListenerSet', name: 'extra', namespace: 'team', sectionName: 'shared' },
  { name: 'gone', namespace: 'default' },
];
const HOSTNAMES: string[][] = [
  [],
  ['web.example.com'],
  ['api.example.com'],
  ['x.alt.example.com', 'team.example.com'],
  ['*.example.com'],
  ['shared.example.com'],
];
const SERVICES = ['plain', 'other', 'h2', 'missing'];

/**
 * A route moved the ways users move them: to another Gateway, listener, port or ListenerSet (the
 * estate's own parents among them), given a second parent or losing one, its hostnames swapped
 * for others (some held by routes of the other kind), its backends for another route's; a
 * ListenerSet moved to another Gateway, or a listener of it to another port or hostname.
 */
function move(o: Json, rand: () => number, universe: readonly Json[]): Json {
  const copy = structuredClone(o);
  const spec = copy.spec ?? {};
  copy.spec = spec;
  const others = universe.filter((x) => x.kind === o.kind && x.spec);
  if (o.kind === 'ListenerSet') {
    const r = rand();
    if (r < 0.3) spec.parentRef = { name: pick(rand, ['a', 'b', 'gone']), namespace: 'default' };
    else if (Array.isArray(spec.listeners) && spec.listeners.length > 0) {
      const l = pick(rand, spec.listeners as Json[]);
      if (r < 0.6) l.port = pick(rand, [80, 8080, 8081, 9090]);
      else if (r < 0.8) l.hostname = pick(rand, ['web.example.com', 'team.example.com', 'shared.example.com', '*.example.com']);
      else l.name = pick(rand, ['http', 'web', 'team', 'shared']);
    }
    return copy;
  }
  const parents: Json[] = Array.isArray(spec.parentRefs) ? spec.parentRefs : [];
  spec.parentRefs = parents;
  const r = rand();
  const ownParents = others.flatMap((x) => (Array.isArray(x.spec.parentRefs) ? x.spec.parentRefs : []));
  const parent = () => structuredClone(pick(rand, [...PARENTS, ...ownParents]));
  if (r < 0.3) parents.splice(0, parents.length, parent());
  else if (r < 0.4) parents.push(parent());
  else if (r < 0.5) parents.pop();
  else if (r < 0.7) {
    const own = others.flatMap((x) => (Array.isArray(x.spec.hostnames) ? [x.spec.hostnames] : []));
    spec.hostnames = structuredClone(pick(rand, [...HOSTNAMES, ...own]));
  } else if (Array.isArray(spec.rules) && spec.rules.length > 0) {
    const rule = pick(rand, spec.rules as Json[]);
    const theirs = others.flatMap((x) => (Array.isArray(x.spec.rules) ? x.spec.rules.flatMap((y: Json) => y.backendRefs ?? []) : []));
    rule.backendRefs = r < 0.85 && theirs.length > 0 ? [structuredClone(pick(rand, theirs))] : [{ name: pick(rand, SERVICES), namespace: 'default', port: 80 }];
  }
  return copy;
}

/**
 * Random steps over an estate: each adds, deletes or changes one or two objects (a route or a
 * ListenerSet moved half the time), and after each the Converter must give what a fresh
 * conversion of the objects it holds gives: configurations, statuses, diagnostics and IR, and
 * every status that changed among the changed ones. `changing` picks the objects that may change.
 * A deleted object comes back as it was, or half the time as a copy (a record read afresh).
 * Siblings of the routes (copies under new names) come and go alongside.
 * Returns how many steps took the route-scoped path: all of them, those adding a route, those
 * deleting one.
 */
function randomWalk(
  universe: Json[],
  options: ConvertOptions,
  seed: number,
  steps: number,
  changing: (o: Json) => boolean = () => true,
): { scoped: number; adds: number; deletes: number } {
  const values = valuesByKey(universe);
  const held = new Map(universe.map((o) => [idOf(o), o]));
  const gone = new Map<string, Json>();
  const converter = new Converter(options);
  let last = converter.update({ objects: [...held.values()] }).statuses as Json[];
  const rand = random(seed);
  const scoped = { scoped: 0, adds: 0, deletes: 0 };
  /** Routes like one of the estate under names of their own: they attach where that one does and use its backends. */
  const siblings = new Map<string, Json>();
  const sideRand = random(seed + 1);
  /** Gives the Converter one change, and checks what it made against a fresh conversion. */
  const check = (step: number, change: { added?: Json[]; updated?: Json[]; deleted?: Json[] }, log: string[]) => {
    const u = converter.update(change);
    if (u.kind === 'full' && u.resolvedGateways !== 'all') {
      scoped.scoped++;
      if (change.added?.some((o) => ROUTE_KINDS.has(o.kind))) scoped.adds++;
      if (change.deleted?.some((o) => ROUTE_KINDS.has(o.kind))) scoped.deletes++;
    }
    const full = new Converter(options).update({ objects: [...held.values()] });
    const at = `step ${step}: ${log.join(', ')}`;
    // Every status that is not what it was is among the changed ones.
    const key = (x: Json) => `${x.kind}/${x.metadata.namespace ?? ''}/${x.metadata.name}`;
    const before = new Map(last.map((x) => [key(x), x]));
    const changed = new Set(u.changedStatuses.map(key));
    for (const x of u.statuses as Json[]) if (!isDeepStrictEqual(before.get(key(x)), x)) assert.ok(changed.has(key(x)), `${at}: ${key(x)} changed`);
    last = u.statuses as Json[];
    assert.deepEqual(Object.fromEntries(u.gateways), Object.fromEntries(full.gateways), `${at}: gateways`);
    assert.deepEqual(u.statuses, full.statuses, `${at}: statuses`);
    assert.deepEqual(u.diagnostics, full.diagnostics, `${at}: diagnostics`);
    assert.deepEqual(u.ir, full.ir, `${at}: IR`);
    // A Gateway the change did not reach keeps its configuration object, and is not "changed".
    for (const g of full.gateways.keys()) if (!u.changedGateways.includes(g)) assert.ok(u.gateways.has(g), `${at}: ${g} kept`);
  };
  for (let step = 0; step < steps; step++) {
    const added: Json[] = [];
    const updated: Json[] = [];
    const deleted: Json[] = [];
    const changes = 1 + Math.floor(rand() * 2);
    const log: string[] = [];
    for (let c = 0; c < changes; c++) {
      const r = rand();
      const present = [...held.values()].filter((o) => changing(o) && !siblings.has(idOf(o)) && !added.includes(o) && !updated.includes(o));
      if (r < 0.15 && present.length > 0) {
        const o = present[Math.floor(rand() * present.length)] as Json;
        held.delete(idOf(o));
        gone.set(idOf(o), o);
        deleted.push(o);
        log.push(`delete ${idOf(o)}`);
      } else if (r < 0.3 && gone.size > 0) {
        const was = [...gone.values()][Math.floor(rand() * gone.size)] as Json;
        if (deleted.includes(was)) continue;
        const o = sideRand() < 0.5 ? structuredClone(was) : was;
        gone.delete(idOf(o));
        held.set(idOf(o), o);
        added.push(o);
        log.push(`add ${idOf(o)}`);
      } else if (present.length > 0) {
        const o = present[Math.floor(rand() * present.length)] as Json;
        if (deleted.some((d) => idOf(d) === idOf(o))) continue;
        const movable = ROUTE_KINDS.has(o.kind) || o.kind === 'ListenerSet';
        const next =
          movable && rand() < 0.5
            ? move(
                o,
                rand,
                [...held.values()].filter((x) => !siblings.has(idOf(x))),
              )
            : mutate(o, rand, values);
        held.set(idOf(o), next);
        updated.push(next);
        log.push(`update ${idOf(o)}`);
      }
    }
    check(step, { added, updated, deleted }, log);
    // A sibling comes or goes on a stream of its own, in a change of its own, so the walk is otherwise the one it was.
    const s = sideRand();
    const like = pick(
      sideRand,
      [...held.values()].filter((o) => ROUTE_KINDS.has(o.kind) && changing(o) && !siblings.has(idOf(o))),
    );
    if (s < 0.2 && like) {
      const o = { ...structuredClone(like), metadata: { ...structuredClone(like.metadata), name: `${like.metadata.name}-${step}` } };
      held.set(idOf(o), o);
      siblings.set(idOf(o), o);
      check(step, { added: [o] }, [`add ${idOf(o)} like ${idOf(like)}`]);
    } else if (s < 0.35 && siblings.size > 0) {
      const o = pick(sideRand, [...siblings.values()]);
      held.delete(idOf(o));
      siblings.delete(idOf(o));
      check(step, { deleted: [o] }, [`delete ${idOf(o)}`]);
    }
  }
  return scoped;
}

describe('Converter: a change costs what it touches, and gives what a full conversion gives', () => {
  for (const [name, extra] of INCREMENTAL_SCENARIOS) {
    it(`${name} (${extra.endpoints ?? 'static'}): random changes, each step equal to convert() of the set it leaves`, () => {
      const universe = readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url))) as Json[];
      randomWalk(universe, { now: NOW, ...extra }, name.length * 7919 + (extra.endpoints ?? 'static').length, 60);
    });
  }

  /** Steps of the walks below that added or deleted a route and resolved only its Gateways. */
  const walked = { walks: 0, adds: 0, deletes: 0 };

  // Routes alone changing: the backends' state is kept between these steps, so what the routes
  // share through it (first-seen findings, picker problems, HTTP/2 turned on by a GRPCRoute) must
  // follow the routes that remain.
  const ROUTES_ALONE = [
    'missing-picker-service',
    'inferencepool-failure-modes',
    'grpc-and-backend-tls',
    'service-policy-external',
    'picker-failover',
    'cross-namespace-refs',
  ];
  for (const name of ROUTES_ALONE) {
    it(`${name}: routes alone changing, each step equal to convert() of the set it leaves`, () => {
      const universe = readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url))) as Json[];
      const scoped = randomWalk(universe, { now: NOW, endpoints: 'eds' }, name.length * 6007, 60, (o) => ROUTE_KINDS.has(o.kind));
      // The walk must have gone through the route-scoped path too, or it says nothing about it.
      assert.ok(scoped.scoped > 0, 'no step resolved only the Gateways of the routes changed');
      walked.walks++;
      walked.adds += scoped.adds;
      walked.deletes += scoped.deletes;
    });
  }

  for (const endpoints of ['static', 'eds'] as const) {
    for (let seed = 1; seed <= 4; seed++) {
      it(`routes and ListenerSets moving between Gateways, listeners, ports and hostnames (${endpoints}, seed ${seed}): each step equal to convert()`, () => {
        const scoped = randomWalk(movesEstate(), { now: NOW, endpoints }, seed * 104_729, 80);
        assert.ok(scoped.scoped > 0, 'no step resolved only the Gateways of the routes changed');
        walked.walks++;
        walked.adds += scoped.adds;
        walked.deletes += scoped.deletes;
      });
    }
  }

  it('walks that add and delete routes take the route-scoped path for some of them', (t) => {
    if (walked.walks === 0) return t.skip('the walks did not run');
    assert.ok(walked.adds > 0, 'no step adding a route resolved only its Gateways');
    assert.ok(walked.deletes > 0, 'no step deleting a route resolved only its Gateways');
  });

  it('resolves only the Gateway of a route added or deleted whose backends it already uses, as convert() would', () => {
    const converter = new Converter({ now: NOW, endpoints: 'eds' });
    const first = converter.update({ objects: estate() });
    const b = first.gateways.get('default/b');
    const irB = first.ir.gateways.find((g) => g.name === 'default/b');
    const statusOf = (u: ConverterUpdate, kind: string, name: string) => (u.statuses as Json[]).find((x) => x.kind === kind && x.metadata.name === name);
    const same = (u: ConverterUpdate, objects: Json[], at: string) => {
      const fresh = new Converter({ now: NOW, endpoints: 'eds' }).update({ objects });
      assert.deepEqual(Object.fromEntries(u.gateways), Object.fromEntries(fresh.gateways), `${at}: gateways`);
      assert.deepEqual(u.statuses, fresh.statuses, `${at}: statuses`);
      assert.deepEqual(u.diagnostics, fresh.diagnostics, `${at}: diagnostics`);
      assert.deepEqual(u.ir, fresh.ir, `${at}: IR`);
      assert.deepEqual(Object.fromEntries(u.gateways), convert(objects, { endpoints: 'eds', now: NOW }).gateways, `${at}: convert()`);
    };
    const untouched = (u: ConverterUpdate, at: string) => {
      assert.equal(u.gateways.get('default/b'), b, `${at}: b's configuration is the same object`);
      assert.equal(
        u.ir.gateways.find((g) => g.name === 'default/b'),
        irB,
        `${at}: b's IR is the same object`,
      );
      for (const [kind, name] of [
        ['Gateway', 'b'],
        ['HTTPRoute', 'rb'],
      ] as const)
        assert.equal(statusOf(u, kind, name), statusOf(first, kind, name), `${at}: the status of ${kind} ${name} is the same object`);
    };
    // First in route order (by name, no creationTimestamp): every route after it moves.
    const r0 = route('r0', 'a', 'sa');
    const added = converter.update({ added: [r0] });
    assert.deepEqual(added.resolvedGateways, ['default/a'], 'a route added on a with a backend a uses resolves a alone');
    untouched(added, 'added');
    assert.ok(
      added.changedStatuses.some((x) => x.kind === 'HTTPRoute' && (x.metadata as Json).name === 'r0'),
      'the new route has its status among the changed ones',
    );
    assert.equal(statusOf(added, 'Gateway', 'a')?.status.listeners[0].attachedRoutes, 2);
    same(added, [...estate(), r0], 'added');

    const deleted = converter.update({ deleted: [r0] });
    assert.deepEqual(deleted.resolvedGateways, ['default/a'], 'so does deleting it');
    untouched(deleted, 'deleted');
    assert.equal(statusOf(deleted, 'HTTPRoute', 'r0'), undefined, "the deleted route's status is gone");
    same(deleted, estate(), 'deleted');

    // A backend no route of a used, a GRPCRoute, a deleted route that was the last to use its backend: all reach further.
    const grpc = {
      apiVersion: GATEWAY_API,
      kind: 'GRPCRoute',
      metadata: { name: 'g0', namespace: 'default' },
      spec: { parentRefs: [{ name: 'a' }], rules: [{ backendRefs: [{ name: 'sa', port: 80 }] }] },
    };
    assert.deepEqual(converter.update({ added: [route('r1', 'a', 'sb')] }).resolvedGateways, 'all');
    same(converter.update({ added: [grpc] }), [...estate(), route('r1', 'a', 'sb'), grpc], 'GRPCRoute added');
    assert.deepEqual(converter.update({ deleted: [grpc] }).resolvedGateways, 'all');
    assert.deepEqual(converter.update({ deleted: [route('ra', 'a', 'sa')] }).resolvedGateways, 'all');
    same(
      converter.update({ deleted: [route('r1', 'a', 'sb')] }),
      estate().filter((o) => o.metadata.name !== 'ra'),
      'last routes deleted',
    );
  });

  it('keeps the IR and Envoy resources of an untouched Gateway, and of untouched resources of a touched one', () => {
    // Every update stamps a new time on every condition; that alone changes no status.
    let tick = 0;
    const converter = new Converter({ now: () => `2026-01-01T00:00:${String(tick++ % 60).padStart(2, '0')}Z`, endpoints: 'eds' });
    const first = converter.update({ objects: estate() });
    const a = first.gateways.get('default/a');
    const b = first.gateways.get('default/b');
    const irB = first.ir.gateways.find((g) => g.name === 'default/b');
    const moved = {
      ...route('ra', 'a', 'sa'),
      spec: { parentRefs: [{ name: 'a' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], backendRefs: [{ name: 'sa', port: 80 }] }] },
    };
    const next = converter.update({ updated: [moved] });
    assert.equal(next.kind, 'full');
    assert.deepEqual(next.resolvedGateways, ['default/a'], 'a route updated in place resolves only the Gateway it attaches to');
    assert.deepEqual(next.changedGateways, ['default/a']);
    assert.deepEqual(
      next.changedStatuses.map((x) => `${x.kind} ${(x.metadata as Json).name}`),
      ['HTTPRoute ra'],
      'only the status of the route given is told (it may have been written by someone else)',
    );
    assert.equal(next.gateways.get('default/b'), b, "b's configuration is the same object");
    assert.equal(
      next.ir.gateways.find((g) => g.name === 'default/b'),
      irB,
      "b's IR is the same object",
    );
    const a2 = next.gateways.get('default/a');
    assert.notEqual(a2?.routes[0], a?.routes[0], "a's route configuration is new");
    assert.equal(a2?.clusters[0], a?.clusters[0], "a's cluster is the one built before");
    assert.equal(a2?.endpoints[0], a?.endpoints[0], 'and so is its ClusterLoadAssignment');
    const fresh = convert(
      estate().map((o) => (o.metadata.name === 'ra' && o.kind === 'HTTPRoute' ? moved : o)),
      { endpoints: 'eds', now: NOW },
    );
    assert.deepEqual(Object.fromEntries(next.gateways), fresh.gateways, 'and all is what convert() gives');
    // A route that moves to another Gateway reaches two; one that changes its backend reaches the backends' state: both resolve all.
    assert.deepEqual(converter.update({ updated: [route('ra', 'b', 'sa')] }).resolvedGateways, 'all');
    assert.deepEqual(converter.update({ updated: [route('ra', 'b', 'sb')] }).resolvedGateways, 'all');
  });
});
