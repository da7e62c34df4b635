// The EndpointSlice source with the real @kubernetes/client-node informer against a small
// Kubernetes API server on loopback that serves one list and one watch stream.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { clusterEndpoints } from '../src/endpoints.js';

const slice = (name: string, ips: string[], rv: string) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'models', resourceVersion: rv, labels: { 'kubernetes.io/service-name': 'llm' } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ name: 'http', port: 8000, protocol: 'TCP' }],
});

const watches = new Set<ServerResponse>();
const requests: string[] = [];
const api = createServer((req, res) => {
  requests.push(req.url ?? '');
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname !== '/apis/discovery.k8s.io/v1/namespaces/models/endpointslices') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
    return;
  }
  if (url.searchParams.get('watch') === 'true') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    watches.add(res);
    res.on('close', () => watches.delete(res));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: { resourceVersion: '10' }, items: [slice('llm-a', ['10.2.0.1', '10.2.0.2'], '9')] }));
});

after(() => {
  for (const w of watches) w.destroy();
  api.closeAllConnections();
  api.close();
});

function send(type: string, object: object): void {
  for (const w of watches) w.write(`${JSON.stringify({ type, object })}\n`);
}

test('EndpointSlices are listed, then watched: changes apply without a restart', async () => {
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const { port } = api.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'loopback', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'tester', token: 'not-a-secret' }],
    contexts: [{ name: 'loopback', cluster: 'loopback', user: 'tester', namespace: 'models' }],
    currentContext: 'loopback',
  });
  const source = await clusterEndpoints({ namespace: 'models', selector: 'kubernetes.io/service-name=llm', port: 'http', kubeConfig: kc });
  try {
    assert.equal(source.ready(), true);
    assert.deepEqual(source.endpoints().map((e) => e.address), ['10.2.0.1:8000', '10.2.0.2:8000']);
    assert.ok(requests.some((r) => r.includes('labelSelector=kubernetes.io%2Fservice-name%3Dllm')), requests.join('\n'));

    for (let i = 0; i < 200 && watches.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(watches.size, 1, 'the informer opened a watch');

    const next = () => new Promise<string[]>((resolve) => {
      const off = source.onChange((e) => {
        off();
        resolve(e.map((x) => x.address));
      });
    });
    let changed = next();
    send('ADDED', slice('llm-b', ['10.2.0.3'], '11'));
    assert.deepEqual(await changed, ['10.2.0.1:8000', '10.2.0.2:8000', '10.2.0.3:8000']);
    changed = next();
    send('MODIFIED', slice('llm-a', ['10.2.0.2'], '12'));
    assert.deepEqual(await changed, ['10.2.0.2:8000', '10.2.0.3:8000']);
    changed = next();
    send('DELETED', slice('llm-b', ['10.2.0.3'], '13'));
    assert.deepEqual(await changed, ['10.2.0.2:8000']);
  } finally {
    await source.close();
  }
});
