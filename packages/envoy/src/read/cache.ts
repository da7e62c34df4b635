// The read stage's memory: each object is read once. An object is known again by identity, or
// by uid, kind, namespace, name and resourceVersion (a re-list gives new objects with the same
// version), so a change re-reads only the objects it added or updated.
import { isObject } from '../json.js';
import { type ObjectRead, readObject, textOf } from './index.js';

const SEP = '\u0000';

/** uid, apiVersion, kind, namespace, name and resourceVersion, when the object has a resourceVersion. */
function versionOf(raw: object, defaultNamespace: string): { id: string; version: string } | undefined {
  const o = raw as Record<string, unknown>;
  const m = o.metadata;
  if (!isObject(m) || typeof m.name !== 'string' || typeof m.resourceVersion !== 'string' || m.resourceVersion === '') return undefined;
  const namespace = typeof m.namespace === 'string' && m.namespace !== '' ? m.namespace : defaultNamespace;
  const id = [textOf(o.apiVersion), textOf(o.kind), namespace, m.name].join(SEP);
  return { id, version: `${typeof m.uid === 'string' ? m.uid : ''}${SEP}${m.resourceVersion}` };
}

export class ReadCache {
  private byObject = new WeakMap<object, ObjectRead>();
  /** Per object id, the version last read and what it read. */
  private byVersion = new Map<string, { version: string; read: ObjectRead }>();
  private seen = new Set<string>();

  read(raw: unknown, defaultNamespace: string): ObjectRead {
    if (typeof raw !== 'object' || raw === null) return readObject(raw, defaultNamespace);
    const known = this.byObject.get(raw);
    const v = versionOf(raw, defaultNamespace);
    if (v) this.seen.add(v.id);
    if (known) return known;
    const held = v && this.byVersion.get(v.id);
    const read = held && held.version === v.version ? held.read : readObject(raw, defaultNamespace);
    this.byObject.set(raw, read);
    if (v) this.byVersion.set(v.id, { version: v.version, read });
    return read;
  }

  /** Forgets the versions of objects not read since the last sweep (they are gone). */
  sweep(): void {
    for (const id of this.byVersion.keys()) if (!this.seen.has(id)) this.byVersion.delete(id);
    this.seen.clear();
  }
}
