// Faults a controller must survive: the API down at start, an outage mid-watch, injected 503s,
// delays and cut connections; and authentication (401) and authorization (403).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException, CoreV1Api, Health, KubernetesObjectApi } from '@kubernetes/client-node';
import { configMap, configMapInformer, serve, statusOf } from './helpers.js';

test('the API server is down at start: calls fail to connect, and succeed once it is up on the same port', async (t) => {
  const api = await serve(t, { listening: false, objects: [configMap('a')] });
  const url = api.url;
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  await assert.rejects(core.listNamespacedConfigMap({ namespace: 'default' }), /ECONNREFUSED/);
  assert.equal(api.requests.length, 0);

  await api.start();
  assert.equal(api.url, url);
  const list = await core.listNamespacedConfigMap({ namespace: 'default' });
  assert.deepEqual(
    list.items.map((i) => i.metadata?.name),
    ['a'],
  );
});

test('an outage mid-watch: the informer fails, and once restarted resumes where it was', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const { informer, events } = await configMapInformer(t, api);

  const failed = events.nextOf('error');
  await api.stop();
  await failed;
  api.put(configMap('written-during-outage'));
  const refused = events.nextOf('error');
  await informer.start();
  assert.match(String((await refused).error), /ECONNREFUSED/, 'restarting while down fails to connect');

  await api.start();
  const added = events.nextOf('add', 'written-during-outage');
  await informer.start();
  await added;
  assert.equal(api.requestsMatching({ verb: 'list' }).length, 1, 'no relist: the watch replayed the outage');
});

test('injected faults: 503s with Retry-After for the next two lists, a delay, a cut connection', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const unavailable = api.faults.inject({ match: { verb: 'list', resource: 'configmaps' }, times: 2, status: { code: 503, retryAfterSeconds: 1 } });
  for (let i = 0; i < 2; i++) {
    const error = await core.listNamespacedConfigMap({ namespace: 'default' }).catch((e: unknown) => e);
    assert.ok(error instanceof ApiException);
    assert.equal(error.code, 503);
    assert.equal(error.headers['retry-after'], '1');
  }
  assert.equal((await core.listNamespacedConfigMap({ namespace: 'default' })).items.length, 1);
  assert.equal(unavailable.hits, 2);

  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  api.faults.inject({ match: { verb: 'get', resource: 'configmaps' }, status: { code: 500 } });
  const injected = await statusOf(client.read(configMap('a')));
  assert.deepEqual([injected.code, injected.reason], [500, 'InternalError']);

  api.faults.inject({ match: { verb: 'get', name: 'a' }, delayMs: 20 });
  assert.equal((await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' })).metadata?.name, 'a');
  api.faults.inject({ match: { verb: 'get', name: 'a' }, reset: true });
  await assert.rejects(core.readNamespacedConfigMap({ name: 'a', namespace: 'default' }), /socket hang up|ECONNRESET/);
  assert.deepEqual(
    api.requestsMatching({ verb: 'get', name: 'a' }).map((r) => r.fault ?? r.code),
    ['status', 'delay', 'reset'],
  );
});

test('with auth on: 401 without a known token, 403 when the authorizer says no, probes open', async (t) => {
  const api = await serve(t, {
    objects: [configMap('a')],
    auth: { tokens: { 'admin-token': 'admin', 'viewer-token': 'viewer' }, authorize: (a) => a.user === 'admin' || ['get', 'list', 'watch'].includes(a.verb) },
  });
  const anonymous = KubernetesObjectApi.makeApiClient(api.kubeConfig({ token: 'wrong' }));
  const unauthorized = await statusOf(anonymous.list('v1', 'ConfigMap', 'default'));
  assert.deepEqual(unauthorized, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });

  const viewer = KubernetesObjectApi.makeApiClient(api.kubeConfig({ token: 'viewer-token' }));
  assert.equal((await viewer.read(configMap('a'))).metadata?.name, 'a');
  const forbidden = await statusOf(viewer.delete(configMap('a')));
  assert.equal(forbidden.code, 403);
  assert.equal(forbidden.message, 'configmaps "a" is forbidden: User "viewer" cannot delete resource "configmaps" in API group "" in the namespace "default"');
  const admin = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  await admin.delete(configMap('a'));

  assert.equal(await new Health(api.kubeConfig({ token: 'wrong' })).readyz({}), true);
  assert.deepEqual(
    api.requests.filter((r) => r.path.startsWith('/api/v1')).map((r) => `${r.user ?? '-'} ${r.verb} ${r.path} ${r.code}`),
    [
      '- get /api/v1 401',
      'viewer get /api/v1 200',
      'viewer get /api/v1/namespaces/default/configmaps/a 200',
      'viewer delete /api/v1/namespaces/default/configmaps/a 403',
      'admin get /api/v1 200',
      'admin delete /api/v1/namespaces/default/configmaps/a 200',
    ],
  );
});
