// Validation ratcheting (CRDValidationRatcheting, on by default since Kubernetes 1.30): on UPDATE
// the API server ignores schema errors and non-transition CEL failures in any value that is
// unchanged from the old object, so a tightened schema does not block edits elsewhere. Values
// correlate as for transition rules: by property, by map key, and by key in list-type=map lists;
// the items of atomic lists and sets do not correlate, so such a list is compared whole.
//
// One tree of correlated pairs serves a whole validation: it grows only where it is asked about,
// remembers every comparison, and builds each list-map index once, so asking about each of 100,000
// errors costs one comparison of every value in all, not one walk of the object per error.
import { isPlainObject, keysOf } from './paths.js';
import { propertyOf, type StructuralSchema } from './structural.js';

/** Deep equality of decoded JSON (or CEL) values, with a stack of its own: nesting cannot overflow it. */
function deepEqual(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]];
  for (let pair = pending.pop(); pair; pair = pending.pop()) {
    const [x, y] = pair;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push([x[i], y[i]]);
    } else if (isPlainObject(x) && isPlainObject(y)) {
      const keys = keysOf(x);
      if (keys.length !== keysOf(y).length) return false;
      for (const k of keys) {
        if (!Object.hasOwn(y, k)) return false;
        pending.push([x[k], y[k]]);
      }
    } else {
      return false;
    }
  }
  return true;
}

/** The identity of a list-type=map entry: its key fields' values (CEL hands integers as bigint). */
function entryKey(item: Record<string, unknown>, keys: readonly string[]): string {
  return keys.map((k) => (typeof item[k] === 'bigint' ? `${item[k]}n` : (JSON.stringify(item[k]) ?? '-'))).join(',');
}

/** A value of the new object and the value it correlates with in the old one. */
export class Correlated {
  private sameAsOld: boolean | undefined;
  private children: Map<string | number, Correlated | undefined> | undefined;
  /** The old list's entries by key, for list-type=map; the first of duplicate keys wins. */
  private oldEntries: Map<string, unknown> | undefined;

  constructor(
    readonly value: unknown,
    readonly old: unknown,
    /** Undefined below a field the schema does not describe: such a value is compared whole. */
    readonly schema: StructuralSchema | undefined,
  ) {}

  /** The pair at property or map key `name`, when both values have it. */
  key(name: string): Correlated | undefined {
    return this.child(name, () => {
      const { value, old, schema } = this;
      if (!schema || !isPlainObject(value) || !isPlainObject(old) || !Object.hasOwn(value, name) || !Object.hasOwn(old, name)) return undefined;
      return new Correlated(value[name], old[name], propertyOf(schema, name) ?? schema.additionalProperties);
    });
  }

  /** The pair at list index `i`: only list-type=map entries correlate, by their keys. */
  index(i: number): Correlated | undefined {
    const keys = this.schema?.listType === 'map' ? this.schema.listMapKeys : undefined;
    // Items of other lists never correlate: nothing to remember, however long the list.
    if (!keys) return undefined;
    return this.child(i, () => {
      const { value, old, schema } = this;
      if (!Array.isArray(value) || !Array.isArray(old) || !isPlainObject(value[i])) return undefined;
      if (!this.oldEntries) {
        this.oldEntries = new Map();
        for (const o of old) if (isPlainObject(o) && !this.oldEntries.has(entryKey(o, keys))) this.oldEntries.set(entryKey(o, keys), o);
      }
      const key = entryKey(value[i], keys);
      return this.oldEntries.has(key) ? new Correlated(value[i], this.oldEntries.get(key), schema?.items) : undefined;
    });
  }

  /** Whether the value equals its old value (list-map entries compared by key, not position). */
  unchanged(): boolean {
    this.sameAsOld ??= this.compare();
    return this.sameAsOld;
  }

  /**
   * Whether the value at JSON pointer `pointer`, or any value above it, is unchanged: the API
   * server stops validating at an unchanged node, so nothing below one is reported.
   */
  ratchets(pointer: string): boolean {
    let node: Correlated | undefined = this;
    if (node.unchanged()) return true;
    // Token by token, stopping at the first that does not correlate: an error deep in a list that
    // cannot correlate costs the tokens down to the list, not a split of the whole pointer.
    for (let start = 1; pointer !== '' && start <= pointer.length; ) {
      const slash = pointer.indexOf('/', start);
      const end = slash < 0 ? pointer.length : slash;
      const raw = pointer.slice(start, end);
      const token = raw.includes('~') ? raw.replace(/~1/g, '/').replace(/~0/g, '~') : raw;
      node = Array.isArray(node.value) ? node.index(Number(token)) : node.key(token);
      if (!node) return false;
      if (node.unchanged()) return true;
      start = end + 1;
    }
    return false;
  }

  private child(at: string | number, make: () => Correlated | undefined): Correlated | undefined {
    this.children ??= new Map();
    if (this.children.has(at)) return this.children.get(at);
    const made = make();
    this.children.set(at, made);
    return made;
  }

  private compare(): boolean {
    const { value, old, schema } = this;
    if (!schema) return deepEqual(value, old);
    if (Array.isArray(value)) {
      if (!Array.isArray(old) || value.length !== old.length) return false;
      if (schema.listType !== 'map') return deepEqual(value, old);
      return value.every((_, i) => this.index(i)?.unchanged() ?? false);
    }
    if (isPlainObject(value)) {
      if (!isPlainObject(old)) return false;
      const keys = keysOf(value);
      return keys.length === keysOf(old).length && keys.every((k) => this.key(k)?.unchanged() ?? false);
    }
    return value === old;
  }
}
