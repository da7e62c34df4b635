import { MAX_DURATION_SECONDS } from '../limits.js';
import type { Pb } from './types.js';

/**
 * Envoy's proto3 JSON form of a Duration: seconds with up to 3 decimals (`1.500s`, `0s`), never past
 * the longest a Duration holds (a route timeout made of many attempts could be).
 */
export function envoyDuration(ms: number): Pb.Duration {
  if (ms / 1000 > MAX_DURATION_SECONDS) return `${MAX_DURATION_SECONDS}s`;
  const s = Math.floor(ms / 1000);
  const rest = ms % 1000;
  return rest === 0 ? `${s}s` : (`${s}.${String(rest).padStart(3, '0')}s` as Pb.Duration);
}
