/** Envoy's proto3 JSON form of a Duration: seconds with up to 3 decimals (`1.500s`, `0s`). */
export function envoyDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const rest = ms % 1000;
  return rest === 0 ? `${s}s` : `${s}.${String(rest).padStart(3, '0')}s`;
}
