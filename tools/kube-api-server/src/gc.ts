// What kube-controller-manager does after a DELETE: the garbage collector (dependents whose owners
// are all gone are deleted, references to gone owners are dropped, foreground deletion waits for
// the dependents) and the namespace controller (a Terminating namespace is emptied, then removed).
// It watches the store like the real controllers watch the API, and works asynchronously, so a
// DELETE answers before its dependents go.
import { bucketOf, type KindSpec, type KindTable } from './kinds.js';
import { clone, objectKey, type OwnerReference } from './objects.js';
import { FOREGROUND, NAMESPACES, type Registry } from './registry.js';
import { ApiError } from './status.js';
import type { Change, Store } from './store.js';

export class GarbageCollector {
  private pending = 0;
  private idle: (() => void)[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly kinds: KindTable,
  ) {
    this.unsubscribe = store.onChange((c) => this.observe(c));
  }

  stop(): void {
    this.unsubscribe();
  }

  /** Resolves once no collection work is queued. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(work: () => void): void {
    this.pending++;
    setImmediate(() => {
      try {
        work();
      } catch (err) {
        // Someone else deleted or changed the object first: the next event brings it back here.
        if (!(err instanceof ApiError)) throw err;
      } finally {
        if (--this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
      }
    });
  }

  private observe(change: Change): void {
    const obj = change.object;
    const uid = obj.metadata.uid as string;
    if (change.type === 'DELETED') {
      this.schedule(() => this.ownerGone(uid));
      for (const ref of obj.metadata.ownerReferences ?? []) this.schedule(() => this.foreground(ref.uid));
      if (obj.metadata.namespace) this.schedule(() => this.finishNamespace(obj.metadata.namespace as string));
      return;
    }
    if (obj.metadata.ownerReferences?.length) this.schedule(() => this.attemptToDelete(change.bucket, change.key));
    if (obj.metadata.deletionTimestamp && obj.metadata.finalizers?.includes(FOREGROUND)) this.schedule(() => this.foreground(uid));
    if (change.bucket === NAMESPACES && obj.metadata.deletionTimestamp) this.schedule(() => this.finishNamespace(obj.metadata.name as string));
  }

  private ownerGone(uid: string): void {
    for (const { bucket, key } of this.store.dependents(uid)) this.attemptToDelete(bucket, key);
  }

  /** An owner that exists and is not itself waiting for its dependents to go. */
  private ownerIsSolid(ref: OwnerReference): boolean {
    // An owner of a kind the server does not serve cannot be looked up; the real collector then leaves the dependent alone.
    if (!this.kinds.kind(ref.apiVersion, ref.kind)) return true;
    const at = this.store.locate(ref.uid);
    const owner = at && this.store.get(at.bucket, at.key);
    return !!owner && !(owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FOREGROUND));
  }

  private attemptToDelete(bucket: string, key: string): void {
    const obj = this.store.get(bucket, key);
    const spec = this.kinds.forBucket(bucket);
    if (!obj || !spec || obj.metadata.deletionTimestamp) return;
    const refs = obj.metadata.ownerReferences ?? [];
    const solid = refs.filter((r) => this.ownerIsSolid(r));
    if (solid.length === refs.length) return;
    const existing = refs.filter((r) => this.store.locate(r.uid));
    if (solid.length === 0) {
      // Every owner is gone or deleting in the foreground: the dependent goes, in the foreground if an owner waits for it.
      const policy = existing.length > 0 ? 'Foreground' : 'Background';
      this.registry.delete(spec, obj.metadata.namespace, obj.metadata.name as string, { propagationPolicy: policy });
      return;
    }
    if (existing.length === refs.length) return;
    const next = clone(obj);
    next.metadata.ownerReferences = existing;
    this.registry.systemUpdate(spec, obj, next);
  }

  /** Foreground deletion: dependents first; the owner's finalizer goes when none is left. */
  private foreground(uid: string): void {
    const at = this.store.locate(uid);
    const owner = at && this.store.get(at.bucket, at.key);
    const spec = at && this.kinds.forBucket(at.bucket);
    if (!owner || !spec || !owner.metadata.deletionTimestamp || !owner.metadata.finalizers?.includes(FOREGROUND)) return;
    const dependents = this.store.dependents(uid);
    if (dependents.length > 0) {
      for (const d of dependents) this.attemptToDelete(d.bucket, d.key);
      return;
    }
    const next = clone(owner);
    next.metadata.finalizers = (owner.metadata.finalizers ?? []).filter((f) => f !== FOREGROUND);
    this.registry.systemUpdate(spec, owner, next);
  }

  /** The namespace controller: delete everything in a Terminating namespace, then the namespace. */
  private finishNamespace(name: string): void {
    const ns = this.store.get(NAMESPACES, objectKey(undefined, name));
    if (!ns?.metadata.deletionTimestamp) return;
    let left = 0;
    for (const spec of this.namespacedKinds()) {
      for (const [, obj] of this.store.items(bucketOf(spec))) {
        if (obj.metadata.namespace !== name) continue;
        left++;
        if (!obj.metadata.deletionTimestamp) this.registry.delete(spec, name, obj.metadata.name as string);
      }
    }
    // Empty: the namespace controller's finalizer goes, and with it the namespace.
    const spec = this.kinds.forBucket(NAMESPACES);
    if (left > 0 || !spec) return;
    const next = clone(ns);
    next.spec = { ...(next.spec as object), finalizers: [] };
    this.registry.systemUpdate(spec, ns, next);
  }

  private namespacedKinds(): KindSpec[] {
    const seen = new Set<string>();
    return this.kinds.all().filter((k) => k.namespaced && !seen.has(bucketOf(k)) && seen.add(bucketOf(k)));
  }
}
