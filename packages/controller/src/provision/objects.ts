// The objects a provisioned Gateway runs on (GEP-1762), as apply configurations: named
// `<gateway>-<gatewayclass>` in the Gateway's namespace, labelled with the Gateway and its class
// plus the Gateway's infrastructure labels and annotations (GEP-1867), owned by the Gateway. Only
// the fields extlb has an opinion on are written, so whatever else a user sets survives.
import { createHash } from 'node:crypto';
import { adsBootstrap, XDS_IDENTITY } from '@extlb/envoy';
import { stringify } from 'yaml';
import type { JsonObject } from '../cluster/api.js';
import type { Effective } from './parameters.js';

export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
export const GATEWAY_CLASS_LABEL = 'gateway.networking.k8s.io/gateway-class-name';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The hash of everything a Pod is made from: a parameters change rolls the Deployment. */
export const CONFIG_HASH_ANNOTATION = 'extlb.dev/config-hash';

/** Envoy's admin, on loopback only; the two listeners below are all other Pods reach of it. */
export const ADMIN_PORT = 9901;
/** GET /ready, for the kubelet's readiness probe. */
export const READY_PORT = 19001;
/** GET /stats/prometheus, for Prometheus. */
export const METRICS_PORT = 19002;

export interface ProvisionedGateway {
  namespace: string;
  name: string;
  uid: string;
  className: string;
  listeners: { name: string; port: number; protocol: string }[];
  addresses: { type: string; value?: string }[];
  infrastructure: { labels: Record<string, string>; annotations: Record<string, string> };
}

export interface ProvisionSettings {
  /** HOST:PORT of the controller's xDS Service. */
  xdsServer: string;
  /** The name the xDS server's certificate holds; undefined: plain-text xDS (development only). */
  xdsServerName?: string;
}

/** `<gateway>-<class>`, cut to a DNS label (63) with a hash of the whole when longer. */
export function provisionedName(gateway: string, className: string): string {
  const full = `${gateway}-${className}`;
  if (full.length <= 63) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${hash}`;
}

export function selectorLabels(gw: ProvisionedGateway): Record<string, string> {
  return { 'app.kubernetes.io/name': 'envoy', [GATEWAY_NAME_LABEL]: gw.name, [GATEWAY_CLASS_LABEL]: gw.className };
}

function labels(gw: ProvisionedGateway): Record<string, string> {
  // extlb's own labels last: an infrastructure label cannot take a selector label over.
  return { ...gw.infrastructure.labels, ...selectorLabels(gw), [MANAGED_BY_LABEL]: 'extlb' };
}

function metadata(gw: ProvisionedGateway, extraAnnotations: Record<string, string> = {}): JsonObject {
  const annotations = { ...gw.infrastructure.annotations, ...extraAnnotations };
  return {
    name: provisionedName(gw.name, gw.className),
    namespace: gw.namespace,
    labels: labels(gw),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    ownerReferences: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: gw.name, uid: gw.uid, controller: true, blockOwnerDeletion: false }],
  };
}

/** Listens on `port` and forwards GET `path`, and nothing else, to Envoy's loopback admin. */
function adminPath(name: string, port: number, path: string): JsonObject {
  return {
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: name.replace(/-/g, '_'),
              route_config: {
                virtual_hosts: [
                  {
                    name,
                    domains: ['*'],
                    routes: [{ match: { path, headers: [{ name: ':method', string_match: { exact: 'GET' } }] }, route: { cluster: 'extlb-admin' } }],
                  },
                ],
              },
              http_filters: [
                { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
              ],
            },
          },
        ],
      },
    ],
  };
}

/** What `extlb bootstrap` prints for the Gateway, plus the readiness and metrics listeners in front of the admin. */
export function provisionedBootstrap(gw: ProvisionedGateway, settings: ProvisionSettings): JsonObject {
  const base = adsBootstrap(
    { kind: 'Gateway', namespace: gw.namespace, name: gw.name },
    {
      xdsServer: settings.xdsServer,
      adminPort: ADMIN_PORT,
      ...(settings.xdsServerName !== undefined ? { xdsTls: { dir: XDS_IDENTITY.dir, serverName: settings.xdsServerName } } : {}),
    },
  ) as JsonObject;
  const sr = base.static_resources as JsonObject;
  const admin = {
    name: 'extlb-admin',
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'extlb-admin',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: ADMIN_PORT } } } }] }],
    },
  };
  return {
    ...base,
    static_resources: {
      listeners: [adminPath('extlb-ready', READY_PORT, '/ready'), adminPath('extlb-metrics', METRICS_PORT, '/stats/prometheus')],
      clusters: [...(sr.clusters as JsonObject[]), admin],
    },
  };
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

const API = { sa: 'v1', cm: 'v1', deploy: 'apps/v1', svc: 'v1', pdb: 'policy/v1', hpa: 'autoscaling/v2' };

export interface DesiredObjects {
  serviceAccount: JsonObject;
  configMap: JsonObject;
  deployment: JsonObject;
  service: JsonObject;
  podDisruptionBudget?: JsonObject;
  horizontalPodAutoscaler?: JsonObject;
}

/**
 * Every object of a provisioned Gateway. `replicas` is left out when an autoscaler (the
 * parameters' or a user's, `autoscaled`) owns the count.
 */
export function desiredObjects(gw: ProvisionedGateway, p: Effective, settings: ProvisionSettings, autoscaled: boolean): DesiredObjects {
  const name = provisionedName(gw.name, gw.className);
  const bootstrap = stringify(provisionedBootstrap(gw, settings), { lineWidth: 0 });
  const configMap = { apiVersion: API.cm, kind: 'ConfigMap', metadata: metadata(gw), data: { 'bootstrap.yaml': bootstrap } };
  const serviceAccount = { apiVersion: API.sa, kind: 'ServiceAccount', metadata: metadata(gw), automountServiceAccountToken: false };
  const ports = [...new Map(gw.listeners.map((l) => [l.port, l])).values()].sort((a, b) => a.port - b.port);
  const podAnnotations: Record<string, string> = {
    ...gw.infrastructure.annotations,
    ...(p.pod.annotations ?? {}),
    'prometheus.io/scrape': 'true',
    'prometheus.io/port': String(METRICS_PORT),
    'prometheus.io/path': '/stats/prometheus',
  };
  const podSpec: JsonObject = {
    serviceAccountName: name,
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: p.drainSeconds + 10,
    securityContext: { runAsNonRoot: true, runAsUser: 101, runAsGroup: 101, fsGroup: 101, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'envoy',
        image: p.image,
        command: ['/usr/local/bin/envoy'],
        env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        args: [
          '--config-path=/etc/envoy/bootstrap.yaml',
          '--service-node=$(POD_NAME)',
          '--disable-hot-restart',
          `--concurrency=${p.concurrency}`,
          `--log-level=${p.logLevel}`,
          `--drain-time-s=${p.drainSeconds}`,
          '--drain-strategy=gradual',
        ],
        ports: [
          ...ports.map((l) => ({ name: `listener-${l.port}`, containerPort: l.port, protocol: l.protocol === 'UDP' ? 'UDP' : 'TCP' })),
          { name: 'ready', containerPort: READY_PORT, protocol: 'TCP' },
          { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
        ],
        readinessProbe: { httpGet: { path: '/ready', port: 'ready' }, periodSeconds: 5, failureThreshold: 2 },
        // Leave the Service's endpoints, then drain: Envoy's drain listeners close connections gradually.
        lifecycle: { preStop: { sleep: { seconds: 5 } } },
        resources: { requests: p.resources.requests, limits: p.resources.limits },
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        volumeMounts: [
          { name: 'bootstrap', mountPath: '/etc/envoy', readOnly: true },
          { name: 'xds-identity', mountPath: XDS_IDENTITY.dir, readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: 'bootstrap', configMap: { name } },
      // 0440: the owner and the group (fsGroup 101, Envoy).
      { name: 'xds-identity', secret: { secretName: `${gw.name}-xds-identity`, defaultMode: 0o440 } },
    ],
  };
  const pod = p.pod;
  if (pod.nodeSelector) podSpec.nodeSelector = pod.nodeSelector;
  if (pod.tolerations) podSpec.tolerations = pod.tolerations;
  if (pod.affinity) podSpec.affinity = pod.affinity;
  if (pod.topologySpreadConstraints) podSpec.topologySpreadConstraints = pod.topologySpreadConstraints;
  if (pod.priorityClassName) podSpec.priorityClassName = pod.priorityClassName;
  const template = {
    metadata: { labels: { ...(pod.labels ?? {}), ...labels(gw), 'extlb.dev/xds-client': 'true' }, annotations: podAnnotations },
    spec: podSpec,
  };
  (template.metadata.annotations as Record<string, string>)[CONFIG_HASH_ANNOTATION] = hash({ template, bootstrap });
  const deploymentSpec: JsonObject = { selector: { matchLabels: selectorLabels(gw) }, template };
  if (!autoscaled && p.replicas !== undefined) deploymentSpec.replicas = p.replicas;
  const deployment = { apiVersion: API.deploy, kind: 'Deployment', metadata: metadata(gw), spec: deploymentSpec };
  const serviceSpec: JsonObject = {
    type: p.service.type,
    selector: selectorLabels(gw),
    ports: ports.map((l) => ({ name: `listener-${l.port}`, port: l.port, targetPort: l.port, protocol: l.protocol === 'UDP' ? 'UDP' : 'TCP' })),
  };
  if (p.service.externalTrafficPolicy) serviceSpec.externalTrafficPolicy = p.service.externalTrafficPolicy;
  if (p.service.loadBalancerClass) serviceSpec.loadBalancerClass = p.service.loadBalancerClass;
  // Static addresses a Service can hold: one IP as its load balancer's or cluster IP request.
  const ips = gw.addresses.filter((a) => a.type === 'IPAddress' && a.value !== undefined).map((a) => a.value as string);
  if (ips.length > 0) {
    if (p.service.type === 'LoadBalancer') serviceSpec.loadBalancerIP = ips[0];
    else serviceSpec.externalIPs = ips;
  }
  const service = { apiVersion: API.svc, kind: 'Service', metadata: metadata(gw, p.service.annotations), spec: serviceSpec };
  const out: DesiredObjects = { serviceAccount, configMap, deployment, service };
  if (p.podDisruptionBudget) {
    out.podDisruptionBudget = {
      apiVersion: API.pdb,
      kind: 'PodDisruptionBudget',
      metadata: metadata(gw),
      spec: { ...p.podDisruptionBudget, selector: { matchLabels: selectorLabels(gw) } },
    };
  }
  if (p.autoscaling) {
    out.horizontalPodAutoscaler = {
      apiVersion: API.hpa,
      kind: 'HorizontalPodAutoscaler',
      metadata: metadata(gw),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        minReplicas: p.autoscaling.minReplicas,
        maxReplicas: p.autoscaling.maxReplicas,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: p.autoscaling.targetCPUUtilizationPercentage } } },
        ],
      },
    };
  }
  return out;
}
