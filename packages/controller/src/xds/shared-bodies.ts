// Responses encoded once per version, type and content, not once per stream: the hundred proxies
// of one Gateway are in the same state, so they are sent the same bytes, and those bytes are held
// once however many streams still have them queued.
import type { EncodedResource, TypeResources } from './snapshot.js';

/** Distinct bodies kept per type version: proxies of a Gateway differ in few ways (new, in step, one version behind). */
const MAX_BODIES = 8;

/** A response body and the names of the resources it carries, both held once for every stream sent it. */
export class SharedBody {
  private nameSet: ReadonlySet<string> | undefined;

  constructor(
    readonly bytes: Buffer,
    private readonly entries: readonly EncodedResource[],
  ) {}

  /** Made on first use: a stream answering this response has answered for each of them (make before break). */
  get names(): ReadonlySet<string> {
    this.nameSet ??= new Set(this.entries.map((r) => r.name));
    return this.nameSet;
  }
}

const bodies = new WeakMap<TypeResources, Map<string, SharedBody>>();

/**
 * The body for `entries` (and `removed`) of `resources`, made by `encode` the first time a stream
 * needs it. Bodies live as long as their type version is referenced (a WeakMap on it).
 */
export function sharedBody(
  resources: TypeResources,
  variant: 'sotw' | 'delta',
  entries: readonly EncodedResource[],
  removed: readonly string[],
  encode: () => Buffer,
): SharedBody {
  let held = bodies.get(resources);
  if (!held) {
    held = new Map();
    bodies.set(resources, held);
  }
  // Names identify resources within one version of a type.
  const key = `${variant}\u0000${entries.map((r) => r.name).join('\u0001')}\u0000${removed.join('\u0001')}`;
  let body = held.get(key);
  if (!body) {
    body = new SharedBody(encode(), entries);
    if (held.size >= MAX_BODIES) {
      const oldest = held.keys().next().value;
      if (oldest !== undefined) held.delete(oldest);
    }
    held.set(key, body);
  }
  return body;
}
