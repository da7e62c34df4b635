// Objects for the TLSRoute, TCPRoute and UDPRoute scenarios, written for extlb's tests from the
// facts of the upstream tests' manifests (names, ports, listeners, hostnames, weights): Gateways,
// routes, and echo backends with the EndpointSlices Kubernetes would publish for their Pods.
import assert from 'node:assert/strict';
import { GATEWAY_CLASS, INFRA, type Scenario } from './harness.js';
import type { Connection, StreamUpstream } from './stream-model.js';

type Json = Record<string, any>;
const GATEWAY_API = 'gateway.networking.k8s.io/v1';

export function gateway(name: string, listeners: Json[], namespace = INFRA): Json {
  return { apiVersion: GATEWAY_API, kind: 'Gateway', metadata: { name, namespace, generation: 1 }, spec: { gatewayClassName: GATEWAY_CLASS, listeners } };
}

/** A route; `created` orders routes that compete (the older one wins). */
export function route(kind: 'TLSRoute' | 'TCPRoute' | 'UDPRoute', name: string, spec: Json, options: { namespace?: string; created?: string } = {}): Json {
  const metadata: Json = { name, namespace: options.namespace ?? INFRA, generation: 1 };
  if (options.created) metadata.creationTimestamp = options.created;
  return { apiVersion: GATEWAY_API, kind, metadata, spec };
}

/** `parentRefs` and one rule of backendRefs. */
export function toBackends(parentRefs: Json[], backendRefs: Json[], hostnames?: string[]): Json {
  return { parentRefs, ...(hostnames ? { hostnames } : {}), rules: [{ backendRefs }] };
}

let subnet = 100;
const addresses = new Map<string, string[]>();

/** An echo backend: its Service (one port) and an EndpointSlice of two ready Pods. */
export function backend(name: string, options: { namespace?: string; port: number; targetPort?: number; protocol?: 'TCP' | 'UDP' }): Json[] {
  const namespace = options.namespace ?? INFRA;
  const protocol = options.protocol ?? 'TCP';
  const targetPort = options.targetPort ?? options.port;
  const key = `${namespace}/${name}`;
  const ips = addresses.get(key) ?? [`10.250.${subnet}.10`, `10.250.${subnet}.11`];
  if (!addresses.has(key)) subnet += 1;
  addresses.set(key, ips);
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { selector: { app: name }, ports: [{ name: 'p', protocol, port: options.port, targetPort }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-abcde`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'p', port: targetPort, protocol }],
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    },
  ];
}

/** The Service a cluster named `svc/<ns>/<name>/<port>` sends to. */
function serviceOf(cluster: string): string {
  const [kind, ns, name] = cluster.split('/');
  return kind === 'svc' ? `${ns}/${name}` : cluster;
}

/**
 * The share of connections each backend Service gets, from the clusters tcp_proxy (or udp_proxy)
 * chooses and, in a cluster holding several Services' endpoints, the endpoints' weights.
 */
export function shares(s: Scenario, gw: string, c: Connection): Record<string, number> {
  const o = s.connect(gw, c);
  assert.equal(o.type, 'forward', `${JSON.stringify(c)} on ${gw}: ${JSON.stringify(o)}`);
  if (o.type !== 'forward') return {};
  const out: Record<string, number> = {};
  const pods = new Map<string, string>();
  for (const obj of s.objects)
    if (obj.kind === 'EndpointSlice')
      for (const ep of obj.endpoints ?? [])
        for (const a of ep.addresses) pods.set(a, `${obj.metadata.namespace}/${obj.metadata.labels['kubernetes.io/service-name']}`);
  for (const u of o.upstreams) {
    if (u.cluster.startsWith('svc/')) {
      out[serviceOf(u.cluster)] = (out[serviceOf(u.cluster)] ?? 0) + u.share;
      continue;
    }
    const total = u.endpoints.reduce((n, e) => n + e.weight, 0);
    for (const e of u.endpoints) {
      const svc = pods.get(e.address.split(':')[0] as string) ?? e.address;
      out[svc] = (out[svc] ?? 0) + (u.share * e.weight) / total;
    }
  }
  return out;
}

/**
 * MakeTCPRequestAndExpectEventuallyValidResponse, without the waiting: the connection reaches the
 * Pods of exactly this backend (`namespace/name`, the infra namespace by default).
 */
export function expectBackend(s: Scenario, gw: string, c: Connection, service: string): StreamUpstream {
  const want = service.includes('/') ? service : `${INFRA}/${service}`;
  const o = s.connect(gw, c);
  assert.equal(o.type, 'forward', `${JSON.stringify(c)} on ${gw}: ${JSON.stringify(o)}`);
  assert.ok(o.type === 'forward' && o.closed === undefined && o.upstreams.length === 1, `${JSON.stringify(c)} on ${gw}: one cluster: ${JSON.stringify(o)}`);
  const [u] = o.upstreams as [StreamUpstream];
  assert.equal(serviceOf(u.cluster), want, `${JSON.stringify(c)} on ${gw}: backend`);
  const slice = s.objects.find((x) => x.kind === 'EndpointSlice' && `${x.metadata.namespace}/${x.metadata.labels['kubernetes.io/service-name']}` === want);
  const ips = ((slice?.endpoints ?? []) as Json[]).flatMap((e) => e.addresses as string[]).sort();
  assert.deepEqual([...new Set(u.endpoints.map((e) => e.address.split(':')[0]))].sort(), ips, `${want}: the cluster holds its Pods`);
  return u;
}

/** MakeTLSConnectionAndExpectEventuallyConnectionRejection (and its TCP form): no backend gets the connection. */
export function expectRejected(s: Scenario, gw: string, c: Connection): void {
  const o = s.connect(gw, c);
  const rejected = o.type === 'no-listener' || o.type === 'no-chain' || o.type === 'tls-failure' || (o.type === 'forward' && o.upstreams.length === 0);
  assert.ok(rejected, `${JSON.stringify(c)} on ${gw}: expected the connection refused, got ${JSON.stringify(o)}`);
}

/** GatewayMustHaveZeroRoutes. */
export function zeroRoutes(s: Scenario, gw: string): void {
  for (const l of s.status('Gateway', gw).listeners as Json[]) assert.equal(l.attachedRoutes, 0, `${gw} listener ${l.name}`);
}

/** RouteMustHaveNoAcceptedParents: no parent entry is Accepted. */
export function noAcceptedParents(s: Scenario, kind: string, name: string): void {
  for (const p of s.status(kind, name).parents as Json[]) {
    const accepted = (p.conditions as Json[]).find((c) => c.type === 'Accepted');
    assert.notEqual(accepted?.status, 'True', `${kind} ${name}: ${JSON.stringify(p)}`);
  }
}
