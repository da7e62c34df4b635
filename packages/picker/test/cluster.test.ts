// The EndpointSlice source with the real @kubernetes/client-node informer against the shared
// in-process Kubernetes API server (lists, watches, faults, plain HTTP).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKubeApiServer } from '@extlb/kube-api-server';
import { KubeConfig } from '@kubernetes/client-node';
import { clusterEndpoints } from '../src/pool-members.js';
import { endpointSlice, startFakeKubeApi, type FakeKubeApi } from './fake-kube-api.js';

let api: FakeKubeApi | undefined;
after(() => api?.close());

test('EndpointSlices are listed, then watched: changes apply without a restart', async () => {
  api = await startFakeKubeApi([endpointSlice('llm-a', ['10.2.0.1', '10.2.0.2'], '9')]);
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeconfig());
  const source = await clusterEndpoints({ namespace: 'models', selector: 'kubernetes.io/service-name=llm', port: 'http', kubeConfig: kc });
  try {
    assert.equal(source.ready(), true);
    assert.deepEqual(
      source.endpoints().map((e) => e.address),
      ['10.2.0.1:8000', '10.2.0.2:8000'],
    );
    assert.ok(
      api.requests.some((r) => r.includes('labelSelector=kubernetes.io%2Fservice-name%3Dllm')),
      api.requests.join('\n'),
    );

    await api.server.waitForWatches(1);
    assert.equal(api.watchCount(), 1, 'the informer opened a watch');

    const next = () =>
      new Promise<string[]>((resolve) => {
        const off = source.onChange((e) => {
          off();
          resolve(e.map((x) => x.address));
        });
      });
    let changed = next();
    api.send('ADDED', endpointSlice('llm-b', ['10.2.0.3'], '11'));
    assert.deepEqual(await changed, ['10.2.0.1:8000', '10.2.0.2:8000', '10.2.0.3:8000']);
    changed = next();
    api.send('MODIFIED', endpointSlice('llm-a', ['10.2.0.2'], '12'));
    assert.deepEqual(await changed, ['10.2.0.2:8000', '10.2.0.3:8000']);
    changed = next();
    api.send('DELETED', endpointSlice('llm-b', ['10.2.0.3'], '13'));
    assert.deepEqual(await changed, ['10.2.0.2:8000']);
  } finally {
    await source.close();
  }
});

test('a dropped watch: the source keeps its endpoints, watches again and applies what changed meanwhile', async () => {
  const dropped = await startFakeKubeApi([endpointSlice('llm-a', ['10.2.0.1'], '9')]);
  try {
    const kc = new KubeConfig();
    kc.loadFromString(dropped.kubeconfig());
    const source = await clusterEndpoints({ namespace: 'models', selector: 'kubernetes.io/service-name=llm', kubeConfig: kc, retryMs: 10 });
    try {
      await dropped.server.waitForWatches(1);
      const failed = new Promise<Error>((resolve) => source.onError(resolve));
      dropped.server.faults.dropWatches();
      assert.match((await failed).message, /Premature close/);
      assert.deepEqual(
        source.endpoints().map((e) => e.address),
        ['10.2.0.1:8000'],
        'the last endpoints stay in use',
      );
      const changed = new Promise<string[]>((resolve) => source.onChange((e) => resolve(e.map((x) => x.address))));
      dropped.send('ADDED', endpointSlice('llm-b', ['10.2.0.2'], '10'));
      assert.deepEqual(await changed, ['10.2.0.1:8000', '10.2.0.2:8000']);
    } finally {
      await source.close();
    }
  } finally {
    await dropped.close();
  }
});

test('over plain HTTP (kubectl proxy): an http:// kubeconfig as its users write it lists and watches', async () => {
  const plain = await startKubeApiServer({ tls: false, objects: [endpointSlice('llm-a', ['10.2.0.1'], '9')] });
  try {
    const kc = new KubeConfig();
    kc.loadFromString(plain.kubeconfig({ namespace: 'models' }));
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, false, 'the kubeconfig says nothing about TLS');
    const source = await clusterEndpoints({ namespace: 'models', selector: 'kubernetes.io/service-name=llm', kubeConfig: kc });
    try {
      assert.deepEqual(
        source.endpoints().map((e) => e.address),
        ['10.2.0.1:8000'],
      );
      await plain.waitForWatches(1);
      const changed = new Promise<string[]>((resolve) => source.onChange((e) => resolve(e.map((x) => x.address))));
      plain.put(endpointSlice('llm-b', ['10.2.0.2'], '10'));
      assert.deepEqual(await changed, ['10.2.0.1:8000', '10.2.0.2:8000']);
    } finally {
      await source.close();
    }
  } finally {
    await plain.close();
  }
});
