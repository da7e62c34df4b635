// What `extlb check` asks the cluster, one check at a time, each answering ok, fail (with a hint)
// or warn (an optional part missing). Before installing (`--pre`): the API server, the Gateway API
// CRDs, the optional InferencePool CRD. After: extlb's CRDs against this CLI's, the controller's
// replicas (their own /debug/health through port-forward), the Lease, the xDS certificate, the
// webhook's CA bundle, and every Gateway of extlb's classes with its proxies.
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { readFile } from 'node:fs/promises';
import { installYamlPath } from '@extlb/crds';
import type { DebugHealth, ProxiesReport } from '@extlb/controller';
import { controllerPods, debugGet } from './controller-debug.js';

export type CheckState = 'ok' | 'fail' | 'warn';

export interface CheckResult {
  state: CheckState;
  /** What was found, said as a fact. */
  detail?: string;
  /** What to do about a failure or a warning. */
  hint?: string;
}

export interface Check {
  name: string;
  run(ctx: CheckContext): Promise<CheckResult>;
}

export interface CheckContext {
  kc: KubeConfig;
  namespace: string;
  selector: string;
  debugPort: number;
  controllerName: string;
  leaseName: string;
  /** Filled by the controller checks for the later ones. */
  replicas?: { pod: string; health?: DebugHealth; proxies?: ProxiesReport; error?: string }[];
}

/** The oldest Kubernetes extlb runs on (the Envoy Pods use the `sleep` pre-stop action). */
export const MIN_KUBERNETES = [1, 30] as const;
/** Gateway API releases extlb supports: v1.6.x. */
export const GATEWAY_API_MINOR = 'v1.6';
const GATEWAY_API_CRDS = ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants', 'backendtlspolicies'];
const GATEWAY_GROUP = 'gateway.networking.k8s.io';

const ok = (detail?: string): CheckResult => ({ state: 'ok', ...(detail ? { detail } : {}) });
const fail = (detail: string, hint: string): CheckResult => ({ state: 'fail', detail, hint });
const warn = (detail: string, hint: string): CheckResult => ({ state: 'warn', detail, hint });

/** An API error's code and message, however client-node reports it. */
function apiError(err: unknown): { code: number | undefined; message: string } {
  const e = err as { code?: unknown; body?: unknown; message?: string };
  const code = typeof e.code === 'number' ? e.code : undefined;
  let message = e.message ?? String(err);
  try {
    const body = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
    if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') message = (body as { message: string }).message;
  } catch {
    // not JSON: the exception's own message stays
  }
  return { code, message: message.split('\n')[0] ?? message };
}

async function k8s() {
  return import('@kubernetes/client-node');
}

async function readCrd(kc: KubeConfig, name: string) {
  const { ApiextensionsV1Api } = await k8s();
  try {
    return await kc.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name });
  } catch (err) {
    if (apiError(err).code === 404) return undefined;
    throw err;
  }
}

export const apiServerCheck: Check = {
  name: 'the Kubernetes API server answers',
  async run({ kc }) {
    const { VersionApi } = await k8s();
    try {
      const v = await kc.makeApiClient(VersionApi).getCode();
      return ok(`${kc.getCurrentCluster()?.server} (${v.gitVersion})`);
    } catch (err) {
      return fail(
        `${kc.getCurrentCluster()?.server}: ${apiError(err).message}`,
        'check the kubeconfig and context (--kubeconfig, --context) and that the cluster is up',
      );
    }
  },
};

export const kubernetesVersionCheck: Check = {
  name: `Kubernetes is ${MIN_KUBERNETES.join('.')} or newer`,
  async run({ kc }) {
    const { VersionApi } = await k8s();
    const v = await kc.makeApiClient(VersionApi).getCode();
    const major = Number.parseInt(v.major, 10);
    const minor = Number.parseInt(v.minor, 10);
    if (major > MIN_KUBERNETES[0] || (major === MIN_KUBERNETES[0] && minor >= MIN_KUBERNETES[1])) return ok(v.gitVersion);
    return fail(`the API server is ${v.gitVersion}`, `upgrade the cluster to Kubernetes ${MIN_KUBERNETES.join('.')} or newer`);
  },
};

export const gatewayApiCheck: Check = {
  name: `the Gateway API CRDs are installed (${GATEWAY_API_MINOR}.x, standard or experimental channel)`,
  async run({ kc }) {
    const problems: string[] = [];
    const versions = new Set<string>();
    for (const plural of GATEWAY_API_CRDS) {
      const crd = await readCrd(kc, `${plural}.${GATEWAY_GROUP}`);
      if (!crd) {
        problems.push(`${plural}.${GATEWAY_GROUP} is missing`);
        continue;
      }
      const annotations = crd.metadata?.annotations ?? {};
      const version = annotations[`${GATEWAY_GROUP}/bundle-version`] ?? '';
      const channel = annotations[`${GATEWAY_GROUP}/channel`] ?? '';
      versions.add(`${version} ${channel}`);
      if (!version.startsWith(`${GATEWAY_API_MINOR}.`)) problems.push(`${plural} is bundle-version ${version || '(none)'}`);
      if (channel !== 'standard' && channel !== 'experimental') problems.push(`${plural} is channel ${channel || '(none)'}`);
    }
    if (problems.length === 0) return ok([...versions].join(', '));
    return fail(
      problems.join('; '),
      `kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/${GATEWAY_API_MINOR}.1/standard-install.yaml`,
    );
  },
};

export const inferencePoolCheck: Check = {
  name: 'the InferencePool CRD is installed (optional)',
  async run({ kc }) {
    const crd = await readCrd(kc, 'inferencepools.inference.networking.k8s.io');
    if (crd) return ok(crd.spec.versions.map((v) => v.name).join(', '));
    return warn('not installed: InferencePools are treated as absent', 'install the Gateway API Inference Extension CRDs to route to InferencePools');
  },
};

export const extlbCrdsCheck: Check = {
  name: "extlb's CRDs match this CLI",
  async run({ kc }) {
    const wanted = parseAllDocuments(await readFile(installYamlPath, 'utf8'))
      .map((d) => d.toJS() as { metadata: { name: string; annotations?: Record<string, string> }; spec: { versions: { name: string }[] } } | null)
      .filter((d) => d !== null);
    const problems: string[] = [];
    for (const crd of wanted) {
      const have = await readCrd(kc, crd.metadata.name);
      const want = crd.metadata.annotations?.['extlb.dev/bundle-version'];
      if (!have) problems.push(`${crd.metadata.name} is missing`);
      else if (have.metadata?.annotations?.['extlb.dev/bundle-version'] !== want)
        problems.push(`${crd.metadata.name} is ${have.metadata?.annotations?.['extlb.dev/bundle-version'] ?? 'unversioned'}, this CLI's is ${want}`);
      else if (have.spec.versions.map((v) => v.name).join() !== crd.spec.versions.map((v) => v.name).join())
        problems.push(
          `${crd.metadata.name} serves ${have.spec.versions.map((v) => v.name).join(', ')}, this CLI's ${crd.spec.versions.map((v) => v.name).join(', ')}`,
        );
    }
    if (problems.length === 0) return ok(`${wanted.length} CRDs, ${wanted[0]?.metadata.annotations?.['extlb.dev/bundle-version'] ?? ''}`);
    return fail(problems.join('; '), 'extlb install | kubectl apply -f -');
  },
};

/** Reads every controller replica's health and proxies once, for the checks after it. */
async function replicas(ctx: CheckContext): Promise<NonNullable<CheckContext['replicas']>> {
  if (ctx.replicas) return ctx.replicas;
  const pods = await controllerPods(ctx.kc, ctx.namespace, ctx.selector);
  ctx.replicas = [];
  for (const pod of pods) {
    try {
      const health = await debugGet(ctx.kc, ctx.namespace, pod.name, ctx.debugPort, '/debug/health');
      const proxies = await debugGet(ctx.kc, ctx.namespace, pod.name, ctx.debugPort, '/debug/proxies');
      ctx.replicas.push({ pod: pod.name, health: health.body as DebugHealth, proxies: proxies.body as ProxiesReport });
    } catch (err) {
      ctx.replicas.push({ pod: pod.name, error: (err as Error).message });
    }
  }
  return ctx.replicas;
}

export const controllerReadyCheck: Check = {
  name: 'the controller is running and ready',
  async run(ctx) {
    const all = await replicas(ctx);
    if (all.length === 0)
      return fail(`no running Pod labelled ${ctx.selector} in ${ctx.namespace}`, `kubectl -n ${ctx.namespace} describe deployment extlb-controller`);
    const ready = all.filter((r) => r.health?.ready);
    const notReady = all.filter((r) => !r.health?.ready).map((r) => `${r.pod}: ${r.error ?? r.health?.reason ?? 'not ready'}`);
    if (ready.length === 0) return fail(notReady.join('; '), `kubectl -n ${ctx.namespace} logs -l ${ctx.selector}`);
    if (notReady.length > 0)
      return warn(`${ready.length} of ${all.length} replicas ready; ${notReady.join('; ')}`, `kubectl -n ${ctx.namespace} logs -l ${ctx.selector}`);
    return ok(`${ready.length} of ${all.length} replicas ready`);
  },
};

export const leaderCheck: Check = {
  name: 'the controller has a leader',
  async run(ctx) {
    const { CoordinationV1Api } = await k8s();
    let lease: Awaited<ReturnType<InstanceType<typeof CoordinationV1Api>['readNamespacedLease']>>;
    try {
      lease = await ctx.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: ctx.leaseName, namespace: ctx.namespace });
    } catch (err) {
      return fail(`Lease ${ctx.namespace}/${ctx.leaseName}: ${apiError(err).message}`, 'no replica has led yet: see the controller logs');
    }
    const holder = lease.spec?.holderIdentity;
    const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string).getTime() : 0;
    const live = renewed + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 > Date.now();
    if (!holder || !live)
      return fail(
        `Lease ${ctx.leaseName} is ${holder ? `held by ${holder} but not renewed` : 'held by no one'}`,
        'see the controller logs for leader election',
      );
    const leading = (ctx.replicas ?? []).filter((r) => r.health?.leader).map((r) => r.pod);
    if (ctx.replicas && leading.length !== 1)
      return fail(
        `${leading.length} replicas say they lead (${leading.join(', ') || 'none'}); the Lease names ${holder}`,
        'see the controller logs for leader election',
      );
    return ok(holder);
  },
};

export const xdsCertificateCheck: Check = {
  name: "the controller's xDS serving certificate is valid",
  async run(ctx) {
    const all = (await replicas(ctx)).filter((r) => r.health);
    if (all.length === 0) return fail('no replica answered', 'see the check above');
    const plain = all.filter((r) => !r.health?.xdsCertificate).map((r) => r.pod);
    if (plain.length > 0)
      return fail(`${plain.join(', ')}: xDS is plain text (--xds-plaintext)`, 'drop --xds-plaintext: any client that names a Gateway gets its TLS keys');
    const bad = all.filter((r) => !r.health?.xdsCertificate?.valid).map((r) => `${r.pod} (expired ${r.health?.xdsCertificate?.expiresAt})`);
    if (bad.length > 0) return fail(bad.join(', '), 'see the controller logs about the xDS CA (Secret --xds-ca-secret)');
    const first = all.map((r) => r.health?.xdsCertificate?.expiresAt ?? '').sort()[0];
    return ok(`valid until ${first}`);
  },
};

export const webhookCheck: Check = {
  name: 'the admission webhook is set up (optional)',
  async run(ctx) {
    const { AdmissionregistrationV1Api, CoreV1Api } = await k8s();
    const admission = ctx.kc.makeApiClient(AdmissionregistrationV1Api);
    let configs: { name: string; bundles: string[] }[];
    try {
      const v = await admission.readValidatingWebhookConfiguration({ name: 'extlb-validation' });
      const m = await admission.readMutatingWebhookConfiguration({ name: 'extlb-defaults' });
      configs = [
        { name: 'extlb-validation', bundles: (v.webhooks ?? []).map((w) => w.clientConfig.caBundle ?? '') },
        { name: 'extlb-defaults', bundles: (m.webhooks ?? []).map((w) => w.clientConfig.caBundle ?? '') },
      ];
    } catch (err) {
      if (apiError(err).code === 404) return warn('not installed', 'extlb install --webhook | kubectl apply -f - (needs cert-manager)');
      throw err;
    }
    let ca: string | undefined;
    try {
      const secret = await ctx.kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'extlb-webhook-tls', namespace: ctx.namespace });
      ca = secret.data?.['ca.crt'];
    } catch (err) {
      return fail(
        `Secret ${ctx.namespace}/extlb-webhook-tls: ${apiError(err).message}`,
        'cert-manager has not issued the webhook certificate: kubectl describe certificate',
      );
    }
    const stale = configs.filter((c) => c.bundles.some((b) => b !== ca)).map((c) => c.name);
    if (!ca || stale.length > 0)
      return fail(
        `caBundle of ${stale.join(', ') || 'the configurations'} differs from the serving certificate's CA`,
        'cert-manager injects it (cert-manager.io/inject-ca-from): check its cainjector',
      );
    const pods = await controllerPods(ctx.kc, ctx.namespace, 'app.kubernetes.io/name=extlb-webhook');
    if (!pods.some((p) => p.ready)) return fail('no webhook Pod is ready', `kubectl -n ${ctx.namespace} describe deployment extlb-webhook`);
    return ok(`${pods.filter((p) => p.ready).length} replicas ready, caBundle matches`);
  },
};

interface GatewayObject {
  metadata: { name: string; namespace: string; generation?: number };
  spec: { gatewayClassName: string };
  status?: { conditions?: { type: string; status: string; reason?: string; observedGeneration?: number }[] };
}

export const gatewaysCheck: Check = {
  name: "every Gateway of extlb's classes is Accepted, Programmed, and has proxies in sync",
  async run(ctx) {
    const { CustomObjectsApi } = await k8s();
    const api = ctx.kc.makeApiClient(CustomObjectsApi);
    const classes = (
      (await api.listClusterCustomObject({ group: GATEWAY_GROUP, version: 'v1', plural: 'gatewayclasses' })) as {
        items: { metadata: { name: string }; spec: { controllerName: string } }[];
      }
    ).items
      .filter((c) => c.spec.controllerName === ctx.controllerName)
      .map((c) => c.metadata.name);
    const gateways = (
      (await api.listClusterCustomObject({ group: GATEWAY_GROUP, version: 'v1', plural: 'gateways' })) as { items: GatewayObject[] }
    ).items.filter((g) => classes.includes(g.spec.gatewayClassName));
    if (gateways.length === 0) return ok(classes.length === 0 ? "no GatewayClass names extlb's controller" : `no Gateways of class ${classes.join(', ')}`);
    const proxies = (await replicas(ctx)).flatMap((r) => r.proxies?.proxies ?? []);
    const problems: string[] = [];
    for (const g of gateways) {
      const key = `${g.metadata.namespace}/${g.metadata.name}`;
      for (const type of ['Accepted', 'Programmed']) {
        const c = g.status?.conditions?.find((x) => x.type === type);
        if (c?.status !== 'True') problems.push(`${key} ${type}=${c?.status ?? 'Unknown'}${c?.reason ? ` (${c.reason})` : ''}`);
        else if (c.observedGeneration !== undefined && g.metadata.generation !== undefined && c.observedGeneration < g.metadata.generation)
          problems.push(`${key} ${type} is for generation ${c.observedGeneration}, not ${g.metadata.generation}`);
      }
      const mine = proxies.filter((p) => p.gateway === key);
      if (mine.length === 0) problems.push(`${key} has no connected proxy`);
      else if (!mine.some((p) => p.inSync)) problems.push(`${key}: none of its ${mine.length} proxies is in sync`);
    }
    if (problems.length === 0) return ok(`${gateways.length} Gateway${gateways.length === 1 ? '' : 's'}, each with a proxy in sync`);
    return fail(problems.join('; '), 'extlb proxy-status and kubectl describe gateway tell why');
  },
};

export const PRE_CHECKS: readonly Check[] = [apiServerCheck, kubernetesVersionCheck, gatewayApiCheck, inferencePoolCheck];
export const CHECKS: readonly Check[] = [...PRE_CHECKS, extlbCrdsCheck, controllerReadyCheck, leaderCheck, xdsCertificateCheck, webhookCheck, gatewaysCheck];
