// Watch streams: a chunked HTTP response of newline-delimited `{"type","object"}` events. A watch
// from a resourceVersion replays the retained history, one older than the history gets an ERROR
// event with a 410 Expired Status (HTTP 200 first, as the API server's watch cache answers), and
// BOOKMARKs go to watchers that allow them, every interval and on request. Faults may put lines
// that are not events first, or hold the stream open in silence.
import type { ServerResponse } from 'node:http';
import { apiVersionOf, bucketOf, type KindSpec } from './kinds.js';
import { clone, type KubeObject } from './objects.js';
import { parseResourceVersion, type Selection, selection, selects, validateListOptions } from './list.js';
import { isTrue } from './request-info.js';
import type { Registry } from './registry.js';
import { tooOldResourceVersion } from './status.js';
import type { Change, Store } from './store.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** What a test can see of an open watch. */
export interface WatchInfo {
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** The resourceVersion the watch started from ('' when it started from the current state). */
  resourceVersion: string;
  allowWatchBookmarks: boolean;
  user?: string;
  /** Held open by the `silent` fault: it sends nothing, ever. */
  silent?: boolean;
}

export interface WatchRequest {
  spec: KindSpec;
  namespace: string | undefined;
  params: URLSearchParams;
  user?: string;
  /** Fault injection: answer with a 410 ERROR event whatever the resourceVersion. */
  gone?: boolean;
  /** Fault injection: lines sent as they are before anything else. */
  lines?: readonly string[];
  /** Fault injection: send nothing after the headers, and never end. */
  silent?: boolean;
}

export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

class Watcher {
  private readonly off: () => void;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly info: WatchInfo,
    private readonly res: ServerResponse,
    private readonly spec: KindSpec,
    private readonly chosen: Selection,
    private readonly registry: Registry,
    store: Store,
    onClose: () => void,
  ) {
    this.off = store.onChange((c) => this.consider(c));
    res.on('close', () => {
      this.off();
      if (this.timer) clearTimeout(this.timer);
      onClose();
    });
  }

  endAfter(seconds: number): void {
    this.timer = setTimeout(() => this.end(), seconds * 1000);
    this.timer.unref();
  }

  send(type: WatchEventType, object: unknown): void {
    if (!this.info.silent && !this.res.writableEnded && !this.res.destroyed) this.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  present(obj: KubeObject): KubeObject {
    return this.registry.present(obj, this.spec);
  }

  bookmark(revision: number, annotations?: Record<string, string>): void {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (annotations) metadata.annotations = annotations;
    this.send('BOOKMARK', { kind: this.spec.kind, apiVersion: apiVersionOf(this.spec), metadata });
  }

  /**
   * One change as this watcher sees it: an object that comes into the selection is ADDED, one
   * that leaves it is DELETED (its previous content at the new resourceVersion), as the API
   * server's watch cache does.
   */
  consider(change: Change): void {
    if (change.bucket !== bucketOf(this.spec)) return;
    const was = change.previous !== undefined && selects(this.chosen, change.previous);
    const is = change.type !== 'DELETED' && selects(this.chosen, change.object);
    if (is) this.send(was ? 'MODIFIED' : 'ADDED', this.present(change.object));
    else if (was) {
      const gone = clone(change.previous as KubeObject);
      gone.metadata.resourceVersion = String(change.revision);
      this.send('DELETED', this.present(gone));
    }
  }

  end(): void {
    this.res.end();
  }

  drop(): void {
    this.res.destroy();
  }
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private readonly waiters = new Set<() => void>();
  private bookmarkTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly bookmarkIntervalMs: number,
  ) {}

  /** Validates the request (throwing a Status before anything is written), then streams. */
  open(request: WatchRequest, res: ServerResponse): void {
    const { spec, params } = request;
    validateListOptions(params, true);
    const chosen = selection(spec, request.namespace, params);
    const from = parseResourceVersion(params.get('resourceVersion'));
    const info: WatchInfo = {
      group: spec.group,
      version: spec.version,
      resource: spec.plural,
      resourceVersion: params.get('resourceVersion') ?? '',
      allowWatchBookmarks: isTrue(params.get('allowWatchBookmarks')),
    };
    if (request.namespace !== undefined) info.namespace = request.namespace;
    for (const key of ['labelSelector', 'fieldSelector'] as const) {
      const value = params.get(key);
      if (value) info[key] = value;
    }
    if (request.user) info.user = request.user;

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    for (const line of request.lines ?? []) res.write(`${line}\n`);
    if (request.gone || (from !== undefined && from !== 0 && from < this.store.oldest)) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: tooOldResourceVersion(from ?? 0, this.store.oldest).status })}\n`);
      return;
    }
    if (request.silent) info.silent = true;
    const watcher = new Watcher(info, res, spec, chosen, this.registry, this.store, () => {
      this.watchers.delete(watcher);
    });
    if (request.silent) {
      this.opened(watcher);
      return;
    }
    // Replaying and subscribing happen in one turn of the event loop, so no change falls between.
    const initial = isTrue(params.get('sendInitialEvents'));
    if (from === undefined || from === 0 || initial) {
      for (const [, obj] of this.store.items(bucketOf(spec))) if (selects(chosen, obj)) watcher.send('ADDED', watcher.present(obj));
      if (initial) watcher.bookmark(this.store.revision, { [INITIAL_EVENTS_END]: 'true' });
    } else {
      for (const change of this.store.changesAfter(from)) watcher.consider(change);
    }
    const timeoutSeconds = Number(params.get('timeoutSeconds') ?? 0);
    if (timeoutSeconds > 0) watcher.endAfter(timeoutSeconds);
    this.startBookmarks();
    this.opened(watcher);
  }

  private opened(watcher: Watcher): void {
    this.watchers.add(watcher);
    for (const wake of this.waiters) wake();
  }

  private startBookmarks(): void {
    if (this.bookmarkTimer || this.bookmarkIntervalMs <= 0) return;
    this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.bookmarkIntervalMs);
    this.bookmarkTimer.unref();
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allows bookmarks. */
  sendBookmarks(): number {
    let sent = 0;
    for (const w of this.watchers) {
      if (!w.info.allowWatchBookmarks) continue;
      w.bookmark(this.store.revision);
      sent++;
    }
    return sent;
  }

  list(): WatchInfo[] {
    return [...this.watchers].map((w) => w.info);
  }

  /** Resolves once `count` open watches satisfy `filter`. */
  async waitFor(count: number, filter: (w: WatchInfo) => boolean = () => true): Promise<void> {
    while (this.list().filter(filter).length < count) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
      });
    }
  }

  /** Ends every open watch: abruptly (the connection drops mid-stream) or cleanly (as at a timeout). */
  closeAll(graceful: boolean): number {
    const all = [...this.watchers];
    for (const w of all) {
      if (graceful) w.end();
      else w.drop();
    }
    this.watchers.clear();
    return all.length;
  }

  stop(): void {
    this.closeAll(false);
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.bookmarkTimer = undefined;
  }
}
