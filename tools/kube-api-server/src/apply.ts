// Server-side apply as the API server does it (structured-merge-diff): every manager owns a set of
// field paths, recorded in metadata.managedFields (FieldsV1); an apply sets the fields its
// configuration names, removes the fields the same manager applied before and no longer names
// (unless someone else owns them too), and is refused with 409 when it would change a field another
// manager owns, unless `force` takes that field over. An update (PUT, a non-apply PATCH) by a named
// manager takes ownership of the fields it changed, away from everyone else.
//
// Lists are merged by key where the kind says so (the strategic-merge keys of the built-in kinds:
// `k:{"name":...}` elements, `v:` for sets of scalars); every other list is atomic, owned whole.
import { clone, deepEqual, isRecord, type KubeObject, timestamp } from './objects.js';
import { failure } from './status.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** One field path: `f:spec`, `f:containers`, `k:{"name":"envoy"}`, `v:"x"` elements; a `.` last element marks a list item itself. */
type Path = string[];
const SEP = '\u0000';

/** Metadata fields the server sets, which nobody owns. */
const SYSTEM_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

export interface ListKeys {
  /** Dotted field path (list elements skipped) → merge key, `''` for a set of scalars. */
  [path: string]: string;
}

function dotted(fields: string[]): string {
  return fields.join('.');
}

/** The leaf paths (and list-item markers) an object's fields make, as strings. */
export function fieldSet(obj: KubeObject, keys: ListKeys, ignoreStatus: boolean): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown, path: Path, names: string[]): void => {
    if (isRecord(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined) continue;
        walk(v, [...path, `f:${k}`], [...names, k]);
      }
      return;
    }
    const key = keys[dotted(names)];
    if (Array.isArray(value) && key !== undefined) {
      for (const item of value) {
        if (key === '') {
          out.add([...path, `v:${JSON.stringify(item)}`].join(SEP));
          continue;
        }
        const element = [...path, `k:${JSON.stringify({ [key]: isRecord(item) ? item[key] : item })}`];
        out.add([...element, '.'].join(SEP));
        walk(item, element, names);
      }
      return;
    }
    if (path.length > 0) out.add(path.join(SEP));
  };
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || (k === 'status' && ignoreStatus)) continue;
    if (k === 'metadata' && isRecord(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!SYSTEM_METADATA.has(mk) && mv !== undefined) walk(mv, ['f:metadata', `f:${mk}`], ['metadata', mk]);
      continue;
    }
    walk(v, [`f:${k}`], [k]);
  }
  return out;
}

/** FieldsV1 (nested objects, `{}` at a leaf, `.: {}` on a list item) from a set of paths. */
export function toFieldsV1(set: Set<string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of [...set].sort()) {
    let node = root;
    for (const part of p.split(SEP)) {
      node[part] ??= {};
      node = node[part] as Record<string, unknown>;
    }
  }
  return root;
}

export function fromFieldsV1(tree: unknown, prefix: string[] = [], out = new Set<string>()): Set<string> {
  if (!isRecord(tree)) return out;
  const entries = Object.entries(tree);
  if (entries.length === 0 && prefix.length > 0) out.add(prefix.join(SEP));
  for (const [k, v] of entries) fromFieldsV1(v, [...prefix, k], out);
  return out;
}

/** What a path points at in an object: `undefined` when absent. */
function valueAt(obj: unknown, path: string): unknown {
  let node: unknown = obj;
  for (const part of path.split(SEP)) {
    if (part === '.') return node;
    if (part.startsWith('f:')) node = isRecord(node) ? node[part.slice(2)] : undefined;
    else if (part.startsWith('k:')) {
      const want = JSON.parse(part.slice(2)) as Record<string, unknown>;
      node = Array.isArray(node) ? node.find((x) => isRecord(x) && Object.entries(want).every(([k, v]) => deepEqual(x[k], v))) : undefined;
    } else if (part.startsWith('v:')) {
      const want = JSON.parse(part.slice(2));
      node = Array.isArray(node) && node.some((x) => deepEqual(x, want)) ? want : undefined;
    }
    if (node === undefined) return undefined;
  }
  return node;
}

/** Removes what a path points at (a field, a list item) from `obj`, in place. */
function removeAt(obj: unknown, path: string): void {
  const parts = path.split(SEP).filter((p) => p !== '.');
  let node: unknown = obj;
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    if (part.startsWith('f:')) {
      if (!isRecord(node)) return;
      if (last) delete node[part.slice(2)];
      else node = node[part.slice(2)];
    } else if (Array.isArray(node)) {
      const want = JSON.parse(part.slice(2));
      const at = part.startsWith('k:')
        ? node.findIndex((x) => isRecord(x) && Object.entries(want as Record<string, unknown>).every(([k, v]) => deepEqual(x[k], v)))
        : node.findIndex((x) => deepEqual(x, want));
      if (at < 0) return;
      if (last) node.splice(at, 1);
      else node = node[at];
    } else return;
  }
}

/** Drops maps left empty by removals, so a removed last label does not leave `labels: {}`. */
function pruneEmpty(value: unknown): unknown {
  if (!isRecord(value)) return value;
  for (const [k, v] of Object.entries(value)) {
    if (isRecord(v)) {
      pruneEmpty(v);
      if (Object.keys(v).length === 0) delete value[k];
    }
  }
  return value;
}

/** The applied configuration merged into the live object: maps field by field, keyed lists by key, sets as unions, anything else replaced. */
function merge(live: unknown, applied: unknown, keys: ListKeys, names: string[]): unknown {
  if (isRecord(applied) && isRecord(live)) {
    const out: Record<string, unknown> = { ...live };
    for (const [k, v] of Object.entries(applied)) out[k] = merge(live[k], v, keys, [...names, k]);
    return out;
  }
  const key = keys[dotted(names)];
  if (Array.isArray(applied) && Array.isArray(live) && key !== undefined) {
    const out = [...live];
    for (const item of applied) {
      const at = key === '' ? out.findIndex((x) => deepEqual(x, item)) : out.findIndex((x) => isRecord(x) && isRecord(item) && deepEqual(x[key], item[key]));
      if (at < 0) out.push(clone(item));
      else if (key !== '') out[at] = merge(out[at], item, keys, names);
    }
    return out;
  }
  return clone(applied);
}

/** `.spec.replicas`, `.spec.containers[name="envoy"].image`: how the API server names a path in a conflict. */
function describe(path: string): string {
  return path
    .split(SEP)
    .filter((p) => p !== '.')
    .map((p) => {
      if (p.startsWith('f:')) return `.${p.slice(2)}`;
      if (p.startsWith('v:')) return `[${p.slice(2)}]`;
      const key = JSON.parse(p.slice(2)) as Record<string, unknown>;
      return `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}

function entriesOf(obj: KubeObject): ManagedFieldsEntry[] {
  const list = obj.metadata.managedFields;
  return Array.isArray(list) ? (clone(list) as ManagedFieldsEntry[]) : [];
}

function owned(entry: ManagedFieldsEntry): Set<string> {
  return fromFieldsV1(entry.fieldsV1);
}

/** The entries with `set` recorded for one manager and operation; a manager whose set is unchanged keeps its time, so a no-op write stays a no-op. */
function record(
  entries: ManagedFieldsEntry[],
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  set: Set<string>,
  subresource?: string,
): ManagedFieldsEntry[] {
  const fieldsV1 = toFieldsV1(set);
  const at = entries.findIndex((e) => e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? ''));
  const prev = at >= 0 ? entries[at] : undefined;
  const entry: ManagedFieldsEntry = {
    manager,
    operation,
    apiVersion,
    time: prev && deepEqual(prev.fieldsV1, fieldsV1) ? prev.time : timestamp(),
    fieldsType: 'FieldsV1',
    fieldsV1,
  };
  if (subresource) entry.subresource = subresource;
  const out = entries.filter((_, i) => i !== at);
  if (set.size > 0) out.splice(at >= 0 ? at : out.length, 0, entry);
  return out.filter((e) => Object.keys(e.fieldsV1).length > 0);
}

export interface ApplyRequest {
  manager: string;
  force: boolean;
  apiVersion: string;
  keys: ListKeys;
  /** The kind has a status subresource: the main resource's apply ignores status. */
  ignoreStatus: boolean;
}

/**
 * The object an apply of `applied` onto `live` stores (live undefined: a create), with its
 * managedFields; throws the API server's 409 when another manager owns a field the apply changes.
 */
export function serverSideApply(live: KubeObject | undefined, applied: KubeObject, req: ApplyRequest): KubeObject {
  const set = fieldSet(applied, req.keys, req.ignoreStatus);
  if (!live) {
    const created = clone(applied);
    created.metadata.managedFields = record([], req.manager, 'Apply', req.apiVersion, set);
    return created;
  }
  let entries = entriesOf(live);
  const conflicts: { manager: string; apiVersion: string; path: string }[] = [];
  entries = entries.map((e) => {
    if (e.manager === req.manager && e.operation === 'Apply') return e;
    const theirs = owned(e);
    let changed = false;
    for (const p of set) {
      if (!theirs.has(p) || p.endsWith(`${SEP}.`)) continue;
      if (deepEqual(valueAt(live, p), valueAt(applied, p))) continue; // same value: shared ownership
      if (req.force) {
        theirs.delete(p);
        changed = true;
      } else conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: p });
    }
    return changed ? { ...e, fieldsV1: toFieldsV1(theirs) } : e;
  });
  if (conflicts.length > 0) {
    const lines = conflicts.map((c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${describe(c.path)}`);
    const message =
      conflicts.length === 1 ? `Apply failed with 1 conflict: ${lines[0]}` : `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
    throw failure(409, 'Conflict', message, {
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with "${c.manager}" using ${c.apiVersion}`,
        field: describe(c.path),
      })),
    });
  }
  const mine = entries.find((e) => e.manager === req.manager && e.operation === 'Apply');
  const others = entries.filter((e) => e !== mine).map(owned);
  const next = clone(live);
  // Fields this manager applied before and no longer names go, unless another manager owns them (or something under them).
  for (const p of [...(mine ? owned(mine) : [])].sort().reverse()) {
    if (set.has(p)) continue;
    const base = p.endsWith(`${SEP}.`) ? p.slice(0, -2) : p;
    if (others.some((o) => [...o].some((q) => q === p || q === base || q.startsWith(base + SEP)))) continue;
    removeAt(next, p);
  }
  pruneEmpty(next.metadata);
  const { metadata: appliedMeta, ...appliedRest } = applied;
  const merged = merge(
    next,
    { ...appliedRest, metadata: Object.fromEntries(Object.entries(appliedMeta).filter(([k]) => !SYSTEM_METADATA.has(k))) },
    req.keys,
    [],
  ) as KubeObject;
  merged.metadata.managedFields = record(entries, req.manager, 'Apply', req.apiVersion, set);
  return merged;
}

/**
 * After an update by `manager` (a PUT or a non-apply PATCH) of an object that has managed fields:
 * the manager owns what it changed, and nobody else does any more.
 */
export function recordUpdate(prev: KubeObject, next: KubeObject, manager: string, apiVersion: string, keys: ListKeys, subresource?: string): void {
  const before = fieldSet(prev, keys, false);
  const after = fieldSet(next, keys, false);
  const changed = new Set([...after].filter((p) => !before.has(p) || !deepEqual(valueAt(prev, p), valueAt(next, p))));
  const gone = new Set([...before].filter((p) => !after.has(p)));
  let entries = entriesOf(prev).map((e) => {
    const set = owned(e);
    for (const p of [...changed, ...gone]) set.delete(p);
    return { ...e, fieldsV1: toFieldsV1(set) };
  });
  const current = entriesOf(prev).find((e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (subresource ?? ''));
  const mine = new Set([...(current ? owned(current) : [])].filter((p) => after.has(p)));
  for (const p of changed) mine.add(p);
  entries = record(
    entries.filter((e) => e !== undefined),
    manager,
    'Update',
    apiVersion,
    mine,
    subresource,
  );
  if (changed.size === 0 && gone.size === 0) entries = entriesOf(prev);
  next.metadata.managedFields = entries;
}
