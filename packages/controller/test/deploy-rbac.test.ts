// examples/deploy's RBAC for the controller, enforced: the in-process API server authorizes every
// request of the controller's ServiceAccount by exactly the ClusterRole, Role and bindings in
// controller/rbac.yaml (RBAC's rules: groups, resources and subresources, verbs, resourceNames,
// a RoleBinding's namespace). Two replicas run `extlb controller` with the Deployment's own args
// and downward-API env through what a cluster does: the walkthrough's objects plus one of every
// other watched kind (TLSRoute, TCPRoute, UDPRoute and ListenerSet among them), statuses written (after real write conflicts), shadow Services created,
// updated and deleted, the Lease taken, renewed and given up, Envoy's xDS served. Nothing may be
// denied, and every verb the roles grant must have been used (least privilege).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { shadowServiceName } from '@extlb/envoy';
import { type AuthorizationAttributes, DEFAULT_KINDS, type KubeApiServer, type KubeObject, makeCertificate, startKubeApiServer } from '@extlb/kube-api-server';
import { parseAllDocuments } from 'yaml';
import { CONFIG_MAP, WATCHED_KINDS } from '../src/cluster/kinds.js';
import { GATEWAY_NAME_LABEL } from '../src/status/gateway.js';
import { TYPE_URL } from '../src/xds/index.js';
import { type Manifest, type RunningCli, containerEnv, flagValue, loadDeploy, only, startCli, withFlags } from './deploy-manifests.js';
import * as grpc from '@grpc/grpc-js';
import { IDENTITY_SECRET_TYPE, identitySecretName } from '../src/identity/index.js';
import { AdsTestClient, type SotwResponse, decoded, sotwAnswer, sotwRequest } from './helpers.js';

type Json = Record<string, any>;

// ---- RBAC, as the API server's RBAC authorizer decides -------------------------------------------

/** One verb on one resource that a rule grants, to the users its binding names, where the binding reaches. */
interface Grant {
  source: string;
  users: string[];
  /** A RoleBinding's namespace; undefined for a ClusterRoleBinding (every namespace, and cluster-scoped resources). */
  namespace?: string;
  group: string;
  /** `services`, or `gateways/status` for a subresource. */
  resource: string;
  verb: string;
  resourceNames?: string[];
}

const grantKey = (g: Grant) => `${g.source}: ${g.verb} ${g.group || 'core'}/${g.resource}${g.resourceNames ? ` ${g.resourceNames.join(',')}` : ''}`;

function subjectUser(subject: Json, bindingNamespace?: string): string {
  if (subject.kind === 'ServiceAccount') return `system:serviceaccount:${subject.namespace ?? bindingNamespace}:${subject.name}`;
  if (subject.kind === 'User') return subject.name;
  throw new Error(`subject kind ${subject.kind} is not used here`);
}

class RbacAuthorizer {
  readonly grants: Grant[] = [];
  readonly used = new Set<Grant>();
  readonly denied: AuthorizationAttributes[] = [];

  constructor(objects: readonly Manifest[]) {
    const roles = new Map(
      objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o]),
    );
    for (const binding of objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
      const ref = binding.roleRef;
      const role = roles.get(`${ref.kind}/${ref.kind === 'Role' ? binding.metadata.namespace : ''}/${ref.name}`);
      assert.ok(role, `${binding.kind} ${binding.metadata.name}: its ${ref.kind} ${ref.name} is defined`);
      const users = binding.subjects.map((s: Json) => subjectUser(s, binding.metadata.namespace));
      const namespace = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
      role.rules.forEach((rule: Json, i: number) => {
        for (const group of rule.apiGroups)
          for (const resource of rule.resources)
            for (const verb of rule.verbs) {
              this.grants.push({
                source: `${role.kind} ${role.metadata.name} rule ${i}`,
                users,
                ...(namespace ? { namespace } : {}),
                group,
                resource,
                verb,
                ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}),
              });
            }
      });
    }
  }

  /** RBAC's match: group, resource (with its subresource), verb, resourceNames (never for a request without a name), namespace. */
  readonly authorize = (a: AuthorizationAttributes): boolean => {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const matching = this.grants.filter(
      (g) =>
        g.users.includes(a.user) &&
        (g.namespace === undefined || g.namespace === a.namespace) &&
        (g.group === '*' || g.group === a.group) &&
        (g.resource === '*' || g.resource === resource || (a.subresource !== undefined && g.resource === `*/${a.subresource}`)) &&
        (g.verb === '*' || g.verb === a.verb) &&
        (g.resourceNames === undefined || (a.name !== undefined && g.resourceNames.includes(a.name))),
    );
    for (const g of matching) this.used.add(g);
    if (matching.length === 0) this.denied.push(a);
    return matching.length > 0;
  };
}

// ---- the cluster --------------------------------------------------------------------------------

const SERVED = new Set(DEFAULT_KINDS.map((k) => `${k.group ? `${k.group}/` : ''}${k.version} ${k.kind}`));
const served = (o: Manifest) => SERVED.has(`${o.apiVersion} ${o.kind}`);
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Besides the walkthrough: one object of every other watched kind, as a user would write them. */
function otherKinds(): Manifest[] {
  const { cert, key } = makeCertificate('secure.example.com');
  const text = `
apiVersion: v1
kind: Secret
metadata: {name: site-cert, namespace: certs}
type: kubernetes.io/tls
data: {tls.crt: ${b64(cert)}, tls.key: ${b64(key)}}
---
# Not a TLS Secret: the controller's field selector keeps it out of its cache.
apiVersion: v1
kind: Secret
metadata: {name: db-password, namespace: certs}
type: Opaque
data: {password: ${b64('hunter2')}}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateways-from-extras, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: extras}]
  to: [{group: "", kind: Secret, name: site-cert}]
---
# The controller provisions this Gateway's Envoy, with an autoscaler and a disruption budget.
apiVersion: extlb.dev/v1alpha1
kind: GatewayParameters
metadata: {name: secure, namespace: extras}
spec:
  autoscaling: {maxReplicas: 4}
  podDisruptionBudget: {maxUnavailable: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure, namespace: extras}
spec:
  gatewayClassName: extlb
  infrastructure:
    parametersRef: {group: extlb.dev, kind: GatewayParameters, name: secure}
  listeners:
    - name: https
      protocol: HTTPS
      port: 8443
      tls: {mode: Terminate, certificateRefs: [{kind: Secret, name: site-cert, namespace: certs}]}
---
apiVersion: v1
kind: Service
metadata: {name: greeter, namespace: extras}
spec: {selector: {app: greeter}, ports: [{name: grpc, port: 9000, targetPort: 9000, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: greeter, namespace: extras}
spec:
  parentRefs: [{name: secure}]
  # Its own hostname: on a listener, a hostname is served by HTTPRoutes or by GRPCRoutes, not both.
  hostnames: [greeter.example.com]
  rules: [{backendRefs: [{name: greeter, port: 9000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: greeter-tls, namespace: extras}
spec:
  targetRefs: [{group: "", kind: Service, name: greeter}]
  validation: {hostname: greeter.extras.svc, caCertificateRefs: [{group: "", kind: ConfigMap, name: greeter-ca}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: greeter-ca, namespace: extras}
data: {ca.crt: ${JSON.stringify(cert)}}
---
# Named by nothing: the controller never lists or watches it.
apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings, namespace: extras}
data: {mode: production}
---
# TLS passed through, TCP and UDP: streams, each with its route.
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: streams, namespace: extras}
spec:
  gatewayClassName: extlb
  listeners:
    - {name: tls, protocol: TLS, port: 9443, tls: {mode: Passthrough}}
    - {name: tcp, protocol: TCP, port: 5432}
    - {name: udp, protocol: UDP, port: 5353}
  allowedListeners: {namespaces: {from: All}}
---
# A team's listener on the streams Gateway, from its own namespace.
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team-db, namespace: certs}
spec:
  parentRef: {name: streams, namespace: extras}
  listeners:
    - {name: pg, protocol: TCP, port: 6432}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: extras}
spec: {selector: {app: db}, ports: [{name: pg, port: 5432, targetPort: 5432}, {name: dns, port: 5353, targetPort: 5353, protocol: UDP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: db-tls, namespace: extras}
spec:
  parentRefs: [{name: streams, sectionName: tls}]
  hostnames: [db.example.com]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: db, namespace: extras}
spec:
  parentRefs: [{name: streams, sectionName: tcp}]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns, namespace: extras}
spec:
  parentRefs: [{name: streams, sectionName: udp}]
  rules: [{backendRefs: [{name: db, port: 5353}]}]
---
apiVersion: v1
kind: Service
metadata: {name: search, namespace: extras}
spec: {selector: {app: search}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: search-picker, namespace: extras}
spec: {selector: {app: search-picker}, ports: [{name: grpc, port: 9002, targetPort: 9002, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: extlb.dev/v1alpha1
kind: LoadBalancerPolicy
metadata: {name: search-picker, namespace: extras}
spec:
  targetRefs: [{group: "", kind: Service, name: search}]
  loadBalancer:
    type: External
    external: {refs: [{name: search-picker, port: {number: 9002}}], failureMode: FailOpen, fallback: RoundRobin, maxEndpoints: 2, requestBodyMode: None}
---
apiVersion: v1
kind: Service
metadata: {name: model-epp, namespace: extras}
spec: {selector: {app: model-epp}, ports: [{name: grpc, port: 9002, targetPort: 9002, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: model, namespace: extras}
spec:
  selector: {matchLabels: {app: model}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: model-epp, port: {number: 9002}, failureMode: FailClose}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes, namespace: extras}
spec:
  parentRefs: [{name: secure}]
  hostnames: [secure.example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /search}}]
      backendRefs: [{name: search, port: 80}]
    - matches: [{path: {type: PathPrefix, value: /v1/completions}}]
      backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: model}]
`;
  return parseAllDocuments(text, { uniqueKeys: true }).map((d) => d.toJS() as Manifest);
}

/** What the EndpointSlice controller publishes for a Service whose Pods are ready. */
function slice(service: string, namespace: string, port: { name: string; port: number }, addresses: string[]): Manifest {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-x1`, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ ...port, protocol: 'TCP' }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

/** Polls until `probe` answers; a timeout names what was awaited and, from `context`, why it may not have come. */
async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  context = () => '',
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${context()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Makes the first status write of each kind meet a real conflict: the write is held a moment,
 * meanwhile someone else changes the object, so the API server answers 409 and the controller
 * must read the object again (the `get` the ClusterRole grants) before it writes again.
 */
function conflictOnFirstStatusWrite(api: KubeApiServer, kinds: { group: string; plural: string }[]): { done(): boolean; stop(): void } {
  const pending = new Map(
    kinds.map((k) => [k.plural, api.faults.inject({ match: { verb: 'update', subresource: 'status', group: k.group, resource: k.plural }, delayMs: 400 })]),
  );
  const edited = new Set<string>();
  const timer = setInterval(() => {
    for (const [plural, fault] of pending) {
      if (fault.hits === 0 || edited.has(plural)) continue;
      // The request is held before its body is read: what it writes is known from its path.
      const held = api.requests.find((r) => r.fault === 'delay' && r.resource === plural && r.subresource === 'status');
      const kind = WATCHED_KINDS.find((k) => k.plural === plural);
      if (!held?.name || !kind) continue;
      const current = api.get(kind.apiVersion, kind.kind, held.name, held.namespace) as Json;
      api.put({
        ...current,
        metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, 'example.com/edited': 'meanwhile' } },
      } as KubeObject);
      edited.add(plural);
    }
  }, 5);
  return { done: () => edited.size === pending.size, stop: () => clearInterval(timer) };
}

describe('examples/deploy: the controller RBAC, enforced', () => {
  const controllerSet = loadDeploy('controller');
  const rbacObjects = controllerSet.map((o) => o.object).filter((o) => /^(Cluster)?Role(Binding)?$/.test(o.kind));
  const deployment = only(controllerSet, 'Deployment', 'extlb-controller');
  const namespace = deployment.metadata.namespace as string;
  const serviceAccount = `system:serviceaccount:${namespace}:${deployment.spec.template.spec.serviceAccountName}`;
  const clusterRole = only(controllerSet, 'ClusterRole');

  it('grants list and watch on exactly the kinds the controller watches, with no wildcard', () => {
    const rbac = new RbacAuthorizer(rbacObjects);
    for (const g of rbac.grants) for (const v of [g.group, g.resource, g.verb]) assert.notEqual(v, '*', `${grantKey(g)}: no wildcard`);
    const keys = rbac.grants.map(grantKey);
    assert.equal(new Set(keys).size, keys.length, 'no grant given twice');
    const watched = (verb: string) =>
      rbac.grants
        .filter((g) => g.verb === verb && g.source.startsWith('ClusterRole'))
        .map((g) => `${g.group}/${g.resource}`)
        .sort();
    const expected = [...WATCHED_KINDS, CONFIG_MAP].map((k) => `${k.apiVersion.includes('/') ? k.apiVersion.split('/')[0] : ''}/${k.plural}`).sort();
    assert.deepEqual(watched('list'), expected);
    assert.deepEqual(watched('watch'), expected);
    // Leases only in the controller's namespace, where --lease-name points.
    const leases = rbac.grants.filter((g) => g.resource === 'leases');
    assert.ok(leases.every((g) => g.namespace === namespace && g.users.includes(serviceAccount)));
    const leaseName = flagValue(deployment.spec.template.spec.containers[0].args, '--lease-name');
    assert.ok(leases.filter((g) => g.verb !== 'create').every((g) => g.resourceNames?.join() === leaseName));
    assert.equal(clusterRole.metadata.name, only(controllerSet, 'ClusterRoleBinding').roleRef.name);
  });

  it('lets two replicas run a realistic scenario with nothing denied and every granted verb used', async () => {
    const rbac = new RbacAuthorizer(rbacObjects);
    const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) =>
      eventually(what, probe, () => (rbac.denied.length > 0 ? `; denied: ${JSON.stringify(rbac.denied.slice(0, 5))}` : ''));
    const token = 'controller-sa-token';
    const walkthrough = [...loadDeploy('gateway'), ...loadDeploy('app'), ...controllerSet].map((o) => o.object);
    const pickerService = only(loadDeploy('app'), 'Service', 'echo-picker');
    const estate = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      ...walkthrough.filter(served),
      slice(pickerService.metadata.name, 'demo', { name: 'grpc', port: 9002 }, ['10.1.0.21', '10.1.0.22']),
      ...otherKinds(),
    ];
    const api = await startKubeApiServer({ objects: estate as KubeObject[], auth: { tokens: { [token]: serviceAccount }, authorize: rbac.authorize } });
    after(() => api.close());
    const scratch = mkdtempSync(join(tmpdir(), 'extlb-rbac-'));
    after(() => rmSync(scratch, { recursive: true, force: true }));
    const kubeconfig = api.writeKubeconfig(join(scratch, 'kubeconfig'), { token });

    // Write conflicts for every kind whose objects the ClusterRole lets the controller read one by one.
    const gettable = rbac.grants.filter((g) => g.verb === 'get' && g.source.startsWith('ClusterRole')).map((g) => ({ group: g.group, plural: g.resource }));
    const conflicts = conflictOnFirstStatusWrite(api, gettable);
    after(() => conflicts.stop());

    // The Deployment's container, twice: its args (listening on loopback here, and with a
    // kubeconfig for the ServiceAccount instead of the in-cluster one) and its downward-API env.
    const container = deployment.spec.template.spec.containers[0];
    const args = [
      ...withFlags(container.args, { '--xds-listen': '127.0.0.1:0', '--http-listen': '127.0.0.1:0', '--debug-listen': '127.0.0.1:0' }),
      `--kubeconfig=${kubeconfig}`,
    ];
    const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|KUBERNETES_)/i.test(k)));
    const replicas: RunningCli[] = ['extlb-controller-7d9f8-a1', 'extlb-controller-7d9f8-b2'].map((pod) =>
      startCli(args, { env: { ...baseEnv, ...containerEnv(deployment, pod) } }),
    );
    after(() => Promise.all(replicas.map((r) => r.stop())));
    const ports = await Promise.all(replicas.map(async (r) => (await r.waitFor(/"xdsPort":(\d+),"httpPort":(\d+)/)).slice(1).map(Number)));
    for (const [, http] of ports) {
      await until('readiness', async () => (await fetch(`http://127.0.0.1:${http}/readyz`)).status === 200 || undefined);
    }

    // The leader makes the pools' shadow Services; the EndpointSlice controller publishes their Pods.
    const pool = only(loadDeploy('app'), 'BackendPool');
    const shadowName = shadowServiceName('BackendPool', pool.metadata.name);
    const shadow = await until('the shadow Service of the walkthrough pool', () => api.get('v1', 'Service', shadowName, 'demo') as Json | undefined);
    assert.equal(shadow.spec.clusterIP, 'None');
    assert.deepEqual(shadow.spec.selector, pool.spec.selector.matchLabels);
    api.put(slice(shadowName, 'demo', { name: shadow.spec.ports[0].name, port: 8000 }, ['10.1.0.11', '10.1.0.12', '10.1.0.13']) as KubeObject);
    const modelShadow = shadowServiceName('InferencePool', 'model');
    await until('the InferencePool shadow Service', () => api.get('v1', 'Service', modelShadow, 'extras'));

    // Statuses, each after a conflict on its kind's first write.
    await until('a conflict on every status kind', () => conflicts.done());
    const status = (apiVersion: string, kind: string, name: string, ns?: string) => (api.get(apiVersion, kind, name, ns) as Json | undefined)?.status;
    const gateway = await until('the Gateway status with its address', () => {
      const s = status('gateway.networking.k8s.io/v1', 'Gateway', 'edge', 'demo');
      return s?.addresses?.length ? s : undefined;
    });
    const envoyService = api.list('v1', 'Service', 'demo').find((s) => s.metadata.labels?.[GATEWAY_NAME_LABEL] === 'edge') as Json;
    assert.deepEqual(gateway.addresses, [{ type: 'IPAddress', value: envoyService.spec.clusterIP }], "the address of Envoy's Service");
    assert.equal(gateway.conditions.find((c: Json) => c.type === 'Programmed')?.status, 'True');
    const accepted = (s: Json | undefined) =>
      (s?.parents ?? s?.ancestors ?? [{ conditions: s?.conditions }])[0]?.conditions?.find((c: Json) => c.type === 'Accepted')?.status;
    for (const [apiVersion, kind, name, ns] of [
      ['gateway.networking.k8s.io/v1', 'GatewayClass', 'extlb', undefined],
      ['gateway.networking.k8s.io/v1', 'Gateway', 'secure', 'extras'],
      ['gateway.networking.k8s.io/v1', 'HTTPRoute', 'echo', 'demo'],
      ['gateway.networking.k8s.io/v1', 'HTTPRoute', 'routes', 'extras'],
      ['gateway.networking.k8s.io/v1', 'TLSRoute', 'db-tls', 'extras'],
      ['gateway.networking.k8s.io/v1', 'TCPRoute', 'db', 'extras'],
      ['gateway.networking.k8s.io/v1', 'UDPRoute', 'dns', 'extras'],
      ['gateway.networking.k8s.io/v1', 'ListenerSet', 'team-db', 'certs'],
      ['extlb.dev/v1alpha1', 'BackendPool', pool.metadata.name, 'demo'],
      ['extlb.dev/v1alpha1', 'LoadBalancerPolicy', 'search-picker', 'extras'],
      ['inference.networking.k8s.io/v1', 'InferencePool', 'model', 'extras'],
    ] as const) {
      await until(`${kind} ${name} accepted`, () => accepted(status(apiVersion, kind, name, ns)) === 'True');
    }

    // Envoy's view: the bootstrap's node, with the Gateway's identity Secret as its Pods mount it,
    // gets the Gateway's listener, the route and the pool's endpoints over mutual TLS.
    const bootstrap = only(loadDeploy('gateway'), 'ConfigMap').data['bootstrap.yaml'] as string;
    const cluster = /cluster: (\S+)/.exec(bootstrap)?.[1] as string;
    const serverName = /sni: (\S+)/.exec(bootstrap)?.[1] as string;
    const [gwNamespace, gwName] = cluster.split('/') as [string, string];
    const identity = await until("the Gateway's identity Secret", () => api.get('v1', 'Secret', identitySecretName(gwName), gwNamespace) as Json | undefined);
    const file = (key: string) => Buffer.from(identity.data[key], 'base64');
    const envoy = new AdsTestClient<SotwResponse>(
      `127.0.0.1:${ports[1]?.[0]}`,
      'sotw',
      grpc.credentials.createSsl(file('ca.crt'), file('tls.key'), file('tls.crt')),
      { 'grpc.ssl_target_name_override': serverName },
    );
    after(() => envoy.close());
    envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'edge-envoy-abc', cluster } }));
    const clusters = await envoy.next(15_000);
    envoy.send(sotwAnswer(clusters));
    const eds = decoded(clusters).filter((c) => c.type === 'EDS');
    envoy.send(
      sotwRequest(
        TYPE_URL.endpoint,
        eds.map((c) => String(c.name)),
      ),
    );
    envoy.send(sotwRequest(TYPE_URL.listener, []));
    const seen = new Map<string, Json[]>();
    await until('endpoints and listeners', async () => {
      const r = await envoy.next(15_000);
      seen.set(r.type_url, decoded(r));
      envoy.send(sotwAnswer(r, r.type_url === TYPE_URL.endpoint ? eds.map((c) => String(c.name)) : []));
      const poolEndpoints = seen
        .get(TYPE_URL.endpoint)
        ?.find((e) => String(e.cluster_name).includes(pool.metadata.name))
        ?.endpoints?.flatMap((l: Json) => l.lb_endpoints.map((x: Json) => x.endpoint.address.socket_address.address));
      return seen.has(TYPE_URL.listener) && poolEndpoints?.length === 3;
    });
    const listener = seen.get(TYPE_URL.listener)?.[0] as Json;
    assert.equal(listener.address.socket_address.port_value, 8080, "the Gateway listener's port, Envoy's container port");

    // An identity Secret spoiled is issued again (update); a Gateway that stops asking loses it (delete).
    api.put({ ...identity, data: { ...identity.data, 'tls.crt': Buffer.from('spoiled').toString('base64') } } as unknown as KubeObject);
    const gw = api.get('gateway.networking.k8s.io/v1', 'Gateway', gwName, gwNamespace) as Json;
    api.put({ ...gw, metadata: { ...gw.metadata, annotations: { ...gw.metadata.annotations, 'example.com/touched': 'yes' } } } as KubeObject);
    await until('the spoiled identity Secret issued again', () => {
      const s = api.get('v1', 'Secret', identitySecretName(gwName), gwNamespace) as Json | undefined;
      return Buffer.from(s?.data['tls.crt'] ?? '', 'base64')
        .toString()
        .includes('BEGIN CERTIFICATE');
    });
    const { 'extlb.dev/xds-identity': _asked, ...others } = (api.get('gateway.networking.k8s.io/v1', 'Gateway', gwName, gwNamespace) as Json).metadata
      .annotations;
    const touched = api.get('gateway.networking.k8s.io/v1', 'Gateway', gwName, gwNamespace) as Json;
    api.put({ ...touched, metadata: { ...touched.metadata, annotations: others } } as KubeObject);
    await until(
      'the identity Secret of a Gateway that no longer asks deleted',
      () => api.get('v1', 'Secret', identitySecretName(gwName), gwNamespace) === undefined,
    );

    // A pool changes, then goes away while its Service is orphaned: the shadow Service is updated, then deleted.
    const model = api.get('inference.networking.k8s.io/v1', 'InferencePool', 'model', 'extras') as KubeObject & { spec: Json };
    api.put({ ...model, spec: { ...model.spec, targetPorts: [{ number: 8001 }] } });
    await until('the shadow Service updated', () => (api.get('v1', 'Service', modelShadow, 'extras') as Json | undefined)?.spec.ports[0].port === 8001);
    api.remove('inference.networking.k8s.io/v1', 'InferencePool', 'model', 'extras', { propagationPolicy: 'Orphan' });
    await until('the orphaned shadow Service deleted', () => api.get('v1', 'Service', modelShadow, 'extras') === undefined);

    // The provisioned Gateway's objects (created and patched by server-side apply), then its team
    // opts out: the controller deletes them.
    await until('the provisioned Deployment and autoscaler', () => api.get('autoscaling/v2', 'HorizontalPodAutoscaler', 'secure-extlb', 'extras'));
    const secureParams = api.get('extlb.dev/v1alpha1', 'GatewayParameters', 'secure', 'extras') as Json;
    api.put({ ...secureParams, spec: { provision: false } } as unknown as KubeObject);
    await until('the opted-out Gateway loses its objects', () => api.get('apps/v1', 'Deployment', 'secure-extlb', 'extras') === undefined);

    // The conflicts were real: the API server answered 409 to one status write of every such kind.
    const conflicted = new Set(
      api
        .requestsMatching({ user: serviceAccount, subresource: 'status' })
        .filter((r) => r.code === 409)
        .map((r) => r.resource),
    );
    assert.deepEqual([...conflicted].sort(), gettable.map((g) => g.plural).sort());

    // SIGTERM: both stop cleanly, the leader gives the Lease up.
    const codes = await Promise.all(replicas.map((r) => r.stop()));
    assert.deepEqual(codes, [0, 0], replicas.map((r) => r.output()).join('\n'));
    const leaseName = flagValue(container.args, '--lease-name') as string;
    assert.equal((api.get('coordination.k8s.io/v1', 'Lease', leaseName, namespace) as Json).spec.holderIdentity, '', 'the Lease is released');

    // Nothing was denied.
    const mine = api.requestsMatching({ user: serviceAccount });
    assert.ok(mine.length > 50, `${mine.length} requests by the controller`);
    assert.deepEqual(rbac.denied, [], 'no request was denied');
    assert.deepEqual(
      api.requests.filter((r) => r.code === 403).map((r) => `${r.method} ${r.path}`),
      [],
    );
    // What RBAC cannot enforce, the controller does: it reads only TLS Secrets, its identity Secrets
    // and its CA's, and writes only the last two.
    const secrets = mine.filter((r) => r.resource === 'secrets');
    assert.ok(secrets.length >= 2, 'Secrets were listed and watched');
    const caSecret = flagValue(container.args, '--xds-ca-secret') as string;
    for (const r of secrets) {
      const what = `${r.verb} ${r.path} ${JSON.stringify(r.query)}`;
      const ca =
        r.namespace === namespace &&
        (r.name === caSecret ||
          r.query.fieldSelector === `metadata.name=${caSecret}` ||
          (r.verb === 'create' && String((r.body as Json)?.metadata?.name) === caSecret));
      if (ca) continue;
      if (r.verb === 'list' || r.verb === 'watch') {
        assert.ok([`type=kubernetes.io/tls`, `type=${IDENTITY_SECRET_TYPE}`].includes(r.query.fieldSelector as string), what);
      } else {
        // The walkthrough Gateway asks for its identity; the provisioned one gets it unasked.
        const asked = r.namespace === gwNamespace && (r.name === identitySecretName(gwName) || r.verb === 'create');
        const provisioned = r.namespace === 'extras' && (String(r.name).endsWith('-xds-identity') || r.verb === 'create');
        assert.ok(asked || provisioned, what);
      }
    }
    // ConfigMaps: only the referenced one, by name, in its namespace.
    const configMaps = mine.filter((r) => r.resource === 'configmaps');
    assert.ok(configMaps.some((r) => r.verb === 'list') && configMaps.some((r) => r.verb === 'watch'), 'the CA bundle was listed and watched');
    for (const r of configMaps) {
      // The provisioned Gateways' bootstraps (<gateway>-extlb), by name; else the CA bundle only.
      if (['patch', 'delete'].includes(r.verb) && r.namespace === 'extras' && String(r.name).endsWith('-extlb')) continue;
      assert.deepEqual([r.namespace, r.query.fieldSelector], ['extras', 'metadata.name=greeter-ca'], `${r.verb} ${r.path}`);
    }
    // Least privilege: every verb granted was needed.
    assert.deepEqual(rbac.grants.filter((g) => !rbac.used.has(g)).map(grantKey), [], 'every granted verb was used');
  });
});
