// Informers on every watched kind, with client-node's ListWatch keeping the cache: list, then
// watch from the list's resourceVersion (with bookmarks, so a quiet watch still advances), and list
// again after 410 Gone. Around it, what client-go's reflector adds against an API server that
// misbehaves:
// - One backoff per informer (0.8 s doubling to 30 s, up to twice that with jitter, started over
//   after 2 minutes without a step). A restart after any failure waits it — ListWatch stops after a
//   watch or list error — and so does every relist, so an API server answering every watch with 410
//   costs a LIST per kind per backoff step, not one per round trip.
// - Answers are checked before the cache sees them (watch lines in KubeApi.watch, LISTs here): a
//   malformed one fails the watch or list, which restarts with backoff; nothing of it is kept.
// - Each informer knows when it last heard from the API server (a list, an event or bookmark, the
//   end of a watch at its timeout): one that has heard nothing for the watch silence bound is not
//   current, and readiness says so.
// When the API server answers again after an outage, waiting restarts go at once.
// Besides one informer per kind, single objects can be watched by name (the ConfigMaps that are
// referenced). The informers' caches are the controller's only store.
import { ListWatch, type KubernetesObject, Watch } from '@kubernetes/client-node';
import { ApiError, type JsonObject, type KubeApi, ShortWatch, WatchTimeout } from './api.js';
import { Backoff } from './backoff.js';
import { WATCHED_KINDS, type WatchedKind, collectionPath } from './kinds.js';
import { MalformedResponse, objectList } from './wire.js';

export type ObjectEvent = 'add' | 'update' | 'delete';

/** Why a watch or list failed: an answer that was not one, silence past the bound, a watch with nothing in it, an error Status, or the connection. */
export type FailureReason = 'malformed' | 'silent' | 'short' | 'status' | 'connection';

export function failureReason(err: unknown): FailureReason {
  if (err instanceof MalformedResponse) return 'malformed';
  if (err instanceof WatchTimeout) return 'silent';
  if (err instanceof ShortWatch) return 'short';
  if (err instanceof ApiError) return 'status';
  return 'connection';
}

export interface InformerEvents {
  /** An object of `kind` changed in the cache. */
  onChange?(kind: WatchedKind, event: ObjectEvent, object: KubernetesObject): void;
  /** An update changed only the status of a kind whose status the controller writes: no input changed. */
  onStatusOnly?(kind: WatchedKind, object: KubernetesObject): void;
  /** A list was made (the first, or a relist after 410 or a restart). */
  onList?(kind: WatchedKind, count: number): void;
  /** The informer lists again (410 Gone, or a restart that lost its place) after waiting `waitMs` more (0 when a restart's backoff was the wait). */
  onRelist?(kind: WatchedKind, waitMs: number): void;
  /** A watch or list failed; the informer restarts after `retryInMs`. */
  onError?(kind: WatchedKind, error: unknown, retryInMs: number, reason: FailureReason): void;
}

export interface InformerOptions {
  /** First backoff of restarts and relists; doubles up to `maxBackoffMs`, each wait up to twice its step at random. Default 800 ms. */
  backoffMs?: number;
  /** Default 30 000 ms; also how often a kind the cluster does not serve is checked again. */
  maxBackoffMs?: number;
  kinds?: readonly WatchedKind[];
}

interface KindState {
  kind: WatchedKind;
  /** `Kind` for a kind's informer, `Kind namespace/name` for one watched by name. */
  name: string;
  informer: ListWatch<KubernetesObject>;
  synced: boolean;
  /** The API server does not serve the kind (its CRD is not installed): it counts as empty. */
  absent: boolean;
  backoff: Backoff;
  /** A list has succeeded: any later one is a relist. */
  listed: boolean;
  /** A restart just waited out the backoff: the list it leads to waits no more. */
  waited: boolean;
  /** When the API server last said something to this informer (ms since the epoch; 0: never). */
  heardAt: number;
  timer?: NodeJS.Timeout;
  /** A relist waiting out its backoff; stopping cuts it short. */
  pause?: { timer: NodeJS.Timeout; cancel(): void };
  /** A named watch that was stopped: a failure still in flight restarts nothing. */
  removed?: boolean;
  /**
   * For kinds whose status the controller writes, to tell a status-only update: each object as it
   * was added, or once an update came, its input (without its status) as JSON.
   */
  inputs: Map<string, string | KubernetesObject>;
  /** Settles at the first list (or the first failure). */
  firstList: Promise<void>;
}

/**
 * client-node's Watch interface for one informer, served by KubeApi's watch (checked events,
 * deadlines, its own agent, bookmarks asked for). It notes what the informer hears, and turns what
 * ListWatch's async handlers throw into a failure of the watch instead of an unhandled rejection.
 */
class InformerWatch extends Watch {
  constructor(
    private readonly api: KubeApi,
    private readonly state: KindState,
    private readonly stopped: () => boolean,
    private readonly failed: (err: unknown) => void,
  ) {
    super(api.kc);
  }

  override watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const state = this.state;
    state.waited = false;
    if (this.stopped()) {
      // Stopped while its list was under way: ListWatch goes on to watch all the same.
      const idle = new AbortController();
      idle.abort();
      return Promise.resolve(idle);
    }
    const query = Object.fromEntries(Object.entries(queryParams).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
    const controller = this.api.watch(
      path,
      { ...query, allowWatchBookmarks: 'true' },
      (type, object, event) => {
        state.heardAt = Date.now();
        Promise.resolve(callback(type, object, event) as unknown).catch((err: unknown) => {
          controller.abort();
          this.failed(err);
        });
      },
      (err) => {
        if (err === null) state.heardAt = Date.now();
        Promise.resolve(done(err) as unknown).catch(this.failed);
      },
    );
    return Promise.resolve(controller);
  }
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

  constructor(
    private readonly api: KubeApi,
    private readonly events: InformerEvents = {},
    options: InformerOptions = {},
  ) {
    this.backoffMs = options.backoffMs ?? 800;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    for (const kind of options.kinds ?? WATCHED_KINDS)
      this.states.push(this.informer(kind, kind.kind, collectionPath(kind), kind.fieldSelector, kind.labelSelector));
    api.onReachable(() => this.retryNow());
  }

  private informer(kind: WatchedKind, name: string, path: string, fieldSelector: string | undefined, labelSelector?: string): KindState {
    let listed: () => void = () => {};
    const state: KindState = {
      kind,
      name,
      informer: undefined as unknown as ListWatch<KubernetesObject>,
      synced: false,
      absent: false,
      backoff: new Backoff({ initialMs: this.backoffMs, maxMs: this.maxBackoffMs }),
      listed: false,
      waited: false,
      heardAt: 0,
      inputs: new Map(),
      firstList: new Promise<void>((resolve) => {
        listed = resolve;
      }),
    };
    const list = async () => {
      try {
        if (state.listed) {
          const waitMs = state.waited ? 0 : state.backoff.next();
          state.waited = false;
          this.events.onRelist?.(kind, waitMs);
          if (waitMs > 0) await this.pause(state, waitMs);
        }
        const { items, resourceVersion } = objectList(await this.api.request('GET', path, { query: { fieldSelector, labelSelector } }), path);
        state.absent = false;
        state.synced = true;
        state.listed = true;
        state.heardAt = Date.now();
        this.events.onList?.(kind, items.length);
        return { metadata: { resourceVersion }, items: items.map((o) => withKind(kind, o as KubernetesObject)) } as never;
      } catch (err) {
        // A kind the cluster does not serve has no objects; check again later, slowly.
        if (err instanceof ApiError && err.status === 404) {
          state.absent = true;
          state.synced = true;
          state.heardAt = Date.now();
        }
        throw err;
      } finally {
        listed();
      }
    };
    const watch = new InformerWatch(
      this.api,
      state,
      () => this.stopped || state.removed === true,
      (err) => this.restart(state, err),
    );
    state.informer = new ListWatch<KubernetesObject>(path, watch, list, false, labelSelector, fieldSelector);
    const typed = (o: KubernetesObject) => (o.apiVersion ? o : (withKind(kind, o) as KubernetesObject));
    state.informer.on('add', (o) => {
      // The object itself: its input is made only if an update comes to compare (most never change).
      if (kind.statusWritten) state.inputs.set(keyOf(o), o);
      this.events.onChange?.(kind, 'add', typed(o));
    });
    state.informer.on('update', (o) => {
      if (kind.statusWritten) {
        const input = inputOf(o);
        const before = state.inputs.get(keyOf(o));
        state.inputs.set(keyOf(o), input);
        if (before !== undefined && (typeof before === 'string' ? before : inputOf(before)) === input) return this.events.onStatusOnly?.(kind, typed(o));
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

  /** Waits out a relist's backoff; rejects if the informer stops meanwhile. */
  private pause(state: KindState, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        state.pause = undefined;
        resolve();
      }, ms);
      state.pause = {
        timer,
        cancel: () => {
          clearTimeout(timer);
          state.pause = undefined;
          reject(new Error('stopped'));
        },
      };
    });
  }

  private run(state: KindState): void {
    void state.informer.start().catch((e: unknown) => this.restart(state, e));
  }

  /** The API server answers again: informers waiting out a backoff start now. */
  private retryNow(): void {
    for (const s of this.all()) {
      if (!s.timer || this.stopped) continue;
      clearTimeout(s.timer);
      s.timer = undefined;
      s.backoff.reset();
      s.waited = true;
      this.run(s);
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
    const state = this.informer(kind, key, path, `metadata.name=${name}`);
    this.named.set(key, state);
    if (this.started) this.run(state);
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
      state.pause?.cancel();
      await state.informer.stop();
    }
    return gone;
  }

  /** What `watchNamed` watches now, as `Kind namespace/name`. */
  namedWatches(): string[] {
    return [...this.named.keys()];
  }

  private restart(state: KindState, err: unknown): void {
    // One restart at a time: a failure reported twice (a handler's and the watch's) waits once.
    if (this.stopped || state.removed || state.timer) return;
    const delay = state.absent ? this.maxBackoffMs : state.backoff.next();
    this.events.onError?.(state.kind, err, delay, failureReason(err));
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (this.stopped || state.removed) return;
      state.waited = true;
      this.run(state);
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
    for (const s of this.all()) {
      if (s.timer) clearTimeout(s.timer);
      s.timer = undefined;
      s.pause?.cancel();
    }
    await Promise.all(this.all().map((s) => s.informer.stop()));
  }

  /** Every informer has listed once (a kind the cluster does not serve counts as listed, empty). */
  synced(): boolean {
    return this.states.every((s) => s.synced);
  }

  unsynced(): string[] {
    return this.states.filter((s) => !s.synced).map((s) => s.kind.kind);
  }

  /**
   * The informers that are not current, each with why: not listed yet, or nothing heard from the
   * API server for longer than the watch silence bound (a healthy watch ends at its timeout, well
   * within it). A kind the cluster does not serve is current: it is known to be empty.
   */
  notCurrent(now = Date.now()): string[] {
    const bound = this.api.watchSilenceMs;
    return this.all()
      .filter((s) => !s.absent && (!s.synced || now - s.heardAt > bound))
      .map((s) => `${s.name} (${s.synced ? `nothing heard for ${((now - s.heardAt) / 1000).toFixed(1)} s` : 'not listed yet'})`);
  }

  /** Every cached object of every kind, as the converter reads them. */
  objects(): JsonObject[] {
    const out: JsonObject[] = [];
    for (const s of this.all()) if (!s.kind.provisionOnly) for (const o of s.informer.list()) out.push(o as JsonObject);
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
