// Responses encoded once per version, type and content, not once per stream: the hundred proxies
// of one Gateway are in the same state, so they are sent the same bytes, and those bytes are held
// once however many streams still have them queued.
import type { EncodedResource, TypeResources } from './snapshot.js';

/** Distinct bodies kept per type version: proxies of a Gateway differ in few ways (new, in step, one version behind). */
const MAX_BODIES = 8;

const bodies = new WeakMap<TypeResources, Map<string, Buffer>>();

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
): Buffer {
  let held = bodies.get(resources);
  if (!held) {
    held = new Map();
    bodies.set(resources, held);
  }
  // Names identify resources within one version of a type.
  const key = `${variant}\u0000${entries.map((r) => r.name).join('\u0001')}\u0000${removed.join('\u0001')}`;
  let body = held.get(key);
  if (!body) {
    body = encode();
    if (held.size >= MAX_BODIES) {
      const oldest = held.keys().next().value;
      if (oldest !== undefined) held.delete(oldest);
    }
    held.set(key, body);
  }
  return body;
}
