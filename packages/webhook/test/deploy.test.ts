// examples/deploy/ is what operators apply: its objects must agree with each other (names, ports,
// paths, secrets) and with what the webhook serves, and follow the admission rules the issue sets.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [k: string]: any };

const root = join(import.meta.dirname, '../../..');
const deployDir = join(root, 'examples/deploy');

function load(file: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1', uniqueKeys: true }) as never as { errors: unknown[]; toJS(): unknown }[]) {
    assert.deepEqual(doc.errors, [], `${file} has YAML errors`);
    const o = doc.toJS() as Obj | null;
    if (o) out.push(o);
  }
  return out;
}

const objects = readdirSync(deployDir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .flatMap((f) => load(join(deployDir, f)));

function one(kind: string): Obj {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind}`);
  return found[0] as Obj;
}

/** The CRDs' plural resource names, read from the generated CRDs the cluster gets. */
function crdPlurals(): Map<string, string> {
  const dir = join(root, 'packages/crds/generated');
  const plurals = new Map<string, string>();
  for (const f of readdirSync(dir).filter((n) => /^extlb\.dev_.*\.yaml$/.test(n))) {
    for (const crd of load(join(dir, f))) plurals.set(crd.spec.names.kind, crd.spec.names.plural);
  }
  return plurals;
}

describe('examples/deploy', () => {
  const ns = one('Namespace');
  const deployment = one('Deployment');
  const service = one('Service');
  const certificate = one('Certificate');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const flag = (name: string): string | undefined => {
    const args: string[] = container.args;
    const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
    if (i < 0) return undefined;
    return args[i]!.includes('=') ? args[i]!.slice(name.length + 1) : args[i + 1];
  };
  const listenPort = Number(flag('--listen')?.split(':').pop());

  it('has the objects an operator needs', () => {
    const kinds = objects.map((o) => o.kind).sort();
    for (const k of ['Certificate', 'Deployment', 'Issuer', 'MutatingWebhookConfiguration', 'Namespace', 'Service', 'ValidatingWebhookConfiguration']) {
      assert.ok(kinds.includes(k), `missing ${k}`);
    }
    for (const o of objects) assert.ok(o.apiVersion && o.kind && o.metadata?.name, `${o.kind}: apiVersion, kind and name`);
  });

  it('puts every namespaced object in the namespace', () => {
    const clusterScoped = new Set(['Namespace', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);
    for (const o of objects.filter((x) => !clusterScoped.has(x.kind))) {
      assert.equal(o.metadata.namespace, ns.metadata.name, `${o.kind} ${o.metadata.name}`);
    }
  });

  it('runs two non-root replicas with probes, resources and a read-only root filesystem', () => {
    assert.equal(deployment.spec.replicas, 2);
    const labels = deployment.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels)) assert.equal(labels[k], v, 'selector matches the Pod template');
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(pod.securityContext.runAsUser > 0);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
    assert.ok(container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory);
    assert.equal(container.args[0], 'webhook');

    const portNamed = (p: string | number) => container.ports.find((cp: any) => cp.name === p || cp.containerPort === p);
    assert.equal(portNamed('https')?.containerPort ?? container.ports[0].containerPort, listenPort, '--listen port is the container port');
    for (const [probe, path] of [
      ['readinessProbe', '/readyz'],
      ['livenessProbe', '/healthz'],
    ] as const) {
      const get = container[probe].httpGet;
      assert.equal(get.path, path);
      assert.equal(get.scheme, 'HTTPS');
      assert.equal(portNamed(get.port)?.containerPort, listenPort, `${probe} port`);
    }
    const drain = Number(flag('--shutdown-delay') ?? 0) + Number(flag('--shutdown-timeout') ?? 25);
    assert.ok(pod.terminationGracePeriodSeconds > drain, 'the kubelet waits longer than the drain');
  });

  it('mounts the Certificate secret where --cert and --key point', () => {
    const volume = pod.volumes.find((v: any) => v.secret?.secretName === certificate.spec.secretName);
    assert.ok(volume, 'a volume from the Certificate secret');
    const mount = container.volumeMounts.find((m: any) => m.name === volume.name);
    assert.equal(mount.readOnly, true);
    assert.equal(flag('--cert'), `${mount.mountPath}/tls.crt`);
    assert.equal(flag('--key'), `${mount.mountPath}/tls.key`);
    const issuer = objects.find((o) => o.kind === certificate.spec.issuerRef.kind && o.metadata.name === certificate.spec.issuerRef.name);
    assert.ok(issuer, 'the Certificate names an Issuer defined here');
  });

  it('exposes the container port through the Service the certificate names', () => {
    const labels = deployment.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(service.spec.selector)) assert.equal(labels[k], v, 'Service selects the Pods');
    const port = service.spec.ports[0];
    const target = container.ports.find((cp: any) => cp.name === port.targetPort || cp.containerPort === port.targetPort);
    assert.equal(target?.containerPort, listenPort);
    assert.ok(certificate.spec.dnsNames.includes(`${service.metadata.name}.${service.metadata.namespace}.svc`));
  });

  for (const [kind, path] of [
    ['ValidatingWebhookConfiguration', '/validate'],
    ['MutatingWebhookConfiguration', '/mutate'],
  ] as const) {
    it(`${kind} sends extlb kinds to ${path} with the required settings`, () => {
      const config = one(kind);
      assert.equal(config.metadata.annotations?.['cert-manager.io/inject-ca-from'], `${certificate.metadata.namespace}/${certificate.metadata.name}`);
      assert.equal(config.webhooks.length, 1);
      const hook = config.webhooks[0];
      assert.match(hook.name, /^[a-z0-9-]+(\.[a-z0-9-]+){2,}$/, 'a fully qualified webhook name');
      assert.equal(hook.failurePolicy, 'Fail');
      assert.equal(hook.sideEffects, 'None');
      assert.deepEqual(hook.admissionReviewVersions, ['v1']);
      assert.equal(hook.timeoutSeconds, 5);
      const svc = hook.clientConfig.service;
      assert.deepEqual([svc.namespace, svc.name, svc.port, svc.path], [service.metadata.namespace, service.metadata.name, service.spec.ports[0].port, path]);
      const plurals = crdPlurals();
      assert.deepEqual(hook.rules, [
        {
          apiGroups: ['extlb.dev'],
          apiVersions: ['v1alpha1'],
          operations: ['CREATE', 'UPDATE'],
          resources: [plurals.get('BackendPool'), plurals.get('LoadBalancerPolicy'), plurals.get('GatewayParameters')],
          scope: 'Namespaced',
        },
      ]);
    });
  }
});
