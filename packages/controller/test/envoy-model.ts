// An ADS client that subscribes as Envoy documents it does, both variants, and notes every moment
// a route or listener would send traffic to a cluster that is not usable yet.
//
// What it models (Envoy's xDS docs, "eventual consistency considerations" and cluster warming):
// - it starts with wildcard CDS and LDS requests;
// - for each EDS cluster a CDS response brings, it asks for that ClusterLoadAssignment before it
//   ACKs the CDS response (Envoy pauses EDS while it applies CDS and resumes before the ACK);
// - a new EDS cluster warms until its assignment arrives and is usable only then; an updated
//   cluster keeps its previous version in use while the new one warms;
// - for each listener an LDS response brings, it asks for the RouteConfiguration it names;
// - every response is ACKed as soon as it is applied.
// A route or tcp_proxy naming a cluster that is not usable when it is applied is a 503 moment.
import type { DeltaResponse, SotwResponse } from './helpers.js';
import { AdsTestClient, deltaRequest, sotwRequest, type TestNode, testCodec } from './helpers.js';
import { TYPE_URL } from '../src/index.js';

type Json = Record<string, any>;

/** The cluster names a route configuration or listener sends traffic to. */
export function routedClusters(resource: unknown): string[] {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const o = v as Json;
    // RouteAction.cluster, TcpProxy.cluster, and their weighted_clusters.
    for (const key of ['route', 'typed_config']) {
      const a = o[key];
      if (a && typeof a === 'object' && typeof a.cluster === 'string') out.push(a.cluster);
    }
    if (o.weighted_clusters && Array.isArray(o.weighted_clusters.clusters)) for (const c of o.weighted_clusters.clusters) out.push(c.name);
    for (const x of Object.values(o)) visit(x);
  };
  visit(resource);
  return out;
}

export class EnvoyModel {
  readonly client: AdsTestClient<SotwResponse | DeltaResponse>;
  /** Cluster name -> its EDS service name, or undefined for a non-EDS cluster. */
  readonly clusters = new Map<string, string | undefined>();
  /** Clusters that have warmed (usable by routes). */
  readonly usable = new Set<string>();
  readonly assignments = new Map<string, Json>();
  readonly listeners = new Map<string, Json>();
  readonly routes = new Map<string, Json>();
  /** Each 503 moment: what was applied and which cluster it named. */
  readonly violations: string[] = [];
  /** Every response applied, as `Type:name,name`. */
  readonly log: string[] = [];
  private edsNames: string[] = [];
  private rdsNames: string[] = [];
  private readonly waiters: (() => void)[] = [];

  constructor(
    address: string,
    readonly variant: 'sotw' | 'delta',
    readonly node: TestNode,
    options: { ackDelayMs?: number } = {},
  ) {
    this.client = new AdsTestClient(address, variant);
    this.client.stream.on('data', (r: SotwResponse | DeltaResponse) => {
      const apply = () => {
        this.apply(r);
        for (const w of this.waiters.splice(0)) w();
      };
      if (options.ackDelayMs) setTimeout(apply, options.ackDelayMs);
      else apply();
    });
    // The AdsTestClient's own queue is not read: empty it so it does not grow.
    this.client.stream.on('data', () => void this.client.next(0).catch(() => {}));
    this.request(TYPE_URL.cluster, [], { node });
    this.request(TYPE_URL.listener, []);
  }

  /** Resolves once `condition` holds, checked after each applied response. */
  async until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the Envoy model did not get there; applied: ${this.log.slice(-12).join(' | ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.client.close();
  }

  private request(typeUrl: string, names: string[], extra: { node?: TestNode; nonce?: string; version?: string; previous?: string[] } = {}) {
    if (this.variant === 'sotw') {
      this.client.send(sotwRequest(typeUrl, names, { ...extra }));
      return;
    }
    const before = new Set(extra.previous ?? []);
    const now = new Set(names);
    this.client.send(
      deltaRequest(typeUrl, {
        ...(extra.node ? { node: extra.node } : {}),
        ...(extra.nonce ? { nonce: extra.nonce } : {}),
        subscribe: names.filter((n) => !before.has(n)),
        unsubscribe: [...before].filter((n) => !now.has(n)),
      }),
    );
  }

  /** The resources of a response as (name, JSON) and the names it removes. */
  private contents(r: SotwResponse | DeltaResponse): { added: [string, Json][]; removed: string[]; whole: boolean } {
    const name = (o: Json) => String(o.name ?? o.cluster_name);
    if (this.variant === 'sotw') {
      const res = (r as SotwResponse).resources ?? [];
      const added = res.map((a) => testCodec().decode(a.type_url, a.value) as Json).map((o) => [name(o), o] as [string, Json]);
      return { added, removed: [], whole: r.type_url === TYPE_URL.cluster || r.type_url === TYPE_URL.listener };
    }
    const d = r as DeltaResponse;
    const added = (d.resources ?? [])
      .map((x) => testCodec().decode(x.resource?.type_url ?? '', x.resource?.value ?? Buffer.alloc(0)) as Json)
      .map((o) => [name(o), o] as [string, Json]);
    return { added, removed: d.removed_resources ?? [], whole: false };
  }

  private check(what: string, resource: Json): void {
    for (const c of routedClusters(resource))
      if (!this.usable.has(c)) this.violations.push(`${what} names cluster ${c}, which is ${this.clusters.has(c) ? 'still warming' : 'unknown'}`);
  }

  private apply(r: SotwResponse | DeltaResponse): void {
    const { added, removed, whole } = this.contents(r);
    this.log.push(`${r.type_url.slice(r.type_url.lastIndexOf('.') + 1)}:${added.map(([n]) => n).join(',')}`);
    const ack = (names: string[]) =>
      this.variant === 'sotw'
        ? this.request(r.type_url, names, { nonce: r.nonce, version: (r as SotwResponse).version_info ?? '' })
        : this.client.send(deltaRequest(r.type_url, { nonce: r.nonce }));
    switch (r.type_url) {
      case TYPE_URL.cluster: {
        const gone = whole ? [...this.clusters.keys()].filter((n) => !added.some(([a]) => a === n)) : removed;
        for (const n of gone) {
          this.clusters.delete(n);
          this.usable.delete(n);
        }
        for (const [n, c] of added) {
          const eds = c.type === 'EDS' ? c.eds_cluster_config?.service_name || n : undefined;
          this.clusters.set(n, eds);
          if (eds === undefined || this.assignments.has(eds)) this.usable.add(n);
          // An update keeps the version in use; a new EDS cluster warms.
        }
        const edsNames = [...new Set([...this.clusters.values()].filter((v): v is string => v !== undefined))].sort();
        if (edsNames.join('\n') !== this.edsNames.join('\n')) {
          const previous = this.edsNames;
          this.edsNames = edsNames;
          this.request(TYPE_URL.endpoint, edsNames, { previous, ...(this.variant === 'sotw' ? { nonce: this.lastNonce.get(TYPE_URL.endpoint) ?? '' } : {}) });
        }
        ack([]);
        break;
      }
      case TYPE_URL.endpoint: {
        for (const [n, a] of added) this.assignments.set(n, a);
        for (const n of removed) this.assignments.delete(n);
        for (const [c, eds] of this.clusters) if (eds !== undefined && this.assignments.has(eds)) this.usable.add(c);
        ack(this.edsNames);
        break;
      }
      case TYPE_URL.listener: {
        const gone = whole ? [...this.listeners.keys()].filter((n) => !added.some(([a]) => a === n)) : removed;
        for (const n of gone) this.listeners.delete(n);
        for (const [n, l] of added) {
          this.check(`Listener ${n}`, l);
          this.listeners.set(n, l);
        }
        const rds = [
          ...new Set(
            [...this.listeners.values()].flatMap((l) =>
              (l.filter_chains ?? []).flatMap((fc: Json) => (fc.filters ?? []).map((f: Json) => f.typed_config?.rds?.route_config_name).filter(Boolean)),
            ),
          ),
        ].sort() as string[];
        if (rds.join('\n') !== this.rdsNames.join('\n')) {
          const previous = this.rdsNames;
          this.rdsNames = rds;
          this.request(TYPE_URL.route, rds, { previous, ...(this.variant === 'sotw' ? { nonce: this.lastNonce.get(TYPE_URL.route) ?? '' } : {}) });
        }
        ack([]);
        break;
      }
      case TYPE_URL.route: {
        for (const [n, rc] of added) {
          this.check(`RouteConfiguration ${n}`, rc);
          this.routes.set(n, rc);
        }
        for (const n of removed) this.routes.delete(n);
        ack(this.rdsNames);
        break;
      }
      default:
        ack([]);
    }
    this.lastNonce.set(r.type_url, r.nonce);
  }

  private readonly lastNonce = new Map<string, string>();
}
