/**
 * The members of the picker's pool — the only endpoints it may ever name — from a fixed list, a
 * file (re-read when it changes), or a live cluster's EndpointSlices (watched, so changes apply
 * without a restart).
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { EndpointListError, parseEndpointList, trimEntry, type Endpoint } from './codec.js';

export interface PoolMembers {
  /** The current endpoints, canonical and without duplicates. */
  endpoints(): readonly Endpoint[];
  /** True once the members have loaded at least once (drives the readiness health status). */
  ready(): boolean;
  /** Called after every change; returns an unsubscribe function. */
  onChange(listener: (endpoints: readonly Endpoint[]) => void): () => void;
  /** Called when a reload fails; the last good endpoints stay in use. */
  onError(listener: (err: Error) => void): () => void;
  close(): Promise<void>;
}

/** Shared bookkeeping of the concrete member lists. */
class MembersBase {
  protected current: readonly Endpoint[] = [];
  protected loaded = false;
  private readonly changeListeners = new Set<(e: readonly Endpoint[]) => void>();
  private readonly errorListeners = new Set<(err: Error) => void>();

  endpoints(): readonly Endpoint[] {
    return this.current;
  }
  ready(): boolean {
    return this.loaded;
  }
  onChange(listener: (endpoints: readonly Endpoint[]) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }
  onError(listener: (err: Error) => void): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }
  protected set(endpoints: readonly Endpoint[]): void {
    this.current = endpoints;
    this.loaded = true;
    for (const l of this.changeListeners) l(endpoints);
  }
  protected fail(err: Error): void {
    for (const l of this.errorListeners) l(err);
  }
  async close(): Promise<void> {
    this.changeListeners.clear();
    this.errorListeners.clear();
  }
}

/** Parses a list of endpoints strictly enough for a picker: any bad entry is an error. */
export function parseEndpointsStrict(value: string, what: string): Endpoint[] {
  // No endpoints is a legitimate state (the picker then answers 503), not a syntax error.
  if (trimEntry(value) === '') return [];
  const { endpoints, errors } = parseEndpointList(value, { maxEntries: 100_000, maxLength: Number.MAX_SAFE_INTEGER });
  if (errors.length > 0) {
    const err = new EndpointListError(errors);
    err.message = `${what}: ${err.message}`;
    throw err;
  }
  return endpoints.map(({ ip, port, family, address }) => ({ ip, port, family, address }));
}

class StaticMembers extends MembersBase {
  constructor(endpoints: Endpoint[]) {
    super();
    this.set(endpoints);
  }
}

/** A fixed list, e.g. from `--endpoints 10.0.0.1:8000,10.0.0.2:8000`. Throws on any bad entry. */
export function staticEndpoints(list: string | readonly string[]): PoolMembers {
  const text = typeof list === 'string' ? list : list.join(',');
  return new StaticMembers(parseEndpointsStrict(text, '--endpoints'));
}

class FileMembers extends MembersBase {
  private watcher: FSWatcher | undefined;
  constructor(private readonly path: string) {
    super();
    this.set(this.read());
    // Editors often replace the file, so any event (write or rename) re-reads it by path.
    this.watcher = watch(path, () => this.reload());
  }
  private read(): Endpoint[] {
    const text = readFileSync(this.path, 'utf8')
      .split('\n')
      .map((line) => line.replace(/#.*/, '').trim())
      .filter((line) => line !== '')
      .join(',');
    return parseEndpointsStrict(text, this.path);
  }
  private reload(): void {
    try {
      this.set(this.read());
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }
  override async close(): Promise<void> {
    this.watcher?.close();
    this.watcher = undefined;
    await super.close();
  }
}

/**
 * Endpoints from a file: one or more `ip:port` per line, comma-separated, `#` starts a comment.
 * The file is re-read when it changes; a bad edit keeps the previous endpoints and reports an error.
 */
export function fileEndpoints(path: string): PoolMembers {
  return new FileMembers(path);
}

/** The parts of a discovery.k8s.io/v1 EndpointSlice the picker reads. */
export interface EndpointSliceLike {
  metadata?: { name?: string; namespace?: string };
  addressType?: string;
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean | null } | null }> | null;
  ports?: Array<{ name?: string | null; port?: number | null }> | null;
}

/**
 * The ready `ip:port` endpoints of a set of EndpointSlices. `port` picks a port by number or name;
 * without it every port of the slice is used. Addresses that are not IPs (FQDN slices) are skipped.
 */
export function endpointsFromSlices(slices: Iterable<EndpointSliceLike>, port?: number | string): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue;
    const ports = (slice.ports ?? []).filter((p) => typeof p.port === 'number' && (port === undefined || p.port === port || (p.name ?? '') === port));
    for (const ep of slice.endpoints ?? []) {
      // A nil `ready` means ready, by the EndpointSlice API's own definition.
      if (ep.conditions?.ready === false) continue;
      for (const address of ep.addresses ?? []) {
        for (const p of ports) {
          const parsed = parseEndpointList(address.includes(':') ? `[${address}]:${p.port}` : `${address}:${p.port}`);
          for (const e of parsed.endpoints) seen.set(e.address, { ip: e.ip, port: e.port, family: e.family, address: e.address });
        }
      }
    }
  }
  return [...seen.values()].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

export interface ClusterEndpointsOptions {
  namespace: string;
  /** Label selector on EndpointSlices, e.g. `kubernetes.io/service-name=model-server`. */
  selector: string;
  port?: number | string;
  /** A KubeConfig from `@kubernetes/client-node`; the default one is loaded when omitted. */
  kubeConfig?: unknown;
  /** Delay before re-watching after the watch fails. Default 1000 ms. */
  retryMs?: number;
}

/**
 * Endpoints from the EndpointSlices matching a selector in one namespace, kept current by a
 * watch. The returned members are ready once the first list has arrived.
 */
export async function clusterEndpoints(options: ClusterEndpointsOptions): Promise<PoolMembers> {
  // Loaded lazily: the Kubernetes client is large and only cluster members need it.
  const k8s = await import('@kubernetes/client-node');
  const kc = allowPlainHttp(k8s, (options.kubeConfig as InstanceType<typeof k8s.KubeConfig> | undefined) ?? loadDefaultKubeConfig(k8s));
  const api = kc.makeApiClient(k8s.DiscoveryV1Api);
  const path = `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/endpointslices`;
  const informer = k8s.makeInformer(
    kc,
    path,
    () => api.listNamespacedEndpointSlice({ namespace: options.namespace, labelSelector: options.selector }),
    options.selector,
  );
  const members = new ClusterMembers(informer, options.port, options.retryMs ?? 1000);
  await members.start();
  return members;
}

function loadDefaultKubeConfig(k8s: typeof import('@kubernetes/client-node')): InstanceType<typeof k8s.KubeConfig> {
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/**
 * A kubeconfig naming a plain `http://` server (`kubectl proxy`, a local test cluster) as kubectl
 * takes it: client-node 1.4 refuses one unless its cluster skips TLS verification (its switch to a
 * plain agent), and over plain HTTP there is none to skip. Any other kubeconfig is returned as is.
 * (The controller has the same mend; the picker does not depend on it.)
 */
function allowPlainHttp(k8s: typeof import('@kubernetes/client-node'), kc: InstanceType<typeof k8s.KubeConfig>): InstanceType<typeof k8s.KubeConfig> {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server.startsWith('http:') || cluster.skipTLSVerify) return kc;
  const copy = new k8s.KubeConfig();
  const clusters = kc.clusters.map((c) => (c === cluster ? { ...c, skipTLSVerify: true } : c));
  copy.loadFromOptions({ clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
  return copy;
}

interface InformerLike {
  on(verb: 'add' | 'update' | 'delete', cb: () => void): void;
  on(verb: 'error', cb: (err: unknown) => void): void;
  list(): readonly unknown[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

class ClusterMembers extends MembersBase {
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  constructor(
    private readonly informer: InformerLike,
    private readonly port: number | string | undefined,
    private readonly retryMs: number,
  ) {
    super();
    const refresh = (): void => this.set(endpointsFromSlices(this.informer.list() as EndpointSliceLike[], this.port));
    for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, refresh);
    informer.on('error', (err: unknown) => {
      this.fail(err instanceof Error ? err : new Error(String(err)));
      if (this.stopped) return;
      // The informer stops on error; start it again after a pause, keeping the last endpoints.
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (!this.stopped) this.informer.start().catch((e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))));
      }, this.retryMs);
      this.retry.unref();
    });
  }
  async start(): Promise<void> {
    await this.informer.start();
    this.set(endpointsFromSlices(this.informer.list() as EndpointSliceLike[], this.port));
  }
  override async close(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    await this.informer.stop();
    await super.close();
  }
}
