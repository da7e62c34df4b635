// What Envoy does with a request after the router matched it (envoy-model.ts), for a backend whose
// endpoint a picker chooses: the weighted cluster the stream's random value selects; the HTTP
// filters in order — header_mutation edits, then each ext_proc filter, enabled or not and with
// which picker cluster once the route's and the weighted entry's ExtProcPerRoute are merged as
// Envoy merges them (the more specific entry's `disabled`, grpc_service and failure_mode_allow
// win); what a picker answer, or an unreachable picker, leads to; then the cluster's
// load-balancing policy — override_host through @extlb/picker's simulator of it, or round robin —
// over the cluster's own hosts, attempt after attempt as the route's retry policy allows, on the
// cluster the route chose: Envoy's router never re-selects the cluster of a route on retry unless
// `retry_policy.refresh_cluster_on_retry` (Envoy 1.39) asks it to, which the model refuses to
// guess at. Like envoy-model.ts it reads only the Envoy JSON and throws on what it does not know.
import { type OverrideHostSource, OverrideHostSimulator, type SimulatedAttempt } from '@extlb/picker';
import type { EnvoyConfig } from '../../src/index.js';
import { type Outcome, type Request, type Upstream, handle } from './envoy-model.js';

type Json = Record<string, any>;
type Forward = Extract<Outcome, { type: 'forward' }>;

const T = 'type.googleapis.com/envoy.extensions.';
const HEADER_MUTATION = `${T}filters.http.header_mutation.v3.HeaderMutation`;
const EXT_PROC = `${T}filters.http.ext_proc.v3.ExternalProcessor`;
const EXT_PROC_PER_ROUTE = `${T}filters.http.ext_proc.v3.ExtProcPerRoute`;
const ROUTER = `${T}filters.http.router.v3.Router`;
const OVERRIDE_HOST = `${T}load_balancing_policies.override_host.v3.OverrideHost`;
const ROUND_ROBIN = `${T}load_balancing_policies.round_robin.v3.RoundRobin`;

/**
 * Retry settings that change when attempts happen, or which host the fallback policy avoids, but
 * not which entry of the picker's list an attempt takes nor which cluster it goes to.
 */
const RETRY_FIELDS_WITHOUT_EFFECT_HERE = ['per_try_timeout', 'retry_back_off', 'retry_host_predicate', 'host_selection_retry_max_attempts'];

/** The picker Envoy asks for one request: the ext_proc filter, merged with the route's per-route configs. */
export interface PickerCall {
  filter: string;
  cluster: string;
  authority: string;
  failureModeAllow: boolean;
  processingMode: Json;
  /** Dynamic-metadata namespaces Envoy accepts from the picker, and sends to it. */
  receiving: string[];
  forwarding: string[];
  routeCacheAction: string;
}

/** A request on its way to a cluster, before any picker answered. */
export interface Plan {
  outcome: Forward;
  /** The weighted cluster the stream's random value selected (the only one for a plain route). */
  upstream: Upstream;
  /** Request headers after the filters before ext_proc (what the picker and the upstream see). */
  headers: Record<string, string>;
  picker?: PickerCall;
}

/** What a picker said to the request headers, as Envoy receives it. */
export type PickerAnswer =
  /** The endpoint list, in dynamic metadata and/or the header. */
  | { metadata?: string; header?: string }
  /** An ImmediateResponse. */
  | { immediate: number }
  /** No picker could be reached: the picker cluster has no endpoint, or the stream failed. */
  | 'unreachable';

export interface Served {
  /** The status the client gets. */
  status: number;
  /** Every upstream attempt, in order, on `cluster`. */
  attempts: SimulatedAttempt[];
  cluster: string;
  /** The host that produced the response, if one did. */
  host?: string;
  /** The served endpoint Envoy records (selected_host_key), and whether the picker gets it on the response path. */
  served?: string;
  reportedToPicker: boolean;
  /** Why, in a sentence, for assertion messages. */
  why: string;
}

function onlyKeys(what: string, o: Json, known: readonly string[]): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new Error(`the endpoint model does not know ${what}.${k}`);
}

/** `ip:port` of every host of a cluster, from its load_assignment or its EDS ClusterLoadAssignment. */
export function clusterHosts(config: EnvoyConfig, name: string): string[] {
  const cluster = (config.clusters as Json[]).find((c) => c.name === name);
  if (!cluster) throw new Error(`no cluster ${name}`);
  let cla: Json | undefined;
  if (cluster.type === 'STATIC') cla = cluster.load_assignment;
  else if (cluster.type === 'EDS') cla = (config.endpoints as Json[]).find((e) => e.cluster_name === (cluster.eds_cluster_config?.service_name ?? name));
  else throw new Error(`the endpoint model knows STATIC and EDS clusters, not ${cluster.type} (${name})`);
  return ((cla?.endpoints ?? []) as Json[]).flatMap((locality) =>
    (locality.lb_endpoints as Json[]).map((e) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}`),
  );
}

/** Envoy's weighted-cluster choice: the stream's random value modulo the total weight, over the entries in order. */
function weightedChoice(upstreams: Upstream[], random: number): Upstream {
  const total = upstreams.reduce((n, u) => n + u.weight, 0);
  let value = random % total;
  for (const u of upstreams) {
    if (value < u.weight) return u;
    value -= u.weight;
  }
  throw new Error('weights add up to nothing');
}

function perRouteConfigs(name: string, outcome: Forward, upstream: Upstream): Json[] {
  // Least specific first: the route, then the weighted cluster entry.
  return [outcome.entry.typed_per_filter_config?.[name], upstream.weighted?.typed_per_filter_config?.[name]].filter((c): c is Json => c !== undefined);
}

/** One ext_proc filter for one request: undefined when it is not in the chain or is disabled. */
function extProcCall(filter: Json, perRoute: Json[]): PickerCall | undefined {
  const base = filter.typed_config as Json;
  onlyKeys(`ext_proc filter ${filter.name}`, base, [
    '@type',
    'grpc_service',
    'failure_mode_allow',
    'processing_mode',
    'message_timeout',
    'metadata_options',
    'route_cache_action',
  ]);
  // A filter disabled by default joins the chain only when the route gives it a config.
  if (filter.disabled === true && perRoute.length === 0) return undefined;
  let disabled = false;
  let grpc: Json = base.grpc_service;
  let failureModeAllow = base.failure_mode_allow === true;
  let processingMode: Json = base.processing_mode ?? {};
  for (const c of perRoute) {
    if (c['@type'] !== EXT_PROC_PER_ROUTE) throw new Error(`the endpoint model does not know per-route config ${c['@type']} for ${filter.name}`);
    onlyKeys('ExtProcPerRoute', c, ['@type', 'disabled', 'overrides']);
    disabled = c.disabled === true;
    if (c.overrides) {
      onlyKeys('ExtProcOverrides', c.overrides, ['processing_mode', 'grpc_service', 'failure_mode_allow']);
      if (c.overrides.processing_mode) processingMode = c.overrides.processing_mode;
      if (c.overrides.grpc_service) grpc = c.overrides.grpc_service;
      if (c.overrides.failure_mode_allow !== undefined) failureModeAllow = c.overrides.failure_mode_allow === true;
    }
  }
  if (disabled) return undefined;
  onlyKeys('grpc_service', grpc, ['envoy_grpc']);
  const options = base.metadata_options ?? {};
  return {
    filter: filter.name,
    cluster: grpc.envoy_grpc.cluster_name,
    authority: grpc.envoy_grpc.authority ?? '',
    failureModeAllow,
    processingMode,
    receiving: options.receiving_namespaces?.untyped ?? [],
    forwarding: options.forwarding_namespaces?.untyped ?? [],
    routeCacheAction: base.route_cache_action ?? 'DEFAULT',
  };
}

/** How a cluster picks a host: override_host (simulated) or round robin, with its state kept across requests. */
interface Balancer {
  /**
   * The hosts of up to `attempts` attempts of one request. They are simulated at once (the override
   * list is consumed once per request, as Envoy's filter state does); the caller uses those the
   * request makes. The one liberty: a fallback round robin also advances for attempts not made.
   */
  pick(headers: Record<string, string>, metadata: Json, attempts: number): SimulatedAttempt[];
  /** Where Envoy records the chosen host (selected_host_key), if it does. */
  selectedHostKey?: { key: string; path: string[] };
}

function roundRobin(hosts: string[]): Balancer {
  let next = 0;
  return {
    pick(_headers, _metadata, attempts) {
      const out: SimulatedAttempt[] = [];
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const host = hosts.length === 0 ? null : (hosts[next++ % hosts.length] as string);
        out.push({ attempt, host, by: host ? 'fallback' : 'none', skipped: [], reason: 'round robin' });
      }
      return out;
    },
  };
}

function fallbackNames(policy: Json): string[] {
  return (policy.policies as Json[]).map((p) => p.typed_extension_config.name as string);
}

function balancer(config: EnvoyConfig, name: string): Balancer {
  const cluster = (config.clusters as Json[]).find((c) => c.name === name) as Json;
  const hosts = clusterHosts(config, name);
  const policy = cluster.load_balancing_policy?.policies?.[0]?.typed_extension_config;
  if (!policy) {
    if (cluster.lb_policy !== undefined && cluster.lb_policy !== 'ROUND_ROBIN')
      throw new Error(`the endpoint model does not know lb_policy ${cluster.lb_policy}`);
    return roundRobin(hosts);
  }
  const tc = policy.typed_config as Json;
  if (tc['@type'] === ROUND_ROBIN) return roundRobin(hosts);
  if (tc['@type'] !== OVERRIDE_HOST) throw new Error(`the endpoint model does not know the load-balancing policy ${tc['@type']} of ${name}`);
  onlyKeys('OverrideHost', tc, ['@type', 'override_host_sources', 'selected_host_key', 'fallback_policy']);
  const key = (k: Json) => ({ key: k.key as string, path: (k.path as Json[]).map((p) => p.key as string) });
  const sources: OverrideHostSource[] = (tc.override_host_sources as Json[]).map((s) =>
    s.header !== undefined ? { header: s.header } : { metadata: key(s.metadata) },
  );
  const selectedHostKey = tc.selected_host_key ? key(tc.selected_host_key) : undefined;
  const sim = new OverrideHostSimulator({ sources, fallback: fallbackNames(tc.fallback_policy), hosts, ...(selectedHostKey ? { selectedHostKey } : {}) });
  const b: Balancer = { pick: (headers, metadata, attempts) => sim.request({ headers, metadata, attempts }).attempts };
  if (selectedHostKey) b.selectedHostKey = selectedHostKey;
  return b;
}

/** One proxy (one Gateway's configuration), keeping its load balancers' state as Envoy does. */
export class ProxyModel {
  private readonly balancers = new Map<string, Balancer>();

  constructor(readonly config: EnvoyConfig) {}

  /**
   * Routing and the filters before the upstream: the route, the weighted cluster the stream's
   * `random` value selects, the client headers header_mutation leaves, and the picker the
   * ext_proc filters ask (at most one: a request asking two pickers is an error of the output).
   */
  plan(req: Request, random = 0): Plan | Exclude<Outcome, Forward> {
    const outcome = handle(this.config, req);
    if (outcome.type !== 'forward') return outcome;
    const upstream = weightedChoice(outcome.upstreams, random);
    const headers = { ...upstream.headers };
    let picker: PickerCall | undefined;
    for (const filter of outcome.httpFilters) {
      const type = filter.typed_config?.['@type'];
      if (type === ROUTER) break;
      if (type === HEADER_MUTATION) {
        onlyKeys('header_mutation', filter.typed_config, ['@type', 'mutations']);
        onlyKeys('header_mutation.mutations', filter.typed_config.mutations, ['request_mutations']);
        for (const m of filter.typed_config.mutations.request_mutations as Json[]) {
          onlyKeys('header_mutation request mutation', m, ['remove']);
          delete headers[String(m.remove).toLowerCase()];
        }
      } else if (type === EXT_PROC) {
        const call = extProcCall(filter, perRouteConfigs(filter.name, outcome, upstream));
        if (call && picker) throw new Error(`one request asks two pickers: ${picker.cluster} and ${call.cluster}`);
        picker = call ?? picker;
      } else throw new Error(`the endpoint model does not know the HTTP filter ${filter.name} (${type})`);
    }
    return picker ? { outcome, upstream, headers, picker } : { outcome, upstream, headers };
  }

  /**
   * The rest of the request, given the picker's answer (ignored when no picker is asked) and the
   * hosts that fail (answer `failing.get(host)`, a status of 500 or more, or 0 for a reset).
   */
  serve(plan: Plan, answer: PickerAnswer | undefined, failing: ReadonlyMap<string, number> = new Map()): Served {
    const { picker, upstream, outcome } = plan;
    const cluster = upstream.cluster;
    const none = (status: number, why: string): Served => ({ status, attempts: [], cluster, reportedToPicker: false, why });
    const headers = { ...plan.headers };
    const metadata: Json = {};
    if (picker) {
      if (picker.routeCacheAction !== 'RETAIN')
        throw new Error(`${picker.filter}: without route_cache_action RETAIN a picker's answer may re-route the request`);
      if (answer === undefined) throw new Error('a picker is asked: give its answer');
      if (answer === 'unreachable') {
        if (!picker.failureModeAllow) return none(500, `picker ${picker.cluster} unreachable and failure_mode_allow is false`);
      } else if ('immediate' in answer) {
        return none(answer.immediate, `picker ${picker.cluster} answered ${answer.immediate}`);
      } else {
        if (answer.header !== undefined) headers['x-gateway-destination-endpoint'] = answer.header;
        // Envoy drops metadata in namespaces it does not receive.
        if (answer.metadata !== undefined && picker.receiving.includes('envoy.lb'))
          metadata['envoy.lb'] = { 'x-gateway-destination-endpoint': answer.metadata };
      }
    }
    if (!(this.config.clusters as Json[]).some((c) => c.name === cluster)) return none(outcome.clusterNotFound ?? 503, `no cluster ${cluster}`);
    const retry = (outcome.entry.route?.retry_policy ?? {}) as Json;
    onlyKeys('retry_policy', retry, ['retry_on', 'num_retries', 'retriable_status_codes', ...RETRY_FIELDS_WITHOUT_EFFECT_HERE]);
    const retryOn = new Set(String(retry.retry_on ?? '').split(','));
    const codes = new Set<number>(retry.retriable_status_codes ?? []);
    const retriable = (status: number) =>
      status === 0
        ? retryOn.has('reset') || retryOn.has('connect-failure')
        : retryOn.has('5xx') || (retryOn.has('retriable-status-codes') && codes.has(status));
    const maxAttempts = 1 + (retry.num_retries ?? (retry.retry_on ? 1 : 0));
    let b = this.balancers.get(cluster);
    if (!b) {
      b = balancer(this.config, cluster);
      this.balancers.set(cluster, b);
    }
    const attempts = b.pick(headers, metadata, maxAttempts);
    const used: SimulatedAttempt[] = [];
    let status = 503;
    let host: string | undefined;
    for (const a of attempts) {
      used.push(a);
      if (a.host === null) {
        status = 503;
        break;
      }
      const failure = failing.get(a.host);
      if (failure === undefined) {
        status = 200;
        host = a.host;
        break;
      }
      status = failure === 0 ? 503 : failure;
      if (!retriable(failure)) break;
    }
    const result: Served = { status, attempts: used, cluster, reportedToPicker: false, why: used.map((a) => `${a.host ?? '-'} (${a.reason})`).join(', ') };
    if (host) result.host = host;
    // selected_host_key records the host of every attempt made, so the last one's stays.
    const key = b.selectedHostKey;
    const served = key ? used.at(-1)?.host : undefined;
    if (key && typeof served === 'string') {
      result.served = served;
      // The response-path message carries it when response headers go to the picker with envoy.lb forwarded.
      result.reportedToPicker =
        picker !== undefined && answer !== 'unreachable' && picker.processingMode.response_header_mode === 'SEND' && picker.forwarding.includes(key.key);
    }
    return result;
  }
}
