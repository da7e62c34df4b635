// Faults a controller must survive: the API down at start, an outage mid-watch, injected 503s,
// delays and cut connections, answers that are not what they claim (lines that are not events, a
// LIST holding a null), a watch that never speaks, every watch 410; and authentication (401) and
// authorization (403).
import assert from 'node:assert/strict';
import { get } from 'node:https';
import { test } from 'node:test';
import { ApiException, CoreV1Api, Health, KubernetesObjectApi, makeInformer } from '@kubernetes/client-node';
import type { KubeApiServer } from '../src/index.js';
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

/** A raw watch (node:https): its status once answered, every line it got, and how it ended (the server ended it, or it was cut). */
function rawWatch(api: KubeApiServer, query: string) {
  const lines: string[] = [];
  let answered: (code: number) => void = () => {};
  const code = new Promise<number>((resolve) => {
    answered = resolve;
  });
  const ended = new Promise<'ended' | 'cut'>((resolve, reject) => {
    const req = get(`${api.url}/api/v1/namespaces/default/configmaps?watch=1&${query}`, { ca: api.ca }, (res) => {
      answered(res.statusCode ?? 0);
      let rest = '';
      res.on('data', (c: Buffer) => {
        const parts = (rest + c.toString()).split('\n');
        rest = parts.pop() ?? '';
        lines.push(...parts);
      });
      res.on('end', () => resolve('ended'));
      res.on('aborted', () => resolve('cut'));
      res.on('error', () => resolve('cut'));
    });
    req.on('error', reject);
  });
  return { lines, code, ended };
}

test('lines that are not events go out as they are before the watch, which then carries on', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const malformed = [
    'null',
    '[1]',
    '"x"',
    '{"type":"ADDED","object":null}',
    '{"type":"MODIFIED","object":{"kind":"ConfigMap"}}',
    '{"type":"ERROR","object":null}',
  ];
  const fault = api.faults.inject({ match: { verb: 'watch', resource: 'configmaps' }, lines: malformed });
  const w = rawWatch(api, `resourceVersion=${api.resourceVersion}&timeoutSeconds=1`);
  await api.waitForWatches(1);
  api.put(configMap('b'));
  assert.equal(await w.ended, 'ended');
  assert.deepEqual(w.lines.slice(0, malformed.length), malformed);
  assert.deepEqual(
    w.lines.slice(malformed.length).map((l) => `${JSON.parse(l).type} ${JSON.parse(l).object.metadata.name}`),
    ['ADDED b'],
  );
  assert.equal(fault.hits, 1);
  assert.equal(api.requestsMatching({ verb: 'watch' })[0]?.fault, 'lines');
});

test('a reply fault answers with its body instead: a LIST whose items hold a null reaches the client as sent', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const bad = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: api.resourceVersion }, items: [null] };
  api.faults.inject({ match: { verb: 'list', resource: 'configmaps' }, reply: { body: bad } });
  api.faults.inject({ match: { verb: 'list', resource: 'configmaps' }, reply: { body: '{"items":{"not":"a list"}}' } });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  assert.deepEqual((await core.listNamespacedConfigMap({ namespace: 'default' })).items, [null]);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  assert.deepEqual((await client.list('v1', 'ConfigMap', 'default')).items, { not: 'a list' });
  assert.deepEqual(
    (await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((i) => i.metadata?.name),
    ['a'],
    'used up, the faults leave the next list alone',
  );
  assert.deepEqual(
    api.requestsMatching({ verb: 'list' }).map((r) => `${r.code} ${r.fault ?? '-'}`),
    ['200 reply', '200 reply', '200 -'],
  );
});

test('a silent watch answers 200 and then sends nothing: no events, no bookmarks, no end at timeoutSeconds', async (t) => {
  const api = await serve(t, { objects: [configMap('a')], bookmarkIntervalMs: 20 });
  api.faults.inject({ match: { verb: 'watch', resource: 'configmaps' }, silent: true });
  const silent = rawWatch(api, `resourceVersion=${api.resourceVersion}&timeoutSeconds=1&allowWatchBookmarks=true`);
  await api.waitForWatches(1, { silent: true });
  assert.equal(await silent.code, 200);
  // A healthy watch opened after it, with the same timeout and bookmarks: it hears everything and ends.
  const healthy = rawWatch(api, `resourceVersion=${api.resourceVersion}&timeoutSeconds=1&allowWatchBookmarks=true`);
  await api.waitForWatches(2);
  api.put(configMap('b'));
  assert.equal(api.sendBookmarks(), 2, 'both allow bookmarks');
  assert.equal(await healthy.ended, 'ended');
  assert.ok(healthy.lines.some((l) => JSON.parse(l).type === 'ADDED'));
  assert.ok(healthy.lines.some((l) => JSON.parse(l).type === 'BOOKMARK'));
  assert.deepEqual(silent.lines, []);
  while (api.watches().length > 1) await new Promise((r) => setTimeout(r, 5)); // the healthy one's close reaches the server
  assert.deepEqual(
    api.watches().map((w) => w.silent),
    [true],
    'the silent one is still open',
  );
  assert.equal(api.faults.dropWatches(), 1);
  assert.equal(await silent.ended, 'cut');
  assert.deepEqual(silent.lines, []);
});

test('every watch answered 410: client-node 1.4 relists at once each time, with no pause', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const storm = api.faults.inject({ match: { verb: 'watch', resource: 'configmaps' }, gone: true, times: Number.POSITIVE_INFINITY });
  const kc = api.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
  t.after(() => informer.stop());
  await informer.start();
  const lists = () => api.requestsMatching({ verb: 'list', resource: 'configmaps' });
  while (lists().length < 20) await new Promise((r) => setTimeout(r, 5));
  await informer.stop();
  assert.ok(storm.hits >= 19);
  assert.ok(
    api.requestsMatching({ verb: 'watch' }).every((r) => r.fault === 'gone' && r.code === 200),
    'each watch got 200 and an ERROR event with 410',
  );
  const times = lists().map((r) => r.time);
  const gaps = times.slice(1).map((at, i) => at - (times[i] ?? at));
  console.log(`# 20 lists in ${(times.at(-1) ?? 0) - (times[0] ?? 0)} ms; longest gap ${Math.max(...gaps)} ms`);
});
