// Gateway API hostnames: intersection of a listener's and a route's, and precedence.
import { compare } from '../json.js';

function covers(pattern: string, host: string): boolean {
  return pattern.startsWith('*.') && host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
}

/** The hostname a listener hostname and a route hostname have in common, if any. */
export function intersect(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined || listener === route) return route;
  if (covers(listener, route)) return route;
  if (covers(route, listener)) return listener;
  return undefined;
}

/**
 * Whether every host `host` stands for (itself, or all names under a wildcard) also matches the
 * listener hostname `pattern` (undefined: any host).
 */
export function contains(pattern: string | undefined, host: string): boolean {
  return pattern === undefined || pattern === host || covers(pattern, host);
}

/** Orders hostnames by precedence: exact names first, then longer wildcards, `*` last. */
export function compareHostnames(a: string, b: string): number {
  const rank = (h: string) => (h === '*' ? 2 : h.startsWith('*.') ? 1 : 0);
  return rank(a) - rank(b) || b.length - a.length || compare(a, b);
}

/** Listener precedence: a listener with an exact hostname, then longer wildcards, then none. */
export function compareListenerHostnames(a: string | undefined, b: string | undefined): number {
  return compareHostnames(a ?? '*', b ?? '*');
}
