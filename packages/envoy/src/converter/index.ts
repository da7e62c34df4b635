// The Converter: the one composition of the stages (read → resolve → Envoy → status). It holds the
// objects it was given, the resolved IR and the last Envoy configuration of each Gateway, so a
// change costs what it touches: EndpointSlices alone rebuild only the ClusterLoadAssignments of the
// Gateways whose backends they feed; routes updated in place, and HTTPRoutes added or deleted,
// whose change reaches no further (see resolve/route-update.ts) resolve and build again only the
// Gateways they attach to; anything else reads and resolves again, where every object, route
// compile, port listener and Envoy resource whose inputs are unchanged is the one of before (so a
// route change rebuilds the port it is on), and statuses whose outcome is the one of before are
// not compared again. Statuses are settled after the Envoy stage (a configuration past the size
// limit is not Programmed), and proxy facts (NACKs, infrastructure) merge into them without
// running any stage again.
import { type Diagnostic, Diagnostics } from '../diagnostics.js';
import { parseDuration } from '../gateway-duration.js';
import type { EndpointMode, EnvoyTarget } from '../envoy-target.js';
import { type Dirty, type EnvoyConfig, type EnvoyMemo, type EnvoyOptions, emptyMemo, endpointAssignmentsOf, toEnvoy } from '../envoy/index.js';
import type { EndpointV3 } from '../envoy/types.js';
import { compare, isObject, type JsonObject, sameJson } from '../json.js';
import { DEFAULT_MAX_OUTPUT_BYTES, itemSize, listsSize } from '../output-size.js';
import { type Inputs, key, ReadCache, readInputs, textOf } from '../read/index.js';
import { namespaceOf } from '../read/meta.js';
import { InputEndpoints } from '../resolve/endpoints.js';
import {
  AttachMemo,
  BackendsMemo,
  CompileMemo,
  DEFAULT_CONTROLLER,
  type Gateway,
  type IR,
  InputCertificates,
  ListenerMemo,
  type Resolved,
  type RouteOutcome,
  resolve,
  type RouteChange,
  resolveRouteUpdate,
} from '../resolve/index.js';
import { type KeyedStatus, keyedStatuses, objectStatusKey } from '../status/index.js';
import { type ClusterNeeds, clusterNeeds, keptNeeds } from './cluster-needs.js';
import { type GatewayProxyFacts, notProgrammed, withProxyFacts } from './proxy-facts.js';
import { SliceIndex } from './slice-index.js';

export { type ClusterNeeds, SHADOW_SERVICE_LABELS, shadowService } from './cluster-needs.js';
export { conditionMessage, type GatewayProxyFacts, MAX_CONDITION_MESSAGE } from './proxy-facts.js';

export interface ConvertOptions {
  /** Target Envoy: `1.35` (override_host), `1.38` (adds served-endpoint reporting) or `legacy` (ORIGINAL_DST). Default 1.35. */
  envoy?: EnvoyTarget;
  /** How backend endpoints reach Envoy: listed (`static`, default), resolved from a headless Service (`dns`), or served over EDS (`eds`). */
  endpoints?: EndpointMode;
  /**
   * This controller's name: written in statuses, and the controllerName of the GatewayClasses whose
   * Gateways are converted (when the input has GatewayClasses). Default `extlb.dev/gateway-controller`.
   */
  controllerName?: string;
  /** lastTransitionTime of every condition. Default: the current time (at each update). */
  now?: string | (() => string);
  clusterDomain?: string;
  /** Gateway API durations. */
  connectTimeout?: string;
  perTryTimeout?: string;
  /** The proxy's system CA bundle (BackendTLSPolicy `wellKnownCACertificates: System`). */
  systemCaFile?: string;
  /** Convert only Gateways of these classes (all when unset): a cluster may run several controllers. */
  gatewayClassNames?: string[];
  /**
   * The largest Envoy configuration of one Gateway, in bytes of compact JSON (default 32 MiB). A
   * Gateway whose configuration would be larger is reported (OutputTooLarge), is not Programmed,
   * and keeps the configuration it had.
   */
  maxOutputBytes?: number;
}

/**
 * A change to the objects a Converter holds: the whole set (what is not in it is gone), or the
 * objects added, updated and deleted. An object is known by apiVersion, kind, namespace and name.
 */
export type ConverterChange = { objects: readonly unknown[] } | { added?: readonly unknown[]; updated?: readonly unknown[]; deleted?: readonly unknown[] };

/** Time spent per stage in one update, in milliseconds. */
export interface UpdateTimings {
  read: number;
  resolve: number;
  envoy: number;
  status: number;
}

export interface ConverterUpdate {
  /** `full`: read and resolved again; `endpoints`: only ClusterLoadAssignments rebuilt. */
  kind: 'full' | 'endpoints';
  /**
   * Per converted Gateway (`namespace/name`, sorted), the Envoy configuration its proxies should
   * have: this update's, or the last accepted one when this one was refused (OutputTooLarge). A
   * Gateway never converted within the limit has none.
   */
  gateways: ReadonlyMap<string, EnvoyConfig>;
  /** The Gateways whose configuration this update changed, came or went. */
  changedGateways: string[];
  /** Every status, proxy facts merged, sorted by kind, namespace and name. */
  statuses: readonly JsonObject[];
  /**
   * The statuses this update changed, and those of the objects it was given (someone may have
   * written theirs); all of them after the whole set was given.
   */
  changedStatuses: JsonObject[];
  diagnostics: readonly Diagnostic[];
  /**
   * What the controller must write (shadow Services) or watch (ConfigMaps, Secrets), and the
   * classes it owns: the very object of the last update while none of it changed.
   */
  needs: ClusterNeeds;
  ir: IR;
  timings: UpdateTimings;
  /**
   * The Gateways this update resolved again: all of them, or (routes alone updated, added or
   * deleted, reaching no further than their Gateways) those the routes attach to; none for `endpoints`.
   */
  resolvedGateways: 'all' | readonly string[];
}

function durationOption(value: string | undefined, fallbackMs: number, name: string, diags: Diagnostics): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(value);
  if (ms !== undefined) return ms;
  diags.error('InvalidOption', `option ${name} is not a Gateway API duration such as 5s or 1m30s: ${JSON.stringify(value)}`);
  return fallbackMs;
}

export function envoyOptions(options: ConvertOptions, diags: Diagnostics): EnvoyOptions {
  return {
    envoy: options.envoy ?? '1.35',
    endpoints: options.endpoints ?? 'static',
    connectTimeoutMs: durationOption(options.connectTimeout, 5000, 'connectTimeout', diags),
    perTryTimeoutMs: durationOption(options.perTryTimeout, 15_000, 'perTryTimeout', diags),
    clusterDomain: options.clusterDomain ?? 'cluster.local',
    systemCaFile: options.systemCaFile ?? '/etc/ssl/certs/ca-certificates.crt',
  };
}

const SEP = '\u0000';
const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

/** How an object is known: apiVersion, kind, namespace, name (as the read stage tells duplicates). */
function objectId(raw: unknown): string | undefined {
  if (!isObject(raw) || !isObject(raw.metadata) || typeof raw.metadata.name !== 'string') return undefined;
  return [textOf(raw.apiVersion), textOf(raw.kind), namespaceOf(raw, 'default'), raw.metadata.name].join(SEP);
}

const isList = (raw: unknown) => isObject(raw) && typeof raw.kind === 'string' && raw.kind.endsWith('List') && Array.isArray(raw.items);
const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);
const isRoute = (raw: unknown) =>
  isObject(raw) &&
  typeof raw.kind === 'string' &&
  ROUTE_KINDS.has(raw.kind) &&
  typeof raw.apiVersion === 'string' &&
  raw.apiVersion.startsWith('gateway.networking.k8s.io/');
const isSlice = (raw: unknown) =>
  isObject(raw) && raw.kind === 'EndpointSlice' && typeof raw.apiVersion === 'string' && raw.apiVersion.startsWith('discovery.k8s.io/');

/** The slice (`namespace/name`) a finding about an EndpointSlice is about. */
const sliceOf = (object: { namespace?: string; name: string }) => `${object.namespace ?? ''}/${object.name}`;

const gatewayStatusKey = (gateway: string) => {
  const [namespace = '', name = ''] = gateway.split('/');
  return objectStatusKey('Gateway', namespace, name);
};
const routeStatusKey = (route: { kind: string; meta: { namespace: string; name: string } }) =>
  objectStatusKey(route.kind, route.meta.namespace, route.meta.name);

/**
 * Whether two statuses say the same, each condition's lastTransitionTime left out where it is the
 * time its update stamped (`aNow`, `bNow`): a condition that only got a new time is no change (the
 * status writer keeps the time it had). Fields are compared as JSON would write them.
 */
function sameStatus(a: unknown, aNow: string, b: unknown, bNow: string): boolean {
  return sameJson(a, b, (k, v, w) =>
    k === 'lastTransitionTime' && typeof v === 'string' && typeof w === 'string' ? (v === aNow ? '' : v) === (w === bNow ? '' : w) : undefined,
  );
}

/** The JSON size of some list items, without the list's brackets and commas. */
const sizeOf = (items: readonly unknown[], max: number) => items.reduce<number>((n, x) => n + itemSize(x, max), 0);
/** jsonSize of a list. */
const listSize = (items: readonly unknown[], max: number) => 2 + Math.max(0, items.length - 1) + sizeOf(items, max);

/** The Services (`namespace/name`) whose EndpointSlices feed a Gateway's backends and pickers. */
function fedBy(gateway: Gateway): Set<string> {
  const out = new Set<string>();
  for (const b of Object.values(gateway.backends)) {
    const e = b.endpoints;
    out.add(key(e.namespace, e.type === 'service' ? e.service : e.shadowService));
  }
  for (const set of Object.values(gateway.pickerSets)) for (const p of set.pickers) out.add(key(p.namespace, p.service));
  return out;
}

/** Where a cluster's assignment is in a list sorted by cluster, or -1. */
function positionOf(list: readonly EndpointV3.ClusterLoadAssignment[], cluster: string): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = compare((list[mid] as EndpointV3.ClusterLoadAssignment).cluster_name, cluster);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * A Gateway's ClusterLoadAssignments (sorted by cluster) with those of `clusters` replaced by
 * `fresh`, and the ones replaced. When every cluster keeps an assignment (an endpoint change, most
 * often), each new one takes its place in a copy of the list: the copy is the one allocation the
 * size of the Gateway (the list handed out before must stay as it was). Otherwise one pass, sorted
 * again only when a cluster gains its first assignment.
 */
function replaceAssignments(
  list: readonly EndpointV3.ClusterLoadAssignment[],
  clusters: ReadonlySet<string>,
  fresh: readonly EndpointV3.ClusterLoadAssignment[],
): { assignments: EndpointV3.ClusterLoadAssignment[]; gone: EndpointV3.ClusterLoadAssignment[] } {
  const byCluster = new Map(fresh.map((c) => [c.cluster_name, c]));
  if (byCluster.size === clusters.size) {
    const places: [number, EndpointV3.ClusterLoadAssignment][] = [];
    for (const name of clusters) {
      const next = byCluster.get(name);
      const at = positionOf(list, name);
      if (!next || at < 0) break;
      places.push([at, next]);
    }
    if (places.length === clusters.size) {
      const assignments = list.slice();
      const gone = places.map(([at]) => list[at] as EndpointV3.ClusterLoadAssignment);
      for (const [at, next] of places) assignments[at] = next;
      return { assignments, gone };
    }
  }
  const assignments: EndpointV3.ClusterLoadAssignment[] = [];
  const gone: EndpointV3.ClusterLoadAssignment[] = [];
  for (const c of list) {
    if (!clusters.has(c.cluster_name)) {
      assignments.push(c);
      continue;
    }
    gone.push(c);
    const next = byCluster.get(c.cluster_name);
    if (next) assignments.push(next);
    byCluster.delete(c.cluster_name);
  }
  if (byCluster.size === 0) return { assignments, gone };
  assignments.push(...byCluster.values());
  return { assignments: assignments.sort((a, b) => compare(a.cluster_name, b.cluster_name)), gone };
}

type MutableDirty = { all: boolean; services: Set<string>; pods: boolean; certificates: boolean };
const allDirty = (): MutableDirty => ({ all: true, services: new Set(), pods: true, certificates: true });
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * Whether two IRs of a Gateway whose every resource was reused are the same: the fingerprints
 * cover the listeners, backends and picker sets there are, not the ones that went.
 */
function sameShape(a: Gateway, b: Gateway): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    same(
      a.listeners.map((l) => l.name),
      b.listeners.map((l) => l.name),
    ) &&
    same(Object.keys(a.backends), Object.keys(b.backends)) &&
    same(Object.keys(a.pickerSets), Object.keys(b.pickerSets)) &&
    JSON.stringify(a.backendClientCertificate ?? null) === JSON.stringify(b.backendClientCertificate ?? null) &&
    JSON.stringify(a.ref) === JSON.stringify(b.ref)
  );
}

/** Whether two configurations hold the very same resources (so the older one can stand). */
function sameResources(a: EnvoyConfig, b: EnvoyConfig): boolean {
  const lists = ['listeners', 'routes', 'clusters', 'endpoints', 'secrets', 'manifests'] as const;
  return (
    JSON.stringify(a.gateway) === JSON.stringify(b.gateway) &&
    lists.every((k) => {
      const x: readonly unknown[] = a[k];
      const y: readonly unknown[] = b[k];
      return x.length === y.length && x.every((v, i) => v === y[i]);
    })
  );
}

interface Built {
  /** What the last full update read (route updates since in place); its slices are that update's, the ones held now are `slices`. */
  inputs: Inputs;
  resolved: Resolved;
  /** Per Gateway, the Services whose slices feed it. */
  feeds: Map<string, Set<string>>;
  /** Per Gateway, the size of its configuration without its ClusterLoadAssignments, and of their list. */
  fixedSize: Map<string, number>;
  endpointsSize: Map<string, number>;
  /** Statuses straight from the stages (no proxy facts), by status key. */
  base: Map<string, JsonObject>;
  needs: ClusterNeeds;
  /** What the Envoy stage reported of each Gateway. */
  findings: Map<string, readonly Diagnostic[]>;
  /** Whether every object held was named, one of its identity, and no `*List`. */
  distinct: boolean;
}

/** What the Envoy stage made per Gateway. */
interface GatewayBuilds {
  served: Map<string, EnvoyConfig>;
  refused: Map<string, string>;
  feeds: Map<string, Set<string>>;
  fixedSize: Map<string, number>;
  endpointsSize: Map<string, number>;
  memos: Map<string, EnvoyMemo>;
  /** What the Envoy stage reported of each Gateway. */
  findings: Map<string, readonly Diagnostic[]>;
}

export class Converter {
  private readonly objects = new Map<string, unknown[]>();
  /** Objects without a name: kept, so the read stage reports them. */
  private unnamed: unknown[] = [];
  private readonly envoy: EnvoyOptions;
  private readonly optionDiagnostics: Diagnostic[];
  private readonly controllerName: string;
  private readonly maxBytes: number;
  private built?: Built;
  private served = new Map<string, EnvoyConfig>();
  /** Gateways whose latest configuration was refused, with why; they keep serving their last one. */
  private refused = new Map<string, string>();
  private readonly facts = new Map<string, GatewayProxyFacts>();
  /** The statuses with facts merged, by status key, in order. */
  private current = new Map<string, JsonObject>();
  /** `current`'s statuses as a list, made when first asked after a change (most updates change none). */
  private statusList?: readonly JsonObject[];
  /** The EndpointSlices held, as the last full update read them and endpoint updates changed them since. */
  private slices = new SliceIndex(new Map());
  /** Per Service, the positions in the built IR of the Gateways its slices feed; made for the Built it names. */
  private feeders?: { of: Built; byService: Map<string, number[]> };
  /** The slices (`namespace/name`) some finding is about; made for the findings list it names. */
  private sliceFindings?: { of: readonly Diagnostic[]; slices: Set<string> };
  /** The lastTransitionTime the last full update gave every condition. */
  private statusNow = '';
  private diagnostics: Diagnostic[] = [];
  /** Every finding reported, as reported (diagnostics are these sorted, each once). */
  private findings: Diagnostic[] = [];
  /** The lastTransitionTime of the statuses made since the last full update, each by its update. */
  private madeAt = new Map<string, string>();
  private readonly reads = new ReadCache();
  private readonly resolveMemo = {
    attach: new AttachMemo(),
    backends: new BackendsMemo(),
    compiles: new CompileMemo(),
    listeners: new ListenerMemo(),
    routes: new WeakMap(),
  };
  /** Status keys of the objects changed since the last update, or all of them. */
  private touched: Set<string> | 'all' = 'all';
  /** Each route outcome's status, made once (see keyedStatuses). */
  private readonly routeStatuses = new WeakMap<RouteOutcome, KeyedStatus>();
  /** Per Gateway, what its last Envoy build made (reused where its inputs are unchanged). */
  private memos = new Map<string, EnvoyMemo>();
  /** What changed since the last full build, for the memos: everything until one was made. */
  private dirty: MutableDirty = allDirty();

  constructor(private readonly options: ConvertOptions = {}) {
    const diags = new Diagnostics();
    this.envoy = envoyOptions(options, diags);
    this.optionDiagnostics = diags.list;
    this.controllerName = options.controllerName ?? DEFAULT_CONTROLLER;
    this.maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  }

  private now(): string {
    const now = this.options.now;
    return typeof now === 'function' ? now() : (now ?? nowIso());
  }

  /** Applies a change and returns what it made. The first call must give the whole set (or every object as added). */
  update(change: ConverterChange): ConverterUpdate {
    const { slices, routes } = this.apply(change);
    if (slices && this.built && this.envoy.endpoints === 'eds') return this.updateEndpoints(slices);
    return (routes && this.updateRoutes(routes)) ?? this.rebuild();
  }

  /**
   * Records a change. Returns the slices changed when nothing else did (`namespace/name` → object
   * or undefined if gone), or the routes updated, added or deleted (each once: the one held
   * before, the one given) when nothing else was: neither for the whole set.
   */
  private apply(change: ConverterChange): { slices?: Map<string, unknown>; routes?: { before?: unknown; after?: unknown }[] } {
    if ('objects' in change) {
      this.resolveMemo.attach.epoch++;
      this.resolveMemo.backends.epoch++;
      this.touched = 'all';
      this.dirty = allDirty();
      this.objects.clear();
      this.unnamed = [];
      for (const raw of change.objects) this.put(raw);
      return {};
    }
    const slices = new Map<string, unknown>();
    let others = false;
    // Routes updated in place, added or deleted, each once: GRPCRoutes turn their backends to HTTP/2, so they are not among them.
    const routes: { before?: unknown; after?: unknown }[] = [];
    let onlyRoutes = true;
    const ids = new Set<string>();
    const routeChange = (raw: unknown, held: unknown[] | undefined, change: 'added' | 'updated' | 'deleted') => {
      const id = objectId(raw);
      if (id === undefined || ids.has(id) || !isRoute(raw) || (isObject(raw) && raw.kind === 'GRPCRoute')) onlyRoutes = false;
      // An added route must be new, an updated or deleted one held once.
      else if (change === 'added' ? held !== undefined : held?.length !== 1) onlyRoutes = false;
      else if (change === 'added') routes.push({ after: raw });
      else if (change === 'updated') routes.push({ before: held?.[0], after: raw });
      else routes.push({ before: held?.[0] });
      if (id !== undefined) ids.add(id);
    };
    const heldOf = (raw: unknown) => {
      const id = objectId(raw);
      return id === undefined ? undefined : this.objects.get(id);
    };
    for (const raw of change.added ?? []) routeChange(raw, heldOf(raw), 'added');
    for (const raw of change.updated ?? []) routeChange(raw, heldOf(raw), 'updated');
    for (const raw of change.deleted ?? []) routeChange(raw, heldOf(raw), 'deleted');
    const note = (raw: unknown, gone: boolean) => {
      this.noteDirty(raw);
      // Routes attach to what Gateways, ListenerSets and Namespaces are: any other change may move them.
      if (!isRoute(raw)) this.resolveMemo.attach.epoch++;
      // A backendRef resolves from objects other than routes and EndpointSlices, and a GRPCRoute turns its backends to HTTP/2.
      if (!(isRoute(raw) || isSlice(raw)) || (isObject(raw) && raw.kind === 'GRPCRoute')) this.resolveMemo.backends.epoch++;
      if (this.touched !== 'all' && isObject(raw) && isObject(raw.metadata)) {
        const kind = textOf(raw.kind);
        const name = textOf(raw.metadata.name);
        this.touched.add(objectStatusKey(kind, namespaceOf(raw, 'default'), name));
        this.touched.add(objectStatusKey(kind, '', name));
      }
      if (isSlice(raw) && isObject(raw) && isObject(raw.metadata))
        slices.set(`${namespaceOf(raw, 'default')}/${String(raw.metadata.name)}`, gone ? undefined : raw);
      else others = true;
    };
    for (const raw of [...(change.added ?? []), ...(change.updated ?? [])]) {
      this.put(raw, true);
      note(raw, false);
    }
    for (const raw of change.deleted ?? []) {
      const id = objectId(raw);
      if (id) this.objects.delete(id);
      note(raw, true);
    }
    if (!others) return { slices };
    return onlyRoutes && routes.length > 0 ? { routes } : {};
  }

  /** What an object's change means for the Envoy memos (the IR they are keyed on covers the rest). */
  private noteDirty(raw: unknown): void {
    if (!isObject(raw) || !isObject(raw.metadata)) {
      this.dirty.all = true;
      return;
    }
    const namespace = namespaceOf(raw, 'default');
    if (isSlice(raw)) {
      const labels = raw.metadata.labels;
      const service = isObject(labels) ? labels[SERVICE_NAME_LABEL] : undefined;
      if (typeof service === 'string') this.dirty.services.add(key(namespace, service));
      const before = this.slices.serviceOf(key(namespace, String(raw.metadata.name)));
      if (before !== undefined) this.dirty.services.add(before);
    } else if (raw.kind === 'Pod' && raw.apiVersion === 'v1') this.dirty.pods = true;
    else if ((raw.kind === 'Secret' || raw.kind === 'ConfigMap') && raw.apiVersion === 'v1') this.dirty.certificates = true;
  }

  private put(raw: unknown, replace = false): void {
    const id = objectId(raw);
    if (id === undefined) this.unnamed.push(raw);
    else if (replace) this.objects.set(id, [raw]);
    else this.objects.set(id, [...(this.objects.get(id) ?? []), raw]);
  }

  /** Every stage, from every object held. */
  private rebuild(): ConverterUpdate {
    const diags = new Diagnostics();
    for (const d of this.optionDiagnostics) diags.list.push(d);
    let t = process.hrtime.bigint();
    const held: unknown[] = [...this.unnamed];
    let distinct = this.unnamed.length === 0;
    for (const copies of this.objects.values()) {
      if (copies.length !== 1 || isList(copies[0])) distinct = false;
      for (const raw of copies) held.push(raw);
    }
    const inputs = readInputs(held, diags, 'default', this.reads, distinct);
    this.reads.sweep();
    this.slices = new SliceIndex(inputs.slicesByService);
    const read = since(t);
    t = process.hrtime.bigint();
    const resolveOptions: { controllerName: string; gatewayClassNames?: readonly string[] } = { controllerName: this.controllerName };
    if (this.options.gatewayClassNames) resolveOptions.gatewayClassNames = this.options.gatewayClassNames;
    const resolved = resolve(inputs, resolveOptions, diags, this.resolveMemo);
    const resolveMs = since(t);
    t = process.hrtime.bigint();
    const endpoints = this.endpointsOf(inputs);
    const certificates = new InputCertificates(inputs);
    const out: GatewayBuilds = {
      served: new Map(),
      refused: new Map(),
      feeds: new Map(),
      fixedSize: new Map(),
      endpointsSize: new Map(),
      memos: new Map(),
      findings: new Map(),
    };
    const lastIr = new Map((this.built?.resolved.ir.gateways ?? []).map((g) => [g.name, g]));
    resolved.ir.gateways = resolved.ir.gateways.map((fresh) => this.buildGateway(fresh, lastIr.get(fresh.name), endpoints, certificates, diags, out));
    const { served, refused, feeds, fixedSize, endpointsSize: endpointsSizes, memos } = out;
    this.memos = memos;
    this.dirty = { all: false, services: new Set(), pods: false, certificates: false };
    const envoyMs = since(t);
    t = process.hrtime.bigint();
    const base = new Map<string, JsonObject>();
    const previousNow = this.statusNow;
    this.statusNow = this.now();
    const ctx = { controllerName: this.controllerName, now: this.statusNow };
    for (const { key: k, status } of keyedStatuses(resolved.outcomes, ctx, this.routeStatuses)) base.set(k, status);
    for (const [gateway, message] of refused) {
      const k = gatewayStatusKey(gateway);
      const s = base.get(k);
      if (s) base.set(k, { ...s, status: notProgrammed(s.status as JsonObject, 'Invalid', message) });
    }
    const classes = resolved.outcomes.gatewayClasses.map((o) => o.gatewayClass.meta.name);
    const needs = keptNeeds(this.built?.needs, clusterNeeds(inputs, classes));
    this.built = { inputs, resolved, feeds, fixedSize, endpointsSize: endpointsSizes, base, needs, findings: out.findings, distinct };
    const changedGateways = this.changedGateways(served);
    this.served = served;
    this.refused = refused;
    const previous = this.current;
    this.current = new Map();
    this.statusList = undefined;
    const touched = this.touched;
    this.touched = new Set();
    const changedStatuses: JsonObject[] = [];
    for (const [k, b] of base) {
      const s = this.withFacts(b);
      this.current.set(k, s);
      // The very status of before (a route whose outcome is the one of before) is known unchanged.
      const was = previous.get(k);
      if (touched === 'all' || touched.has(k) || (was !== s && !sameStatus(was, this.madeAt.get(k) ?? previousNow, s, this.statusNow))) changedStatuses.push(s);
    }
    this.madeAt.clear();
    const statusMs = since(t);
    this.findings = [...diags.list];
    this.diagnostics = diags.sorted();
    return this.result('full', changedGateways, changedStatuses, { read, resolve: resolveMs, envoy: envoyMs, status: statusMs });
  }

  /**
   * The Envoy stage for one Gateway, into `out`: its configuration (or, past the limit, the one it
   * had), what its slices feed, its sizes, its memo and its findings.
   */
  private buildGateway(
    fresh: Gateway,
    last: Gateway | undefined,
    endpoints: InputEndpoints,
    certificates: InputCertificates,
    diags: Diagnostics,
    out: GatewayBuilds,
  ): Gateway {
    const own = new Diagnostics();
    const reuse = { previous: this.memos.get(fresh.name), next: emptyMemo(), dirty: this.dirty as Dirty, built: 0 };
    let config = toEnvoy(fresh, endpoints, certificates, this.envoy, own, reuse);
    out.memos.set(fresh.name, reuse.next);
    // Nothing built: the IR is the one the last build was made from, so the last IR and
    // configuration stand (object-identical), unless only ClusterLoadAssignments changed.
    const gateway = reuse.built === 0 && last && sameShape(last, fresh) ? last : fresh;
    const previous = this.served.get(gateway.name);
    if (previous && !this.refused.has(gateway.name) && sameResources(previous, config)) config = previous;
    const size = listsSize(config as unknown as Record<string, unknown>, this.maxBytes);
    out.refused.delete(gateway.name);
    if (size <= this.maxBytes) {
      out.served.set(gateway.name, config);
      out.feeds.set(gateway.name, fedBy(gateway));
      const endpointsSize = listSize(config.endpoints, this.maxBytes);
      out.fixedSize.set(gateway.name, size - endpointsSize + 2);
      out.endpointsSize.set(gateway.name, endpointsSize);
    } else {
      const message = this.tooLarge();
      own.error('OutputTooLarge', message, gateway.ref);
      out.refused.set(gateway.name, message);
      // The proxies keep what they have: its clusters are not this IR's, so endpoints leave it be.
      if (previous) out.served.set(gateway.name, previous);
      else out.served.delete(gateway.name);
    }
    out.findings.set(gateway.name, own.list);
    for (const d of own.list) diags.list.push(d);
    return gateway;
  }

  private tooLarge(): string {
    return `its Envoy configuration would be more than ${this.maxBytes} bytes (the limit, maxOutputBytes), so none is written: spread its routes over more Gateways, or use fewer rules, matches and backends per route`;
  }

  private changedGateways(next: ReadonlyMap<string, EnvoyConfig>): string[] {
    const out = new Set<string>();
    for (const [g, config] of next) if (this.served.get(g) !== config) out.add(g);
    for (const g of this.served.keys()) if (!next.has(g)) out.add(g);
    return [...out].sort(compare);
  }

  /**
   * Routes updated in place, added or deleted, resolved and built again for the Gateways they
   * attach to alone, when resolve can (see resolve/route-update.ts); undefined when it cannot, for
   * a full update.
   */
  private updateRoutes(changes: { before?: unknown; after?: unknown }[]): ConverterUpdate | undefined {
    const built = this.built;
    if (!built?.distinct) return undefined;
    let t = process.hrtime.bigint();
    const diags = new Diagnostics();
    const dropped = new Set<Diagnostic>();
    const records: RouteChange[] = [];
    for (const { before, after } of changes) {
      const record: RouteChange = {};
      if (before !== undefined) {
        const old = this.reads.read(before, 'default');
        if (old.entry?.kind !== 'Route') return undefined;
        for (const d of old.diagnostics) dropped.add(d);
        record.before = old.entry.record;
      }
      if (after !== undefined) {
        const fresh = this.reads.read(after, 'default');
        if (fresh.entry?.kind !== 'Route') return undefined;
        for (const d of fresh.diagnostics) diags.list.push(d);
        record.after = fresh.entry.record;
      }
      records.push(record);
    }
    const read = since(t);
    t = process.hrtime.bigint();
    const update = resolveRouteUpdate(built.inputs, records, diags, this.resolveMemo);
    if (!update) return undefined;
    const inputs: Inputs = { ...built.inputs, routes: update.routes };
    const resolveMs = since(t);
    t = process.hrtime.bigint();
    const endpoints = this.endpointsOf(inputs);
    const certificates = new InputCertificates(inputs);
    const out: GatewayBuilds = {
      served: new Map(this.served),
      refused: new Map(this.refused),
      feeds: built.feeds,
      fixedSize: built.fixedSize,
      endpointsSize: built.endpointsSize,
      memos: this.memos,
      findings: built.findings,
    };
    const lastIr = new Map(built.resolved.ir.gateways.map((g) => [g.name, g]));
    const touched = new Set(update.gateways);
    const ir: IR = {
      gateways: update.ir.gateways.map((fresh) => {
        const last = lastIr.get(fresh.name);
        if (!touched.has(fresh.name)) return last ?? fresh;
        for (const d of built.findings.get(fresh.name) ?? []) dropped.add(d);
        return this.buildGateway(fresh, last, endpoints, certificates, diags, out);
      }),
    };
    const envoyMs = since(t);
    t = process.hrtime.bigint();
    // The statuses of the changed routes and of their Gateways (and ListenerSets); every other is the one of before.
    const now = this.now();
    const gatewayOf = (ref: { namespace?: string; name: string }) => `${ref.namespace ?? ''}/${ref.name}`;
    const ownSets = new Set(update.outcomes.listenerSets.filter((o) => touched.has(gatewayOf(o.listenerSet.parentRef))).map((o) => o.listenerSet));
    const fresh = keyedStatuses(
      {
        ...update.outcomes,
        gatewayClasses: [],
        gateways: update.outcomes.gateways.filter((o) => touched.has(gatewayOf(o.gateway.meta))),
        routes: update.changed,
        pools: [],
        policies: [],
        backendTlsPolicies: [],
        listenerSets: update.outcomes.listenerSets.filter((o) => ownSets.has(o.listenerSet)),
      },
      { controllerName: this.controllerName, now },
      this.routeStatuses,
    );
    const changedStatuses: JsonObject[] = [];
    const given = new Set(update.changed.map((o) => routeStatusKey(o.route)));
    for (const { key: k, status } of fresh) {
      const message = out.refused.get(status.kind === 'Gateway' ? gatewayOf(status.metadata as { namespace: string; name: string }) : '');
      const b = message === undefined ? status : { ...status, status: notProgrammed(status.status as JsonObject, 'Invalid', message) };
      built.base.set(k, b);
      const s = this.withFacts(b);
      const was = this.current.get(k);
      if (was === undefined) this.insertCurrent(k, s);
      else this.setCurrent(k, s);
      if (given.has(k) || !sameStatus(was, this.madeAt.get(k) ?? this.statusNow, s, now)) changedStatuses.push(s);
      this.madeAt.set(k, now);
    }
    // A deleted route's status goes, as it would from a full update's.
    for (const r of update.removed) {
      const k = routeStatusKey(r);
      built.base.delete(k);
      this.madeAt.delete(k);
      if (this.current.delete(k)) this.statusList = undefined;
    }
    this.touched = new Set();
    this.built = { ...built, inputs, resolved: { ir, outcomes: update.outcomes } };
    const changedGateways = this.changedGateways(out.served);
    this.served = out.served;
    this.refused = out.refused;
    for (const d of update.dropped) dropped.add(d);
    this.findings = [...this.findings.filter((d) => !dropped.has(d)), ...diags.list];
    const all = new Diagnostics();
    for (const d of this.findings) all.list.push(d);
    this.diagnostics = all.sorted();
    return this.result('full', changedGateways, changedStatuses, { read, resolve: resolveMs, envoy: envoyMs, status: since(t) }, update.gateways);
  }

  /**
   * Only the ClusterLoadAssignments of the Gateways the changed slices feed. It costs what it
   * touches: the slices, their Services, the Gateways those feed (found by Service) and the lists
   * handed out that must change (the Gateways map, each such Gateway's assignment list); nothing
   * is copied or walked for the rest of the estate.
   */
  private updateEndpoints(changed: Map<string, unknown>): ConverterUpdate {
    const built = this.built as Built;
    const started = process.hrtime.bigint();
    const diags = new Diagnostics();
    const affected = new Set<string>();
    for (const [slice, raw] of changed) {
      const old = this.slices.remove(slice);
      if (old !== undefined) affected.add(old);
      if (raw === undefined) continue;
      // As readInputs([raw]) would read it: one object, not a list, so nothing to unpack or tell apart.
      const read = this.reads.read(raw, 'default');
      for (const d of read.diagnostics) diags.list.push(d);
      if (read.entry?.kind !== 'EndpointSlice') continue;
      affected.add(read.entry.key);
      this.slices.add(slice, read.entry.key, read.entry.record);
    }
    const read = since(started);
    const t = process.hrtime.bigint();
    const endpoints = this.endpointsOf(built.inputs);
    // Copied only when a Gateway's entry changes: an earlier update handed the maps out.
    let served: Map<string, EnvoyConfig> | undefined;
    let refused: Map<string, string> | undefined;
    const changedGateways: string[] = [];
    const newlyRefused: string[] = [];
    for (const gateway of this.fedGateways(built, affected)) {
      const config = this.served.get(gateway.name);
      // Refused at the last full update: the configuration served is not this IR's.
      if (!config || this.refused.has(gateway.name)) continue;
      // Only the clusters those slices feed; every other ClusterLoadAssignment is the last one.
      const { clusters, assignments: fresh } = endpointAssignmentsOf(gateway, affected, endpoints, this.envoy);
      const { assignments, gone } = replaceAssignments(config.endpoints, clusters, fresh);
      const fixed = built.fixedSize.get(gateway.name) ?? 0;
      const before = built.endpointsSize.get(gateway.name) ?? 0;
      // The list's size, from the last one: its items that went and came, and one comma per item.
      const size = before - sizeOf(gone, this.maxBytes) + sizeOf(fresh, this.maxBytes) + (fresh.length - gone.length);
      built.endpointsSize.set(gateway.name, size);
      if (fixed - 2 + size <= this.maxBytes) {
        served ??= new Map(this.served);
        served.set(gateway.name, { ...config, endpoints: assignments });
        changedGateways.push(gateway.name);
      } else {
        const own = new Diagnostics();
        own.error('OutputTooLarge', this.tooLarge(), gateway.ref);
        diags.list.push(...own.list);
        built.findings.set(gateway.name, [...(built.findings.get(gateway.name) ?? []), ...own.list]);
        refused ??= new Map(this.refused);
        refused.set(gateway.name, this.tooLarge());
        newlyRefused.push(gateway.name);
      }
    }
    const envoyMs = since(t);
    const s = process.hrtime.bigint();
    if (served) this.served = served;
    const changedStatuses: JsonObject[] = [];
    for (const gateway of newlyRefused) {
      const k = gatewayStatusKey(gateway);
      const b = built.base.get(k);
      if (!b) continue;
      const next = { ...b, status: notProgrammed(b.status as JsonObject, 'Invalid', this.tooLarge()) };
      built.base.set(k, next);
      const merged = this.withFacts(next);
      this.setCurrent(k, merged);
      changedStatuses.push(merged);
    }
    if (refused) this.refused = refused;
    // This update's slices replace what the last one said of them (sorted again only when that changes anything).
    const named = this.slicesWithFindings();
    let kept = this.diagnostics;
    if ([...changed.keys()].some((k) => named.has(k))) {
      const stays = (d: Diagnostic) => !(d.object?.kind === 'EndpointSlice' && changed.has(sliceOf(d.object)));
      this.findings = this.findings.filter(stays);
      kept = this.diagnostics.filter(stays);
      for (const k of changed.keys()) named.delete(k);
    }
    // The findings list is the Converter's own (never handed out), so it grows in place.
    for (const d of diags.list) {
      this.findings.push(d);
      if (d.object?.kind === 'EndpointSlice') named.add(sliceOf(d.object));
    }
    this.sliceFindings = { of: this.findings, slices: named };
    if (diags.list.length > 0) {
      const fresh = new Diagnostics();
      for (const d of [...kept, ...diags.list]) fresh.list.push(d);
      this.diagnostics = fresh.sorted();
    } else if (kept.length !== this.diagnostics.length) this.diagnostics = kept;
    return this.result('endpoints', changedGateways.sort(compare), changedStatuses, { read, resolve: 0, envoy: envoyMs, status: since(s) });
  }

  /** Endpoints as the slices held now give them (the Inputs' own slices are the last full update's). */
  private endpointsOf(inputs: Inputs): InputEndpoints {
    return new InputEndpoints({ slicesByService: this.slices.byService, pods: inputs.pods });
  }

  /** The Gateways of the built IR, in its order, whose served configuration slices of `services` feed (found by Service, not by a walk of every Gateway). */
  private fedGateways(built: Built, services: ReadonlySet<string>): Gateway[] {
    if (this.feeders?.of !== built) {
      const byService = new Map<string, number[]>();
      built.resolved.ir.gateways.forEach((g, i) => {
        for (const service of built.feeds.get(g.name) ?? []) {
          const list = byService.get(service);
          if (list) list.push(i);
          else byService.set(service, [i]);
        }
      });
      this.feeders = { of: built, byService };
    }
    const at = new Set<number>();
    for (const service of services) for (const i of this.feeders.byService.get(service) ?? []) at.add(i);
    return [...at].sort((a, b) => a - b).map((i) => built.resolved.ir.gateways[i] as Gateway);
  }

  /** The slices some finding held is about. */
  private slicesWithFindings(): Set<string> {
    if (this.sliceFindings?.of === this.findings) return this.sliceFindings.slices;
    const slices = new Set<string>();
    for (const d of this.findings) if (d.object?.kind === 'EndpointSlice') slices.add(sliceOf(d.object));
    this.sliceFindings = { of: this.findings, slices };
    return slices;
  }

  /** Holds a status of an object that had none, in its place in the order of status keys. */
  private insertCurrent(k: string, s: JsonObject): void {
    const next = new Map<string, JsonObject>();
    let placed = false;
    for (const [key, status] of this.current) {
      if (!placed && compare(key, k) > 0) {
        next.set(k, s);
        placed = true;
      }
      next.set(key, status);
    }
    if (!placed) next.set(k, s);
    this.current = next;
    this.statusList = undefined;
  }

  /** Sets a status held, so that the list of them is made again. */
  private setCurrent(k: string, s: JsonObject): void {
    if (this.current.get(k) === s) return;
    this.current.set(k, s);
    this.statusList = undefined;
  }

  private result(
    kind: ConverterUpdate['kind'],
    changedGateways: string[],
    changedStatuses: JsonObject[],
    timings: UpdateTimings,
    resolvedGateways: ConverterUpdate['resolvedGateways'] = kind === 'full' ? 'all' : [],
  ): ConverterUpdate {
    const built = this.built as Built;
    // One list while no status changes (most endpoint updates): never changed, a change makes another.
    this.statusList ??= [...this.current.values()];
    return {
      kind,
      gateways: this.served,
      changedGateways,
      statuses: this.statusList,
      changedStatuses,
      diagnostics: this.diagnostics,
      needs: built.needs,
      ir: built.resolved.ir,
      timings,
      resolvedGateways,
    };
  }

  private withFacts(s: JsonObject): JsonObject {
    if (s.kind !== 'Gateway') return s;
    const m = s.metadata as { namespace: string; name: string };
    const facts = this.facts.get(`${m.namespace}/${m.name}`);
    return facts ? { ...s, status: withProxyFacts(s.status as JsonObject, facts) } : s;
  }

  /**
   * Sets what the control plane knows of a Gateway's proxies (`namespace/name`): each field given
   * (even as undefined) replaces the one held, fields left out are kept, and `undefined` forgets
   * them all. Returns the statuses that changed — the Gateway's, or none; no stage runs again.
   */
  setProxyFacts(gateway: string, facts: GatewayProxyFacts | undefined): JsonObject[] {
    const held = this.facts.get(gateway);
    const next: GatewayProxyFacts = facts === undefined ? {} : { ...held };
    if (facts && 'rejected' in facts) {
      if (facts.rejected && facts.rejected.length > 0) next.rejected = facts.rejected;
      else delete next.rejected;
    }
    if (facts && 'infrastructure' in facts) {
      if (facts.infrastructure) next.infrastructure = facts.infrastructure;
      else delete next.infrastructure;
    }
    if (next.rejected || next.infrastructure) this.facts.set(gateway, next);
    else this.facts.delete(gateway);
    const k = gatewayStatusKey(gateway);
    const base = this.built?.base.get(k);
    if (!base) return [];
    const merged = this.withFacts(base);
    if (sameStatus(this.current.get(k), this.statusNow, merged, this.statusNow)) return [];
    this.setCurrent(k, merged);
    return [merged];
  }

  /** The proxy facts held for a Gateway. */
  proxyFacts(gateway: string): GatewayProxyFacts | undefined {
    return this.facts.get(gateway);
  }
}
