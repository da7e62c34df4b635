// The Kubernetes objects of a large estate, as a cluster would hold them: tenant namespaces with
// HTTPRoutes to BackendPools (an External load balancer asking a picker Service) and to Services,
// the pools' endpoints in EndpointSlices of their shadow Services (`extlb-bpool-<pool>`, which
// Kubernetes' EndpointSlice controller would fill), the Services' and pickers' endpoints in their
// own slices; one big Gateway with a listener per tenant, and many small Gateways for idle proxies.
import { DEFAULT_CONTROLLER, shadowServiceName } from '@extlb/envoy';

type Json = Record<string, unknown>;

export interface ClusterEstateSize {
  routes: number;
  pools: number;
  /** Services routes send to directly (besides the pools). */
  services: number;
  /** Endpoints over every pool and Service (the pickers' few come on top). */
  endpoints: number;
  /** Small Gateways (one route each) whose proxies stay idle. */
  idleGateways: number;
}

export const BENCH_NAMESPACE = 'extlb-bench';
export const GATEWAY = 'edge';
const TENANTS = 10;
const PICKERS_PER_TENANT = 10;
const PICKER_ENDPOINTS = 2;
/** Kubernetes' EndpointSlice controller puts at most 100 endpoints in a slice. */
const SLICE_MAX = 100;
const GATEWAY_API = 'gateway.networking.k8s.io/v1';
const EXTLB = 'extlb.dev/v1alpha1';

export const tenant = (i: number) => `team-${i % TENANTS}`;
/** The i-th pool and Service live in tenant i % 10, named by their index there. */
export const poolName = (i: number) => `pool-${Math.floor(i / TENANTS)}`;
const serviceName = (i: number) => `svc-${Math.floor(i / TENANTS)}`;
const pickerName = (i: number) => `picker-${Math.floor(i / TENANTS) % PICKERS_PER_TENANT}`;
export const routeName = (i: number) => `route-${i}`;

/** Addresses 10.0.0.1 onwards, never repeated. */
function addresses(): (count: number) => string[] {
  let next = 1;
  return (count) =>
    Array.from({ length: count }, () => {
      const n = next++;
      return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    });
}

/**
 * The EndpointSlices of a Service, `endpoints` split as Kubernetes splits them. `generation` > 0
 * marks its first endpoint not ready: the change an endpoint update carries.
 */
export function endpointSlices(namespace: string, service: string, port: { name: string; port: number }, ips: string[], generation = 0): Json[] {
  const slices: Json[] = [];
  for (let start = 0, n = 0; start < ips.length || n === 0; start += SLICE_MAX, n++) {
    slices.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${service}-${n}`, namespace, labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      ports: [{ ...port, protocol: 'TCP' }],
      endpoints: ips.slice(start, start + SLICE_MAX).map((a, k) => ({
        addresses: [a],
        conditions: { ready: !(n === 0 && k === 0 && generation % 2 === 1) },
      })),
    });
  }
  return slices;
}

function service(namespace: string, name: string, port: { name: string; port: number; targetPort: number }): Json {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { selector: { app: name }, ports: [{ ...port, protocol: 'TCP' }] } };
}

function gateway(name: string, listeners: Json[]): Json {
  return { apiVersion: GATEWAY_API, kind: 'Gateway', metadata: { name, namespace: BENCH_NAMESPACE }, spec: { gatewayClassName: 'extlb', listeners } };
}

const httpListener = (name: string, port: number): Json => ({ name, port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } });

/**
 * The i-th HTTPRoute: on tenant i % 10's listener of the big Gateway, a hostname shared by ten
 * routes, a path of its own; by turns to a pool and to a Service of its tenant. `generation` > 0
 * changes its path, which changes one RouteConfiguration and nothing else.
 */
export function httpRoute(i: number, pools: number, services: number, generation = 0): Json {
  const t = i % TENANTS;
  const a = Math.floor(i / TENANTS);
  const k = Math.floor(a / 2);
  const backend =
    a % 2 === 0
      ? { group: 'extlb.dev', kind: 'BackendPool', name: poolName((k % Math.floor(pools / TENANTS)) * TENANTS + t) }
      : { name: serviceName((k % Math.floor(services / TENANTS)) * TENANTS + t), port: 80 };
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name: routeName(i), namespace: tenant(i) },
    spec: {
      parentRefs: [{ namespace: BENCH_NAMESPACE, name: GATEWAY, sectionName: `team-${t}` }],
      hostnames: [`app-${Math.floor(i / (TENANTS * 10))}.${tenant(i)}.example.com`],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/r-${i}${generation > 0 ? `/v${generation}` : ''}` } }], backendRefs: [backend] }],
    },
  };
}

export interface ClusterEstate {
  objects: Json[];
  /** The endpoints in the estate, pickers' included. */
  endpoints: number;
  /** The addresses of each pool's shadow Service, by pool index (to rewrite one slice). */
  poolAddresses: string[][];
}

export function clusterEstate(size: ClusterEstateSize): ClusterEstate {
  const next = addresses();
  const objects: Json[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: BENCH_NAMESPACE } },
    { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: DEFAULT_CONTROLLER } },
    gateway(
      GATEWAY,
      Array.from({ length: TENANTS }, (_, t) => httpListener(`team-${t}`, 8000 + t)),
    ),
  ];
  for (let t = 0; t < TENANTS; t++) objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenant(t) } });
  const perPool = Math.max(1, Math.round((size.endpoints * 0.8) / Math.max(1, size.pools)));
  const perService = Math.max(1, Math.round((size.endpoints - perPool * size.pools) / Math.max(1, size.services)));
  let endpoints = 0;
  const pickers = Math.min(TENANTS * PICKERS_PER_TENANT, size.pools);
  for (let i = 0; i < pickers; i++) {
    objects.push(service(tenant(i), pickerName(i), { name: 'grpc', port: 9002, targetPort: 9002 }));
    objects.push(...endpointSlices(tenant(i), pickerName(i), { name: 'grpc', port: 9002 }, next(PICKER_ENDPOINTS)));
    endpoints += PICKER_ENDPOINTS;
  }
  const poolAddresses: string[][] = [];
  for (let i = 0; i < size.pools; i++) {
    objects.push({
      apiVersion: EXTLB,
      kind: 'BackendPool',
      metadata: { name: poolName(i), namespace: tenant(i) },
      spec: {
        selector: { matchLabels: { app: poolName(i) } },
        targetPorts: [{ number: 8000 }],
        loadBalancer: { type: 'External', external: { refs: [{ name: pickerName(i % pickers), port: { number: 9002 } }] } },
      },
    });
    const ips = next(perPool);
    poolAddresses.push(ips);
    objects.push(...endpointSlices(tenant(i), shadowServiceName('BackendPool', poolName(i)), { name: 'tcp-8000', port: 8000 }, ips));
    endpoints += perPool;
  }
  for (let i = 0; i < size.services; i++) {
    objects.push(service(tenant(i), serviceName(i), { name: 'http', port: 80, targetPort: 8080 }));
    objects.push(...endpointSlices(tenant(i), serviceName(i), { name: 'http', port: 8080 }, next(perService)));
    endpoints += perService;
  }
  for (let i = 0; i < size.routes; i++) objects.push(httpRoute(i, size.pools, size.services));
  for (let g = 0; g < size.idleGateways; g++) {
    objects.push(gateway(`idle-${g}`, [httpListener('http', 8080)]));
    objects.push({
      apiVersion: GATEWAY_API,
      kind: 'HTTPRoute',
      metadata: { name: `idle-${g}`, namespace: tenant(g) },
      spec: { parentRefs: [{ namespace: BENCH_NAMESPACE, name: `idle-${g}` }], rules: [{ backendRefs: [{ name: serviceName(g), port: 80 }] }] },
    });
  }
  return { objects, endpoints, poolAddresses };
}
