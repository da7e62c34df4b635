// Envoy clusters: one per backend — its endpoints (static, DNS or EDS), its load-balancing policy,
// and for an External backend the override_host policy that follows the picker's endpoint list —
// and one per picker set.
import { EPP } from '@extlb/types';
import { FAILURE_MODE_METADATA } from './access-log.js';
import type { External, LoadBalancer } from '../read/index.js';
import type { HostPort } from '../resolve/endpoints.js';
import { type Backend, type BackendTls, type Picker, type PickerSet, shadowServiceName } from '../resolve/index.js';
import { type BuildContext, serviceHost } from './context.js';
import { envoyDuration } from './proto-duration.js';
import { clusterStatName, NAME, TYPE } from './names.js';
import { sdsCertificates } from './tls.js';
import type { Any, ClusterV3, CoreV3, EndpointV3, LbCommonV3, MetadataV3, OverrideHostV3, TlsV3 } from './types.js';

function socket(h: HostPort): EndpointV3.Endpoint {
  return { address: { socket_address: { address: h.address, port_value: h.port } } };
}

/** A ClusterLoadAssignment with one locality of `hosts`. */
export function assignment(cluster: string, hosts: HostPort[]): EndpointV3.ClusterLoadAssignment {
  return { cluster_name: cluster, endpoints: hosts.length === 0 ? [] : [{ lb_endpoints: hosts.map((h) => ({ endpoint: socket(h) })) }] };
}

function typed(name: string, typedConfig: Any): ClusterV3.LoadBalancingPolicy_Policy {
  return { typed_extension_config: { name, typed_config: typedConfig } };
}

function slowStart(lb: LoadBalancer): { slow_start_config?: LbCommonV3.SlowStartConfig } {
  if (!lb.slowStart) return {};
  return { slow_start_config: { slow_start_window: envoyDuration(lb.slowStart.windowMs), min_weight_percent: { value: lb.slowStart.minWeightPercent } } };
}

const FALLBACK: Record<External['fallback'], [string, typeof TYPE.roundRobin | typeof TYPE.leastRequest | typeof TYPE.random]> = {
  RoundRobin: [NAME.roundRobin, TYPE.roundRobin],
  LeastRequest: [NAME.leastRequest, TYPE.leastRequest],
  Random: [NAME.random, TYPE.random],
};

/** The override_host policy: picker-named endpoints first, in order, then the fallback policy. */
function overrideHostPolicy(ext: External, ctx: BuildContext): ClusterV3.LoadBalancingPolicy {
  const metadata: OverrideHostV3.OverrideHost_OverrideHostSource = { metadata: { key: EPP.namespace, path: [{ key: EPP.endpointKey }] } };
  const header: OverrideHostV3.OverrideHost_OverrideHostSource = { header: EPP.header };
  const sources = ext.endpointSource === 'Metadata' ? [metadata] : ext.endpointSource === 'Header' ? [header] : [metadata, header];
  const [fallbackName, fallbackType] = FALLBACK[ext.fallback];
  const served: MetadataV3.MetadataKey | undefined =
    ext.reportServedEndpoint && ctx.options.envoy === '1.38' ? { key: EPP.namespace, path: [{ key: EPP.servedKey }] } : undefined;
  return {
    policies: [
      typed(NAME.overrideHost, {
        '@type': TYPE.overrideHost,
        override_host_sources: sources,
        ...(served ? { selected_host_key: served } : {}),
        fallback_policy: { policies: [typed(fallbackName, { '@type': fallbackType })] },
      }),
    ],
  };
}

function lbPolicy(lb: LoadBalancer, ctx: BuildContext): ClusterV3.LoadBalancingPolicy | undefined {
  switch (lb.type) {
    case 'External':
      return lb.external ? overrideHostPolicy(lb.external, ctx) : undefined;
    case 'RoundRobin':
      return { policies: [typed(NAME.roundRobin, { '@type': TYPE.roundRobin, ...slowStart(lb) })] };
    case 'LeastRequest':
      return { policies: [typed(NAME.leastRequest, { '@type': TYPE.leastRequest, ...slowStart(lb) })] };
    case 'Random':
      return { policies: [typed(NAME.random, { '@type': TYPE.random })] };
    case 'RingHash':
      return { policies: [typed(NAME.ringHash, { '@type': TYPE.ringHash })] };
    case 'Maglev':
      return { policies: [typed(NAME.maglev, { '@type': TYPE.maglev })] };
  }
}

/** Envoy's SAN matcher for one name; a `*.` name matches one label, as certificate wildcards do. */
function sanMatcher(san: BackendTls['subjectAltNames'][number]): TlsV3.SubjectAltNameMatcher {
  if (san.type === 'DNS' && san.value.startsWith('*.')) {
    return { san_type: 'DNS', matcher: { safe_regex: { regex: `[^.]+${san.value.slice(1).replaceAll('.', '\\.')}` } } };
  }
  return { san_type: san.type, matcher: { exact: san.value } };
}

/**
 * TLS to a backend (BackendTLSPolicy): the SNI, the trusted CAs, and the names the certificate must
 * carry; the Gateway's client certificate, when it has one, over SDS. An HTTP/2 backend is offered
 * h2 only, so the connection never settles on HTTP/1.1.
 */
function upstreamTls(tls: BackendTls, http2: boolean, ctx: BuildContext): CoreV3.TransportSocket {
  const trusted: CoreV3.DataSource = 'pem' in tls.trust ? { inline_string: tls.trust.pem } : { filename: ctx.options.systemCaFile };
  const common: TlsV3.CommonTlsContext = {};
  if (http2) common.alpn_protocols = ['h2'];
  const client = ctx.gateway.backendClientCertificate;
  const certificates = client
    ? sdsCertificates([client], ctx, { code: 'InvalidClientCertificateRef', consequence: 'backends are connected to without a client certificate' })
    : [];
  if (certificates.length > 0) common.tls_certificate_sds_secret_configs = certificates;
  common.validation_context = { trusted_ca: trusted, match_typed_subject_alt_names: tls.subjectAltNames.map(sanMatcher) };
  return { name: NAME.tls, typed_config: { '@type': TYPE.upstreamTls, common_tls_context: common, sni: tls.sni } };
}

function http2Options(): NonNullable<ClusterV3.Cluster['typed_extension_protocol_options']> {
  return { [NAME.httpProtocolOptions]: { '@type': TYPE.httpProtocolOptions, explicit_http_config: { http2_protocol_options: {} } } };
}

/** A headless Service that selects Pods for extlb, emitted beside the config in dns mode. */
function shadowManifest(
  ctx: BuildContext,
  namespace: string,
  name: string,
  owner: string,
  selector: Record<string, string>,
  ports: { name: string; port: number }[],
): void {
  ctx.manifests.set(`${namespace}/${name}`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'extlb' }, annotations: { 'extlb.dev/for': owner } },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: false,
      selector: { ...selector },
      ports: ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.port, protocol: 'TCP' })),
    },
  });
}

/** The headless Service the dns mode resolves: the Service itself when headless, else a pool's shadow. */
function dnsTarget(b: Backend, ctx: BuildContext): { host: string; ports: number[] } | undefined {
  const src = b.endpoints;
  if (src.type === 'service') return src.headless ? { host: serviceHost(ctx, src.namespace, src.service), ports: [src.targetPort] } : undefined;
  shadowManifest(
    ctx,
    src.namespace,
    src.shadowService,
    `${b.kind}/${b.ref.name}`,
    src.selector,
    src.targetPorts.map((port) => ({ name: `tcp-${port}`, port })),
  );
  return { host: serviceHost(ctx, src.namespace, src.shadowService), ports: src.targetPorts };
}

function edsConfig(cluster: string): ClusterV3.Cluster_EdsClusterConfig {
  return { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: cluster };
}

/** ORIGINAL_DST dials whatever single address the picker names: no host set, no fallback list. */
function originalDst(cluster: ClusterV3.Cluster, b: Backend, ext: External, ctx: BuildContext): void {
  cluster.type = 'ORIGINAL_DST';
  cluster.lb_policy = 'CLUSTER_PROVIDED';
  const dst: ClusterV3.Cluster_OriginalDstLbConfig = {};
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

/** Whether a backend's cluster has endpoints of its own (ORIGINAL_DST, in legacy mode, has none). */
function hasEndpoints(b: Backend, ctx: Pick<BuildContext, 'options'>): boolean {
  return !(b.lb.type === 'External' && b.lb.external !== undefined && ctx.options.envoy === 'legacy');
}

/** The ClusterLoadAssignment of a backend's EDS cluster. */
export function backendAssignment(b: Backend, ctx: Pick<BuildContext, 'endpoints' | 'options'>): EndpointV3.ClusterLoadAssignment | undefined {
  return hasEndpoints(b, ctx) ? assignment(b.key, ctx.endpoints.backend(b)) : undefined;
}

/** The endpoints of a picker set, one priority per picker. */
function pickerPriorities(set: PickerSet, hosts: (p: Picker) => HostPort[]): (EndpointV3.LocalityLbEndpoints & { lb_endpoints: EndpointV3.LbEndpoint[] })[] {
  return set.pickers.map((p, priority) => ({ priority, lb_endpoints: hosts(p).map((h) => ({ endpoint: socket(h) })) }));
}

/** The ClusterLoadAssignment of a picker set's EDS cluster. */
export function pickerAssignment(set: PickerSet, ctx: Pick<BuildContext, 'endpoints'>): EndpointV3.ClusterLoadAssignment {
  return { cluster_name: set.key, endpoints: pickerPriorities(set, (p) => ctx.endpoints.picker(p)) };
}

/** The cluster of a backend. */
export function backendCluster(b: Backend, ctx: BuildContext): ClusterV3.Cluster {
  const { envoy, endpoints } = ctx.options;
  const cluster: ClusterV3.Cluster = { name: b.key, ...clusterStatName(b.key), connect_timeout: envoyDuration(ctx.options.connectTimeoutMs) };
  const ext = b.lb.type === 'External' ? b.lb.external : undefined;
  const legacy = !hasEndpoints(b, ctx);
  const dns = !legacy && endpoints === 'dns' ? dnsTarget(b, ctx) : undefined;
  if (ext && legacy) originalDst(cluster, b, ext, ctx);
  else if (endpoints === 'eds') {
    cluster.type = 'EDS';
    cluster.eds_cluster_config = edsConfig(b.key);
    ctx.assignments.set(b.key, backendAssignment(b, ctx) as EndpointV3.ClusterLoadAssignment);
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
    const byProtocol = b.lbFrom !== 'default' && b.lbFrom.kind === 'InferencePool';
    ctx.diags.warning(
      'ServedEndpointNeeds138',
      byProtocol
        ? `the Endpoint Picker Protocol asks the proxy to tell the picker which endpoint served each request, which needs Envoy 1.38 (selected_host_key); for target ${envoy} the picker is never told`
        : `reportServedEndpoint needs Envoy 1.38 (selected_host_key); it is left out for target ${envoy}`,
      b.ref,
    );
  }
  if (cluster.type !== 'ORIGINAL_DST') {
    const policy = b.lbFrom === 'default' ? undefined : lbPolicy(b.lb, ctx);
    if (policy) cluster.load_balancing_policy = policy;
  }
  if (b.tls) cluster.transport_socket = upstreamTls(b.tls, b.h2c, ctx);
  // Read only by the JSON access log's picker_failure_mode, so written only for it.
  if (ext && ctx.gateway.accessLog.format === 'JSON')
    cluster.metadata = { filter_metadata: { [FAILURE_MODE_METADATA.namespace]: { [FAILURE_MODE_METADATA.key]: ext.failureMode } } };
  if (b.h2c) cluster.typed_extension_protocol_options = http2Options();
  return cluster;
}

/** Where Envoy resolves a picker by DNS: a headless Service's own name, or a headless shadow of it. */
function pickerDnsHost(p: Picker, ctx: BuildContext): string | undefined {
  if (p.headless) return serviceHost(ctx, p.namespace, p.service);
  if (!p.selector || Object.keys(p.selector).length === 0) return undefined;
  const name = shadowServiceName('Service', p.service);
  shadowManifest(ctx, p.namespace, name, `Service/${p.service}`, p.selector, [{ name: p.portName || `tcp-${p.targetPort}`, port: p.targetPort }]);
  return serviceHost(ctx, p.namespace, name);
}

/**
 * The cluster of an endpoint picker set: gRPC over HTTP/2, with a gRPC health check on every
 * picker pod, one priority per ref (later refs take over when earlier ones have no healthy pod).
 * Its endpoints come the way the backends' do: listed from EndpointSlices, over EDS, or by DNS.
 *
 * The health check asks for the ext_proc service by name. The protocol (GIE v1.6) gives it the
 * readiness criteria (synced, and the leader when replicas elect one), so followers and pickers
 * still loading get no traffic; `liveness` would admit them. Of the two names with those criteria
 * it is the one GIE v1.6's own picker registers on its ext_proc port, where Envoy checks; it
 * serves no `readiness` there.
 */
export function pickerCluster(set: PickerSet, ctx: BuildContext): ClusterV3.Cluster {
  const priorities = (hosts: (p: Picker) => HostPort[]) => pickerPriorities(set, hosts);
  const dnsHosts = ctx.options.endpoints === 'dns' ? set.pickers.map((p) => pickerDnsHost(p, ctx)) : [];
  let type: ClusterV3.Cluster_DiscoveryType;
  let endpoints: Pick<ClusterV3.Cluster, 'eds_cluster_config' | 'load_assignment'>;
  if (ctx.options.endpoints === 'eds') {
    type = 'EDS';
    endpoints = { eds_cluster_config: edsConfig(set.key) };
    ctx.assignments.set(set.key, pickerAssignment(set, ctx));
  } else if (dnsHosts.length > 0 && dnsHosts.every((h) => h !== undefined)) {
    type = 'STRICT_DNS';
    endpoints = {
      load_assignment: {
        cluster_name: set.key,
        endpoints: priorities((p) => [{ address: dnsHosts[set.pickers.indexOf(p)] as string, port: p.targetPort }]),
      },
    };
  } else {
    if (ctx.options.endpoints === 'dns')
      ctx.diags.info(
        'StaticEndpoints',
        `dns mode: ${set.key} has a picker Service that is neither headless nor selects Pods, so its endpoints are listed statically`,
        set.owner,
      );
    const listed = priorities((p) => ctx.endpoints.picker(p));
    if (listed.every((e) => e.lb_endpoints.length === 0))
      ctx.diags.warning(
        'NoEndpoints',
        `${set.key} has no ready picker endpoints in the input; requests to its backends fail until a picker is ready`,
        set.owner,
      );
    type = 'STATIC';
    endpoints = { load_assignment: { cluster_name: set.key, endpoints: listed } };
  }
  return {
    name: set.key,
    ...clusterStatName(set.key),
    type,
    connect_timeout: envoyDuration(ctx.options.connectTimeoutMs),
    ...endpoints,
    health_checks: [
      { timeout: '1s', interval: '5s', unhealthy_threshold: 2, healthy_threshold: 1, grpc_health_check: { service_name: EPP.healthServices.extProc } },
    ],
    typed_extension_protocol_options: http2Options(),
  };
}
