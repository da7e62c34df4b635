// A minimal Kubernetes API server on loopback for EndpointSlices in one namespace: one list, and
// watch streams the test feeds. Enough for @kubernetes/client-node's informer, nothing more.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

export interface FakeKubeApi {
  url: string;
  /** Every request path and query, in order. */
  requests: string[];
  /** Open watch streams. */
  watchCount(): number;
  /** Sends a watch event to every open watch. */
  send(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: object): void;
  /** A kubeconfig (YAML) pointing at this server. */
  kubeconfig(): string;
  close(): Promise<void>;
}

export async function startFakeKubeApi(initial: object[], namespace = 'models'): Promise<FakeKubeApi> {
  const watches = new Set<ServerResponse>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') {
      res.flushHeaders();
      watches.add(res);
      res.on('close', () => watches.delete(res));
      return;
    }
    res.end(JSON.stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: { resourceVersion: '10' }, items: initial }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    watchCount: () => watches.size,
    send(type, object) {
      for (const w of watches) w.write(`${JSON.stringify({ type, object })}\n`);
    },
    kubeconfig: () =>
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: loopback, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: tester, user: {token: not-a-secret}}]',
        `contexts: [{name: loopback, context: {cluster: loopback, user: tester, namespace: ${namespace}}}]`,
        'current-context: loopback',
        '',
      ].join('\n'),
    async close() {
      for (const w of watches) w.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
