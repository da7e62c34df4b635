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

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The unescaped tokens of a JSON pointer ("/a~1b/0" → ["a/b", "0"]). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  const tokens = pointer.slice(1).split('/');
  return pointer.includes('~') ? tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~')) : tokens;
}
