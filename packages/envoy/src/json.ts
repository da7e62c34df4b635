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
