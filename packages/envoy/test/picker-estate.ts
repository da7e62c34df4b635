// The estate of hostile-input issue 12: one HTTPRoute whose every rule has many matches and sends
// to many External BackendPools, each with its own picker timeout (so its own ext_proc filter).
// Shared by the linear-growth test and the benchmark.

type Json = Record<string, unknown>;

export interface PickerEstateSize {
  routes: number;
  rules: number;
  matches: number;
  pools: number;
}

export function pickerEstate({ routes, rules, matches, pools }: PickerEstateSize): Json[] {
  const objects: Json[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
      spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'picker', namespace: 'default' }, spec: { ports: [{ name: 'grpc', port: 9002 }] } },
  ];
  for (let p = 0; p < pools; p++) {
    objects.push({
      apiVersion: 'extlb.dev/v1alpha1',
      kind: 'BackendPool',
      metadata: { name: `p${p}`, namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: `p${p}` } },
        targetPorts: [{ number: 8000 }],
        loadBalancer: { type: 'External', external: { refs: [{ name: 'picker', port: { number: 9002 } }], messageTimeout: `${100 + p}ms` } },
      },
    });
  }
  for (let k = 0; k < routes; k++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `r${k}`, namespace: 'default' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: Array.from({ length: rules }, (_, r) => ({
          matches: Array.from({ length: matches }, (_, m) => ({ path: { type: 'PathPrefix', value: `/k${k}/r${r}/m${m}` } })),
          backendRefs: Array.from({ length: pools }, (_, p) => ({ group: 'extlb.dev', kind: 'BackendPool', name: `p${p}` })),
        })),
      },
    });
  }
  return objects;
}

/** Envoy routes × weighted clusters the estate makes: what its output should be proportional to. */
export function routeBackendPairs({ routes, rules, matches, pools }: PickerEstateSize): number {
  return routes * rules * matches * pools;
}
