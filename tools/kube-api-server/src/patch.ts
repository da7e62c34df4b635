// PATCH bodies: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and strategic merge patch for
// the built-in kinds (merge patch, plus lists merged by key and the `$patch` directives).
import { clone, deepEqual, isRecord } from './objects.js';
import { badRequest, failure } from './status.js';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** JSON Patch failures are 422s with the patch library's message, as the API server returns them. */
function unprocessable(message: string): Error {
  return failure(422, 'Invalid', message);
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw unprocessable(`JSON pointer ${JSON.stringify(pointer)} does not start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, forAdd: boolean): number {
  if (forAdd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw unprocessable(`invalid array index ${JSON.stringify(token)}`);
  const i = Number(token);
  if (i > length || (!forAdd && i === length)) throw unprocessable(`array index ${i} out of bounds`);
  return i;
}

/** The container holding the pointer's last token, and that token. */
function parentOf(doc: unknown, tokens: string[], pointer: string): [Record<string, unknown> | unknown[], string] {
  let node = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[arrayIndex(t, node.length, false)];
    else if (isRecord(node) && Object.hasOwn(node, t)) node = node[t];
    else throw unprocessable(`doc is missing path: ${pointer}`);
  }
  if (!Array.isArray(node) && !isRecord(node)) throw unprocessable(`doc is missing path: ${pointer}`);
  return [node, tokens[tokens.length - 1] as string];
}

function getAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return doc;
  const [parent, last] = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false)];
  if (!Object.hasOwn(parent, last)) throw unprocessable(`doc is missing path: ${pointer}`);
  return parent[last];
}

function removeAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw unprocessable('cannot remove the whole document');
  const [parent, last] = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false), 1)[0];
  if (!Object.hasOwn(parent, last)) throw unprocessable(`Unable to remove nonexistent key: ${last}: missing value`);
  const value = parent[last];
  delete parent[last];
  return value;
}

function addAt(doc: unknown, pointer: string, value: unknown, replace: boolean): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const [parent, last] = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, !replace);
    parent.splice(i, replace ? 1 : 0, value);
  } else {
    if (replace && !Object.hasOwn(parent, last)) throw unprocessable(`replace operation does not apply: doc is missing key: ${pointer}: missing value`);
    parent[last] = value;
  }
  return doc;
}

/** Applies an RFC 6902 patch to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let result = clone(doc);
  for (const op of patch) {
    if (!isRecord(op) || typeof op.op !== 'string' || typeof op.path !== 'string') throw badRequest(`invalid JSON Patch operation: ${JSON.stringify(op)}`);
    const path = op.path;
    const from = typeof op.from === 'string' ? op.from : undefined;
    switch (op.op) {
      case 'add':
        result = addAt(result, path, clone(op.value), false);
        break;
      case 'replace':
        result = addAt(result, path, clone(op.value), true);
        break;
      case 'remove':
        removeAt(result, path);
        break;
      case 'move': {
        if (from === undefined) throw unprocessable('move operation missing from');
        result = addAt(result, path, removeAt(result, from), false);
        break;
      }
      case 'copy':
        if (from === undefined) throw unprocessable('copy operation missing from');
        result = addAt(result, path, clone(getAt(result, from)), false);
        break;
      case 'test':
        if (!deepEqual(getAt(result, path), op.value)) throw unprocessable(`testing value ${path} failed: test failed`);
        break;
      default:
        throw unprocessable(`Unexpected kind: ${op.op}`);
    }
  }
  return result;
}

/** RFC 7386: objects merge, `null` deletes, anything else (lists included) replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const result: Record<string, unknown> = isRecord(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = applyMergePatch(result[k], v);
  }
  return result;
}

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

/**
 * Strategic merge patch: a merge patch in which the lists at `mergeKeys` paths merge element by
 * element (by the key, or as a set of scalars for `''`), with `$patch: replace|delete|merge`,
 * `$deleteFromPrimitiveList/<list>` and `$setElementOrder/<list>`. `$retainKeys` is refused.
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown, mergeKeys: Record<string, string>, path = ''): unknown {
  if (!isRecord(patch)) return clone(patch);
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const { $patch: _, ...rest } = patch;
    return clone(rest);
  }
  if (directive !== undefined && directive !== 'merge') throw badRequest(`Unknown patch type: ${String(directive)}`);
  if ('$retainKeys' in patch) throw badRequest('$retainKeys is not supported by this test server');
  const result: Record<string, unknown> = isRecord(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k.startsWith(SET_ORDER) || k.startsWith(DELETE_FROM)) continue;
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) delete result[k];
    else if (Array.isArray(v) && childPath in mergeKeys) result[k] = mergeList(result[k], v, mergeKeys[childPath] as string, mergeKeys, childPath);
    else {
      const merged = applyStrategicMergePatch(result[k], v, mergeKeys, childPath);
      if (merged === undefined) delete result[k];
      else result[k] = merged;
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DELETE_FROM) && Array.isArray(v) && Array.isArray(result[k.slice(DELETE_FROM.length)])) {
      const field = k.slice(DELETE_FROM.length);
      result[field] = (result[field] as unknown[]).filter((x) => !v.some((d) => deepEqual(d, x)));
    }
    if (k.startsWith(SET_ORDER) && Array.isArray(v) && Array.isArray(result[k.slice(SET_ORDER.length)])) {
      const field = k.slice(SET_ORDER.length);
      result[field] = reorder(result[field] as unknown[], v, mergeKeys[path ? `${path}.${field}` : field] ?? '');
    }
  }
  return result;
}

function identity(item: unknown, key: string): unknown {
  return key === '' ? item : isRecord(item) ? item[key] : undefined;
}

function mergeList(target: unknown, patch: unknown[], key: string, mergeKeys: Record<string, string>, path: string): unknown[] {
  const result = Array.isArray(target) ? clone(target) : [];
  for (const item of patch) {
    const id = identity(item, key);
    const at = result.findIndex((x) => deepEqual(identity(x, key), id));
    if (key !== '' && isRecord(item) && item.$patch === 'delete') {
      if (at >= 0) result.splice(at, 1);
    } else if (at < 0) result.push(key === '' ? item : applyStrategicMergePatch(undefined, item, mergeKeys, path));
    else if (key !== '') result[at] = applyStrategicMergePatch(result[at], item, mergeKeys, path);
  }
  return result;
}

function reorder(list: unknown[], order: unknown[], key: string): unknown[] {
  const rank = (x: unknown) => {
    const i = order.findIndex((o) => deepEqual(identity(o, key), identity(x, key)));
    return i < 0 ? order.length : i;
  };
  return [...list].sort((a, b) => rank(a) - rank(b));
}
