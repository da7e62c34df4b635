// issue 17's "done when" for `extlb check`: `extlb check --pre` passes on a cluster with the Gateway
// API; `extlb install`'s output is applied to the in-process API server with the real client;
// the controller's Deployment is run as a cluster would run it (its container's args and
// downward-API env, twice; the test plays the kubelet: Pods Running and Ready, port-forward to
// their loopback debug ports); then `extlb check` passes; with the controller stopped it fails,
// naming the check.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { type Manifest, type RunningCli, containerEnv, expandArgs, startCli, withFlags } from '../../controller/test/deploy-manifests.js';
import { extlb, kubeconfigFile } from './cluster-cli.js';

type Json = Record<string, any>;
const NS = 'extlb-system';
const SERVICE_ACCOUNT = `system:serviceaccount:${NS}:extlb-controller`;

/** Kinds install's output has that the in-process API server does not serve by default. */
const EXTRA_KINDS = [
  { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
  },
  { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false },
  { group: 'cert-manager.io', version: 'v1', kind: 'Issuer', plural: 'issuers', namespaced: true, custom: true },
  { group: 'cert-manager.io', version: 'v1', kind: 'Certificate', plural: 'certificates', namespaced: true, custom: true },
];

/** The Gateway API CRDs as its v1.6.1 standard-install.yaml annotates them (their schemas left out). */
function gatewayApiCrds(): KubeObject[] {
  const kinds = [
    ['GatewayClass', 'gatewayclasses', 'Cluster'],
    ['Gateway', 'gateways', 'Namespaced'],
    ['HTTPRoute', 'httproutes', 'Namespaced'],
    ['GRPCRoute', 'grpcroutes', 'Namespaced'],
    ['ReferenceGrant', 'referencegrants', 'Namespaced'],
    ['BackendTLSPolicy', 'backendtlspolicies', 'Namespaced'],
  ];
  return kinds.map(([kind, plural, scope]) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.gateway.networking.k8s.io`,
      annotations: { 'gateway.networking.k8s.io/bundle-version': 'v1.6.1', 'gateway.networking.k8s.io/channel': 'standard' },
    },
    spec: {
      group: 'gateway.networking.k8s.io',
      names: { kind, plural, listKind: `${kind}List`, singular: (kind as string).toLowerCase() },
      scope,
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  }));
}

describe('extlb check against extlb install applied and the controller running', () => {
  let api: KubeApiServer;
  let admin: string;
  const debugPorts = new Map<string, number>();
  const replicas: RunningCli[] = [];
  const cleanups: (() => unknown)[] = [];
  const hooks = { after: (fn: () => unknown) => cleanups.unshift(fn) };
  after(async () => {
    for (const r of replicas) await r.stop();
    for (const fn of cleanups) await fn();
  });

  before(async () => {
    api = await startKubeApiServer({
      kinds: EXTRA_KINDS,
      objects: gatewayApiCrds(),
      auth: { tokens: { admin: 'admin', controller: SERVICE_ACCOUNT } },
      // The kubelet dials the Pod's port on the Pod's loopback: here each replica's own debug port.
      portForward: ({ pod, port }) => ({ host: '127.0.0.1', port: port === 9091 ? (debugPorts.get(pod) ?? 1) : port }),
    });
    hooks.after(() => api.close());
    admin = kubeconfigFile(hooks, api, 'admin');
  });

  it('check --pre passes before installing (the InferencePool CRD only warned about)', async () => {
    const run = await extlb(['check', '--pre', '--kubeconfig', admin]);
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /^\[ok\] {3}the Kubernetes API server answers: https:\/\/127\.0\.0\.1:\d+ \(v1\.33\.0/m);
    assert.match(run.stdout, /^\[ok\] {3}the Gateway API CRDs are installed .*: v1\.6\.1 standard$/m);
    assert.match(run.stdout, /^\[warn\] the InferencePool CRD is installed \(optional\): not installed/m);
  });

  it('check fails before installing, naming what is missing', async () => {
    const run = await extlb(['check', '--kubeconfig', admin]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^\[FAIL\] extlb's CRDs match this CLI: backendpools\.extlb\.dev is missing/m);
    assert.match(run.stdout, /^ {7}hint: extlb install \| kubectl apply -f -$/m);
    assert.match(run.stdout, /^\[FAIL\] the controller is running and ready: no running Pod/m);
  });

  it('install applied, the controller run as its Deployment says: check passes; stopped: check fails naming the check', async () => {
    const install = await extlb(['install']);
    assert.equal(install.code, 0);
    const objects = parseAllDocuments(install.stdout)
      .map((d) => d.toJS() as Json | null)
      .filter((o): o is Json => o !== null);
    const client = KubernetesObjectApi.makeApiClient(api.kubeConfig({ token: 'admin' }));
    for (const o of objects) await client.create(o as never);
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'extlb-controller') as Manifest;
    const container = deployment.spec.template.spec.containers[0];
    const controllerConfig = kubeconfigFile(hooks, api, 'controller');
    for (let i = 0; i < deployment.spec.replicas; i++) {
      const pod = `extlb-controller-6d9f-${i}`;
      const env = containerEnv(deployment, pod);
      const args = [
        ...withFlags(expandArgs(container.args, env), { '--xds-listen': '127.0.0.1:0', '--http-listen': '127.0.0.1:0', '--debug-listen': '127.0.0.1:0' }),
        `--kubeconfig=${controllerConfig}`,
      ];
      const replica = startCli(args, { env: { ...process.env, ...env } });
      replicas.push(replica);
      const [, port] = (await replica.waitFor(/"debugPort":(\d+)/, 60_000)) as RegExpMatchArray;
      debugPorts.set(pod, Number(port));
      api.put({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, namespace: NS, labels: deployment.spec.template.metadata.labels },
        spec: deployment.spec.template.spec,
        status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
    // The replicas become ready and one takes the Lease by themselves; check is asked until it passes.
    let run = await extlb(['check', '--kubeconfig', admin]);
    for (let i = 0; i < 60 && run.code !== 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      run = await extlb(['check', '--kubeconfig', admin]);
    }
    assert.equal(run.code, 0, run.stdout);
    for (const name of [
      "extlb's CRDs match this CLI",
      'the controller is running and ready: 2 of 2 replicas ready',
      'the controller has a leader: extlb-controller-6d9f-',
      "the controller's xDS serving certificate is valid: valid until",
      "every Gateway of extlb's classes is Accepted, Programmed, and has proxies in sync: no Gateways of class extlb",
    ])
      assert.ok(
        run.stdout.split('\n').some((l) => l.startsWith(`[ok]   ${name}`)),
        `${name}:\n${run.stdout}`,
      );
    assert.match(run.stdout, /^\[warn\] the admission webhook is set up \(optional\): not installed/m);

    for (const r of replicas.splice(0)) assert.equal(await r.stop(), 0);
    const stopped = await extlb(['check', '--kubeconfig', admin]);
    assert.equal(stopped.code, 1, stopped.stdout);
    assert.match(
      stopped.stdout,
      /^\[FAIL\] the controller is running and ready: extlb-controller-6d9f-0: port-forward|^\[FAIL\] the controller is running and ready: extlb-controller-6d9f-0: error forwarding port 9091/m,
    );
    assert.match(stopped.stdout, /^\[FAIL\] the controller has a leader/m);
    assert.match(stopped.stdout, /\n\nextlb check: \d+ failed\n$/);
  });

  it('the webhook: its caBundle against the certificate cert-manager issued, and its Pods', async () => {
    const webhookLine = async () =>
      (await extlb(['check', '--kubeconfig', admin])).stdout.split('\n').find((l) => l.includes('the admission webhook is set up')) ?? '';
    const install = await extlb(['install', '--webhook']);
    const client = KubernetesObjectApi.makeApiClient(api.kubeConfig({ token: 'admin' }));
    const created = new Set(['Namespace', 'ServiceAccount', 'PodDisruptionBudget', 'CustomResourceDefinition']);
    const webhookObjects = parseAllDocuments(install.stdout)
      .map((d) => d.toJS() as Json | null)
      .filter((o): o is Json => o !== null && /webhook|selfsigned|defaults|validation/.test(o.metadata.name) && !created.has(o.kind));
    for (const o of webhookObjects) await client.create(o as never);
    // cert-manager's part: the Secret with the CA, and the CA injected into both configurations.
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBwebhookCA\n-----END CERTIFICATE-----\n').toString('base64');
    api.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'extlb-webhook-tls', namespace: NS }, type: 'kubernetes.io/tls', data: { 'ca.crt': ca } });
    const inject = (bundle: string) => {
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
        const name = kind.startsWith('Validating') ? 'extlb-validation' : 'extlb-defaults';
        const config = api.get('admissionregistration.k8s.io/v1', kind, name) as Json;
        api.put({
          ...config,
          webhooks: config.webhooks.map((w: Json) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: bundle } })),
        } as unknown as KubeObject);
      }
    };
    inject(ca);
    assert.match(await webhookLine(), /^\[FAIL\] the admission webhook is set up \(optional\): no webhook Pod is ready$/);
    api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'extlb-webhook-7c4-0', namespace: NS, labels: { 'app.kubernetes.io/name': 'extlb-webhook' } },
      spec: { containers: [{ name: 'webhook', image: 'extlb/extlb:0.1.0' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.equal(await webhookLine(), '[ok]   the admission webhook is set up (optional): 1 replicas ready, caBundle matches');
    inject(Buffer.from('another CA').toString('base64'));
    assert.match(await webhookLine(), /^\[FAIL\] the admission webhook is set up \(optional\): caBundle of extlb-validation, extlb-defaults differs/);
  });
});
