// RFC 6902 JSON Patch: the diff a mutating webhook returns, and the apply that checks it.

export type PatchOperation = { op: 'add'; path: string; value: unknown } | { op: 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export interface DiffOptions {
  /**
   * Emit `remove` for object members that `to` lacks. Off for admission: the API server prunes
   * unknown fields itself and warns about them, and a webhook that removed them would hide that.
   */
  removals?: boolean;
}

/** Escapes one reference token of a JSON Pointer (RFC 6901): `~` first, then `/`. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return false;
}

/** The operations that turn `from` into `to`. */
export function diff(from: unknown, to: unknown, options: DiffOptions = {}): PatchOperation[] {
  const ops: PatchOperation[] = [];
  const removals = options.removals ?? true;
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const key of Object.keys(b)) {
        const child = `${path}/${escapePointerToken(key)}`;
        if (!Object.hasOwn(a, key)) ops.push({ op: 'add', path: child, value: b[key] });
        else walk(a[key], b[key], child);
      }
      if (removals) {
        for (const key of Object.keys(a)) {
          if (!Object.hasOwn(b, key)) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
        }
      }
      return;
    }
    // Element-wise only when no index shifts; defaulting never changes a list's length.
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((item, i) => {
        walk(item, b[i], `${path}/${i}`);
      });
      return;
    }
    if (!sameJson(a, b)) ops.push({ op: 'replace', path, value: b });
  };
  walk(from, to, '');
  return ops;
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`JSON Pointer "${path}" must start with "/"`);
  return path.slice(1).split('/').map(unescapePointerToken);
}

function arrayIndex(token: string, length: number, forAdd: boolean): number {
  if (forAdd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > length || (!forAdd && index === length)) throw new Error(`index ${index} is out of range`);
  return index;
}

/** Applies `ops` to a deep copy of `document` and returns it; throws on an operation that does not apply. */
export function applyPatch(document: unknown, ops: readonly PatchOperation[]): unknown {
  let root: unknown = structuredClone(document);
  for (const op of ops) {
    const tokens = parsePointer(op.path);
    if (tokens.length === 0) {
      if (op.op === 'remove') throw new Error('cannot remove the whole document');
      root = structuredClone(op.value);
      continue;
    }
    let parent: unknown = root;
    for (const token of tokens.slice(0, -1)) {
      if (Array.isArray(parent)) parent = parent[arrayIndex(token, parent.length, false)];
      else if (isPlainObject(parent) && Object.hasOwn(parent, token)) parent = parent[token];
      else throw new Error(`path ${op.path} does not exist`);
    }
    const last = tokens[tokens.length - 1] as string;
    const value = op.op === 'remove' ? undefined : structuredClone(op.value);
    if (Array.isArray(parent)) {
      const index = arrayIndex(last, parent.length, op.op === 'add');
      if (op.op === 'add') parent.splice(index, 0, value);
      else if (op.op === 'replace') parent[index] = value;
      else parent.splice(index, 1);
    } else if (isPlainObject(parent)) {
      if (op.op !== 'add' && !Object.hasOwn(parent, last)) throw new Error(`path ${op.path} does not exist`);
      // defineProperty, not assignment: a "__proto__" member is data, never the prototype.
      if (op.op === 'remove') delete parent[last];
      else Object.defineProperty(parent, last, { value, writable: true, enumerable: true, configurable: true });
    } else {
      throw new Error(`path ${op.path} does not exist`);
    }
  }
  return root;
}
