// Lists: limit/continue chunking over a consistent snapshot, 410 for an expired continue token,
// label and field selectors, and resourceVersion / resourceVersionMatch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, KubernetesObjectApi } from '@kubernetes/client-node';
import { configMap, serve, statusOf } from './helpers.js';

const names = (list: { items: { metadata?: { name?: string } }[] }) => list.items.map((i) => i.metadata?.name);

test('limit and continue page through a snapshot: later writes do not show, the token expires with compaction', async (t) => {
  const api = await serve(t, { objects: ['a', 'b', 'c', 'd', 'e'].map((n) => configMap(n)) });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
  assert.deepEqual(names(first), ['a', 'b']);
  assert.equal(first.metadata?.remainingItemCount, 3);
  const snapshot = first.metadata?.resourceVersion;

  api.remove('v1', 'ConfigMap', 'c', 'default');
  api.put(configMap('cc'));
  const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: first.metadata?._continue });
  assert.deepEqual(names(second), ['c', 'd'], 'the page comes from the first page snapshot');
  assert.equal(second.metadata?.resourceVersion, snapshot);
  const last = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: second.metadata?._continue });
  assert.deepEqual(names(last), ['e']);
  assert.equal(last.metadata?._continue, undefined);

  const fresh = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
  api.put(configMap('f'));
  api.faults.compact();
  const gone = await statusOf(core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: fresh.metadata?._continue }));
  assert.equal(gone.code, 410);
  assert.equal(gone.reason, 'Expired');
  assert.match(gone.message ?? '', /^The provided continue parameter is too old to display a consistent list result\./);
  const inconsistent = await core.listNamespacedConfigMap({ namespace: 'default', _continue: gone.metadata.continue });
  assert.deepEqual(names(inconsistent), ['cc', 'd', 'e', 'f'], 'the token in the 410 reads the rest from the current state');
});

test('KubernetesObjectApi.list pages across namespaces in namespace, then name order', async (t) => {
  const api = await serve(t, {
    objects: [configMap('z', {}, undefined, 'a-ns'), configMap('y', {}, undefined, 'b-ns'), configMap('x', {}, undefined, 'a-ns')],
  });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const page = await client.list('v1', 'ConfigMap', undefined, undefined, undefined, undefined, undefined, undefined, 2);
  assert.deepEqual(
    page.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`),
    ['a-ns/x', 'a-ns/z'],
  );
  const rest = await client.list('v1', 'ConfigMap', undefined, undefined, undefined, undefined, undefined, undefined, 2, page.metadata?._continue);
  assert.deepEqual(
    rest.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`),
    ['b-ns/y'],
  );
});

test('label selectors: =, ==, !=, in, notin, exists, !key', async (t) => {
  const api = await serve(t, {
    objects: [configMap('web', {}, { app: 'web', tier: 'front' }), configMap('db', {}, { app: 'db', tier: 'back' }), configMap('bare')],
  });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const select = async (labelSelector: string) => names(await core.listNamespacedConfigMap({ namespace: 'default', labelSelector }));
  assert.deepEqual(await select('app=web'), ['web']);
  assert.deepEqual(await select('app==db'), ['db']);
  assert.deepEqual(await select('app!=web'), ['bare', 'db'], '!= matches objects without the label');
  assert.deepEqual(await select('tier in (front, back),app notin (db)'), ['web']);
  assert.deepEqual(await select('app'), ['db', 'web']);
  assert.deepEqual(await select('!app'), ['bare']);
  const bad = await statusOf(core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app in web' }));
  assert.equal(bad.code, 400);
  assert.match(bad.message ?? '', /^unable to parse requirement: /);
});

test('field selectors: metadata.name, metadata.namespace, a Secret type; an unknown field is a 400', async (t) => {
  const secret = (name: string, type: string, namespace = 'default') => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type });
  const api = await serve(t, { objects: [secret('tls', 'kubernetes.io/tls'), secret('opaque', 'Opaque'), secret('other', 'kubernetes.io/tls', 'prod')] });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const all = async (fieldSelector: string) =>
    (await core.listSecretForAllNamespaces({ fieldSelector })).items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`);
  assert.deepEqual(await all('type=kubernetes.io/tls'), ['default/tls', 'prod/other']);
  assert.deepEqual(await all('type=kubernetes.io/tls,metadata.namespace!=prod'), ['default/tls']);
  assert.deepEqual(await all('metadata.name==opaque'), ['default/opaque']);
  const unknown = await statusOf(core.listSecretForAllNamespaces({ fieldSelector: 'data.key=x' }));
  assert.deepEqual([unknown.code, unknown.message], [400, 'field label not supported: data.key']);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const custom = await statusOf(client.list('extlb.dev/v1alpha1', 'BackendPool', 'default', undefined, undefined, undefined, 'spec.x=1'));
  assert.equal(custom.message, '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
});

test('resourceVersion semantics: Exact reads the past, older than the history is 410, newer than the server waits then 504', async (t) => {
  const api = await serve(t, { objects: [configMap('a', { v: '1' })], tooLargeResourceVersionWaitMs: 50 });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const past = api.resourceVersion;
  api.put(configMap('a', { v: '2' }));
  api.put(configMap('b'));

  const exact = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: past, resourceVersionMatch: 'Exact' });
  assert.deepEqual(
    exact.items.map((i) => `${i.metadata?.name}:${i.data?.v}`),
    ['a:1'],
  );
  assert.equal(exact.metadata?.resourceVersion, past);
  const notOlder = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: past, resourceVersionMatch: 'NotOlderThan' });
  assert.equal(notOlder.metadata?.resourceVersion, api.resourceVersion);
  assert.deepEqual(names(notOlder), ['a', 'b']);

  api.faults.compact();
  const tooOld = await statusOf(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: past, resourceVersionMatch: 'Exact' }));
  assert.deepEqual([tooOld.code, tooOld.reason, tooOld.message], [410, 'Expired', `too old resource version: ${past} (${api.resourceVersion})`]);

  const future = String(Number(api.resourceVersion) + 10);
  const tooNew = await statusOf(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: future, resourceVersionMatch: 'NotOlderThan' }));
  assert.deepEqual([tooNew.code, tooNew.reason, tooNew.details?.retryAfterSeconds], [504, 'Timeout', 1]);
  assert.equal(tooNew.message, `Timeout: Too large resource version: ${future}, current: ${api.resourceVersion}`);

  const invalid = await statusOf(core.listNamespacedConfigMap({ namespace: 'default', resourceVersionMatch: 'Exact' }));
  assert.equal(invalid.code, 422);
  assert.equal(
    invalid.message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
  );
});
