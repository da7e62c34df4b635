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

  /** A later state-of-the-world request: its list replaces the previous one. */
  replace(names: readonly string[]): void {
    if (this.legacy) {
      if (names.length === 0) return;
      this.legacy = false;
    }
    this.names.clear();
    for (const n of names) this.names.add(n);
    this.wildcard = this.names.delete(WILDCARD);
  }

  /** A later incremental request. Returns the names no longer asked for. */
  update(subscribe: readonly string[], unsubscribe: readonly string[]): string[] {
    if (this.legacy) {
      if (subscribe.length === 0) return [];
      // Naming something ends the legacy mode but keeps the wildcard until "*" is unsubscribed.
      this.legacy = false;
    }
    for (const n of subscribe) {
      if (n === WILDCARD) this.wildcard = true;
      else this.names.add(n);
    }
    const dropped: string[] = [];
    for (const n of unsubscribe) {
      if (n === WILDCARD) this.wildcard = false;
      else if (this.names.delete(n)) dropped.push(n);
    }
    return dropped;
  }

  covers(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }
}
