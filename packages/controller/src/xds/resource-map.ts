// The resources of one version of a type, by name. A version made from the last one by replacing a
// few resources under their own names (an endpoint change replaces one ClusterLoadAssignment of
// thousands) shares the last one's map and keeps its replacements beside it, so making it costs
// the replacements, not the type's size; the replacements are folded into a map of its own once
// they are many. Each version stays as it was made: a snapshot never changes once set.
import type { EncodedResource } from './snapshot.js';

const NO_REPLACEMENTS: ReadonlyMap<string, EncodedResource> = new Map();

export class ResourceMap implements ReadonlyMap<string, EncodedResource> {
  private constructor(
    private readonly base: ReadonlyMap<string, EncodedResource>,
    /** Resources that take the place of the base's of the same name. */
    private readonly replaced: ReadonlyMap<string, EncodedResource>,
  ) {}

  /** A map over `resources`, which nothing may change from here on. */
  static of(resources: ReadonlyMap<string, EncodedResource>): ResourceMap {
    return resources instanceof ResourceMap ? resources : new ResourceMap(resources, NO_REPLACEMENTS);
  }

  /**
   * This map with `replacements` in place of the resources of their names, which must all be here
   * (the names, their order and the size stay the same).
   */
  replacing(replacements: ReadonlyMap<string, EncodedResource>): ResourceMap {
    if (replacements.size === 0) return this;
    const replaced = new Map(this.replaced);
    for (const [name, r] of replacements) replaced.set(name, r);
    // Folded once they are an eighth of the base: what a version costs stays a fraction of the
    // type's size however long the run of small changes, and lookups look in one map again.
    if (replaced.size * 8 <= this.base.size) return new ResourceMap(this.base, replaced);
    const folded = new Map<string, EncodedResource>();
    for (const [name, r] of this.base) folded.set(name, replaced.get(name) ?? r);
    return new ResourceMap(folded, NO_REPLACEMENTS);
  }

  get size(): number {
    return this.base.size;
  }

  get(name: string): EncodedResource | undefined {
    return this.replaced.get(name) ?? this.base.get(name);
  }

  has(name: string): boolean {
    return this.base.has(name);
  }

  *entries(): MapIterator<[string, EncodedResource]> {
    if (this.replaced.size === 0) return yield* this.base.entries();
    for (const [name, r] of this.base) yield [name, this.replaced.get(name) ?? r];
  }

  *keys(): MapIterator<string> {
    return yield* this.base.keys();
  }

  *values(): MapIterator<EncodedResource> {
    if (this.replaced.size === 0) return yield* this.base.values();
    for (const [name, r] of this.base) yield this.replaced.get(name) ?? r;
  }

  [Symbol.iterator](): MapIterator<[string, EncodedResource]> {
    return this.entries();
  }

  forEach(callback: (value: EncodedResource, key: string, map: ReadonlyMap<string, EncodedResource>) => void, thisArg?: unknown): void {
    for (const [name, r] of this.entries()) callback.call(thisArg, r, name, this);
  }
}
