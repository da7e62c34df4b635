// Garbage collection through ownerReferences (background, orphan, foreground), finalizers, and the
// namespace controller, seen through the real client's watch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import type { KubeApiServer } from '../src/index.js';
import { configMap, configMapInformer, dropFinalizers, heldConfigMap, serve, statusOf } from './helpers.js';

function owned(name: string, ...owners: { metadata: { name?: string; uid?: string } }[]) {
  return {
    ...configMap(name),
    metadata: {
      name,
      namespace: 'default',
      ownerReferences: owners.map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name as string, uid: o.metadata.uid as string })),
    },
  };
}

const exists = (api: KubeApiServer, name: string) => api.get('v1', 'ConfigMap', name, 'default') !== undefined;

test('deleting an owner deletes its dependents in the background; a dependent with another owner loses the reference', async (t) => {
  const api = await serve(t);
  const owner = api.put(configMap('owner'));
  const other = api.put(configMap('other-owner'));
  api.put(owned('child', owner));
  api.put(owned('grandchild', api.get('v1', 'ConfigMap', 'child', 'default') as typeof owner));
  api.put(owned('shared', owner, other));

  const { events, client } = await configMapInformer(t, api);
  const grandchildGone = events.nextOf('delete', 'grandchild');
  const sharedUpdated = events.nextOf('update', 'shared');
  await client.delete(configMap('owner'));
  await Promise.all([grandchildGone, sharedUpdated]);
  assert.equal(exists(api, 'child'), false);
  const shared = api.get('v1', 'ConfigMap', 'shared', 'default');
  assert.deepEqual(
    shared?.metadata.ownerReferences?.map((r) => r.name),
    ['other-owner'],
  );
  const order = events.seen.filter((e) => e.verb === 'delete').map((e) => e.object?.metadata?.name);
  assert.deepEqual(order, ['owner', 'child', 'grandchild'], 'the DELETE answers first, the collector follows');
});

test('Orphan keeps the dependents without the reference; Foreground deletes them before the owner', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const orphaning = api.put(configMap('orphaning'));
  api.put(owned('orphan', orphaning));
  await client.delete(configMap('orphaning'), undefined, undefined, undefined, undefined, 'Orphan');
  await api.settled();
  assert.equal(exists(api, 'orphan'), true);
  assert.equal(api.get('v1', 'ConfigMap', 'orphan', 'default')?.metadata.ownerReferences, undefined);

  // The dependent has a finalizer, so the owner visibly waits for it.
  const parent = api.put(configMap('parent'));
  api.put({
    ...heldConfigMap('dependent'),
    metadata: { ...heldConfigMap('dependent').metadata, ownerReferences: owned('dependent', parent).metadata.ownerReferences },
  });
  await client.delete(configMap('parent'), undefined, undefined, undefined, undefined, 'Foreground');
  await api.settled();
  const waiting = await client.read(configMap('parent'));
  assert.ok(waiting.metadata?.deletionTimestamp, 'the owner is marked');
  assert.deepEqual(waiting.metadata?.finalizers, ['foregroundDeletion']);
  const dependent = await client.read(configMap('dependent'));
  assert.ok(dependent.metadata?.deletionTimestamp, 'its dependent is being deleted');
  await dropFinalizers(client, 'dependent');
  await api.settled();
  assert.equal(exists(api, 'dependent'), false);
  assert.equal(exists(api, 'parent'), false, 'the owner goes after its last dependent');
});

test('a finalizer holds a deletion until it is removed', async (t) => {
  const api = await serve(t, { objects: [heldConfigMap('held')] });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  await client.delete(configMap('held'));
  const marked = await client.read(configMap('held'));
  assert.ok(marked.metadata?.deletionTimestamp);
  await client.replace({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
  assert.equal(exists(api, 'held'), false);
});

test('deleting a namespace empties it, then removes it; creating in it meanwhile is forbidden', async (t) => {
  const api = await serve(t, { objects: [configMap('plain', {}, undefined, 'team'), heldConfigMap('held', 'team')] });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  await api.settled();
  const terminating = await client.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  assert.equal((terminating as unknown as { status: { phase: string } }).status.phase, 'Terminating', 'a finalizer in it holds it');
  assert.deepEqual(
    api.list('v1', 'ConfigMap', 'team').map((o) => o.metadata.name),
    ['held'],
  );
  const refused = await statusOf(client.create(configMap('new', {}, undefined, 'team')));
  assert.equal(refused.message, 'configmaps "new" is forbidden: unable to create new content in namespace team because it is being terminated');

  await dropFinalizers(client, 'held', 'team');
  await api.settled();
  assert.deepEqual(api.list('v1', 'ConfigMap', 'team'), []);
  assert.equal(api.get('v1', 'Namespace', 'team'), undefined);
});

test('with garbageCollection off, dependents stay (no kube-controller-manager)', async (t) => {
  const api = await serve(t, { garbageCollection: false });
  const owner = api.put(configMap('owner'));
  api.put(owned('child', owner));
  api.remove('v1', 'ConfigMap', 'owner', 'default');
  await api.settled();
  assert.equal(exists(api, 'child'), true);
});
