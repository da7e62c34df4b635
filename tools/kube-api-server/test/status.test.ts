// The status subresource: it changes only status, the main resource ignores status, a stale
// resourceVersion is a 409, and the request log tells who wrote a status and how often.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { serve, statusOf } from './helpers.js';

const GATEWAY = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways', namespace: 'default' };

interface Gateway {
  metadata: { name: string; resourceVersion: string; generation: number; labels?: Record<string, string> };
  spec: { gatewayClassName: string };
  status?: { conditions: { type: string; status: string; observedGeneration?: number }[] };
}

const gateway = (status?: Gateway['status']) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  ...(status ? { status } : {}),
});

const accepted = (generation: number) => ({ conditions: [{ type: 'Accepted', status: 'True', observedGeneration: generation }] });

test('/status changes only status, and the main resource ignores status', async (t) => {
  const api = await serve(t, { auth: { tokens: { 'controller-token': 'system:serviceaccount:extlb:controller', 'user-token': 'alice' } } });
  const asUser = api.kubeConfig({ token: 'user-token' }).makeApiClient(CustomObjectsApi);
  const asController = api.kubeConfig({ token: 'controller-token' }).makeApiClient(CustomObjectsApi);

  const created = (await asUser.createNamespacedCustomObject({ ...GATEWAY, body: gateway(accepted(9)) })) as Gateway;
  assert.equal(created.status, undefined, 'create drops status');

  const written = (await asController.replaceNamespacedCustomObjectStatus({
    ...GATEWAY,
    name: 'gw',
    body: { ...created, spec: { gatewayClassName: 'changed' }, metadata: { ...created.metadata, labels: { x: 'y' } }, status: accepted(1) },
  })) as Gateway;
  assert.deepEqual(written.status, accepted(1));
  assert.equal(written.spec.gatewayClassName, 'extlb', 'spec changes through /status are ignored');
  assert.equal(written.metadata.labels, undefined, 'so are metadata changes');
  assert.equal(written.metadata.generation, 1, 'a status write does not bump the generation');

  const updated = (await asUser.replaceNamespacedCustomObject({
    ...GATEWAY,
    name: 'gw',
    body: { ...written, spec: { gatewayClassName: 'other' }, status: undefined },
  })) as Gateway;
  assert.deepEqual(updated.status, accepted(1), 'an update of the main resource keeps the status');
  assert.equal(updated.metadata.generation, 2);

  const stale = await statusOf(asController.replaceNamespacedCustomObjectStatus({ ...GATEWAY, name: 'gw', body: { ...written, status: accepted(2) } }));
  assert.equal(stale.code, 409);
  assert.equal(
    stale.message,
    'Operation cannot be fulfilled on gateways.gateway.networking.k8s.io "gw": the object has been modified; please apply your changes to the latest version and try again',
  );

  const statusWrites = api.requestsMatching({ resource: 'gateways', subresource: 'status', verb: ['update', 'patch'] });
  assert.deepEqual(
    statusWrites.map((r) => [r.user, r.code]),
    [
      ['system:serviceaccount:extlb:controller', 200],
      ['system:serviceaccount:extlb:controller', 409],
    ],
  );
});

test('a merge patch of /status with a resourceVersion is conditional; without one it is not', async (t) => {
  const api = await serve(t, { objects: [gateway()] });
  const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
  const current = (await custom.getNamespacedCustomObject({ ...GATEWAY, name: 'gw' })) as Gateway;
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  const patched = (await custom.patchNamespacedCustomObjectStatus(
    { ...GATEWAY, name: 'gw', body: { metadata: { resourceVersion: current.metadata.resourceVersion }, status: accepted(1) } },
    merge,
  )) as Gateway;
  assert.deepEqual(patched.status, accepted(1));
  const conflict = await statusOf(
    custom.patchNamespacedCustomObjectStatus(
      { ...GATEWAY, name: 'gw', body: { metadata: { resourceVersion: current.metadata.resourceVersion }, status: accepted(2) } },
      merge,
    ),
  );
  assert.equal(conflict.reason, 'Conflict');
  const unconditional = (await custom.patchNamespacedCustomObjectStatus({ ...GATEWAY, name: 'gw', body: { status: accepted(3) } }, merge)) as Gateway;
  assert.deepEqual(unconditional.status, accepted(3));
});

test('a built-in kind: a Service status written through replaceNamespacedServiceStatus', async (t) => {
  const api = await serve(t, {
    objects: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } }],
  });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const svc = await core.readNamespacedService({ name: 'lb', namespace: 'default' });
  svc.status = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } };
  const written = await core.replaceNamespacedServiceStatus({ name: 'lb', namespace: 'default', body: svc });
  assert.equal(written.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.10');
  const notAStatus = await statusOf(core.replaceNamespacedConfigMap({ name: 'lb', namespace: 'default', body: { metadata: { name: 'lb' } } }));
  assert.equal(notAStatus.message, 'configmaps "lb" not found');
});

test('TLSRoute, TCPRoute, UDPRoute and ListenerSet are served (v1, namespaced) with a status subresource', async (t) => {
  const api = await serve(t);
  const client = api.kubeConfig().makeApiClient(CustomObjectsApi);
  for (const [kind, plural] of [
    ['TLSRoute', 'tlsroutes'],
    ['TCPRoute', 'tcproutes'],
    ['UDPRoute', 'udproutes'],
    ['ListenerSet', 'listenersets'],
  ] as const) {
    const where = { group: 'gateway.networking.k8s.io', version: 'v1', plural, namespace: 'default' };
    const body = { apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }] } };
    const created = (await client.createNamespacedCustomObject({ ...where, body })) as { metadata: Record<string, unknown> };
    const parents = [{ parentRef: { name: 'gw' }, controllerName: 'extlb.dev/gateway-controller', conditions: [] }];
    const written = (await client.replaceNamespacedCustomObjectStatus({
      ...where,
      name: 'r',
      body: { ...body, metadata: created.metadata, status: { parents } },
    })) as {
      status: unknown;
    };
    assert.deepEqual(written.status, { parents }, `${kind} status`);
  }
});
