// Informers on every watched kind, with client-node's ListWatch: list, then watch from the list's
// resourceVersion (with bookmarks, so a quiet watch still advances), relist on 410 Gone, and — since
// ListWatch stops after any other watch or list error — restart with backoff. The informers' caches
// are the controller's only store.
import { ListWatch, type KubeConfig, type KubernetesObject, Watch } from '@kubernetes/client-node';
import { ApiError, type JsonObject, KubeApi } from './api.js';
import { WATCHED_KINDS, type WatchedKind, collectionPath } from './kinds.js';

export type ObjectEvent = 'add' | 'update' | 'delete';

export interface InformerEvents {
  /** An object of `kind` changed in the cache. */
  onChange?(kind: WatchedKind, event: ObjectEvent, object: KubernetesObject): void;
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

/** A Watch that asks for bookmarks, which client-node's ListWatch does not. */
class BookmarkingWatch extends Watch {
  override watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ) {
    return super.watch(path, { ...queryParams, allowWatchBookmarks: true }, callback, done);
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
}

/** Objects from a list or a watch, in the form `kubectl get -o json` shows: with apiVersion and kind. */
function withKind(kind: WatchedKind, o: KubernetesObject): JsonObject {
  return { ...(o as JsonObject), apiVersion: kind.apiVersion, kind: kind.kind };
}

export class Informers {
  private readonly states: KindState[] = [];
  private stopped = false;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    kc: KubeConfig,
    private readonly events: InformerEvents = {},
    options: InformerOptions = {},
  ) {
    this.backoffMs = options.backoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    const api = new KubeApi(kc);
    const watch = new BookmarkingWatch(kc);
    for (const kind of options.kinds ?? WATCHED_KINDS) {
      const path = collectionPath(kind);
      const state: KindState = {
        kind,
        informer: undefined as unknown as ListWatch<KubernetesObject>,
        synced: false,
        absent: false,
        backoffMs: this.backoffMs,
        failedAt: 0,
      };
      const list = async () => {
        try {
          const result = await api.request<{ items?: KubernetesObject[]; metadata?: { resourceVersion?: string } }>('GET', path, {
            query: { fieldSelector: kind.fieldSelector },
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
        }
      };
      state.informer = new ListWatch<KubernetesObject>(path, watch, list, false, undefined, kind.fieldSelector);
      for (const event of ['add', 'update', 'delete'] as const) {
        state.informer.on(event, (o) => this.events.onChange?.(kind, event, o.apiVersion ? o : (withKind(kind, o) as KubernetesObject)));
      }
      state.informer.on('error', (err) => this.restart(state, err));
      this.states.push(state);
    }
  }

  private restart(state: KindState, err: unknown): void {
    if (this.stopped) return;
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

  async start(): Promise<void> {
    this.stopped = false;
    await Promise.all(this.states.map((s) => s.informer.start().catch((e: unknown) => this.restart(s, e))));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.states) if (s.timer) clearTimeout(s.timer);
    await Promise.all(this.states.map((s) => s.informer.stop()));
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
    for (const s of this.states) for (const o of s.informer.list()) out.push(o as JsonObject);
    return out;
  }

  /** The cached objects of one kind. */
  list(kind: string, namespace?: string): JsonObject[] {
    const s = this.states.find((x) => x.kind.kind === kind);
    return (s?.informer.list(namespace) ?? []) as JsonObject[];
  }

  get(kind: string, name: string, namespace?: string): JsonObject | undefined {
    return this.states.find((x) => x.kind.kind === kind)?.informer.get(name, namespace) as JsonObject | undefined;
  }
}
