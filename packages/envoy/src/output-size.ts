// How large a Gateway's Envoy configuration would be once written, found without writing it: a
// route table whose size is the product of rules, matches and backends can need more memory as
// one string than a process may have, so the size is counted first and a bound enforced.

/**
 * Envoy's own limits are per resource (4 MiB per xDS message by default); a bootstrap past a few
 * tens of MB is a mistake in the input rather than a proxy anyone means to run.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/**
 * The length of `JSON.stringify(value)` (bytes, for the ASCII an Envoy configuration is), counted node by node (iteratively, so any depth is fine)
 * and given up as soon as it passes `limit`: the work is bounded by the limit, not by the value,
 * and an object shared by many routes counts once per appearance, as it would be written.
 */
export function jsonSize(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') size += JSON.stringify(v).length;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) size += String(v).length;
    else if (Array.isArray(v)) {
      size += 2 + Math.max(0, v.length - 1);
      for (const x of v) stack.push(x === undefined ? null : x);
    } else if (typeof v === 'object' && v !== undefined) {
      // Counted key by key, without making a list of entries: this runs over every node of the output.
      let keys = 0;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue;
        keys++;
        size += k.length + 3; // the key's quotes and its colon
        stack.push(x);
      }
      size += 2 + Math.max(0, keys - 1);
    }
  }
  return size;
}

const sizes = new WeakMap<object, number>();

/**
 * jsonSize of an object whose values are lists of resources, each resource's size counted once
 * and remembered: resources are never changed once built, and an update reuses most of them.
 */
export function listsSize(value: Readonly<Record<string, unknown>>, limit: number): number {
  const entries = Object.entries(value).filter(([, x]) => x !== undefined);
  let size = 2 + Math.max(0, entries.length - 1);
  for (const [k, v] of entries) {
    size += k.length + 3;
    if (!Array.isArray(v)) size += jsonSize(v, limit);
    else {
      size += 2 + Math.max(0, v.length - 1);
      for (const item of v) size += itemSize(item, limit);
    }
    if (size > limit) break;
  }
  return size;
}

export function itemSize(item: unknown, limit: number): number {
  if (typeof item !== 'object' || item === null) return jsonSize(item === undefined ? null : item, limit);
  let n = sizes.get(item);
  if (n === undefined) {
    n = jsonSize(item, limit);
    // A size past the limit is only "too large" for this limit.
    if (n <= limit) sizes.set(item, n);
  }
  return n;
}
