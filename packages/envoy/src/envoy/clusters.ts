// Envoy clusters: one per backend — its endpoints (static, DNS or EDS), its load-balancing policy,
// and for an External backend the override_host policy that follows the picker's endpoint list —
// and one per picker set.
import type { External, LoadBalancer } from '../read/index.js';
import type { HostPort } from '../resolve/endpoints.js';
import type { Backend, PickerSet } from '../resolve/index.js';
import type { JsonObject } from '../json.js';
import { type BuildContext, serviceHost } from './context.js';
import { envoyDuration } from './duration.js';
import { EPP, NAME, TYPE } from './names.js';

function socket(h: HostPort): JsonObject {
  return { address: { socket_address: { address: h.address, port_value: h.port } } };
}

/** A ClusterLoadAssignment with one locality of `hosts`. */
export function assignment(cluster: string, hosts: HostPort[]): JsonObject {
  return { cluster_name: cluster, endpoints: hosts.length === 0 ? [] : [{ lb_endpoints: hosts.map((h) => ({ endpoint: socket(h) })) }] };
}

function typed(name: string, type: string, config: JsonObject = {}): JsonObject {
  return { typed_extension_config: { name, typed_config: { '@type': type, ...config } } };
}

function slowStart(lb: LoadBalancer): JsonObject {
  if (!lb.slowStart) return {};
  return { slow_start_config: { slow_start_window: envoyDuration(lb.slowStart.windowMs), min_weight_percent: { value: lb.slowStart.minWeightPercent } } };
}

const FALLBACK: Record<External['fallback'], [string, string]> = {
  RoundRobin: [NAME.roundRobin, TYPE.roundRobin],
  LeastRequest: [NAME.leastRequest, TYPE.leastRequest],
  Random: [NAME.random, TYPE.random],
};

/** The override_host policy: picker-named endpoints first, in order, then the fallback policy. */
function overrideHostPolicy(ext: External, ctx: BuildContext): JsonObject {
  const metadata = { metadata: { key: EPP.namespace, path: [{ key: EPP.endpointKey }] } };
  const header = { header: EPP.header };
  const sources = ext.endpointSource === 'Metadata' ? [metadata] : ext.endpointSource === 'Header' ? [header] : [metadata, header];
  const [fallbackName, fallbackType] = FALLBACK[ext.fallback];
  const config: JsonObject = { override_host_sources: sources };
  if (ext.reportServedEndpoint && ctx.options.envoy === '1.38') config.selected_host_key = { key: EPP.namespace, path: [{ key: EPP.servedKey }] };
  config.fallback_policy = { policies: [typed(fallbackName, fallbackType)] };
  return { policies: [typed(NAME.overrideHost, TYPE.overrideHost, config)] };
}

function lbPolicy(lb: LoadBalancer, ctx: BuildContext): JsonObject | undefined {
  switch (lb.type) {
    case 'External':
      return lb.external ? overrideHostPolicy(lb.external, ctx) : undefined;
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

function http2Options(): JsonObject {
  return { [NAME.httpProtocolOptions]: { '@type': TYPE.httpProtocolOptions, explicit_http_config: { http2_protocol_options: {} } } };
}

/** The headless Service the dns mode resolves: the Service itself when headless, else a pool's shadow. */
function dnsTarget(b: Backend, ctx: BuildContext): { host: string; ports: number[] } | undefined {
  const src = b.endpoints;
  if (src.type === 'service') return src.headless ? { host: serviceHost(ctx, src.namespace, src.service), ports: [src.targetPort] } : undefined;
  ctx.manifests.set(`${src.namespace}/${src.shadowService}`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: src.shadowService,
      namespace: src.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'extlb' },
      annotations: { 'extlb.dev/pool': `${b.kind}/${b.ref.name}` },
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: false,
      selector: src.selector,
      ports: src.targetPorts.map((port) => ({ name: `tcp-${port}`, port, targetPort: port, protocol: 'TCP' })),
    },
  });
  return { host: serviceHost(ctx, src.namespace, src.shadowService), ports: src.targetPorts };
}

function edsConfig(cluster: string): JsonObject {
  return { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: cluster };
}

/** ORIGINAL_DST dials whatever single address the picker names: no host set, no fallback list. */
function originalDst(cluster: JsonObject, b: Backend, ext: External, ctx: BuildContext): void {
  cluster.type = 'ORIGINAL_DST';
  cluster.lb_policy = 'CLUSTER_PROVIDED';
  const dst: JsonObject = {};
  if (ext.endpointSource !== 'Header') dst.metadata_key = { key: EPP.namespace, path: [{ key: EPP.endpointKey }] };
  if (ext.endpointSource !== 'Metadata') {
    dst.use_http_header = true;
    dst.http_header_name = EPP.header;
  }
  cluster.original_dst_lb_config = dst;
  ctx.diags.warning(
    'LegacyNoFallback',
    `legacy mode: ${b.key} is an ORIGINAL_DST cluster that reads one endpoint; it has no fallback list (retries reuse the same endpoint), no fallback policy and no membership check`,
    b.ref,
  );
}

/** The cluster of a backend. */
export function backendCluster(b: Backend, ctx: BuildContext): JsonObject {
  const { envoy, endpoints } = ctx.options;
  const cluster: JsonObject = { name: b.key, connect_timeout: envoyDuration(ctx.options.connectTimeoutMs) };
  const ext = b.lb.type === 'External' ? b.lb.external : undefined;
  const legacy = ext !== undefined && envoy === 'legacy';
  const dns = !legacy && endpoints === 'dns' ? dnsTarget(b, ctx) : undefined;
  if (ext && legacy) originalDst(cluster, b, ext, ctx);
  else if (endpoints === 'eds') {
    cluster.type = 'EDS';
    cluster.eds_cluster_config = edsConfig(b.key);
    ctx.assignments.set(b.key, assignment(b.key, ctx.endpoints.backend(b)));
  } else if (dns) {
    cluster.type = 'STRICT_DNS';
    cluster.load_assignment = {
      cluster_name: b.key,
      endpoints: [{ lb_endpoints: dns.ports.map((port) => ({ endpoint: socket({ address: dns.host, port }) })) }],
    };
  } else {
    if (endpoints === 'dns') ctx.diags.info('StaticEndpoints', `dns mode: ${b.key} is not headless, so its endpoints are listed statically`, b.ref);
    const hosts = ctx.endpoints.backend(b);
    if (hosts.length === 0) ctx.diags.warning('NoEndpoints', `${b.key} has no ready endpoints in the input; Envoy answers 503 for it`, b.ref);
    cluster.type = 'STATIC';
    cluster.load_assignment = assignment(b.key, hosts);
  }
  if (ext?.failureMode === 'FailOpen' && ext.requestBodyMode === 'FullDuplexStreamed' && envoy !== '1.38') {
    ctx.diags.info(
      'FailOpenStreaming',
      'FailOpen with a FullDuplexStreamed request body needs Envoy 1.35.1 or newer (1.35.0 refuses it), and fails open only until the first body chunk reached the picker',
      b.ref,
    );
  }
  if (ext?.reportServedEndpoint && envoy !== '1.38') {
    ctx.diags.warning('ServedEndpointNeeds138', `reportServedEndpoint needs Envoy 1.38 (selected_host_key); it is left out for target ${envoy}`, b.ref);
  }
  if (cluster.type !== 'ORIGINAL_DST') {
    const policy = b.lbFrom === 'default' ? undefined : lbPolicy(b.lb, ctx);
    if (policy) cluster.load_balancing_policy = policy;
  }
  if (b.h2c) cluster.typed_extension_protocol_options = http2Options();
  return cluster;
}

/** The cluster of an endpoint picker set: gRPC over HTTP/2, health-checked, one priority per ref. */
export function pickerCluster(set: PickerSet, ctx: BuildContext): JsonObject {
  return {
    name: set.key,
    type: 'STRICT_DNS',
    connect_timeout: envoyDuration(ctx.options.connectTimeoutMs),
    load_assignment: {
      cluster_name: set.key,
      endpoints: set.pickers.map((picker, priority) => ({
        priority,
        lb_endpoints: [{ endpoint: socket({ address: serviceHost(ctx, picker.namespace, picker.service), port: picker.port }) }],
      })),
    },
    health_checks: [{ timeout: '1s', interval: '5s', unhealthy_threshold: 2, healthy_threshold: 1, grpc_health_check: { service_name: EPP.healthService } }],
    typed_extension_protocol_options: http2Options(),
  };
}
