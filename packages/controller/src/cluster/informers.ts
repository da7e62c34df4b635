// Informers on every watched kind, with client-node's ListWatch: list, then watch from the list's
// resourceVersion (with bookmarks, so a quiet watch still advances), relist on 410 Gone, and — since
// ListWatch stops after any other watch or list error — restart with backoff; when the API server
// answers again after an outage, waiting restarts go at once instead of sleeping out their backoff.
// Besides one informer per kind, single objects can be watched by name (the ConfigMaps that are
// referenced). The informers' caches are the controller's only store.
import { ListWatch, type KubernetesObject, Watch } from '@kubernetes/client-node';
import { ApiError, type JsonObject, type KubeApi } from './api.js';
import { WATCHED_KINDS, type WatchedKind, collectionPath } from './kinds.js';

export type ObjectEvent = 'add' | 'update' | 'delete';

export interface InformerEvents {
  /** An object of `kind` changed in the cache. */
  onChange?(kind: WatchedKind, event: ObjectEvent, object: KubernetesObject): void;
  /** An update changed only the status of a kind whose status the controller writes: no input changed. */
  onStatusOnly?(kind: WatchedKind, object: KubernetesObject): void;
  /** A list was made (the first, or a relist after 410 or a restart). */
  onList?(kind: WatchedKind, count: number): void;
  /** A watch or list failed; the informer restarts after `retryInMs`. */
  onError?(kind: WatchedKind, error: unknown, retryInMs: number): void;
}

export interface InformerOptions {
  /** First restart delay; doubles up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  kinds?: readonly WatchedKind[];
}

/** client-node's Watch interface, served by KubeApi's watch (deadlines, its own agent, bookmarks asked for). */
class ApiWatch extends Watch {
  constructor(private readonly api: KubeApi) {
    super(api.kc);
  }

  override watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const query = Object.fromEntries(Object.entries(queryParams).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
    return Promise.resolve(this.api.watch(path, { ...query, allowWatchBookmarks: 'true' }, callback, done));
  }
}

interface KindState {
  kind: WatchedKind;
  informer: ListWatch<KubernetesObject>;
  synced: boolean;
  /** The API server does not serve the kind (its CRD is not installed): it counts as empty. */
  absent: boolean;
  backoffMs: number;
  /** When the last failure was: one long after it starts the backoff over. */
  failedAt: number;
  timer?: NodeJS.Timeout;
  /** A named watch that was stopped: a failure still in flight restarts nothing. */
  removed?: boolean;
  /** For kinds whose status the controller writes: each object without its status, to tell a status-only update. */
  inputs: Map<string, string>;
  /** Settles at the first list (or the first failure). */
  firstList: Promise<void>;
}

/** Objects from a list or a watch, in the form `kubectl get -o json` shows: with apiVersion and kind. */
function withKind(kind: WatchedKind, o: KubernetesObject): JsonObject {
  return { ...(o as JsonObject), apiVersion: kind.apiVersion, kind: kind.kind };
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** The object as an input: without its status and the fields every write changes. */
function inputOf(o: KubernetesObject): string {
  const { status: _status, ...rest } = o as JsonObject;
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = (o.metadata ?? {}) as JsonObject;
  return JSON.stringify({ ...rest, metadata });
}

export class Informers {
  private readonly states: KindState[] = [];
  private stopped = false;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  private readonly named = new Map<string, KindState>();
  private started = false;
  private readonly watch: ApiWatch;

  constructor(
    private readonly api: KubeApi,
    private readonly events: InformerEvents = {},
    options: InformerOptions = {},
  ) {
    this.backoffMs = options.backoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.watch = new ApiWatch(api);
    for (const kind of options.kinds ?? WATCHED_KINDS) this.states.push(this.informer(kind, collectionPath(kind), kind.fieldSelector));
    api.onReachable(() => this.retryNow());
  }

  private informer(kind: WatchedKind, path: string, fieldSelector: string | undefined): KindState {
    let listed: () => void = () => {};
    const state: KindState = {
      kind,
      informer: undefined as unknown as ListWatch<KubernetesObject>,
      synced: false,
      absent: false,
      backoffMs: this.backoffMs,
      failedAt: 0,
      inputs: new Map(),
      firstList: new Promise<void>((resolve) => {
        listed = resolve;
      }),
    };
    const list = async () => {
      try {
        const result = await this.api.request<{ items?: KubernetesObject[]; metadata?: { resourceVersion?: string } }>('GET', path, {
          query: { fieldSelector },
        });
        state.absent = false;
        state.synced = true;
        state.backoffMs = this.backoffMs;
        this.events.onList?.(kind, result.items?.length ?? 0);
        return { ...result, items: (result.items ?? []).map((o) => withKind(kind, o) as KubernetesObject) } as never;
      } catch (err) {
        // A kind the cluster does not serve has no objects; check again later, slowly.
        if (err instanceof ApiError && err.status === 404) {
          state.absent = true;
          state.synced = true;
        }
        throw err;
      } finally {
        listed();
      }
    };
    state.informer = new ListWatch<KubernetesObject>(path, this.watch, list, false, undefined, fieldSelector);
    const typed = (o: KubernetesObject) => (o.apiVersion ? o : (withKind(kind, o) as KubernetesObject));
    state.informer.on('add', (o) => {
      if (kind.statusWritten) state.inputs.set(keyOf(o), inputOf(o));
      this.events.onChange?.(kind, 'add', typed(o));
    });
    state.informer.on('update', (o) => {
      if (kind.statusWritten) {
        const input = inputOf(o);
        if (state.inputs.get(keyOf(o)) === input) return this.events.onStatusOnly?.(kind, typed(o));
        state.inputs.set(keyOf(o), input);
      }
      this.events.onChange?.(kind, 'update', typed(o));
    });
    state.informer.on('delete', (o) => {
      state.inputs.delete(keyOf(o));
      this.events.onChange?.(kind, 'delete', typed(o));
    });
    state.informer.on('error', (err) => this.restart(state, err));
    return state;
  }

  /** The API server answers again: informers waiting out a backoff start now. */
  private retryNow(): void {
    for (const s of [...this.states, ...this.named.values()]) {
      if (!s.timer || this.stopped) continue;
      clearTimeout(s.timer);
      s.timer = undefined;
      s.backoffMs = this.backoffMs;
      void s.informer.start().catch((e: unknown) => this.restart(s, e));
    }
  }

  /**
   * Watches the objects of `kind` named `name` in `namespace` (a field selector on the name, so
   * nothing else of the kind is listed); resolves after its first list. Watching it again is a no-op.
   */
  watchNamed(kind: WatchedKind, namespace: string, name: string): Promise<void> {
    const key = `${kind.kind} ${namespace}/${name}`;
    const existing = this.named.get(key);
    if (existing) return existing.firstList;
    const path = `${collectionPath(kind).replace(/\/[^/]+$/, '')}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`;
    const state = this.informer(kind, path, `metadata.name=${name}`);
    this.named.set(key, state);
    if (this.started) void state.informer.start().catch((e: unknown) => this.restart(state, e));
    return state.firstList;
  }

  /** Stops watching what `watchNamed` started, except the `keep` ones (`Kind namespace/name`); its objects leave the cache. */
  async unwatchNamedExcept(keep: ReadonlySet<string>): Promise<string[]> {
    const gone = [...this.named.keys()].filter((k) => !keep.has(k));
    for (const key of gone) {
      const state = this.named.get(key) as KindState;
      this.named.delete(key);
      state.removed = true;
      if (state.timer) clearTimeout(state.timer);
      await state.informer.stop();
    }
    return gone;
  }

  /** What `watchNamed` watches now, as `Kind namespace/name`. */
  namedWatches(): string[] {
    return [...this.named.keys()];
  }

  private restart(state: KindState, err: unknown): void {
    if (this.stopped || state.removed) return;
    // A watch that ran well for a while before failing starts the backoff over.
    const now = Date.now();
    if (now - state.failedAt > 2 * this.maxBackoffMs) state.backoffMs = this.backoffMs;
    state.failedAt = now;
    const delay = state.absent ? this.maxBackoffMs : state.backoffMs;
    state.backoffMs = Math.min(state.backoffMs * 2, this.maxBackoffMs);
    this.events.onError?.(state.kind, err, delay);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (!this.stopped) void state.informer.start().catch((e: unknown) => this.restart(state, e));
    }, delay);
    state.timer.unref?.();
  }

  private all(): KindState[] {
    return [...this.states, ...this.named.values()];
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.started = true;
    await Promise.all(this.all().map((s) => s.informer.start().catch((e: unknown) => this.restart(s, e))));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.started = false;
    for (const s of this.all()) if (s.timer) clearTimeout(s.timer);
    await Promise.all(this.all().map((s) => s.informer.stop()));
  }

  /** Every informer has listed once (a kind the cluster does not serve counts as listed, empty). */
  synced(): boolean {
    return this.states.every((s) => s.synced);
  }

  unsynced(): string[] {
    return this.states.filter((s) => !s.synced).map((s) => s.kind.kind);
  }

  /** Every cached object of every kind, as the converter reads them. */
  objects(): JsonObject[] {
    const out: JsonObject[] = [];
    for (const s of this.all()) for (const o of s.informer.list()) out.push(o as JsonObject);
    return out;
  }

  /** The cached objects of one kind. */
  list(kind: string, namespace?: string): JsonObject[] {
    return this.all()
      .filter((x) => x.kind.kind === kind)
      .flatMap((s) => s.informer.list(namespace) as JsonObject[]);
  }

  get(kind: string, name: string, namespace?: string): JsonObject | undefined {
    for (const s of this.all()) {
      const o = s.kind.kind === kind ? s.informer.get(name, namespace) : undefined;
      if (o) return o as JsonObject;
    }
    return undefined;
  }
}
