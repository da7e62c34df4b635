// The Envoy stage: one Gateway's IR (and its endpoints) → Envoy resources.
import type { Diagnostics } from '../diagnostics.js';
import { compare } from '../json.js';
import type { CertificateLookup } from '../resolve/certificates.js';
import type { EndpointLookup } from '../resolve/endpoints.js';
import { type Backend, backendJsonOf, type Gateway, type PickerSet, type Stream, usesPicker } from '../resolve/index.js';
import { backendAssignment, backendCluster, pickerAssignment, pickerCluster } from './clusters.js';
import type { EnvoyConfig } from './config.js';
import type { BuildContext, EnvoyOptions } from './context.js';
import { envoyListener } from './listeners.js';
import { ALL_DIRTY, backendEndpointsDirty, type Dirty, type EnvoyMemo, type MemoEntry, once, pickerEndpointsDirty, recorded, replay } from './memo.js';
import { udpSplitAssignment, udpSplitBackends, udpSplitCluster, udpSplitName, udpSplits } from './streams.js';
import type { EndpointV3, ListenerV3, RouteV3 } from './types.js';

export type { EnvoyConfig } from './config.js';
export type { EnvoyOptions } from './context.js';
export { CLEAN, type Dirty, type EnvoyMemo, emptyMemo } from './memo.js';
export { envoyDuration } from './proto-duration.js';
export {
  adsBootstrap,
  type BootstrapOptions,
  parseHostPort,
  toBootstrap,
  toXds,
  XDS_IDENTITY,
  type XdsResources,
  type XdsTls,
  xdsIdentitySdsFiles,
} from './output.js';

function byName(a: { name?: string; cluster_name?: string }, b: { name?: string; cluster_name?: string }): number {
  return compare(String(a.name ?? a.cluster_name ?? ''), String(b.name ?? b.cluster_name ?? ''));
}

/** The picker sets a Gateway's backends ask. */
function usedPickerSets(gateway: Gateway): Set<string> {
  return new Set(Object.values(gateway.backends).flatMap((b) => (usesPicker(b) && b.pickers !== undefined ? [b.pickers] : [])));
}

/**
 * Only the ClusterLoadAssignments of a Gateway in eds mode — what changes when nothing but
 * endpoints do — exactly as toEnvoy() lists them. A controller calls it on an EndpointSlice change,
 * leaving listeners, routes and clusters as they were.
 */
export function endpointAssignments(gateway: Gateway, endpoints: EndpointLookup, options: EnvoyOptions): EndpointV3.ClusterLoadAssignment[] {
  const ctx = { endpoints, options };
  const out: EndpointV3.ClusterLoadAssignment[] = [];
  for (const b of Object.values(gateway.backends)) {
    const cla = backendAssignment(b, ctx);
    if (cla) out.push(cla);
  }
  for (const key of usedPickerSets(gateway)) {
    const set = gateway.pickerSets[key];
    if (set) out.push(pickerAssignment(set, ctx));
  }
  for (const stream of udpSplits(gateway)) out.push(udpSplitAssignment(stream, { gateway, endpoints }));
  return out.sort(byName);
}

/** What each Service (`namespace/name`) feeds in a Gateway: found once per Gateway IR object. */
interface Feeds {
  backends: Map<string, Backend[]>;
  pickerSets: Map<string, PickerSet[]>;
  /** Split UDPRoutes: their assignment is made of several backends' endpoints. */
  udpSplits: Map<string, Stream[]>;
}
const feedsOf = new WeakMap<Gateway, Feeds>();

function add<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

function feeds(gateway: Gateway): Feeds {
  let f = feedsOf.get(gateway);
  if (f) return f;
  f = { backends: new Map(), pickerSets: new Map(), udpSplits: new Map() };
  const serviceOf = (b: Backend) => `${b.endpoints.namespace}/${b.endpoints.type === 'service' ? b.endpoints.service : b.endpoints.shadowService}`;
  for (const b of Object.values(gateway.backends)) add(f.backends, serviceOf(b), b);
  for (const key of usedPickerSets(gateway)) {
    const set = gateway.pickerSets[key];
    for (const p of set?.pickers ?? []) if (set) add(f.pickerSets, `${p.namespace}/${p.service}`, set);
  }
  for (const stream of udpSplits(gateway)) {
    for (const key of udpSplitBackends(stream)) {
      const b = gateway.backends[key];
      if (b) add(f.udpSplits, serviceOf(b), stream);
    }
  }
  feedsOf.set(gateway, f);
  return f;
}

/**
 * The ClusterLoadAssignments of the clusters of a Gateway whose endpoints come from `services`
 * (`namespace/name`): its backends on those Services (a pool's shadow Service included), the
 * picker sets with a picker among them and the split UDPRoutes with a backend among them.
 * `clusters` names every cluster considered, so a caller replaces exactly those (one that now has
 * no endpoints at all has no assignment). An EndpointSlice change costs the clusters it feeds, not
 * a walk of every backend: the Gateway's IR is indexed by Service on first use.
 */
export function endpointAssignmentsOf(
  gateway: Gateway,
  services: ReadonlySet<string>,
  endpoints: EndpointLookup,
  options: EnvoyOptions,
): { clusters: Set<string>; assignments: EndpointV3.ClusterLoadAssignment[] } {
  const ctx = { endpoints, options };
  const f = feeds(gateway);
  const clusters = new Set<string>();
  const assignments: EndpointV3.ClusterLoadAssignment[] = [];
  const take = (name: string, make: () => EndpointV3.ClusterLoadAssignment | undefined) => {
    if (clusters.has(name)) return;
    clusters.add(name);
    const cla = make();
    if (cla) assignments.push(cla);
  };
  for (const service of services) {
    for (const b of f.backends.get(service) ?? []) take(b.key, () => backendAssignment(b, ctx));
    for (const set of f.pickerSets.get(service) ?? []) take(set.key, () => pickerAssignment(set, ctx));
    for (const stream of f.udpSplits.get(service) ?? []) take(udpSplitName(stream), () => udpSplitAssignment(stream, { gateway, endpoints }));
  }
  return { clusters, assignments };
}

/** The Envoy stage's memory across updates of one Gateway: the last build's memo, the next one's, and what changed. */
export interface EnvoyReuse {
  previous?: EnvoyMemo;
  next: EnvoyMemo;
  dirty: Dirty;
  /** Counts the resources built rather than reused (zero: the IR is what the previous memo was built from). */
  built: number;
}

/**
 * A Gateway's Envoy configuration. With `reuse`, each cluster and listener whose inputs are
 * unchanged is the object built last time (with the diagnostics, Secrets and assignments it made).
 */
export function toEnvoy(
  gateway: Gateway,
  endpoints: EndpointLookup,
  certificates: CertificateLookup,
  options: EnvoyOptions,
  diags: Diagnostics,
  reuse?: EnvoyReuse,
): EnvoyConfig {
  const ctx: BuildContext = {
    gateway,
    options,
    endpoints,
    certificates,
    diags,
    manifests: new Map(),
    assignments: new Map(),
    secrets: new Map(),
    perRoute: new Map(),
  };
  const dirty = reuse?.dirty ?? ALL_DIRTY;
  const usable = (memo: Map<string, MemoEntry<unknown>> | undefined, name: string, fingerprint: () => string, source: object | undefined) => {
    const entry = dirty.all ? undefined : memo?.get(name);
    if (entry && source !== undefined && entry.source === source) return entry;
    return entry && entry.fingerprint() === fingerprint() ? entry : undefined;
  };
  /** Builds (or reuses) one resource; `refresh` rebuilds only its ClusterLoadAssignment when just its endpoints changed. */
  const memoized = <T>(
    kind: 'clusters' | 'listeners',
    name: string,
    fingerprint: () => string,
    stale: boolean,
    build: (ctx: BuildContext) => T,
    refresh?: () => EndpointV3.ClusterLoadAssignment | undefined,
    source?: object,
  ): T => {
    if (!reuse) return build(ctx);
    const fp = once(fingerprint);
    const entry = stale ? undefined : usable(reuse.previous?.[kind], name, fp, source);
    if (!entry) {
      reuse.built++;
      const { value, effects } = recorded(ctx, build);
      const made: MemoEntry<unknown> = { fingerprint: fp, value, effects };
      if (source !== undefined) made.source = source;
      reuse.next[kind].set(name, made);
      return value;
    }
    let effects = entry.effects;
    if (refresh) {
      const fresh = refresh();
      effects = { ...effects, assignments: fresh ? [[name, fresh]] : [] };
    }
    replay(ctx, effects);
    const kept = effects === entry.effects ? entry : { ...entry, effects };
    if (source !== undefined) kept.source = source;
    reuse.next[kind].set(name, kept);
    return entry.value as T;
  };
  const eds = options.endpoints === 'eds';
  const printOf = (b: Backend) => backendJsonOf(b);
  // What every cluster also reads of the Gateway: its client certificate, its access log (a picker's logs its calls).
  const client = `${JSON.stringify(gateway.backendClientCertificate ?? null)}\u0000${JSON.stringify(gateway.accessLog)}`;
  const clusters = Object.values(gateway.backends).map((b) => {
    const endpointsChanged = backendEndpointsDirty(b, dirty);
    return memoized(
      'clusters',
      b.key,
      () => `${printOf(b)}\u0000${client}`,
      (dirty.certificates && (b.tls !== undefined || gateway.backendClientCertificate !== undefined)) || (!eds && endpointsChanged),
      (c) => backendCluster(b, c),
      eds && endpointsChanged ? () => backendAssignment(b, ctx) : undefined,
    );
  });
  for (const stream of udpSplits(gateway)) {
    if (reuse) reuse.built++;
    clusters.push(udpSplitCluster(stream, ctx));
  }
  for (const key of usedPickerSets(gateway)) {
    const set = gateway.pickerSets[key];
    if (!set) continue;
    const endpointsChanged = pickerEndpointsDirty(set, dirty);
    clusters.push(
      memoized(
        'clusters',
        set.key,
        () => JSON.stringify(set),
        !eds && endpointsChanged,
        (c) => pickerCluster(set, c),
        eds && endpointsChanged ? () => pickerAssignment(set, ctx) : undefined,
      ),
    );
  }
  // Routes read the Gateway's backends and picker sets (compared once for all listeners); listeners, the certificates.
  let sharedChanged = true;
  if (reuse && gateway.listeners.length > 0) {
    const shared = once(() => `${Object.values(gateway.backends).map(printOf).join('\u0000')}\u0000${JSON.stringify(gateway.pickerSets)}\u0000${client}`);
    reuse.next.shared = shared;
    const before = reuse.previous?.shared;
    sharedChanged = before === undefined || before() !== shared();
  }
  const listeners: ListenerV3.Listener[] = [];
  const routes: RouteV3.RouteConfiguration[] = [];
  for (const l of gateway.listeners) {
    const built = memoized(
      'listeners',
      l.name,
      () => JSON.stringify(l),
      sharedChanged || dirty.certificates || l.protocol === 'UDP',
      (c) => envoyListener(l, c),
      undefined,
      l,
    );
    listeners.push(built.listener);
    routes.push(...built.routes);
  }
  return {
    gateway: gateway.ref,
    listeners: listeners.sort(byName),
    routes: routes.sort(byName),
    clusters: clusters.sort(byName),
    endpoints: [...ctx.assignments.values()].sort(byName),
    secrets: [...ctx.secrets.values()].sort(byName),
    manifests: [...ctx.manifests.entries()].sort(([a], [b]) => compare(a, b)).map(([, m]) => m),
  };
}
