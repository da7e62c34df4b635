// Server-side apply through the real client: field ownership in managedFields, conflicts (409 with
// the API server's message and causes), force, fields a manager stops applying, a no-op apply, and
// the kinds a Gateway's provisioner writes (Deployment, ServiceAccount, PDB, HPA), garbage-collected
// with their owner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KubernetesObject, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { serve, statusOf } from './helpers.js';

type Obj = KubernetesObject & Record<string, any>;

function deployment(spec: Record<string, unknown>, labels?: Record<string, string>): Obj {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'edge', namespace: 'default', ...(labels ? { labels } : {}) }, spec };
}

const template = (image: string, extra: Record<string, unknown>[] = []) => ({
  selector: { matchLabels: { app: 'edge' } },
  template: { metadata: { labels: { app: 'edge' } }, spec: { containers: [{ name: 'envoy', image }, ...extra] } },
});

const EDGE = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'edge', namespace: 'default' } };

function managers(obj: Obj): Record<string, string> {
  return Object.fromEntries((obj.metadata?.managedFields ?? []).map((m: any) => [m.manager, m.operation]));
}

test('an apply records its fields; an update by another manager takes the fields it changed; a changed owned field conflicts unless forced', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const apply = (o: Obj, force = false) => client.patch(o, undefined, undefined, 'extlb', force, PatchStrategy.ServerSideApply) as Promise<Obj>;

  const created = await apply(deployment({ replicas: 2, ...template('envoy:1.38') }, { team: 'edge' }));
  assert.equal(created.spec.replicas, 2);
  const mine = created.metadata?.managedFields?.[0] as any;
  assert.equal(mine.manager, 'extlb');
  assert.equal(mine.operation, 'Apply');
  assert.equal(mine.fieldsType, 'FieldsV1');
  assert.deepEqual(mine.fieldsV1['f:spec']['f:replicas'], {});
  assert.deepEqual(mine.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"envoy"}'], { '.': {}, 'f:image': {}, 'f:name': {} });

  // An autoscaler writes replicas (as kube-controller-manager does) and a user adds an annotation.
  await client.patch(
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'edge', namespace: 'default' }, spec: { replicas: 5 } } as Obj,
    undefined,
    undefined,
    'kube-controller-manager',
    undefined,
    PatchStrategy.MergePatch,
  );
  await client.patch(
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'edge', namespace: 'default', annotations: { note: 'mine' } } } as Obj,
    undefined,
    undefined,
    'kubectl-annotate',
    undefined,
    PatchStrategy.MergePatch,
  );
  const scaled = (await client.read(EDGE)) as Obj;
  assert.deepEqual(managers(scaled), { extlb: 'Apply', 'kube-controller-manager': 'Update', 'kubectl-annotate': 'Update' });
  const extlbNow = scaled.metadata?.managedFields?.find((m: any) => m.manager === 'extlb') as any;
  assert.equal(extlbNow.fieldsV1['f:spec']['f:replicas'], undefined, 'the update took replicas away from extlb');

  // Applying replicas again would undo the autoscaler: refused, with the API server's words.
  const refused = await statusOf(apply(deployment({ replicas: 2, ...template('envoy:1.38') }, { team: 'edge' })));
  assert.equal(refused.code, 409);
  assert.equal(refused.reason, 'Conflict');
  assert.equal(refused.message, 'Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas');
  assert.deepEqual(refused.details?.causes, [
    { reason: 'FieldManagerConflict', message: 'conflict with "kube-controller-manager" using apps/v1', field: '.spec.replicas' },
  ]);

  // Leaving replicas out: no conflict, the autoscaler's count and the user's annotation stay; the
  // label extlb no longer applies goes, and the new image is set.
  const rv = (await client.read(EDGE)).metadata?.resourceVersion;
  const reapplied = await apply(deployment(template('envoy:1.38.1')));
  assert.equal(reapplied.spec.replicas, 5);
  assert.deepEqual(reapplied.metadata?.annotations, { note: 'mine' });
  assert.equal(reapplied.metadata?.labels, undefined);
  assert.equal(reapplied.spec.template.spec.containers[0].image, 'envoy:1.38.1');
  assert.notEqual(reapplied.metadata?.resourceVersion, rv);

  // The same apply again changes nothing: same resourceVersion.
  const again = await apply(deployment(template('envoy:1.38.1')));
  assert.equal(again.metadata?.resourceVersion, reapplied.metadata?.resourceVersion);

  // force takes replicas over.
  const forced = await apply(deployment({ replicas: 3, ...template('envoy:1.38.1') }), true);
  assert.equal(forced.spec.replicas, 3);
  const hpaEntry = forced.metadata?.managedFields?.find((m: any) => m.manager === 'kube-controller-manager');
  assert.equal(hpaEntry, undefined, 'kube-controller-manager owned nothing else, so its entry is gone');
});

test('keyed lists merge by key across managers; a manager removes only its own items', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const apply = (o: Obj, manager: string) => client.patch(o, undefined, undefined, manager, false, PatchStrategy.ServerSideApply) as Promise<Obj>;
  await apply(deployment(template('envoy:1.38')), 'extlb');
  const sidecar = { name: 'sidecar', image: 'busybox' };
  const both = await apply(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'edge', namespace: 'default' },
      spec: { template: { spec: { containers: [sidecar] } } },
    } as Obj,
    'mesh',
  );
  assert.deepEqual(
    both.spec.template.spec.containers.map((c: any) => c.name),
    ['envoy', 'sidecar'],
  );
  const after = await apply(deployment({ ...template('envoy:1.38'), minReadySeconds: 5 }), 'extlb');
  assert.deepEqual(
    after.spec.template.spec.containers.map((c: any) => c.name),
    ['envoy', 'sidecar'],
    "extlb's apply leaves the mesh's container",
  );
});

test('force is refused on a non-apply patch', async (t) => {
  const api = await serve(t, { objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } }] });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const refused = await statusOf(
    client.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } },
      undefined,
      undefined,
      'x',
      true,
      PatchStrategy.MergePatch,
    ),
  );
  assert.equal(refused.code, 422);
  assert.equal(refused.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
});

test('the provisioner kinds are served and go with their owner', async (t) => {
  const api = await serve(t);
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  const owner = (await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'default' } })) as Obj;
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid as string, controller: true };
  const meta = (name: string) => ({ name, namespace: 'default', ownerReferences: [ref] });
  const objects: Obj[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('sa'), automountServiceAccountToken: false },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('d'), spec: template('envoy') },
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('pdb'), spec: { minAvailable: 1, selector: { matchLabels: { app: 'edge' } } } },
    {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: meta('hpa'),
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, minReplicas: 1, maxReplicas: 3 },
    },
  ];
  for (const o of objects) await client.patch(o, undefined, undefined, 'extlb', false, PatchStrategy.ServerSideApply);
  const deploy = (await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' } })) as Obj;
  assert.equal(deploy.spec.replicas, 1, 'a Deployment without replicas is defaulted to 1');
  assert.equal(deploy.metadata?.generation, 1);
  await client.delete(owner);
  await api.settled();
  for (const o of objects)
    assert.equal(api.get(o.apiVersion as string, o.kind as string, o.metadata?.name as string, 'default'), undefined, `${o.kind} is collected`);
});

test('an apply that creates needs create as well as patch, as the API server asks', async (t) => {
  const api = await serve(t, {
    objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'there', namespace: 'default' } }],
    auth: { tokens: { x: 'patcher' }, authorize: (a) => a.verb === 'patch' },
  });
  const client = KubernetesObjectApi.makeApiClient(api.kubeConfig({ token: 'x' }));
  const apply = (name: string) =>
    client.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } } as Obj,
      undefined,
      undefined,
      'extlb',
      false,
      PatchStrategy.ServerSideApply,
    );
  await apply('there');
  const refused = await statusOf(apply('new'));
  assert.equal(refused.code, 403);
  assert.match(refused.message ?? '', /cannot create resource "configmaps"/);
});
