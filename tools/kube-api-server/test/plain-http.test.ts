// `tls: false`: the server speaks plain HTTP, as `kubectl proxy` and local test clusters do, and its
// kubeconfig names an `http://` server with nothing about TLS, as their users write it.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { CoreV1Api, type KubeConfig, makeInformer } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { configMap, InformerEvents, serve } from './helpers.js';

/** client-node 1.4 picks a plain agent for an `http://` server only when the cluster skips TLS verification (there is none to skip). */
function plainAgent(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (cluster) Object.assign(cluster, { skipTLSVerify: true });
  return kc;
}

test('plain HTTP: the address and the kubeconfig say http://, with no certificate authority', async (t) => {
  const api = await serve(t, { tls: false, objects: [configMap('a')] });
  assert.match(api.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(api.ca, '');
  const config = parse(api.kubeconfig()) as { clusters: { cluster: Record<string, unknown> }[] };
  assert.deepEqual(config.clusters[0]?.cluster, { server: api.url });

  const body = await new Promise<{ code?: number; text: string }>((resolve, reject) => {
    const req = request(`${api.url}/api/v1/namespaces/default/configmaps`, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ ...(res.statusCode ? { code: res.statusCode } : {}), text }));
    });
    req.on('error', reject).end();
  });
  assert.equal(body.code, 200);
  assert.deepEqual(
    (JSON.parse(body.text) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
    ['a'],
  );
});

test('plain HTTP: client-node 1.4 refuses an http:// kubeconfig as written, and lists and watches once told to skip TLS verification', async (t) => {
  const api = await serve(t, { tls: false, objects: [configMap('a')] });
  await assert.rejects(api.kubeConfig().makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' }), /HTTP protocol is not allowed/);

  const kc = plainAgent(api.kubeConfig());
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
  const events = new InformerEvents(informer);
  await informer.start();
  t.after(() => informer.stop());
  assert.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['a'],
  );
  await api.waitForWatches(1);
  const added = events.nextOf('add', 'b');
  api.put(configMap('b'));
  await added;
  assert.deepEqual(
    api.requests.filter((r) => r.path.startsWith('/api/v1/namespaces')).map((r) => `${r.verb} ${r.code}`),
    ['list 200', 'watch 200'],
  );
});
