// The object store: one global revision counter (etcd's), the current objects by bucket and key,
// and a window of past changes. Watches replay the window, continue tokens and `Exact` lists read
// snapshots from it, and anything older than the window is gone (410).
import { clone, type KubeObject } from './objects.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  revision: number;
  bucket: string;
  key: string;
  type: ChangeType;
  /** The object after the change; for DELETED, the last state with the deletion's resourceVersion. */
  object: KubeObject;
  /** The object before the change (absent for ADDED). */
  previous?: KubeObject;
}

export class Store {
  private current: number;
  private readonly buckets = new Map<string, Map<string, KubeObject>>();
  private readonly uids = new Map<string, { bucket: string; key: string }>();
  /** Owner uid → the objects whose ownerReferences name it, as `bucket\0key`. */
  private readonly owned = new Map<string, Set<string>>();
  /** Past changes, oldest first, from index `first` on (the part before is dropped in batches). */
  private history: Change[] = [];
  private first = 0;
  /** Changes after this revision are all in `history`: a watch or snapshot from here on is possible. */
  private oldestRevision: number;
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(
    private readonly historyLimit: number,
    startRevision = 1,
  ) {
    this.current = startRevision;
    this.oldestRevision = startRevision;
  }

  get revision(): number {
    return this.current;
  }

  /** The oldest revision still answerable; older ones get 410 Gone. */
  get oldest(): number {
    return this.oldestRevision;
  }

  /** The stored object. Stored objects are never mutated: callers clone before changing one. */
  get(bucket: string, key: string): KubeObject | undefined {
    return this.buckets.get(bucket)?.get(key);
  }

  /** Where the object with this uid lives, if it exists. */
  locate(uid: string): { bucket: string; key: string } | undefined {
    return this.uids.get(uid);
  }

  /** The objects whose ownerReferences name `uid`. */
  dependents(uid: string): { bucket: string; key: string }[] {
    return [...(this.owned.get(uid) ?? [])].map((id) => {
      const [bucket, key] = id.split('\0') as [string, string];
      return { bucket, key };
    });
  }

  private index(obj: KubeObject | undefined, id: string, add: boolean): void {
    for (const ref of obj?.metadata.ownerReferences ?? []) {
      const set = this.owned.get(ref.uid) ?? new Set<string>();
      if (add) set.add(id);
      else set.delete(id);
      if (set.size > 0) this.owned.set(ref.uid, set);
      else this.owned.delete(ref.uid);
    }
  }

  /** The bucket's objects in key order, now or at a past revision of the window. */
  items(bucket: string, atRevision = this.current): [string, KubeObject][] {
    const map = new Map(this.buckets.get(bucket));
    for (let i = this.history.length - 1; i >= this.first; i--) {
      const c = this.history[i] as Change;
      if (c.revision <= atRevision) break;
      if (c.bucket !== bucket) continue;
      if (c.previous) map.set(c.key, c.previous);
      else map.delete(c.key);
    }
    return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Writes (or with `undefined`, deletes) an object as one new revision, stamps its
   * resourceVersion, records the change and tells the listeners. Returns the change.
   */
  commit(bucket: string, key: string, next: KubeObject | undefined): Change {
    const objects = this.buckets.get(bucket) ?? new Map<string, KubeObject>();
    this.buckets.set(bucket, objects);
    const previous = objects.get(key);
    if (!next && !previous) throw new Error(`store: delete of a missing object ${bucket} ${key}`);
    const revision = ++this.current;
    const stamped = clone(next ?? (previous as KubeObject));
    stamped.metadata.resourceVersion = String(revision);
    const change: Change = { revision, bucket, key, type: !next ? 'DELETED' : previous ? 'MODIFIED' : 'ADDED', object: stamped };
    if (previous) change.previous = previous;
    const id = `${bucket}\0${key}`;
    this.index(previous, id, false);
    if (next) {
      this.index(stamped, id, true);
      objects.set(key, stamped);
      if (stamped.metadata.uid) this.uids.set(stamped.metadata.uid, { bucket, key });
    } else {
      objects.delete(key);
      if (previous?.metadata.uid) this.uids.delete(previous.metadata.uid);
    }
    this.history.push(change);
    if (this.history.length - this.first > this.historyLimit) this.compact((this.history[this.history.length - this.historyLimit - 1] as Change).revision);
    for (const l of this.listeners) l(change);
    return change;
  }

  /** Changes after `revision`, oldest first. The caller checks `revision >= oldest` first. */
  changesAfter(revision: number): Change[] {
    return this.history.slice(this.indexAfter(revision));
  }

  private indexAfter(revision: number): number {
    let lo = this.first;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.history[mid] as Change).revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Forgets the changes up to `revision` (default: all), as etcd compaction does. */
  compact(revision = this.current): void {
    const through = Math.min(revision, this.current);
    if (through <= this.oldestRevision) return;
    this.first = this.indexAfter(through);
    this.oldestRevision = through;
    // Drop the forgotten part once it is the larger one, so trimming costs O(1) per write on average.
    if (this.first > this.history.length / 2) {
      this.history = this.history.slice(this.first);
      this.first = 0;
    }
  }

  onChange(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
