// Field paths in the two spellings the API server uses. kube-openapi (schema errors) joins
// properties and map keys with "." and writes list indexes as "[i]"; apimachinery's field.Path
// (CEL and list-type errors) writes map keys as "[key]".

/** A property name, a map key, or a list index. */
export type Segment = string | number | { key: string };

export function openApiPath(path: readonly Segment[]): string {
  let out = '';
  for (const s of path) {
    if (typeof s === 'number') out += `[${s}]`;
    else {
      const name = typeof s === 'string' ? s : s.key;
      out += out ? `.${name}` : name;
    }
  }
  return out;
}

export function fieldPath(path: readonly Segment[]): string {
  let out = '';
  for (const s of path) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (typeof s === 'string') out += out ? `.${s}` : s;
    else out += `[${s.key}]`;
  }
  return out;
}

/** Own property lookup: "__proto__" or "constructor" in user input must never reach a prototype. */
export function own<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets a key as an own data property, even "__proto__", without touching any prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Objects with at least this many keys have them listed once per validation, then remembered. */
const MEMO_KEYS = 256;
/** Whether a validation is running, and what it has listed, made only once it meets a big object. */
let remembering = false;
let memo: WeakMap<object, string[]> | undefined;

/**
 * Object.keys(value), listed once per validation for a big object: listing a hostile map of
 * 150,000 keys costs a third of parsing it, and pruning, the size limits, metadata and the warnings
 * each need its keys. Only for values no one changes while `withKeyMemo` runs; never mutate the array.
 */
export function keysOf(value: object): string[] {
  if (memo !== undefined) {
    const known = memo.get(value);
    if (known) return known;
  }
  const keys = Object.keys(value);
  if (remembering && keys.length >= MEMO_KEYS) {
    memo ??= new WeakMap();
    memo.set(value, keys);
  }
  return keys;
}

/** Runs `fn` with keysOf remembering what it lists; forgotten afterwards, as the caller may then change its objects. */
export function withKeyMemo<T>(fn: () => T): T {
  const outerRemembering = remembering;
  const outerMemo = memo;
  remembering = true;
  memo = undefined;
  try {
    return fn();
  } finally {
    remembering = outerRemembering;
    memo = outerMemo;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The unescaped tokens of a JSON pointer ("/a~1b/0" → ["a/b", "0"]). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  const tokens = pointer.slice(1).split('/');
  return pointer.includes('~') ? tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~')) : tokens;
}
