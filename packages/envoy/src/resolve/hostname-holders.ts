// Which route holds which hostnames on one listener, for one route kind: an HTTPRoute and a
// GRPCRoute never share a hostname there (GEP-1016). Exact names are kept by name and wildcards by
// their suffix, so that checking an exact hostname costs its labels, not the routes attached.
import type { RouteRecord } from '../read/index.js';

/** `.b.c` and `.c` for `a.b.c` (or for `.b.c`, a wildcard's suffix): every suffix a wildcard could name. */
function suffixes(host: string): string[] {
  const out: string[] = [];
  for (let i = host.indexOf('.'); i >= 0; i = host.indexOf('.', i + 1)) out.push(host.slice(i));
  return out;
}

export class HostnameHolders {
  /** The first route that holds `*` (any host). */
  private any?: RouteRecord;
  private readonly exact = new Map<string, RouteRecord>();
  /** By suffix: `.example.com` for `*.example.com`. */
  private readonly wildcard = new Map<string, RouteRecord>();

  /** Records that `route` holds `host`; the first holder of a hostname is kept. */
  add(host: string, route: RouteRecord): void {
    if (host === '*') this.any ??= route;
    else if (host.startsWith('*.')) {
      if (!this.wildcard.has(host.slice(1))) this.wildcard.set(host.slice(1), route);
    } else if (!this.exact.has(host)) this.exact.set(host, route);
  }

  /** A route holding a hostname that has a host in common with `host`, if any. */
  holder(host: string): RouteRecord | undefined {
    if (this.any) return this.any;
    const first = (m: Map<string, RouteRecord>) => m.values().next().value;
    if (host === '*') return first(this.exact) ?? first(this.wildcard);
    const wildcard = host.startsWith('*.');
    const suffix = wildcard ? host.slice(1) : host;
    for (const s of suffixes(suffix)) {
      const held = this.wildcard.get(s);
      if (held) return held;
    }
    if (!wildcard) return this.exact.get(host);
    // A wildcard also meets the names under it; they are few, so they are looked through.
    for (const [s, route] of this.wildcard) if (s.endsWith(suffix)) return route;
    for (const [name, route] of this.exact) if (name.endsWith(suffix)) return route;
    return undefined;
  }
}
