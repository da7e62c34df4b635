// How Gateway API header filters combine when two apply to one message: a rule's and its
// backendRef's (on requests the rule's first, on responses the backendRef's first).
import type { HeaderModifier } from '../read/index.js';

/**
 * One header modifier with the effect of `first`, then `then` (header names compared without
 * case): whatever `then` sets or removes, `first`'s changes to that header no longer matter.
 * Applied as one step — removals, then sets, then additions — it gives the same headers.
 */
export function composeHeaders(first: HeaderModifier | undefined, then: HeaderModifier | undefined): HeaderModifier | undefined {
  if (!first) return then;
  if (!then) return first;
  const decided = new Set([...then.set.map((h) => h.name.toLowerCase()), ...then.remove.map((n) => n.toLowerCase())]);
  const undecided = (name: string) => !decided.has(name.toLowerCase());
  const removed = new Set(then.remove.map((n) => n.toLowerCase()));
  return {
    set: [...first.set.filter((h) => undecided(h.name)), ...then.set],
    add: [...first.add.filter((h) => undecided(h.name)), ...then.add],
    remove: [...first.remove.filter((n) => !removed.has(n.toLowerCase())), ...then.remove],
  };
}
