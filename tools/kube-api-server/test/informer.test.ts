// The real client-node informer (list, then watch from the list's resourceVersion) against the
// server: events, a relist after 410 Gone, a resumed watch after a dropped one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configMap, configMapInformer, serve } from './helpers.js';

test('an informer lists, then sees ADDED, MODIFIED and DELETED through its watch', async (t) => {
  const api = await serve(t, { objects: [configMap('first', { a: '1' })] });
  const { informer, events, client } = await configMapInformer(t, api);
  assert.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['first'],
  );
  const [watching] = api.watches();
  assert.deepEqual([watching?.resource, watching?.namespace], ['configmaps', 'default']);
  const list = api.requestsMatching({ verb: 'list', resource: 'configmaps' });
  const watch = api.requestsMatching({ verb: 'watch', resource: 'configmaps' });
  assert.equal(list.length, 1);
  assert.equal(watch[0]?.query.resourceVersion, api.resourceVersion, 'the watch starts at the list resourceVersion');

  let seen = events.nextOf('add', 'second');
  await client.create(configMap('second', { b: '2' }));
  assert.deepEqual((await seen).object?.metadata?.labels, undefined);

  seen = events.nextOf('update', 'first');
  await client.patch({ ...configMap('first'), data: { a: '2' } }, undefined, undefined, undefined, undefined, 'application/merge-patch+json');
  const updated = (await seen).object as { data?: Record<string, string>; metadata?: { resourceVersion?: string } };
  assert.deepEqual(updated.data, { a: '2' });
  assert.equal(updated.metadata?.resourceVersion, api.resourceVersion);

  seen = events.nextOf('delete', 'second');
  await client.delete(configMap('second'));
  await seen;
  assert.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['first'],
  );
});

test('after 410 Gone the informer relists and catches up with what it missed', async (t) => {
  const api = await serve(t, { objects: [configMap('kept'), configMap('removed')] });
  const { informer, events } = await configMapInformer(t, api);
  const staleVersion = api.resourceVersion;

  // The watch ends cleanly; before the informer comes back, the cluster moves on and etcd compacts.
  api.faults.dropWatches({ graceful: true });
  api.put(configMap('added-meanwhile'));
  api.remove('v1', 'ConfigMap', 'removed', 'default');
  api.faults.compact();

  const deleted = events.nextOf('delete', 'removed');
  const added = events.nextOf('add', 'added-meanwhile');
  await Promise.all([deleted, added]);
  const watches = api.requestsMatching({ verb: 'watch', resource: 'configmaps' });
  assert.equal(watches[1]?.query.resourceVersion, staleVersion, 'it came back with its old resourceVersion');
  assert.equal(api.requestsMatching({ verb: 'list', resource: 'configmaps' }).length, 2, 'the 410 made it list again');
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata?.name)
      .sort(),
    ['added-meanwhile', 'kept'],
  );
});

test('a watch dropped mid-stream fails the informer; restarted, it resumes from its resourceVersion without a relist', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const { informer, events } = await configMapInformer(t, api);

  const failed = events.nextOf('error');
  assert.equal(api.faults.dropWatches(), 1);
  assert.match(String((await failed).error), /Premature close/);
  api.put(configMap('b'));

  const added = events.nextOf('add', 'b');
  await informer.start();
  await added;
  assert.equal(api.requestsMatching({ verb: 'list', resource: 'configmaps' }).length, 1, 'the history window replayed the gap');
});

test('an informer with a label selector sees objects enter and leave the selection as ADDED and DELETED', async (t) => {
  const api = await serve(t, { objects: [configMap('x', {}, { tier: 'web' })] });
  const { informer, events } = await configMapInformer(t, api, 'tier=web');

  const left = events.nextOf('delete', 'x');
  api.put(configMap('x', {}, { tier: 'db' }));
  assert.deepEqual((await left).object?.metadata?.labels, { tier: 'web' }, 'DELETED carries the last state that matched');
  const entered = events.nextOf('add', 'y');
  api.put(configMap('y', {}, { tier: 'web' }));
  await entered;
  assert.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['y'],
  );
});
