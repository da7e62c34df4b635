// examples/deploy's control plane, Gateway and demo manifests (the webhook's are checked in
// packages/webhook/test/deploy.test.ts): they parse, the extlb objects pass `extlb validate`, and
// the objects agree with each other and with the programs they run — the controller's flags and
// probes, Envoy's bootstrap with `extlb bootstrap`, ports and labels from the Gateway through
// Envoy's Service to its Pods, the picker with the pool's shadow Service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CONTROLLER, parseHostPort, shadowServiceName, XDS_IDENTITY, xdsIdentitySdsFiles } from '@extlb/envoy';
import { loadEnvoyValidator } from '@extlb/envoy/validator';
import { parse } from 'yaml';
import { serviceDnsNames } from '../src/controller.js';
import { IDENTITY_ANNOTATION, identitySecretName } from '../src/identity/index.js';
import { GATEWAY_NAME_LABEL } from '../src/status/gateway.js';
import { type Located, type Manifest, containerEnv, expandArgs, flagValue, loadDeploy, only, runCli } from './deploy-manifests.js';

type Json = Record<string, any>;

const all = loadDeploy();
const controllerSet = loadDeploy('controller');
const gatewaySet = loadDeploy('gateway');
const appSet = loadDeploy('app');

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'GatewayClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

const container = (d: Manifest): Json => d.spec.template.spec.containers[0];
const podLabels = (d: Manifest): Record<string, string> => d.spec.template.metadata.labels;
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
/** The container port a probe's or Service's port (a name or a number) stands for. */
const containerPort = (c: Json, port: string | number): number | undefined =>
  c.ports.find((p: Json) => p.name === port || p.containerPort === port)?.containerPort;
const listenPort = (c: Json, flag: string): number => {
  const value = flagValue(c.args, flag);
  const hp = value === undefined ? undefined : parseHostPort(value);
  assert.ok(hp, `${flag} is HOST:PORT, not ${value}`);
  return hp.port;
};

/** Envoy's release in an envoyproxy/envoy image tag, as [major, minor, patch]. */
function envoyRelease(image: string): number[] {
  const m = /^envoyproxy\/envoy:v(\d+)\.(\d+)\.(\d+)$/.exec(image);
  assert.ok(m, `${image} is the official Envoy image with an exact release tag`);
  return m.slice(1).map(Number);
}

/** Envoy's `--config-yaml` merge into the bootstrap (protobuf MergeFrom): messages field by field, lists appended, scalars replaced. */
function mergeBootstrap(base: unknown, extra: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(extra)) return [...base, ...extra];
  if (base && extra && typeof base === 'object' && typeof extra === 'object' && !Array.isArray(base) && !Array.isArray(extra)) {
    const out: Json = { ...base };
    for (const [k, v] of Object.entries(extra)) out[k] = k in out ? mergeBootstrap(out[k], v) : v;
    return out;
  }
  return extra;
}

function hardened(d: Manifest): void {
  const pod = d.spec.template.spec;
  const c = container(d);
  const what = `${d.kind} ${d.metadata.name}`;
  assert.equal(pod.securityContext.runAsNonRoot, true, `${what}: runAsNonRoot`);
  assert.ok(pod.securityContext.runAsUser > 0, `${what}: a non-root uid`);
  assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault', `${what}: seccomp`);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true, `${what}: read-only root filesystem`);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false, `${what}: no privilege escalation`);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL'], `${what}: no capabilities`);
  assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, `${what}: resources`);
}

describe('examples/deploy: the controller, a Gateway and a demo', () => {
  const controller = only(controllerSet, 'Deployment', 'extlb-controller');
  const controllerService = only(controllerSet, 'Service', 'extlb-controller');
  const gatewayClass = only(controllerSet, 'GatewayClass');
  const gateway = only(gatewaySet, 'Gateway');
  const envoy = only(gatewaySet, 'Deployment');
  const envoyService = only(gatewaySet, 'Service');
  const bootstrapMap = only(gatewaySet, 'ConfigMap');
  const pool = only(appSet, 'BackendPool');
  const picker = only(appSet, 'Deployment', 'echo-picker');

  it('parses, names every object, and puts namespaced ones in a namespace created here', () => {
    const namespaces = new Set(all.filter((o) => o.object.kind === 'Namespace').map((o) => o.object.metadata.name));
    assert.deepEqual([...namespaces].sort(), ['demo', 'extlb-system']);
    for (const { file, object: o } of all) {
      assert.ok(o.apiVersion && o.kind && o.metadata?.name, `${file}: apiVersion, kind and name`);
      if (CLUSTER_SCOPED.has(o.kind)) assert.equal(o.metadata.namespace, undefined, `${file}: ${o.kind} is cluster-scoped`);
      else assert.ok(namespaces.has(o.metadata.namespace ?? ''), `${file}: ${o.kind} ${o.metadata.name} in a namespace created here`);
    }
    const kinds = (set: Located[]) => set.map((o) => o.object.kind).sort();
    assert.deepEqual(kinds(controllerSet), [
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'GatewayClass',
      'GatewayParameters',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
  });

  it('passes extlb validate: every extlb object is valid as the API server would take it', async () => {
    const run = await runCli(['validate', '-o', 'json', 'examples/deploy']);
    assert.equal(run.code, 0, run.stderr);
    const docs: Json[] = JSON.parse(run.stdout).documents;
    assert.equal(docs.length, all.length, 'every object was read');
    const checked = docs.filter((d) => !d.skipped);
    assert.deepEqual(
      checked.map((d) => d.object),
      ['BackendPool demo/echo-pool', 'GatewayParameters extlb-system/extlb-default', 'GatewayParameters demo/self-managed'],
    );
    for (const d of docs) assert.deepEqual(d.errors, [], `${d.file}:${d.line}:${d.col} ${d.object}`);
  });

  it('runs the controller as two hardened replicas with the downward API, probes on --http-listen and a Service for xDS', () => {
    const c = container(controller);
    const pod = controller.spec.template.spec;
    assert.equal(controller.spec.replicas, 2);
    assert.ok(selects(controller.spec.selector.matchLabels, podLabels(controller)));
    assert.equal(c.args[0], 'controller');
    hardened(controller);
    assert.deepEqual(containerEnv(controller, 'extlb-controller-abc'), { POD_NAMESPACE: 'extlb-system', POD_NAME: 'extlb-controller-abc' });
    assert.equal(pod.serviceAccountName, only(controllerSet, 'ServiceAccount').metadata.name);
    const http = listenPort(c, '--http-listen');
    const xds = listenPort(c, '--xds-listen');
    assert.equal(containerPort(c, c.livenessProbe.httpGet.port), http);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(containerPort(c, c.readinessProbe.httpGet.port), http);
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.ok(pod.terminationGracePeriodSeconds > Number(flagValue(c.args, '--shutdown-timeout')), 'the kubelet waits for the drain');
    assert.ok(selects(controllerService.spec.selector, podLabels(controller)), 'the Service selects the Pods');
    const servicePort = (name: string) => controllerService.spec.ports.find((p: Json) => p.name === name);
    assert.equal(containerPort(c, servicePort('xds').targetPort), xds);
    assert.equal(containerPort(c, servicePort('metrics').targetPort), http);
    const pdb = only(controllerSet, 'PodDisruptionBudget');
    assert.ok(selects(pdb.spec.selector.matchLabels, podLabels(controller)));
    assert.ok(pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < controller.spec.replicas, 'a drain keeps one replica and can still evict the other');
  });

  it('lets only Envoy Pods of a Gateway reach xDS', () => {
    const policy = only(controllerSet, 'NetworkPolicy');
    assert.ok(selects(policy.spec.podSelector.matchLabels, podLabels(controller)));
    const xdsRule = policy.spec.ingress.find((r: Json) => r.ports.some((p: Json) => p.port === 'xds'));
    assert.equal(xdsRule.from.length, 1);
    assert.ok(selects(xdsRule.from[0].podSelector.matchLabels, podLabels(envoy)), "Envoy's Pods may connect");
    for (const other of [picker, only(appSet, 'Deployment', 'echo'), controller])
      assert.ok(!selects(xdsRule.from[0].podSelector.matchLabels, podLabels(other)), `${other.metadata.name} may not`);
  });

  it("has a GatewayClass for the controller's name, and the Gateway is of it", () => {
    assert.equal(flagValue(container(controller).args, '--controller-name'), undefined, 'the controller keeps its default name');
    assert.equal(gatewayClass.spec.controllerName, DEFAULT_CONTROLLER);
    assert.equal(gateway.spec.gatewayClassName, gatewayClass.metadata.name);
  });

  it("holds in Envoy's ConfigMap exactly what extlb bootstrap prints for the Gateway and the controller's Service", async () => {
    const xdsPort = controllerService.spec.ports.find((p: Json) => p.name === 'xds').port;
    const xdsServer = `${controllerService.metadata.name}.${controllerService.metadata.namespace}.svc.cluster.local:${xdsPort}`;
    const run = await runCli(['bootstrap', '--gateway', `${gateway.metadata.namespace}/${gateway.metadata.name}`, '--xds-server', xdsServer]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(bootstrapMap.data['bootstrap.yaml'], run.stdout);
    assert.equal(bootstrapMap.metadata.namespace, gateway.metadata.namespace);
  });

  it("starts Envoy ≥ 1.35 from that bootstrap, with a configuration Envoy's protos accept and readiness on the admin's /ready", () => {
    const c = container(envoy);
    const pod = envoy.spec.template.spec;
    const [major, minor] = envoyRelease(c.image);
    const target = flagValue(container(controller).args, '--envoy') ?? '1.35';
    assert.ok(major === 1 && (minor as number) >= Number(target.split('.')[1]), `Envoy ${c.image} runs what the controller makes for ${target}`);
    assert.ok((minor as number) >= 35, 'override_host needs Envoy 1.35');
    hardened(envoy);
    assert.ok(c.args.includes('--disable-hot-restart'), 'no shared memory on a read-only root filesystem');
    assert.equal(pod.automountServiceAccountToken, false, 'Envoy never calls the Kubernetes API');

    // --config-path is the ConfigMap's file, mounted read-only.
    const configPath = flagValue(c.args, '--config-path') as string;
    const volume = pod.volumes.find((v: Json) => v.configMap?.name === bootstrapMap.metadata.name);
    const mount = c.volumeMounts.find((m: Json) => m.name === volume.name);
    assert.equal(mount.readOnly, true);
    const file = configPath.slice(mount.mountPath.length + 1);
    assert.equal(`${mount.mountPath}/${file}`, configPath);
    const bootstrap = parse(bootstrapMap.data[file]) as Json;

    // What Envoy runs: the bootstrap with --config-yaml merged in.
    const extra = parse(flagValue(c.args, '--config-yaml') as string) as Json;
    const merged = mergeBootstrap(bootstrap, extra) as Json;
    assert.deepEqual(loadEnvoyValidator('1.38').validateBootstrap(merged), []);
    assert.deepEqual(merged.node, bootstrap.node, 'the override leaves the Gateway the node names alone');
    assert.deepEqual(merged.admin, bootstrap.admin);
    assert.equal(bootstrap.admin.address.socket_address.address, '127.0.0.1', 'the admin API stays inside the Pod');
    const env = containerEnv(envoy, 'edge-envoy-abc');
    assert.ok(expandArgs(c.args, env).includes('--service-node=edge-envoy-abc'), 'each Pod is its own node id');

    // The kubelet probes a listener that forwards GET /ready, and only that, to the admin's /ready.
    const probe = c.readinessProbe.httpGet;
    assert.equal(probe.path, '/ready');
    const readyPort = containerPort(c, probe.port);
    const ready = merged.static_resources.listeners.find((l: Json) => l.address.socket_address.port_value === readyPort);
    assert.ok(ready, 'a listener on the probed port');
    const routes = ready.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts.flatMap((vh: Json) => vh.routes);
    assert.deepEqual(
      routes.map((r: Json) => r.match.path),
      ['/ready'],
    );
    const admin = merged.static_resources.clusters.find((cl: Json) => cl.name === routes[0].route.cluster);
    assert.deepEqual(admin.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address, bootstrap.admin.address);

    // Every Gateway listener's port is a container port, and differs from the readiness listener's.
    for (const l of gateway.spec.listeners) {
      assert.equal(containerPort(c, l.port), l.port, `listener ${l.name}: Envoy's container port`);
      assert.notEqual(l.port, readyPort);
    }
  });

  it("mounts the Gateway's xDS identity Secret where the bootstrap reads it, and pins the controller's serving name", () => {
    assert.equal((gateway.metadata as Json).annotations?.[IDENTITY_ANNOTATION], 'true', 'the Gateway asks for its identity Secret');
    const pod = envoy.spec.template.spec;
    const volume = pod.volumes.find((v: Json) => v.secret?.secretName === identitySecretName(gateway.metadata.name));
    assert.ok(volume, "the Pods mount the Gateway's identity Secret");
    const mount = container(envoy).volumeMounts.find((m: Json) => m.name === volume.name);
    assert.deepEqual([mount.mountPath, mount.readOnly], [XDS_IDENTITY.dir, true]);
    assert.equal(volume.secret.defaultMode & 0o007, 0, 'no file of it is readable by others');
    assert.equal(pod.securityContext.fsGroup, pod.securityContext.runAsGroup, "Envoy's group reads it");
    const bootstrap = parse(bootstrapMap.data['bootstrap.yaml']) as Json;
    const xds = bootstrap.static_resources.clusters.find(
      (cl: Json) => cl.name === bootstrap.dynamic_resources.ads_config.grpc_services[0].envoy_grpc.cluster_name,
    );
    const tls = xds.transport_socket.typed_config;
    const sds = [
      tls.common_tls_context.tls_certificate_sds_secret_configs[0],
      tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config,
    ];
    const files = xdsIdentitySdsFiles(mount.mountPath);
    for (const s of sds) {
      const source = s.sds_config.path_config_source;
      assert.equal(source.watched_directory.path, mount.mountPath, "Envoy watches the Secret's mount for Kubernetes' ..data swaps");
      const file = source.path.slice(mount.mountPath.length + 1);
      const doc = JSON.parse(files[file] as string);
      assert.equal(doc.resources[0].name, s.name, `${file} holds the Secret ${s.name} the bootstrap asks for`);
      const { '@type': type, ...secret } = doc.resources[0];
      assert.equal(type, 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret');
      assert.deepEqual(loadEnvoyValidator('1.38').validateMessage('envoy.extensions.transport_sockets.tls.v3.Secret', secret), [], `${file} as Envoy reads it`);
    }
    const host = xds.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address as string;
    const pinned = tls.common_tls_context.combined_validation_context.default_validation_context.match_typed_subject_alt_names[0].matcher.exact;
    assert.equal(pinned, host, 'the bootstrap pins the name it dials');
    const c = container(controller);
    assert.ok(
      serviceDnsNames(flagValue(c.args, '--xds-service') as string, controller.metadata.namespace as string).includes(pinned),
      "the controller's serving certificate holds that name",
    );
  });

  it("puts the Gateway's address behind a Service labelled with its name, on the listeners' ports", () => {
    assert.equal(envoyService.metadata.labels?.[GATEWAY_NAME_LABEL], gateway.metadata.name);
    assert.equal(envoyService.metadata.namespace, gateway.metadata.namespace);
    assert.ok(selects(envoyService.spec.selector, podLabels(envoy)), "the Service selects the Gateway's Envoy Pods");
    assert.ok(selects(envoy.spec.selector.matchLabels, podLabels(envoy)));
    assert.ok(envoy.spec.replicas >= 2);
    for (const l of gateway.spec.listeners) {
      const port = envoyService.spec.ports.find((p: Json) => p.port === l.port);
      assert.ok(port, `listener ${l.name}: the Service serves port ${l.port}`);
      assert.equal(containerPort(container(envoy), port.targetPort), l.port);
    }
    const fronting = all.filter((o) => o.object.kind === 'Service' && o.object.metadata.labels?.[GATEWAY_NAME_LABEL] !== undefined);
    assert.deepEqual(
      fronting.map((o) => o.object.metadata.name),
      [envoyService.metadata.name],
      'no other Service claims to front the Gateway',
    );
  });

  it("runs the picker the pool names, on the endpoints of the pool's shadow Service", () => {
    const c = container(picker);
    const env = containerEnv(picker, 'echo-picker-abc');
    const args = expandArgs(c.args, env);
    hardened(picker);
    assert.equal(args[0], 'picker');
    assert.ok(args.includes('--from-cluster'));
    assert.equal(flagValue(args, '--namespace'), pool.metadata.namespace);
    assert.equal(flagValue(args, '--selector'), `kubernetes.io/service-name=${shadowServiceName('BackendPool', pool.metadata.name)}`);
    assert.equal(Number(flagValue(args, '--port')), pool.spec.targetPorts[0].number);
    const ref = pool.spec.loadBalancer.external.refs[0];
    const service = only(appSet, 'Service', ref.name);
    const port = service.spec.ports.find((p: Json) => p.port === ref.port.number);
    assert.equal(containerPort(c, port.targetPort), listenPort(c, '--listen'), "the pool's ref reaches the picker's --listen port");
    assert.equal(port.appProtocol, 'kubernetes.io/h2c', 'gRPC');
    assert.ok(selects(service.spec.selector, podLabels(picker)));
    for (const probe of [c.readinessProbe, c.livenessProbe]) assert.equal(probe.grpc.port, listenPort(c, '--listen'));
    assert.deepEqual([c.readinessProbe.grpc.service, c.livenessProbe.grpc.service], ['readiness', 'liveness']);
    // It lists and watches EndpointSlices in its namespace, as its ServiceAccount may.
    const role = only(appSet, 'Role');
    assert.deepEqual(role.rules, [{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] }]);
    const binding = only(appSet, 'RoleBinding');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: picker.spec.template.spec.serviceAccountName, namespace: picker.metadata.namespace }]);
    assert.equal(binding.roleRef.name, role.metadata.name);
  });

  it("sends the route's requests to the pool's Pods", () => {
    const app = only(appSet, 'Deployment', 'echo');
    hardened(app);
    assert.ok(selects(pool.spec.selector.matchLabels, podLabels(app)), "the pool selects the app's Pods");
    assert.equal(containerPort(container(app), pool.spec.targetPorts[0].number), pool.spec.targetPorts[0].number);
    const route = only(appSet, 'HTTPRoute');
    assert.deepEqual(route.spec.parentRefs, [{ name: gateway.metadata.name }]);
    assert.equal(route.metadata.namespace, gateway.metadata.namespace);
    const backends = route.spec.rules.flatMap((r: Json) => r.backendRefs);
    assert.deepEqual(backends, [{ group: 'extlb.dev', kind: 'BackendPool', name: pool.metadata.name }]);
  });
});
