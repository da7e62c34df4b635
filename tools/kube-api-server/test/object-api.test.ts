// KubernetesObjectApi and the typed clients against the server: discovery, create, read, list,
// replace, the three patch types, delete, and the API server's errors and defaulting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type KubernetesObject, KubernetesObjectApi, PatchStrategy, type V1Service } from '@kubernetes/client-node';
import { configMap, serve, statusOf } from './helpers.js';

const pool = (name: string, spec: Record<string, unknown> = { selector: { matchLabels: { app: 'llm' } } }) => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'BackendPool',
  metadata: { name, namespace: 'default' },
  spec,
});

test('create, read, list, replace and delete a custom resource through discovery', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const created: KubernetesObject = await client.create(pool('llm'));
  assert.equal(created.metadata?.generation, 1);
  assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
  assert.ok(created.metadata?.creationTimestamp instanceof Date);
  assert.equal(created.metadata?.resourceVersion, api.resourceVersion);
  assert.equal(api.requestsMatching({ path: '/apis/extlb.dev/v1alpha1' }).length, 1, 'the client found the resource by discovery');

  const read = await client.read({ apiVersion: 'extlb.dev/v1alpha1', kind: 'BackendPool', metadata: { name: 'llm', namespace: 'default' } });
  assert.deepEqual(read.metadata?.uid, created.metadata?.uid);

  const replaced = await client.replace({ ...pool('llm', { selector: { matchLabels: { app: 'other' } } }), metadata: read.metadata ?? {} });
  assert.equal(replaced.metadata?.generation, 2, 'a spec change bumps the generation');
  const relabelled = await client.replace({ ...replaced, metadata: { ...replaced.metadata, labels: { team: 'a' } } });
  assert.equal(relabelled.metadata?.generation, 2, 'a metadata change does not');

  const list = await client.list('extlb.dev/v1alpha1', 'BackendPool', 'default');
  assert.equal(list.metadata?.resourceVersion, api.resourceVersion);
  assert.deepEqual(
    list.items.map((i) => [i.apiVersion, i.kind, i.metadata?.name]),
    [['extlb.dev/v1alpha1', 'BackendPool', 'llm']],
  );

  const status = await client.delete(pool('llm'));
  assert.deepEqual(
    { status: status.status, details: { ...status.details } },
    { status: 'Success', details: { name: 'llm', group: 'extlb.dev', kind: 'backendpools', uid: created.metadata?.uid } },
  );
  assert.equal(api.get('extlb.dev/v1alpha1', 'BackendPool', 'llm', 'default'), undefined);
});

test('errors are Status objects in the API server words', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  await client.create(pool('llm'));

  const exists = await statusOf(client.create(pool('llm')));
  assert.deepEqual(exists, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'backendpools.extlb.dev "llm" already exists',
    reason: 'AlreadyExists',
    details: { name: 'llm', group: 'extlb.dev', kind: 'backendpools' },
    code: 409,
  });
  const missing = await statusOf(client.read(pool('nope')));
  assert.equal(missing.message, 'backendpools.extlb.dev "nope" not found');
  assert.equal(missing.code, 404);

  const stale = await statusOf(client.replace({ ...pool('llm'), metadata: { name: 'llm', namespace: 'default', resourceVersion: '1' } }));
  assert.equal(stale.code, 409);
  assert.equal(stale.reason, 'Conflict');
  assert.equal(
    stale.message,
    'Operation cannot be fulfilled on backendpools.extlb.dev "llm": the object has been modified; please apply your changes to the latest version and try again',
  );

  const badName = await statusOf(client.create(pool('Not_A_Name')));
  assert.equal(badName.code, 422);
  assert.equal(badName.reason, 'Invalid');
  assert.match(
    badName.message ?? '',
    /^BackendPool\.extlb\.dev "Not_A_Name" is invalid: metadata\.name: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain/,
  );
  assert.deepEqual(badName.details?.causes?.[0]?.field, 'metadata.name');

  const noNamespace = await statusOf(client.create({ ...pool('x'), metadata: { name: 'x', namespace: 'absent' } }));
  assert.equal(noNamespace.message, 'namespaces "absent" not found');

  const withVersion = await statusOf(client.create({ ...pool('y'), metadata: { name: 'y', namespace: 'default', resourceVersion: '5' } }));
  assert.equal(withVersion.code, 500);
  assert.match(withVersion.message ?? '', /resourceVersion should not be set on objects to be created/);
});

test('patches: JSON patch, merge patch, strategic merge on built-ins, 415 for strategic merge on a custom resource', async (t) => {
  const api = await serve(t, {
    objects: [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          ports: [
            { name: 'http', port: 80 },
            { name: 'https', port: 443 },
          ],
        },
      },
    ],
  });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' } };

  // Strategic merge (the client's default) merges spec.ports by port.
  const merged = (await client.patch({ ...svc, spec: { ports: [{ port: 443, name: 'tls' }] } } as V1Service)) as V1Service;
  assert.deepEqual(
    merged.spec?.ports?.map((p) => `${p.name}:${p.port}`),
    ['http:80', 'tls:443'],
  );
  // Merge patch replaces lists whole.
  const replaced = (await client.patch(
    { ...svc, spec: { ports: [{ port: 8080, name: 'alt' }] } } as V1Service,
    undefined,
    undefined,
    undefined,
    undefined,
    PatchStrategy.MergePatch,
  )) as V1Service;
  assert.deepEqual(
    replaced.spec?.ports?.map((p) => `${p.name}:${p.port}:${p.protocol}:${p.targetPort}`),
    ['alt:8080:TCP:8080'],
    'and the server defaults protocol and targetPort',
  );

  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const patched = await core.patchNamespacedService({
    name: 'web',
    namespace: 'default',
    body: [
      { op: 'test', path: '/spec/ports/0/port', value: 8080 },
      { op: 'add', path: '/metadata/labels', value: { app: 'web' } },
    ],
  });
  assert.deepEqual(patched.metadata?.labels, { app: 'web' });
  const failedTest = await statusOf(
    core.patchNamespacedService({ name: 'web', namespace: 'default', body: [{ op: 'test', path: '/spec/ports/0/port', value: 1 }] }),
  );
  assert.equal(failedTest.code, 422);

  await client.create(pool('llm'));
  const refused = await statusOf(client.patch(pool('llm', { selector: { matchLabels: { app: 'x' } } })));
  assert.equal(refused.code, 415);
  assert.equal(
    refused.message,
    'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
  );
  const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
  const applied = (await custom.patchNamespacedCustomObject({
    group: 'extlb.dev',
    version: 'v1alpha1',
    plural: 'backendpools',
    namespace: 'default',
    name: 'llm',
    body: [{ op: 'replace', path: '/spec/selector/matchLabels/app', value: 'x' }],
  })) as { metadata: { generation: number } };
  assert.equal(applied.metadata.generation, 2);
});

test('a Service gets the defaults and cluster IP a real API server gives it, and keeps them on update', async (t) => {
  const api = await serve(t);
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const created = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } } });
  assert.deepEqual(
    {
      type: created.spec?.type,
      sessionAffinity: created.spec?.sessionAffinity,
      ipFamilies: created.spec?.ipFamilies,
      ipFamilyPolicy: created.spec?.ipFamilyPolicy,
      internalTrafficPolicy: created.spec?.internalTrafficPolicy,
    },
    { type: 'ClusterIP', sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' },
  );
  assert.match(created.spec?.clusterIP ?? '', /^10\.96\.\d+\.\d+$/);
  const headless = await core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 'pool' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } },
  });
  assert.equal(headless.spec?.clusterIP, 'None');

  // A controller that writes its desired spec without the allocated address keeps the address.
  const updated = await core.replaceNamespacedService({
    name: 'web',
    namespace: 'default',
    body: { metadata: { name: 'web', resourceVersion: created.metadata?.resourceVersion }, spec: { ports: [{ port: 81 }] } },
  });
  assert.equal(updated.spec?.clusterIP, created.spec?.clusterIP);
  // Deleting a Service answers with the Service.
  const deleted = await core.deleteNamespacedService({ name: 'web', namespace: 'default' });
  assert.equal(deleted.metadata?.name, 'web');
});

test('an update that changes nothing keeps the resourceVersion and sends no event', async (t) => {
  const api = await serve(t, { objects: [configMap('same', { a: '1' })] });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const before = await client.read(configMap('same'));
  const after = await client.replace(before);
  assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion);
  assert.equal(api.resourceVersion, before.metadata?.resourceVersion);
});

test('discovery lists resources with their verbs and status subresources', async (t) => {
  const api = await serve(t);
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const resources = await core.getAPIResources();
  const services = resources.resources.filter((r) => r.name.startsWith('services'));
  assert.deepEqual(
    services.map((r) => [r.name, r.kind, r.namespaced, r.verbs.join(',')]),
    [
      ['services', 'Service', true, 'create,delete,deletecollection,get,list,patch,update,watch'],
      ['services/status', 'Service', true, 'get,patch,update'],
    ],
  );
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const grant: KubernetesObject = await client.create({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: 'g', namespace: 'default' },
    spec: {},
  });
  const asV1 = await client.read({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace: 'default' } });
  assert.equal(asV1.apiVersion, 'gateway.networking.k8s.io/v1', 'both versions serve the same object');
  assert.equal(asV1.metadata?.uid, grant.metadata?.uid);
});

test('server-side apply creates, then applies again, dropping what the manager no longer names; it needs a field manager', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const apply = (spec: KubernetesObject & { data?: Record<string, string> }, fieldManager?: string) =>
    client.patch(spec, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
  const created = await apply(configMap('applied', { a: '1' }), 'extlb-controller');
  assert.equal(api.requestsMatching({ verb: 'patch', name: 'applied' })[0]?.code, 201);
  const merged = (await apply(configMap('applied', { b: '2' }), 'extlb-controller')) as { data: Record<string, string> };
  assert.deepEqual(merged.data, { b: '2' }, 'a, applied before by the same manager and owned by nobody else, is removed');
  assert.equal(created.metadata?.uid, api.get('v1', 'ConfigMap', 'applied', 'default')?.metadata.uid);
  const missing = await statusOf(apply(configMap('applied')));
  assert.equal(missing.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
});

test('dryRun=All answers as a write would and stores nothing; deletecollection deletes what the selector picks', async (t) => {
  const api = await serve(t, { objects: [configMap('a', {}, { app: 'x' }), configMap('b', {}, { app: 'x' }), configMap('c')] });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const before = api.resourceVersion;
  const dry: KubernetesObject = await client.create(configMap('dry'), undefined, 'All');
  assert.equal(dry.metadata?.name, 'dry');
  assert.equal(api.get('v1', 'ConfigMap', 'dry', 'default'), undefined);
  await client.delete(configMap('a'), undefined, 'All');
  assert.ok(api.get('v1', 'ConfigMap', 'a', 'default'));
  assert.equal(api.resourceVersion, before);

  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=x' });
  assert.deepEqual(
    api.list('v1', 'ConfigMap', 'default').map((o) => o.metadata.name),
    ['c'],
  );
});

test('a test can register more kinds, served with discovery like the others', async (t) => {
  const api = await serve(t, {
    kinds: [{ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: false, custom: true, status: true, shortNames: ['wd'] }],
  });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const widget: KubernetesObject = await client.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ignored' } });
  assert.equal(widget.metadata?.namespace, undefined, 'cluster-scoped objects have no namespace');
  const list = await client.list('example.com/v1', 'Widget');
  assert.deepEqual(
    list.items.map((i) => i.metadata?.name),
    ['w'],
  );
  const status = await api
    .kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .getClusterCustomObjectStatus({ group: 'example.com', version: 'v1', plural: 'widgets', name: 'w' });
  assert.equal((status as KubernetesObject).metadata?.name, 'w');
});

test('generateName makes a name of the prefix and five random characters', async (t) => {
  const api = await serve(t);
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'shadow-' } } });
  assert.match(created.metadata?.name ?? '', /^shadow-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
});
