// Provisioning (GEP-1762) end to end against the in-process API server, with the real client:
// GatewayClass + GatewayParameters + Gateway in, the Gateway's objects out (names, labels, owner,
// infrastructure labels and annotations), written by server-side apply; the test plays the
// Deployment controller, the Service controller and an autoscaler, and watches status.addresses
// and Programmed follow what is real; deleting the Gateway takes everything with it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadEnvoyValidator } from '@extlb/envoy/validator';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { startTestController, until } from './helpers.js';

type Json = Record<string, any>;
const NS = 'shop';
const GW = 'gateway.networking.k8s.io/v1';
const NAME = 'edge-extlb';

function estate(): Json[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
    {
      apiVersion: 'extlb.dev/v1alpha1',
      kind: 'GatewayParameters',
      metadata: { name: 'defaults', namespace: 'extlb-system' },
      spec: { replicas: 2, podDisruptionBudget: { minAvailable: 1 }, envoy: { logLevel: 'info' } },
    },
    {
      apiVersion: GW,
      kind: 'GatewayClass',
      metadata: { name: 'extlb' },
      spec: {
        controllerName: 'extlb.dev/gateway-controller',
        parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'defaults', namespace: 'extlb-system' },
      },
    },
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'other' }, spec: { controllerName: 'example.com/other' } },
    { apiVersion: 'extlb.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'edge', namespace: NS }, spec: { envoy: { concurrency: 4 } } },
    { apiVersion: 'extlb.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'byo', namespace: NS }, spec: { provision: false } },
    gateway('edge', {
      infrastructure: {
        labels: { team: 'edge' },
        annotations: { 'example.com/owner': 'edge-team' },
        parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'edge' },
      },
    }),
    gateway('byo', { infrastructure: { parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'byo' } } }),
    gateway('mover', {}),
    gateway('broken', { infrastructure: { parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'nosuch' } } }),
  ];
}

function gateway(name: string, extra: Json): Json {
  return {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name, namespace: NS },
    spec: {
      gatewayClassName: 'extlb',
      listeners: [
        { name: 'http', port: 8080, protocol: 'HTTP' },
        { name: 'alt', port: 8081, protocol: 'HTTP' },
      ],
      ...extra,
    },
  };
}

const programmed = (api: KubeApiServer, name: string) =>
  ((api.get(GW, 'Gateway', name, NS) as Json | undefined)?.status?.conditions ?? []).find((c: Json) => c.type === 'Programmed');

describe('provisioning a Gateway (GEP-1762)', () => {
  it('applies its objects, follows its Deployment and Service into status, leaves a user HPA its replicas, and loses them with the Gateway', async () => {
    const api = await startKubeApiServer({ objects: estate() as KubeObject[] });
    after(() => api.close());
    await startTestController(api, { host: '127.0.0.1', port: 0, identity: { serviceName: 'extlb-controller' } });
    const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
    const read = async (apiVersion: string, kind: string, name = NAME) =>
      (await client.read({ apiVersion, kind, metadata: { name, namespace: NS } } as never)) as Json;

    // The five objects, and the PDB the class's parameters ask for.
    const kinds = [
      ['v1', 'ServiceAccount'],
      ['v1', 'ConfigMap'],
      ['apps/v1', 'Deployment'],
      ['v1', 'Service'],
      ['policy/v1', 'PodDisruptionBudget'],
    ] as const;
    await until(() => kinds.every(([v, k]) => api.get(v, k, NAME, NS)), 'the provisioned objects');
    const gw = api.get(GW, 'Gateway', 'edge', NS) as Json;
    for (const [v, k] of kinds) {
      const o = await read(v, k);
      assert.equal(o.metadata.labels['gateway.networking.k8s.io/gateway-name'], 'edge', `${k} gateway-name`);
      assert.equal(o.metadata.labels['gateway.networking.k8s.io/gateway-class-name'], 'extlb', `${k} gateway-class-name`);
      assert.equal(o.metadata.labels.team, 'edge', `${k} carries the infrastructure label`);
      assert.equal(o.metadata.annotations['example.com/owner'], 'edge-team', `${k} carries the infrastructure annotation`);
      assert.deepEqual(
        o.metadata.ownerReferences.map((r: Json) => [r.kind, r.name, r.uid, r.controller]),
        [['Gateway', 'edge', gw.metadata.uid, true]],
      );
      assert.deepEqual(
        o.metadata.managedFields.map((m: Json) => [m.manager, m.operation]),
        [['extlb', 'Apply']],
        `${k} is written by server-side apply`,
      );
    }
    assert.equal((await read('v1', 'ServiceAccount')).automountServiceAccountToken, false);
    const service = await read('v1', 'Service');
    assert.equal(service.spec.type, 'LoadBalancer');
    assert.deepEqual(
      service.spec.ports.map((p: Json) => p.port),
      [8080, 8081],
      'every listener port',
    );
    const deployment = await read('apps/v1', 'Deployment');
    assert.equal(deployment.spec.replicas, 2, "the class's replicas");
    const pod = deployment.spec.template.spec;
    const envoy = pod.containers[0];
    assert.ok(envoy.args.includes('--concurrency=4'), "the Gateway's parameters over the class's");
    assert.ok(envoy.args.includes('--log-level=info'), "the class's where the Gateway's say nothing");
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.deepEqual(envoy.securityContext.capabilities.drop, ['ALL']);
    assert.equal(envoy.readinessProbe.httpGet.path, '/ready');
    assert.deepEqual(pod.volumes.find((v: Json) => v.name === 'xds-identity').secret.secretName, 'edge-xds-identity');
    assert.equal(envoy.volumeMounts.find((m: Json) => m.name === 'xds-identity').mountPath, '/etc/extlb/xds');
    assert.equal(deployment.spec.template.metadata.annotations['prometheus.io/path'], '/stats/prometheus');
    // The bootstrap is what Envoy takes, and names the Gateway.
    const bootstrap = parse((await read('v1', 'ConfigMap')).data['bootstrap.yaml']);
    assert.deepEqual(loadEnvoyValidator('1.38').validateBootstrap(bootstrap), []);
    assert.equal(bootstrap.node.cluster, `${NS}/edge`);
    // A provisioned Gateway gets its xDS identity Secret without asking.
    await until(() => api.get('v1', 'Secret', 'edge-xds-identity', NS), 'the identity Secret');
    // The class's parameters resolve; a Gateway whose own do not is not accepted and gets nothing.
    const accepted = await until(
      () => ((api.get(GW, 'GatewayClass', 'extlb') as Json | undefined)?.status?.conditions ?? []).find((x: Json) => x.type === 'Accepted'),
      'the class status',
    );
    assert.equal(accepted.status, 'True');
    const broken = await until(
      () => ((api.get(GW, 'Gateway', 'broken', NS) as Json | undefined)?.status?.conditions ?? []).find((x: Json) => x.type === 'Accepted'),
      'the broken Gateway status',
    );
    assert.deepEqual([broken.status, broken.reason], ['False', 'InvalidParameters']);
    assert.match(broken.message, /GatewayParameters shop\/nosuch does not exist/);
    assert.equal(api.get('apps/v1', 'Deployment', 'broken-extlb', NS), undefined);
    // Opted out: nothing.
    assert.equal(api.get('apps/v1', 'Deployment', 'byo-extlb', NS), undefined, 'provision: false makes nothing');

    // No Envoy yet: not programmed, with Gateway API's reason.
    const pending = await until(() => programmed(api, 'edge')?.status === 'False' && programmed(api, 'edge'), 'Programmed=False');
    assert.equal(pending.reason, 'Pending');
    assert.match(pending.message, /no Envoy Pod of Deployment edge-extlb is ready yet/);

    // The Deployment controller: two available replicas. The load balancer has no address yet.
    const live = api.get('apps/v1', 'Deployment', NAME, NS) as Json;
    api.put({
      ...live,
      status: { observedGeneration: live.metadata.generation, replicas: 2, readyReplicas: 2, availableReplicas: 2 },
    } as unknown as KubeObject);
    const noAddress = await until(() => programmed(api, 'edge')?.reason === 'AddressNotAssigned' && programmed(api, 'edge'), 'AddressNotAssigned');
    assert.equal(noAddress.status, 'False');
    // The Service controller: a load balancer ingress.
    const svc = api.get('v1', 'Service', NAME, NS) as Json;
    api.put({ ...svc, status: { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } } } as unknown as KubeObject);
    await until(() => programmed(api, 'edge')?.status === 'True', 'Programmed=True');
    assert.deepEqual((api.get(GW, 'Gateway', 'edge', NS) as Json).status.addresses, [{ type: 'IPAddress', value: '203.0.113.7' }]);

    // A user's HPA attached by name, scaling to 5 (as kube-controller-manager writes it), and a
    // user's annotation on a field extlb does not manage.
    await client.create({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'edge-hpa', namespace: NS },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: NAME }, minReplicas: 2, maxReplicas: 8 },
    } as KubernetesObject);
    const patch = (manager: string, body: Json) =>
      client.patch(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: NAME, namespace: NS }, ...body } as never,
        undefined,
        undefined,
        manager,
        undefined,
        PatchStrategy.MergePatch,
      );
    await patch('kube-controller-manager', { spec: { replicas: 5 } });
    await patch('kubectl-annotate', { metadata: { name: NAME, namespace: NS, annotations: { 'example.com/note': 'kept' } } });
    const hash = (await read('apps/v1', 'Deployment')).spec.template.metadata.annotations['extlb.dev/config-hash'];
    // The parameters change: the Deployment rolls (a new Pod template), the HPA keeps its count.
    const params = api.get('extlb.dev/v1alpha1', 'GatewayParameters', 'edge', NS) as Json;
    api.put({ ...params, spec: { envoy: { concurrency: 4, logLevel: 'debug' } } } as unknown as KubeObject);
    const rolled = await until(() => {
      const d = api.get('apps/v1', 'Deployment', NAME, NS) as Json;
      return d.spec.template.spec.containers[0].args.includes('--log-level=debug') && d;
    }, 'the Deployment rolled');
    assert.notEqual(rolled.spec.template.metadata.annotations['extlb.dev/config-hash'], hash, 'a new Pod template');
    assert.equal(rolled.spec.replicas, 5, "the autoscaler's count stays");
    assert.equal(rolled.metadata.annotations['example.com/note'], 'kept', "a user's field extlb does not manage survives");
    assert.equal(rolled.metadata.annotations['example.com/owner'], 'edge-team');

    // A Gateway moved to another class loses its objects.
    await until(() => api.get('apps/v1', 'Deployment', 'mover-extlb', NS), "mover's objects");
    const mover = api.get(GW, 'Gateway', 'mover', NS) as Json;
    api.put({ ...mover, spec: { ...mover.spec, gatewayClassName: 'other' } } as unknown as KubeObject);
    await until(() => !api.get('apps/v1', 'Deployment', 'mover-extlb', NS) && !api.get('v1', 'Service', 'mover-extlb', NS), 'mover loses its objects');
    assert.equal(api.get('v1', 'ConfigMap', 'mover-extlb', NS), undefined);

    // Deleting the Gateway: the garbage collector takes everything it owns.
    await client.delete({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'edge', namespace: NS } } as never);
    await api.settled();
    for (const [v, k] of kinds) assert.equal(api.get(v, k, NAME, NS), undefined, `${k} goes with the Gateway`);
  });

  it('honours spec.addresses the Service can hold, says AddressNotUsable for one it cannot', async () => {
    const objects = estate().filter((o) => o.kind !== 'Gateway');
    objects.push(gateway('pinned', { addresses: [{ type: 'IPAddress', value: '203.0.113.9' }] }));
    objects.push(gateway('named', { addresses: [{ type: 'Hostname', value: 'edge.example.com' }] }));
    objects.push(gateway('any', { addresses: [{ type: 'IPAddress' }] }));
    const api = await startKubeApiServer({ objects: objects as KubeObject[] });
    after(() => api.close());
    await startTestController(api);
    const names = ['pinned', 'named', 'any'];
    await until(() => names.every((n) => api.get('v1', 'Service', `${n}-extlb`, NS)), 'the Services');
    assert.equal((api.get('v1', 'Service', 'pinned-extlb', NS) as Json).spec.loadBalancerIP, '203.0.113.9', 'the static address is asked of the load balancer');
    // The Deployment and Service controllers: replicas up, the load balancer gives what was asked (or any address).
    for (const n of names) {
      const d = api.get('apps/v1', 'Deployment', `${n}-extlb`, NS) as Json;
      api.put({ ...d, status: { replicas: 2, readyReplicas: 2, availableReplicas: 2 } } as unknown as KubeObject);
      const svc = api.get('v1', 'Service', `${n}-extlb`, NS) as Json;
      api.put({ ...svc, status: { loadBalancer: { ingress: [{ ip: n === 'pinned' ? '203.0.113.9' : '198.51.100.4' }] } } } as unknown as KubeObject);
    }
    await until(() => programmed(api, 'pinned')?.status === 'True', 'pinned Programmed');
    assert.deepEqual((api.get(GW, 'Gateway', 'pinned', NS) as Json).status.addresses, [{ type: 'IPAddress', value: '203.0.113.9' }]);
    const named = await until(() => programmed(api, 'named')?.reason === 'AddressNotUsable' && programmed(api, 'named'), 'AddressNotUsable');
    assert.equal(named.status, 'False');
    assert.match(named.message, /cannot be given a hostname, so edge\.example\.com cannot be used/);
  });
});
