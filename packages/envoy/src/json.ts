// JSON-shaped values as the converter reads and writes them.

/** A JSON object: a parsed Kubernetes manifest, or an Envoy resource in proto3 JSON form. */
export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Code-unit order, independent of the locale (localeCompare is not). */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether two JSON values are equal as JSON would write them (fields in any order, undefined ones left out). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let fields = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    fields++;
    if (y[k] === undefined || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) fields--;
  return fields === 0;
}
