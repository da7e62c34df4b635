// Gateway API's conformance tests that need a Gateway's infrastructure, as the controller passes
// them: GatewayInfrastructure, GatewayStaticAddresses and GatewayOptionalAddressValue (Gateway API
// v1.6.1, conformance/tests/gateway-*.go). Each follows its upstream test's steps and checks against
// the in-process API server with the real client; the test plays the cluster's own controllers
// (the Deployment and ReplicaSet controllers, a load balancer) where the upstream suite has a real
// cluster do it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { CoreV1Api, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { startTestController, until } from './helpers.js';

type Json = Record<string, any>;
const NS = 'gateway-conformance-infra';
const GW = 'gateway.networking.k8s.io/v1';
const TIMEOUT = 60_000;

function cluster(gateways: Json[]): Json[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
    ...gateways.map((spec) => ({
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: spec.name, namespace: NS },
      spec: {
        gatewayClassName: 'extlb',
        listeners: [{ name: 'http', port: 8080, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
        ...spec.spec,
      },
    })),
  ];
}

async function start(objects: Json[]): Promise<{ api: KubeApiServer; objects: KubernetesObjectApi }> {
  const api = await startKubeApiServer({ objects: objects as KubeObject[] });
  after(() => api.close());
  await startTestController(api);
  return { api, objects: KubernetesObjectApi.makeApiClient(api.kubeConfig()) };
}

const condition = (api: KubeApiServer, name: string, type: string) =>
  ((api.get(GW, 'Gateway', name, NS) as Json | undefined)?.status?.conditions ?? []).find((c: Json) => c.type === type) as Json | undefined;

/** Waits for the condition as GatewayMustHaveCondition does: this status (and reason, when given), on the latest generation. */
function mustHave(api: KubeApiServer, name: string, type: string, status: string, reason?: string) {
  return until(
    () => {
      const gw = api.get(GW, 'Gateway', name, NS) as Json | undefined;
      const c = condition(api, name, type);
      return c?.status === status && (reason === undefined || c.reason === reason) && c.observedGeneration === gw?.metadata.generation && c;
    },
    `${name} ${type}=${status}${reason ? `/${reason}` : ''} (now ${JSON.stringify(condition(api, name, type))})`,
    TIMEOUT,
  );
}

/** The Deployment controller's part: the provisioned Deployment has an available replica. */
async function replicasUp(api: KubeApiServer, name: string): Promise<void> {
  const d = await until(() => api.get('apps/v1', 'Deployment', name, NS) as Json | undefined, `Deployment ${name}`, TIMEOUT);
  api.put({ ...d, status: { observedGeneration: d.metadata.generation, replicas: 1, readyReplicas: 1, availableReplicas: 1 } } as unknown as KubeObject);
}

/** A load balancer's part: the Service gets the IP it asked for (spec.loadBalancerIP), else `fallback`. */
async function loadBalancer(api: KubeApiServer, name: string, fallback: string): Promise<string> {
  const svc = await until(() => api.get('v1', 'Service', name, NS) as Json | undefined, `Service ${name}`, TIMEOUT);
  const ip = svc.spec.loadBalancerIP ?? fallback;
  api.put({ ...svc, status: { loadBalancer: { ingress: [{ ip }] } } } as unknown as KubeObject);
  return ip;
}

/** A merge patch of the Gateway's spec.addresses, as the upstream test's client.MergeFrom patch sends it. */
async function setAddresses(client: KubernetesObjectApi, name: string, addresses: Json[]): Promise<void> {
  await client.patch(
    { apiVersion: GW, kind: 'Gateway', metadata: { name, namespace: NS }, spec: { addresses } } as never,
    undefined,
    undefined,
    'conformance',
    undefined,
    PatchStrategy.MergePatch,
  );
}

describe('Gateway API conformance: GatewayInfrastructure', () => {
  it("propagates the Gateway's infrastructure labels and annotations to the ServiceAccount, the Pods and the Service", async () => {
    const name = 'gateway-with-infrastructure-metadata';
    const labels = { 'gateway.networking.k8s.io/conformance': 'infrastructure', 'example.com/team': 'edge' };
    const annotations = { 'gateway.networking.k8s.io/conformance': 'infrastructure', 'example.com/owner': 'edge-team' };
    const { api } = await start(cluster([{ name, spec: { infrastructure: { labels, annotations } } }]));
    await mustHave(api, name, 'Accepted', 'True');
    const core = api.kubeConfig().makeApiClient(CoreV1Api);
    const selector = `gateway.networking.k8s.io/gateway-name=${name}`;
    const sas = await until(
      async () => {
        const list = await core.listNamespacedServiceAccount({ namespace: NS, labelSelector: selector });
        return list.items.length > 0 && list.items;
      },
      'a ServiceAccount with the gateway-name label',
      TIMEOUT,
    );
    // The ReplicaSet controller's part: a Pod made from the Deployment's template.
    const deployment = (await until(
      () => (api.list('apps/v1', 'Deployment', NS) as Json[]).find((d) => d.metadata.labels?.['gateway.networking.k8s.io/gateway-name'] === name),
      'the Deployment',
      TIMEOUT,
    )) as Json;
    const template = deployment.spec.template;
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: `${deployment.metadata.name}-abc12`, labels: template.metadata.labels, annotations: template.metadata.annotations },
        spec: template.spec,
      },
    });
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: selector });
    const services = await until(
      async () => {
        const list = await core.listNamespacedService({ namespace: NS, labelSelector: selector });
        return list.items.length > 0 && list.items;
      },
      'a Service with the gateway-name label',
      TIMEOUT,
    );
    // require.Subsetf on the first of each kind: every infrastructure label and annotation is there.
    for (const [kind, first] of [
      ['ServiceAccount', sas[0]],
      ['Pod', pods.items[0]],
      ['Service', services[0]],
    ] as const) {
      assert.ok(first, `a ${kind}`);
      for (const [k, v] of Object.entries(labels)) assert.equal(first.metadata?.labels?.[k], v, `${kind} label ${k}`);
      for (const [k, v] of Object.entries(annotations)) assert.equal(first.metadata?.annotations?.[k], v, `${kind} annotation ${k}`);
    }
  });
});

describe('Gateway API conformance: GatewayStaticAddresses', () => {
  it('refuses an unsupported address type, says AddressNotUsable while the Service cannot hold the addresses, and is Programmed with the usable one', async () => {
    const name = 'gateway-static-addresses';
    // One invalid (a type extlb does not support), one unusable and one usable address, in the upstream order.
    const invalid = { type: 'test.example.com/fake-invalid-type', value: 'invalid' };
    const unusable = { type: 'IPAddress', value: '198.51.100.200' };
    const usable = { type: 'IPAddress', value: '203.0.113.10' };
    const { api, objects } = await start(cluster([{ name, spec: { addresses: [invalid, unusable, usable] } }]));
    const service = `${name}-extlb`;

    const refused = await mustHave(api, name, 'Accepted', 'False', 'UnsupportedAddress');
    assert.match(String(refused.message), /fake-invalid-type/);

    await setAddresses(objects, name, [unusable, usable]);
    await mustHave(api, name, 'Accepted', 'True', 'Accepted');
    const notUsable = await mustHave(api, name, 'Programmed', 'False', 'AddressNotUsable');
    assert.match(String(notUsable.message), /198\.51\.100\.200|203\.0\.113\.10/);

    await setAddresses(objects, name, [usable]);
    await until(
      () => (api.get('v1', 'Service', service, NS) as Json | undefined)?.spec.loadBalancerIP === usable.value,
      'the Service asking for the usable address',
      TIMEOUT,
    );
    await replicasUp(api, service);
    assert.equal(await loadBalancer(api, service, '192.0.2.1'), usable.value);
    await mustHave(api, name, 'Accepted', 'True', 'Accepted');
    await mustHave(api, name, 'Programmed', 'True', 'Programmed');
    const gw = api.get(GW, 'Gateway', name, NS) as Json;
    // GatewayStatusMustHaveListeners: http, HTTPRoute, Accepted and ResolvedRefs True, no routes.
    assert.deepEqual(
      gw.status.listeners.map((l: Json) => [l.name, l.attachedRoutes]),
      [['http', 0]],
    );
    assert.ok(gw.status.listeners[0].supportedKinds.some((k: Json) => k.group === 'gateway.networking.k8s.io' && k.kind === 'HTTPRoute'));
    for (const type of ['Accepted', 'ResolvedRefs'])
      assert.equal(gw.status.listeners[0].conditions.find((c: Json) => c.type === type)?.status, 'True', `listener ${type}`);
    assert.equal(gw.spec.addresses.length, 1);
    assert.deepEqual(gw.status.addresses, [usable], 'the one usable address is the one in status');
  });
});

describe('Gateway API conformance: GatewayOptionalAddressValue', () => {
  it('accepts an address with no value and fills it with the address the Service is given', async () => {
    const name = 'gateway-without-address-value';
    const { api } = await start(cluster([{ name, spec: { addresses: [{ type: 'IPAddress' }] } }]));
    await mustHave(api, name, 'Accepted', 'True');
    // WaitForGatewayAddress: Programmed, with an address in status.
    const service = `${name}-extlb`;
    await replicasUp(api, service);
    const ip = await loadBalancer(api, service, '198.51.100.4');
    await mustHave(api, name, 'Programmed', 'True');
    const addresses = await until(
      () => {
        const a = (api.get(GW, 'Gateway', name, NS) as Json).status?.addresses;
        return Array.isArray(a) && a.length > 0 && a;
      },
      'an address in status',
      TIMEOUT,
    );
    assert.deepEqual(addresses, [{ type: 'IPAddress', value: ip }]);
  });
});
