// ReferenceGrant: a reference into another namespace needs that namespace's permission.
import type { Inputs } from '../read/index.js';

export interface CrossNamespaceRef {
  /** The referring object. */
  from: { group: string; kind: string; namespace: string };
  /** The referent. */
  to: { group: string; kind: string; namespace: string; name: string };
}

export function permitted(inputs: Inputs, ref: CrossNamespaceRef): boolean {
  if (ref.from.namespace === ref.to.namespace) return true;
  return (inputs.grants.get(ref.to.namespace) ?? []).some(
    (g) =>
      g.from.some((f) => f.group === ref.from.group && f.kind === ref.from.kind && f.namespace === ref.from.namespace) &&
      g.to.some((t) => t.group === ref.to.group && t.kind === ref.to.kind && (t.name === undefined || t.name === ref.to.name)),
  );
}
