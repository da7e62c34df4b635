// Flag helpers shared by the commands: every way a flag can be wrong becomes a UsageError that
// names the flag, so `extlb` exits 2 with the command's usage instead of a stack trace.
import { UsageError } from './io.js';

/** Runs a node:util parseArgs call, turning its errors (unknown flag, missing value) into usage errors. */
export function usageErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A whole number in [min, max] from a flag, or a usage error naming the flag. */
export function integerFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${name} must be a whole number in ${min}..${max}, not "${value}"`);
  return n;
}

/** One of a fixed set of words from a flag, or a usage error listing them. `name` is shown as written, e.g. "--envoy" or "-o". */
export function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${name} must be one of ${allowed.join(', ')}, not "${value}"`);
  return value as T;
}

/** `HOST:PORT`, `:PORT` or `[v6]:PORT`. */
export function parseListen(value: string, flag = '--listen', example = '0.0.0.0:8443'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`${flag} must be HOST:PORT (for example ${example}), not "${value}"`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

const DURATION_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000 };

/** A duration such as `12h`, `90m` or `1h30m` (Go's units s, m, h), in ms; a usage error naming the flag otherwise. */
export function durationFlag(name: string, value: string): number {
  const parts = /^(?:\d+(?:\.\d+)?[hms])+$/.test(value) ? [...value.matchAll(/(\d+(?:\.\d+)?)([hms])/g)] : [];
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * (DURATION_UNITS[unit ?? ''] ?? 0), 0);
  if (parts.length === 0 || ms <= 0) throw new UsageError(`${name} must be a duration such as 12h, 90m or 1h30m, not "${value}"`);
  return Math.round(ms);
}
