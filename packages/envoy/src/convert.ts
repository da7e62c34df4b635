// convert(): Gateway API and extlb objects in, Envoy configuration, statuses and diagnostics out.
import { Backends, type Backend } from './backends.js';
import { backendCluster, pickerCluster, type ClusterContext, type EndpointMode, type EnvoyTarget } from './clusters.js';
import { Diagnostics, compare, type Diagnostic } from './diagnostics.js';
import { envoyDuration, parseDuration } from './duration.js';
import { NAME, TYPE } from './envoy-names.js';
import { extProcFilter, stripEndpointHeaderFilter, usesPicker } from './ext-proc.js';
import { attachRoutes, buildListeners, compareHostnames, type Chain } from './gateway.js';
import { readInputs } from './inputs.js';
import type { Gateway, HttpRoute, Match } from './model.js';
import type { Json } from './read.js';
import { comparePrecedence, convertRoute, envoyMatch, type RouteResult, type RuleResult } from './routes.js';
import { gatewayStatus, policyStatuses, poolStatuses, routeStatus } from './status.js';

export interface ConvertOptions {
  /** Target Envoy: `1.35` (override_host), `1.38` (adds served-endpoint reporting) or `legacy` (ORIGINAL_DST). Default 1.35. */
  envoy?: EnvoyTarget;
  /** How backend endpoints reach Envoy: listed (`static`, default), resolved from a headless Service (`dns`), or served over EDS (`eds`). */
  endpoints?: EndpointMode;
  /** The controllerName written in statuses. */
  controllerName?: string;
  /** lastTransitionTime of every condition. Default: the current time. */
  now?: string;
  clusterDomain?: string;
  /** Gateway API durations. */
  connectTimeout?: string;
  perTryTimeout?: string;
  /** Folder with `<namespace>/<secret>/tls.crt` and `tls.key` for HTTPS listeners. */
  certDir?: string;
  /** Convert only Gateways of these classes (all when unset): a cluster may run several controllers. */
  gatewayClassNames?: string[];
}

/** Envoy resources, each list sorted by name. */
export interface EnvoyConfig {
  listeners: Json[];
  routes: Json[];
  clusters: Json[];
  /** ClusterLoadAssignments (eds mode only). */
  endpoints: Json[];
  /** Kubernetes objects the configuration relies on (dns mode: headless Services). */
  manifests: Json[];
}

export interface ConvertResult {
  envoy: EnvoyConfig;
  /** Objects carrying only the status each input object should get, sorted by kind, namespace, name. */
  statuses: Json[];
  diagnostics: Diagnostic[];
}

export const DEFAULT_CONTROLLER = 'extlb.dev/envoy-converter';

function durationOption(value: string | undefined, fallbackMs: number, name: string, diags: Diagnostics): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(value);
  if (ms === undefined) {
    diags.error('InvalidOption', `option ${name} is not a duration: ${value}`);
    return fallbackMs;
  }
  return ms;
}

function byName(a: Json, b: Json): number {
  return compare(String(a.name ?? a.cluster_name ?? ''), String(b.name ?? b.cluster_name ?? ''));
}

function statPrefix(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_');
}

interface Entry {
  route: HttpRoute;
  routeIndex: number;
  rule: RuleResult;
  match: Match;
}

function virtualHosts(chain: Chain, results: Map<HttpRoute, RouteResult>, routeOrder: Map<HttpRoute, number>): Json[] {
  const byHost = new Map<string, Entry[]>();
  for (const { route, hostnames } of chain.attached) {
    const result = results.get(route);
    if (!result) continue;
    for (const host of hostnames) {
      const list = byHost.get(host) ?? [];
      for (const rule of result.rules) for (const match of rule.rule.matches) list.push({ route, routeIndex: routeOrder.get(route) ?? 0, rule, match });
      byHost.set(host, list);
    }
  }
  return [...byHost.keys()].sort(compareHostnames).map((host) => {
    const entries = (byHost.get(host) ?? []).sort(
      (a, b) => comparePrecedence(a.match, b.match) || a.routeIndex - b.routeIndex || a.rule.rule.index - b.rule.rule.index || a.match.index - b.match.index,
    );
    return {
      name: host,
      domains: [host],
      routes: entries.map((e) => ({
        name: `${e.route.meta.namespace}/${e.route.meta.name}/rule/${e.rule.rule.index}/match/${e.match.index}`,
        match: envoyMatch(e.match),
        ...e.rule.action,
      })),
    };
  });
}

/**
 * The HTTP filters of a chain: when a backend reads the endpoint header, strip the client's copy
 * first; then the picker's ext_proc filter (disabled until a route enables it); the router last.
 */
function httpFilters(chain: Chain, used: Backend[], envoy: EnvoyTarget, diags: Diagnostics): Json[] {
  const pickers = used.filter(usesPicker);
  const filters: Json[] = [];
  if (pickers.length > 0) {
    const timeouts = new Set(pickers.map((b) => b.lb.external?.messageTimeoutMs ?? 200));
    const longest = Math.max(...timeouts);
    if (timeouts.size > 1) {
      diags.info(
        'MessageTimeout',
        `listener ${chain.name}: pickers ask for different messageTimeouts; Envoy sets it per listener, so the longest (${envoyDuration(longest)}) is used`,
        chain.gateway.ref,
      );
    }
    const defaultCluster = pickers.map((b) => b.pickers?.cluster ?? '').sort(compare)[0] ?? '';
    const failOpen = envoy === 'legacy' && pickers.every((b) => b.lb.external?.failureMode === 'FailOpen');
    if (envoy === 'legacy' && !failOpen && pickers.some((b) => b.lb.external?.failureMode === 'FailOpen')) {
      diags.warning(
        'FailureModePerListener',
        `legacy mode: Envoy before 1.35 sets failure_mode_allow per listener, and ${chain.name} mixes FailOpen and FailClose pickers, so all fail closed`,
        chain.gateway.ref,
      );
    }
    filters.push(stripEndpointHeaderFilter(), extProcFilter(defaultCluster, longest, failOpen));
  } else if (used.some((b) => b.lb.type === 'External')) {
    // Fail-open backends without a reachable picker still read the endpoint header.
    filters.push(stripEndpointHeaderFilter());
  }
  filters.push({ name: NAME.router, typed_config: { '@type': TYPE.router } });
  return filters;
}

/** One filter chain: TLS for an HTTPS listener, then the HTTP connection manager. */
function filterChain(chain: Chain, filters: Json[], certDir: string): Json {
  const fc: Json = {};
  if (chain.tls) {
    if (chain.tls.hostname) fc.filter_chain_match = { server_names: [chain.tls.hostname] };
    fc.transport_socket = {
      name: NAME.tls,
      typed_config: {
        '@type': TYPE.downstreamTls,
        common_tls_context: {
          tls_certificates: chain.tls.certificateRefs.map((c) => ({
            certificate_chain: { filename: `${certDir}/${c.namespace}/${c.name}/tls.crt` },
            private_key: { filename: `${certDir}/${c.namespace}/${c.name}/tls.key` },
          })),
        },
      },
    };
  }
  fc.filters = [
    {
      name: NAME.hcm,
      typed_config: {
        '@type': TYPE.hcm,
        stat_prefix: statPrefix(chain.name),
        codec_type: 'AUTO',
        rds: { route_config_name: chain.name, config_source: { ads: {}, resource_api_version: 'V3' } },
        http_filters: filters,
        normalize_path: true,
        strip_any_host_port: true,
      },
    },
  ];
  return fc;
}

export function convert(objects: readonly unknown[], options: ConvertOptions = {}): ConvertResult {
  const diags = new Diagnostics();
  const envoy = options.envoy ?? '1.35';
  const endpoints = options.endpoints ?? 'static';
  const clusterDomain = options.clusterDomain ?? 'cluster.local';
  const connectTimeoutMs = durationOption(options.connectTimeout, 5000, 'connectTimeout', diags);
  const perTryTimeoutMs = durationOption(options.perTryTimeout, 15_000, 'perTryTimeout', diags);
  const certDir = options.certDir ?? '/etc/extlb/certs';
  const statusCtx = { controllerName: options.controllerName ?? DEFAULT_CONTROLLER, now: options.now ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z') };

  const inputs = readInputs(objects, diags);
  const classes = options.gatewayClassNames;
  const others = classes ? inputs.gateways.filter((g) => !classes.includes(g.gatewayClassName)) : [];
  if (classes) inputs.gateways = inputs.gateways.filter((g) => classes.includes(g.gatewayClassName));
  const backends = new Backends(inputs, diags, clusterDomain);
  const listeners = buildListeners(inputs, diags);
  const { outcomes, routesOf } = attachRoutes(inputs, listeners, diags, others);
  const routeOptions = {
    perTryTimeoutMs,
    perRouteFailureMode: envoy !== 'legacy',
    authority: (b: Backend) => {
      const first = b.pickers?.resolved[0];
      return first ? `${backends.serviceHost(first.service)}:${first.port}` : '';
    },
  };
  const results = new Map<HttpRoute, RouteResult>();
  const routeOrder = new Map<HttpRoute, number>();
  inputs.routes.forEach((route, i) => {
    routeOrder.set(route, i);
    results.set(route, convertRoute(route, backends, diags, routeOptions));
  });

  const clusterCtx: ClusterContext = { inputs, diags, envoy, endpoints, connectTimeoutMs, clusterDomain, manifests: new Map(), assignments: new Map() };
  const clusters = new Map<string, Json>();
  const pickerSets = new Map<string, Json>();
  const uses = new Map<Backend, Set<Gateway>>();
  const targetUses = new Map<string, Set<Gateway>>();
  const envoyListeners: Json[] = [];
  const routeConfigs: Json[] = [];

  for (const el of listeners) {
    const chains: Json[] = [];
    for (const chain of el.chains) {
      const used: Backend[] = [];
      for (const { route } of chain.attached) for (const rule of results.get(route)?.rules ?? []) used.push(...rule.backends);
      for (const b of used) {
        if (!clusters.has(b.cluster)) clusters.set(b.cluster, backendCluster(b, clusterCtx));
        if (usesPicker(b) && b.pickers?.cluster && !pickerSets.has(b.pickers.cluster)) {
          pickerSets.set(
            b.pickers.cluster,
            pickerCluster(b.pickers, (s) => backends.serviceHost(s), connectTimeoutMs),
          );
        }
        const set = uses.get(b) ?? new Set();
        set.add(chain.gateway);
        uses.set(b, set);
        const tk = `${b.kind}/${b.ref.namespace ?? ''}/${b.ref.name}`;
        const tset = targetUses.get(tk) ?? new Set();
        tset.add(chain.gateway);
        targetUses.set(tk, tset);
      }
      routeConfigs.push({ name: chain.name, virtual_hosts: virtualHosts(chain, results, routeOrder), validate_clusters: false });
      chains.push(filterChain(chain, httpFilters(chain, used, envoy, diags), certDir));
    }
    envoyListeners.push({ name: el.name, address: { socket_address: { address: '0.0.0.0', port_value: el.port } }, filter_chains: chains });
  }

  const statuses: Json[] = inputs.gateways.map((gw) => gatewayStatus(statusCtx, gw, routesOf));
  const invalidOf = (route: HttpRoute) =>
    diags.list.filter((d) => d.code === 'Invalid' && d.object === route.ref).sort((a, b) => compare(a.path ?? '', b.path ?? ''));
  for (const route of inputs.routes) {
    statuses.push(routeStatus(statusCtx, route, outcomes.get(route) ?? [], results.get(route)?.problems ?? [], invalidOf(route)));
  }
  statuses.push(...poolStatuses(statusCtx, uses));
  statuses.push(...policyStatuses(statusCtx, backends, inputs.policies, targetUses, inputs.gateways));
  const statusKey = (s: Json) => {
    const m = s.metadata as { namespace?: string; name?: string };
    return `${String(s.kind)}\u0000${m.namespace ?? ''}\u0000${m.name ?? ''}`;
  };
  statuses.sort((a, b) => compare(statusKey(a), statusKey(b)));

  return {
    envoy: {
      listeners: envoyListeners.sort(byName),
      routes: routeConfigs.sort(byName),
      clusters: [...clusters.values(), ...pickerSets.values()].sort(byName),
      endpoints: [...clusterCtx.assignments.values()].sort(byName),
      manifests: [...clusterCtx.manifests.entries()].sort(([a], [b]) => compare(a, b)).map(([, m]) => m),
    },
    statuses,
    diagnostics: diags.sorted(),
  };
}
