// Gateway API durations (GEP-2257).
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const GATEWAY_DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

/** Milliseconds of a Gateway API duration (GEP-2257: `1h`, `1m30s`, `500ms`), or undefined when malformed. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string' || !GATEWAY_DURATION.test(value)) return undefined;
  let ms = 0;
  for (const m of value.matchAll(/([0-9]+)(ms|h|m|s)/g)) ms += Number(m[1]) * (UNIT_MS[m[2] as string] ?? 0);
  return ms;
}
