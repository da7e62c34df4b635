// Envoy clusters for backends: endpoints (static, DNS or EDS), the load-balancing policy, and the
// override_host policy that makes an External backend follow its picker's endpoint list.
import type { Backend, Pickers } from './backends.js';
import type { Diagnostics } from './diagnostics.js';
import { envoyDuration } from './duration.js';
import { EPP, NAME, TYPE } from './envoy-names.js';
import { compare } from './diagnostics.js';
import { key, type Inputs, type Pod } from './model.js';
import type { External, LoadBalancer } from './loadbalancer.js';
import type { Json } from './read.js';

export type EnvoyTarget = '1.35' | '1.38' | 'legacy';
export type EndpointMode = 'static' | 'dns' | 'eds';

export interface ClusterContext {
  inputs: Inputs;
  diags: Diagnostics;
  envoy: EnvoyTarget;
  endpoints: EndpointMode;
  connectTimeoutMs: number;
  clusterDomain: string;
  /** Headless Services the dns mode needs, emitted as manifests next to the Envoy config. */
  manifests: Map<string, Json>;
  /** ClusterLoadAssignments the eds mode needs. */
  assignments: Map<string, Json>;
  /** Ready Pods with an IP by namespace and `key=value` label, built on first use. */
  podIndex?: Map<string, Map<string, Pod[]>>;
}

interface HostPort {
  address: string;
  port: number;
}

function socket(h: HostPort): Json {
  return { address: { socket_address: { address: h.address, port_value: h.port } } };
}

function assignment(cluster: string, hosts: HostPort[]): Json {
  const sorted = [...hosts].sort((a, b) => compare(a.address, b.address) || a.port - b.port);
  return {
    cluster_name: cluster,
    endpoints: sorted.length === 0 ? [] : [{ lb_endpoints: sorted.map((h) => ({ endpoint: socket(h) })) }],
  };
}

function typed(name: string, type: string, config: Json = {}): Json {
  return { typed_extension_config: { name, typed_config: { '@type': type, ...config } } };
}

function slowStart(lb: LoadBalancer): Json {
  if (!lb.slowStart) return {};
  return { slow_start_config: { slow_start_window: envoyDuration(lb.slowStart.windowMs), min_weight_percent: { value: lb.slowStart.minWeightPercent } } };
}

const FALLBACK: Record<External['fallback'], [string, string]> = {
  RoundRobin: [NAME.roundRobin, TYPE.roundRobin],
  LeastRequest: [NAME.leastRequest, TYPE.leastRequest],
  Random: [NAME.random, TYPE.random],
};

/** The override_host policy: picker-named endpoints first, in order, then the fallback policy. */
export function overrideHostPolicy(ext: External, envoy: EnvoyTarget): Json {
  const metadata = { metadata: { key: EPP.namespace, path: [{ key: EPP.endpointKey }] } };
  const header = { header: EPP.header };
  const sources = ext.endpointSource === 'Metadata' ? [metadata] : ext.endpointSource === 'Header' ? [header] : [metadata, header];
  const [fallbackName, fallbackType] = FALLBACK[ext.fallback];
  const config: Json = { override_host_sources: sources };
  if (ext.reportServedEndpoint && envoy === '1.38') config.selected_host_key = { key: EPP.namespace, path: [{ key: EPP.servedKey }] };
  config.fallback_policy = { policies: [typed(fallbackName, fallbackType)] };
  return { policies: [typed(NAME.overrideHost, TYPE.overrideHost, config)] };
}

function lbPolicy(lb: LoadBalancer, envoy: EnvoyTarget): Json | undefined {
  switch (lb.type) {
    case 'External':
      return lb.external ? overrideHostPolicy(lb.external, envoy) : undefined;
    case 'RoundRobin':
      return { policies: [typed(NAME.roundRobin, TYPE.roundRobin, slowStart(lb))] };
    case 'LeastRequest':
      return { policies: [typed(NAME.leastRequest, TYPE.leastRequest, slowStart(lb))] };
    case 'Random':
      return { policies: [typed(NAME.random, TYPE.random)] };
    case 'RingHash':
      return { policies: [typed(NAME.ringHash, TYPE.ringHash)] };
    case 'Maglev':
      return { policies: [typed(NAME.maglev, TYPE.maglev)] };
  }
}

function http2Options(): Json {
  return {
    [NAME.httpProtocolOptions]: { '@type': TYPE.httpProtocolOptions, explicit_http_config: { http2_protocol_options: {} } },
  };
}

function matchesSelector(pod: Pod, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => pod.meta.labels[k] === v);
}

/**
 * Pods a selector matches. Scanning every Pod of the namespace for every pool is quadratic in a
 * large estate, so Pods are indexed by label once and only those carrying the first label are checked.
 */
function selectPods(ctx: ClusterContext, namespace: string, selector: Record<string, string>): Pod[] {
  if (!ctx.podIndex) {
    ctx.podIndex = new Map();
    for (const [ns, pods] of ctx.inputs.pods) {
      const byLabel = new Map<string, Pod[]>();
      for (const pod of pods) {
        if (!pod.ready || !pod.ip) continue;
        for (const [k, v] of Object.entries(pod.meta.labels)) {
          const list = byLabel.get(`${k}=${v}`);
          if (list) list.push(pod);
          else byLabel.set(`${k}=${v}`, [pod]);
        }
      }
      ctx.podIndex.set(ns, byLabel);
    }
  }
  const [first] = Object.entries(selector);
  if (!first) return [];
  return (ctx.podIndex.get(namespace)?.get(`${first[0]}=${first[1]}`) ?? []).filter((p) => matchesSelector(p, selector));
}

/** `ip:port` endpoints of a backend from the inputs: ready Pods for pools, EndpointSlices for Services. */
function staticHosts(b: Backend, ctx: ClusterContext): HostPort[] {
  if (b.pool) {
    const pool = b.pool;
    return selectPods(ctx, pool.meta.namespace, pool.selector).flatMap((p) => pool.targetPorts.map((port) => ({ address: p.ip ?? '', port })));
  }
  const svc = b.service;
  const sp = b.servicePort;
  if (!svc || !sp) return [];
  const hosts: HostPort[] = [];
  for (const slice of ctx.inputs.slicesByService.get(key(svc.meta.namespace, svc.meta.name)) ?? []) {
    const port = slice.ports.find((p) => p.name === (sp.name ?? ''));
    if (!port) continue;
    for (const address of slice.addresses) hosts.push({ address, port: port.port });
  }
  // One endpoint may appear in several slices while they are being rebalanced.
  const seen = new Set<string>();
  return hosts.filter((h) => {
    const k = `${h.address}:${h.port}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The headless Service the dns mode resolves: the pool's Pods on each target port. */
function shadowService(b: Backend, ctx: ClusterContext): { host: string; ports: number[] } | undefined {
  if (b.service?.headless && b.servicePort) {
    const tp = b.servicePort.targetPort;
    return { host: `${b.service.meta.name}.${b.service.meta.namespace}.svc.${ctx.clusterDomain}`, ports: [typeof tp === 'number' ? tp : b.servicePort.port] };
  }
  if (!b.pool) return undefined;
  const pool = b.pool;
  const name = `${pool.meta.name}-extlb`.slice(0, 63);
  ctx.manifests.set(`${pool.meta.namespace}/${name}`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: pool.meta.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'extlb' },
      annotations: { 'extlb.dev/pool': `${pool.kind}/${pool.meta.name}` },
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: false,
      selector: pool.selector,
      ports: pool.targetPorts.map((port) => ({ name: `tcp-${port}`, port, targetPort: port, protocol: 'TCP' })),
    },
  });
  return { host: `${name}.${pool.meta.namespace}.svc.${ctx.clusterDomain}`, ports: pool.targetPorts };
}

function edsConfig(cluster: string): Json {
  return { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: cluster };
}

/** The cluster of a backend. */
export function backendCluster(b: Backend, ctx: ClusterContext): Json {
  const cluster: Json = { name: b.cluster, connect_timeout: envoyDuration(ctx.connectTimeoutMs) };
  const ext = b.lb.type === 'External' ? b.lb.external : undefined;
  const legacy = ext !== undefined && ctx.envoy === 'legacy';
  const shadow = !legacy && ctx.endpoints === 'dns' ? shadowService(b, ctx) : undefined;
  if (ext && legacy) {
    // ORIGINAL_DST dials whatever single address the picker names: no host set, no fallback list.
    cluster.type = 'ORIGINAL_DST';
    cluster.lb_policy = 'CLUSTER_PROVIDED';
    const dst: Json = {};
    if (ext.endpointSource !== 'Header') dst.metadata_key = { key: EPP.namespace, path: [{ key: EPP.endpointKey }] };
    if (ext.endpointSource !== 'Metadata') {
      dst.use_http_header = true;
      dst.http_header_name = EPP.header;
    }
    cluster.original_dst_lb_config = dst;
    ctx.diags.warning(
      'LegacyNoFallback',
      `legacy mode: ${b.cluster} is an ORIGINAL_DST cluster that reads one endpoint; it has no fallback list (retries reuse the same endpoint), no fallback policy and no membership check`,
      b.ref,
    );
  } else if (ctx.endpoints === 'eds') {
    cluster.type = 'EDS';
    cluster.eds_cluster_config = edsConfig(b.cluster);
    ctx.assignments.set(b.cluster, assignment(b.cluster, staticHosts(b, ctx)));
  } else if (shadow) {
    cluster.type = 'STRICT_DNS';
    cluster.load_assignment = {
      cluster_name: b.cluster,
      endpoints: [{ lb_endpoints: shadow.ports.map((port) => ({ endpoint: socket({ address: shadow.host, port }) })) }],
    };
  } else {
    if (ctx.endpoints === 'dns') ctx.diags.info('StaticEndpoints', `dns mode: ${b.cluster} is not headless, so its endpoints are listed statically`, b.ref);
    const hosts = staticHosts(b, ctx);
    if (hosts.length === 0) ctx.diags.warning('NoEndpoints', `${b.cluster} has no ready endpoints in the input; Envoy answers 503 for it`, b.ref);
    cluster.type = 'STATIC';
    cluster.load_assignment = assignment(b.cluster, hosts);
  }
  if (ext?.failureMode === 'FailOpen' && ext.requestBodyMode === 'FullDuplexStreamed' && ctx.envoy !== '1.38') {
    ctx.diags.info(
      'FailOpenStreaming',
      'FailOpen with a FullDuplexStreamed request body needs Envoy 1.35.1 or newer (1.35.0 refuses it), and fails open only until the first body chunk reached the picker',
      b.ref,
    );
  }
  if (ext?.reportServedEndpoint && ctx.envoy !== '1.38') {
    ctx.diags.warning('ServedEndpointNeeds138', `reportServedEndpoint needs Envoy 1.38 (selected_host_key); it is left out for target ${ctx.envoy}`, b.ref);
  }
  if (cluster.type !== 'ORIGINAL_DST') {
    const policy = b.lbFrom === 'default' ? undefined : lbPolicy(b.lb, ctx.envoy);
    if (policy) cluster.load_balancing_policy = policy;
  }
  if (b.h2c) cluster.typed_extension_protocol_options = http2Options();
  return cluster;
}

/** The cluster of an endpoint picker set: gRPC over HTTP/2, health-checked, one priority per ref. */
export function pickerCluster(p: Pickers, serviceHost: (svc: Pickers['resolved'][number]['service']) => string, connectTimeoutMs: number): Json {
  const name = p.cluster ?? '';
  return {
    name,
    type: 'STRICT_DNS',
    connect_timeout: envoyDuration(connectTimeoutMs),
    load_assignment: {
      cluster_name: name,
      endpoints: p.resolved.map((picker, priority) => ({
        priority,
        lb_endpoints: [{ endpoint: socket({ address: serviceHost(picker.service), port: picker.port }) }],
      })),
    },
    health_checks: [
      {
        timeout: '1s',
        interval: '5s',
        unhealthy_threshold: 2,
        healthy_threshold: 1,
        grpc_health_check: { service_name: EPP.healthService },
      },
    ],
    typed_extension_protocol_options: http2Options(),
  };
}
