// Rules Envoy's C++ checks when it loads a configuration, beyond what its protos can express
// (each message below is Envoy's own error text where it has one).
import { isIP } from 'node:net';
import { type JsonObject, isObject } from '../json.js';
import { keyPairFault, parseCertificates } from '../pem.js';
import type { ValidationIssue } from './issue.js';
import { domainProblem, headerRules, regexRules, routeActionRules, serverNameRules } from './route-rules.js';

// Envoy identifies filters and options by their config's type, whatever name the config gives them.
const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'envoy.extensions.filters.http.router.v3.Router';
const EXT_PROC = 'envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor';
const EXT_PROC_PER_ROUTE = 'envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute';
const HTTP_PROTOCOL_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
const DOWNSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const UPSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

const LB_FACTORIES = new Set([
  'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
  'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
  'envoy.extensions.load_balancing_policies.random.v3.Random',
  'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
  'envoy.extensions.load_balancing_policies.maglev.v3.Maglev',
  'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost',
]);
const OVERRIDE_HOST = 'envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost';

function typeName(v: unknown): string {
  return isObject(v) && typeof v['@type'] === 'string' ? v['@type'].slice(v['@type'].lastIndexOf('/') + 1) : '';
}

function policies(lbp: unknown): JsonObject[] {
  return isObject(lbp) && Array.isArray(lbp.policies) ? (lbp.policies as JsonObject[]) : [];
}

function list(v: unknown): JsonObject[] {
  return Array.isArray(v) ? (v as JsonObject[]).filter(isObject) : [];
}

/** Rules Envoy's C++ checks when it loads a configuration, which the protos cannot express. */
export class LoadRules {
  private readonly clusters = new Map<string, JsonObject>();
  private readonly routes = new Map<string, JsonObject>();
  private readonly assignments = new Set<string>();
  private readonly secrets = new Map<string, JsonObject>();

  /** `routes` is undefined for a bootstrap (routes inline); `secrets` are static ones, or the SDS list. */
  constructor(
    private readonly issues: ValidationIssue[],
    clusters: JsonObject[],
    endpoints: JsonObject[],
    routes: JsonObject[] | undefined,
    secrets: JsonObject[] = [],
  ) {
    secrets.forEach((sec, i) => {
      this.secrets.set(String(sec.name), sec);
      this.secret(sec, `secrets[${i}]`);
    });
    clusters.forEach((c, i) => {
      const name = String(c.name);
      if (this.clusters.has(name)) this.issue(`clusters[${i}]`, `duplicate cluster name ${name}`);
      this.clusters.set(name, c);
      this.cluster(c, `clusters[${i}]`);
    });
    for (const e of endpoints) this.assignments.add(String(e.cluster_name));
    for (const r of routes ?? []) this.routes.set(String(r.name), r);
    for (const [name, c] of this.clusters) {
      if (c.type === 'EDS' && routes !== undefined && !this.assignments.has(String((c.eds_cluster_config as JsonObject | undefined)?.service_name ?? name))) {
        this.issue(`clusters[${name}]`, `EDS cluster ${name} has no ClusterLoadAssignment`);
      }
    }
  }

  private readonly issue = (path: string, message: string): void => {
    this.issues.push({ path, message });
  };

  run(listeners: JsonObject[], base: string): void {
    const names = new Set<string>();
    listeners.forEach((l, i) => {
      const p = `${base ? `${base}.` : ''}listeners[${i}]`;
      if (names.has(String(l.name))) this.issue(p, `duplicate listener name ${String(l.name)}`);
      names.add(String(l.name));
      const matches = new Set<string>();
      list(l.filter_chains).forEach((fc, j) => {
        const key = JSON.stringify(fc.filter_chain_match ?? {});
        if (matches.has(key)) this.issue(`${p}.filter_chains[${j}]`, 'multiple filter chains with the same matching rules are defined');
        matches.add(key);
        serverNameRules(fc.filter_chain_match, `${p}.filter_chains[${j}].filter_chain_match`, this.issue);
        list(fc.filters).forEach((f, k) => {
          if (typeName(f.typed_config) === HCM && isObject(f.typed_config)) this.hcm(f.typed_config, `${p}.filter_chains[${j}].filters[${k}].typed_config`);
        });
        const ts = isObject(fc.transport_socket) ? fc.transport_socket.typed_config : undefined;
        if (typeName(ts) === DOWNSTREAM_TLS && isObject(ts)) this.downstreamTls(ts, `${p}.filter_chains[${j}].transport_socket.typed_config`);
      });
    });
  }

  /** Inline PEM that Envoy cannot load fails the whole configuration. */
  private secret(sec: JsonObject, p: string): void {
    const tc = isObject(sec.tls_certificate) ? sec.tls_certificate : undefined;
    const chain = isObject(tc?.certificate_chain) ? tc.certificate_chain.inline_string : undefined;
    const key = isObject(tc?.private_key) ? tc.private_key.inline_string : undefined;
    if (typeof chain === 'string' && typeof key === 'string') {
      const fault = keyPairFault(chain, key, { chain: 'certificate_chain', key: 'private_key' });
      if (fault) this.issue(`${p}.tls_certificate`, `Failed to load the certificate of secret ${String(sec.name)}: ${fault}`);
    }
    const ca = isObject(sec.validation_context) && isObject(sec.validation_context.trusted_ca) ? sec.validation_context.trusted_ca.inline_string : undefined;
    if (typeof ca === 'string') this.trustedCa(ca, `${p}.validation_context.trusted_ca`);
  }

  private trustedCa(pem: string, p: string): void {
    const parsed = parseCertificates(pem, 'trusted_ca');
    if (typeof parsed === 'string') this.issue(p, `Failed to load trusted CA certificates: ${parsed}`);
  }

  /** A server context needs a certificate, and each SDS name must be one Envoy has. */
  private downstreamTls(tls: JsonObject, p: string): void {
    const common = isObject(tls.common_tls_context) ? tls.common_tls_context : {};
    const sds = list(common.tls_certificate_sds_secret_configs);
    if (list(common.tls_certificates).length + sds.length === 0) this.issue(`${p}.common_tls_context`, 'No TLS certificates found for server context');
    this.sdsNames(sds, `${p}.common_tls_context.tls_certificate_sds_secret_configs`);
    const vc = isObject(common.validation_context) ? common.validation_context : undefined;
    const ca = isObject(vc?.trusted_ca) ? vc.trusted_ca.inline_string : undefined;
    if (typeof ca === 'string') this.trustedCa(ca, `${p}.common_tls_context.validation_context.trusted_ca`);
  }

  /** Each SDS name must be one Envoy has; one read from a file (path_config_source) is the file's, loaded when Envoy starts. */
  private sdsNames(sds: JsonObject[], p: string): void {
    sds.forEach((c, i) => {
      if (this.secrets.has(String(c.name))) return;
      if (isObject(c.sds_config) && (isObject(c.sds_config.path_config_source) || typeof c.sds_config.path === 'string')) return;
      // Without an sds_config the name is a static secret; with one, the SDS server must send it.
      const message = c.sds_config === undefined ? `Unknown static secret: ${String(c.name)}` : `SDS secret ${String(c.name)} is not among the secrets`;
      this.issue(`${p}[${i}]`, message);
    });
  }

  /** A client context presents one certificate at most, from a secret Envoy has. */
  private upstreamTls(tls: JsonObject, p: string): void {
    const common = isObject(tls.common_tls_context) ? tls.common_tls_context : {};
    const sds = list(common.tls_certificate_sds_secret_configs);
    if (list(common.tls_certificates).length + sds.length > 1) {
      this.issue(`${p}.common_tls_context`, 'Multiple TLS certificates are not supported for client contexts');
    }
    this.sdsNames(sds, `${p}.common_tls_context.tls_certificate_sds_secret_configs`);
  }

  private cluster(c: JsonObject, p: string): void {
    const ts = isObject(c.transport_socket) ? c.transport_socket.typed_config : undefined;
    if (typeName(ts) === UPSTREAM_TLS && isObject(ts)) this.upstreamTls(ts, `${p}.transport_socket.typed_config`);
    const lbp = c.load_balancing_policy;
    if (lbp !== undefined) {
      if (c.lb_subset_config !== undefined) this.issue(p, 'load_balancing_policy cannot be combined with lb_subset_config');
      const ps = policies(lbp);
      if (!ps.some((x) => LB_FACTORIES.has(typeName((x.typed_extension_config as JsonObject | undefined)?.typed_config)))) {
        this.issue(`${p}.load_balancing_policy`, `cluster: didn't find a registered load balancer factory implementation for cluster: '${String(c.name)}'`);
      }
      ps.forEach((x, i) => {
        const tc = (x.typed_extension_config as JsonObject | undefined)?.typed_config;
        if (typeName(tc) === OVERRIDE_HOST && isObject(tc))
          this.overrideHost(c, tc, `${p}.load_balancing_policy.policies[${i}].typed_extension_config.typed_config`);
      });
    }
    if (c.type === 'ORIGINAL_DST') {
      if (c.lb_policy !== 'CLUSTER_PROVIDED') this.issue(p, "Only 'CLUSTER_PROVIDED' is allowed with cluster type 'ORIGINAL_DST'");
      if (c.load_assignment !== undefined) this.issue(p, 'ORIGINAL_DST clusters must have no load assignment configured');
      const odc = isObject(c.original_dst_lb_config) ? c.original_dst_lb_config : {};
      if (odc.http_header_name !== undefined && odc.use_http_header !== true)
        this.issue(`${p}.original_dst_lb_config`, 'Set use_http_header to true if http_header_name is desired.');
    }
    if (c.type === 'STATIC') {
      for (const ep of list((c.load_assignment as JsonObject | undefined)?.endpoints)) {
        for (const lbe of list(ep.lb_endpoints)) {
          const addr = (((lbe.endpoint as JsonObject | undefined)?.address as JsonObject | undefined)?.socket_address as JsonObject | undefined)?.address;
          if (typeof addr !== 'string' || isIP(addr) === 0)
            this.issue(`${p}.load_assignment`, `STATIC cluster endpoint ${JSON.stringify(addr)} is not an IP address`);
        }
      }
    }
    if (list(c.health_checks).some((h) => h.grpc_health_check !== undefined) && !this.http2(c)) {
      this.issue(`${p}.health_checks`, 'gRPC health checks need an HTTP/2 cluster');
    }
  }

  private overrideHost(c: JsonObject, oh: JsonObject, p: string): void {
    if (c.type === 'ORIGINAL_DST') this.issue(p, 'override_host needs a cluster with a host set; ORIGINAL_DST has none');
    const clc = isObject(c.common_lb_config) ? c.common_lb_config : {};
    for (const k of ['zone_aware_lb_config', 'locality_weighted_lb_config', 'consistent_hashing_lb_config']) {
      if (clc[k] !== undefined) this.issue(`${p}`, `load_balancing_policy cannot be combined with common_lb_config.${k}`);
    }
    list(oh.override_host_sources).forEach((s, i) => {
      const has = (s.header !== undefined ? 1 : 0) + (s.metadata !== undefined ? 1 : 0);
      if (has === 0) this.issue(`${p}.override_host_sources[${i}]`, 'Empty override source');
      if (has === 2) this.issue(`${p}.override_host_sources[${i}]`, 'Only one override source must be set');
    });
    const fb = policies(oh.fallback_policy);
    if (
      !fb.some(
        (x) =>
          LB_FACTORIES.has(typeName((x.typed_extension_config as JsonObject | undefined)?.typed_config)) &&
          typeName((x.typed_extension_config as JsonObject | undefined)?.typed_config) !== OVERRIDE_HOST,
      )
    ) {
      this.issue(`${p}.fallback_policy`, "dynamic forwarding LB: didn't find a registered fallback load balancer factory");
    }
  }

  private http2(c: JsonObject): boolean {
    const opts = isObject(c.typed_extension_protocol_options) ? c.typed_extension_protocol_options[HTTP_PROTOCOL_OPTIONS] : undefined;
    const explicit = isObject(opts) && isObject(opts.explicit_http_config) ? opts.explicit_http_config : undefined;
    return explicit?.http2_protocol_options !== undefined;
  }

  private grpcCluster(grpc: unknown, p: string): void {
    const name = isObject(grpc) && isObject(grpc.envoy_grpc) ? grpc.envoy_grpc.cluster_name : undefined;
    if (typeof name !== 'string') return;
    const c = this.clusters.get(name);
    if (!c) this.issue(p, `gRPC service cluster ${name} does not exist`);
    else if (!this.http2(c)) this.issue(p, `gRPC service cluster ${name} must use HTTP/2`);
  }

  private processingMode(pm: unknown, p: string): void {
    if (!isObject(pm)) return;
    for (const dir of ['request', 'response']) {
      if (pm[`${dir}_body_mode`] === 'FULL_DUPLEX_STREAMED' && pm[`${dir}_trailer_mode`] !== 'SEND') {
        this.issue(p, `If the ext_proc filter has the ${dir}_body_mode set to FULL_DUPLEX_STREAMED, then the ${dir}_trailer_mode has to be set to SEND`);
      }
    }
  }

  private hcm(hcm: JsonObject, p: string): void {
    const filters = list(hcm.http_filters);
    const last = filters[filters.length - 1];
    if (!last || typeName(last.typed_config) !== ROUTER) this.issue(`${p}.http_filters`, 'the router filter must be the last HTTP filter');
    filters.forEach((f, i) => {
      const tc = f.typed_config;
      if (typeName(tc) !== EXT_PROC || !isObject(tc)) return;
      const fp = `${p}.http_filters[${i}].typed_config`;
      if ((tc.grpc_service === undefined) === (tc.http_service === undefined))
        this.issue(fp, 'One and only one of grpc_service or http_service must be configured');
      if (tc.disable_clear_route_cache === true && tc.route_cache_action !== undefined && tc.route_cache_action !== 'DEFAULT') {
        this.issue(fp, 'disable_clear_route_cache and route_cache_action can not be set to none-default at the same time.');
      }
      this.processingMode(tc.processing_mode, `${fp}.processing_mode`);
      this.grpcCluster(tc.grpc_service, `${fp}.grpc_service`);
    });
    let rc = hcm.route_config;
    if (rc === undefined && isObject(hcm.rds)) {
      rc = this.routes.get(String(hcm.rds.route_config_name));
      if (!rc) this.issue(`${p}.rds`, `route configuration ${String(hcm.rds.route_config_name)} does not exist`);
    }
    if (isObject(rc)) this.routeConfig(rc, `${p}.route_config`);
  }

  private perFilter(tpfc: unknown, p: string): void {
    if (!isObject(tpfc)) return;
    for (const [name, cfg] of Object.entries(tpfc)) {
      if (typeName(cfg) !== EXT_PROC_PER_ROUTE || !isObject(cfg) || !isObject(cfg.overrides)) continue;
      this.processingMode(cfg.overrides.processing_mode, `${p}[${name}].overrides.processing_mode`);
      this.grpcCluster(cfg.overrides.grpc_service, `${p}[${name}].overrides.grpc_service`);
    }
  }

  private routeConfig(rc: JsonObject, p: string): void {
    headerRules(rc, p, this.issue);
    // Domains are unique across the virtual hosts of one route configuration.
    const domains = new Set<string>();
    list(rc.virtual_hosts).forEach((vh, i) => {
      const vp = `${p}.virtual_hosts[${i}]`;
      headerRules(vh, vp, this.issue);
      (Array.isArray(vh.domains) ? vh.domains : []).forEach((d, k) => {
        const problem = typeof d === 'string' ? domainProblem(d) : undefined;
        if (problem) this.issue(`${vp}.domains[${k}]`, problem);
        if (domains.has(String(d))) this.issue(vp, `Only unique values for domains are permitted. Duplicate entry of domain ${String(d)}`);
        domains.add(String(d));
      });
      list(vh.routes).forEach((r, j) => {
        const rp = `${vp}.routes[${j}]`;
        headerRules(r, rp, this.issue);
        regexRules(r, rp, this.issue);
        routeActionRules(r, rp, this.issue);
        this.perFilter(r.typed_per_filter_config, `${rp}.typed_per_filter_config`);
        const ra = isObject(r.route) ? r.route : undefined;
        if (!ra) return;
        const needCluster = (name: unknown, at: string) => {
          // A route that names a missing cluster on purpose says what to answer instead.
          if (typeof name === 'string' && !this.clusters.has(name) && ra.cluster_not_found_response_code === undefined) {
            this.issue(at, `route refers to cluster ${name}, which does not exist`);
          }
        };
        needCluster(ra.cluster, `${rp}.route.cluster`);
        const wc = isObject(ra.weighted_clusters) ? list(ra.weighted_clusters.clusters) : [];
        wc.forEach((c, k) => {
          const cp = `${rp}.route.weighted_clusters.clusters[${k}]`;
          needCluster(c.name, `${cp}.name`);
          headerRules(c, cp, this.issue);
          this.perFilter(c.typed_per_filter_config, `${cp}.typed_per_filter_config`);
        });
        list(ra.request_mirror_policies).forEach((m, k) => {
          needCluster(m.cluster, `${rp}.route.request_mirror_policies[${k}].cluster`);
        });
      });
    });
  }
}
