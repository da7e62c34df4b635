// What one stream wants of one type: every resource (a wildcard) and/or named ones, following
// the xDS protocol's rules as go-control-plane applies them.
//
// A wildcard comes from an explicit "*" name, or, for listeners and clusters only, from a first
// request that names nothing (the legacy wildcard that Envoy uses). The legacy wildcard lasts
// until a request names something; after that an empty list means "nothing".

export const WILDCARD = '*';

export class Subscription {
  wildcard: boolean;
  readonly names = new Set<string>();
  /** Bytes of every name in `names`, and the longest name ever added: what the server's bounds read. */
  bytes = 0;
  longest = 0;
  private legacy: boolean;

  private constructor(firstRequestNamesNothing: boolean, legacyWildcardAllowed: boolean) {
    this.legacy = firstRequestNamesNothing && legacyWildcardAllowed;
    this.wildcard = this.legacy;
  }

  /** State of the world: each request carries the full list of names. */
  static sotw(names: readonly string[], legacyWildcardAllowed: boolean): Subscription {
    const s = new Subscription(names.length === 0, legacyWildcardAllowed);
    s.replace(names);
    return s;
  }

  /** Incremental: requests carry names to add and names to remove. */
  static delta(subscribe: readonly string[], unsubscribe: readonly string[], legacyWildcardAllowed: boolean): Subscription {
    const s = new Subscription(subscribe.length === 0, legacyWildcardAllowed);
    s.update(subscribe, unsubscribe);
    return s;
  }

  /**
   * A later state-of-the-world request: its list replaces the previous one. Returns whether the
   * subscription changed (most requests are ACKs that repeat it).
   */
  replace(names: readonly string[]): boolean {
    if (this.legacy) {
      if (names.length === 0) return false;
      this.legacy = false;
    }
    const wildcard = names.includes(WILDCARD);
    const same = wildcard === this.wildcard && names.length - (wildcard ? 1 : 0) === this.names.size && names.every((n) => n === WILDCARD || this.names.has(n));
    if (same) return false;
    this.names.clear();
    this.bytes = 0;
    for (const n of names) if (n !== WILDCARD) this.add(n);
    this.wildcard = wildcard;
    return true;
  }

  /** A later incremental request. Returns whether the subscription changed and the names it no longer has. */
  update(subscribe: readonly string[], unsubscribe: readonly string[]): { changed: boolean; dropped: string[] } {
    if (this.legacy) {
      if (subscribe.length === 0) return { changed: false, dropped: [] };
      // Naming something ends the legacy mode but keeps the wildcard until "*" is unsubscribed.
      this.legacy = false;
    }
    let changed = false;
    for (const n of subscribe) {
      if (n === WILDCARD) {
        changed ||= !this.wildcard;
        this.wildcard = true;
      } else if (!this.names.has(n)) {
        this.add(n);
        changed = true;
      }
    }
    const dropped: string[] = [];
    for (const n of unsubscribe) {
      if (n === WILDCARD) {
        changed ||= this.wildcard;
        this.wildcard = false;
      } else if (this.names.delete(n)) {
        this.bytes -= Buffer.byteLength(n);
        dropped.push(n);
      }
    }
    return { changed: changed || dropped.length > 0, dropped };
  }

  private add(name: string): void {
    if (this.names.has(name)) return;
    const bytes = Buffer.byteLength(name);
    this.names.add(name);
    this.bytes += bytes;
    if (bytes > this.longest) this.longest = bytes;
  }

  covers(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }
}
