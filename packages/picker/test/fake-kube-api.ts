// A Kubernetes API on loopback for the EndpointSlice source's tests: the shared in-process API
// server (@extlb/kube-api-server), seeded with EndpointSlices, with a few shortcuts the picker's
// tests use (events as writes, the request paths, a kubeconfig for the context's namespace).
import { type KubeApiServer, startKubeApiServer } from '@extlb/kube-api-server';

/** An EndpointSlice of the `llm` Service; the server assigns the real resourceVersion when it is written. */
export function endpointSlice(name: string, ips: string[], resourceVersion: string, namespace = 'models') {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, resourceVersion, labels: { 'kubernetes.io/service-name': 'llm' } },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'http', port: 8000, protocol: 'TCP' }],
  };
}

type Slice = ReturnType<typeof endpointSlice>;

export interface FakeKubeApi {
  /** The server itself, for anything the shortcuts below do not cover. */
  server: KubeApiServer;
  url: string;
  /** Every request path and query, in order. */
  readonly requests: string[];
  /** Open watch streams. */
  watchCount(): number;
  /** Makes the change a watch event describes: ADDED and MODIFIED write the slice, DELETED deletes it. */
  send(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Slice): void;
  /** A kubeconfig (YAML) pointing at this server, with the namespace as the context's. */
  kubeconfig(): string;
  close(): Promise<void>;
}

export async function startFakeKubeApi(initial: Slice[], namespace = 'models'): Promise<FakeKubeApi> {
  const server = await startKubeApiServer({ objects: initial });
  return {
    server,
    url: server.url,
    get requests() {
      return server.requests.map((r) => `${r.path}?${new URLSearchParams(r.query)}`);
    },
    watchCount: () => server.watches().length,
    send(type, object) {
      if (type === 'DELETED') server.remove(object.apiVersion, object.kind, object.metadata.name, object.metadata.namespace);
      else server.put(object);
    },
    kubeconfig: () => server.kubeconfig({ namespace }),
    close: () => server.close(),
  };
}
