// Object identity and metadata, shared by every kind.
import type { Diagnostics } from '../diagnostics.js';
import { type JsonObject, compare, isObject } from '../json.js';
import { Reader } from './reader.js';
import type { Meta } from './records.js';

/** A missing timestamp sorts last: an object not yet created is never the established one. */
const NOT_CREATED = '9999-12-31T23:59:59Z';

export function readMeta(raw: JsonObject, kind: string, diags: Diagnostics, namespace: string): Meta | undefined {
  const m = isObject(raw.metadata) ? raw.metadata : {};
  const name = typeof m.name === 'string' && m.name !== '' ? m.name : undefined;
  if (!name) {
    diags.error('Invalid', `a ${kind} without metadata.name is ignored`, { kind, namespace, name: '<no name>' }, 'metadata.name');
    return undefined;
  }
  const meta: Meta = {
    name,
    namespace,
    creationTimestamp: typeof m.creationTimestamp === 'string' ? m.creationTimestamp : NOT_CREATED,
    labels: {},
  };
  if (typeof m.generation === 'number') meta.generation = m.generation;
  if (typeof m.uid === 'string' && m.uid !== '') meta.uid = m.uid;
  meta.labels = new Reader(diags, { kind, namespace, name }).labels(m.labels, 'metadata.labels');
  return meta;
}

/** The namespace an object lives in: its own, or the default one (none for cluster-scoped kinds). */
export function namespaceOf(raw: JsonObject, defaultNamespace: string): string {
  const ns = isObject(raw.metadata) ? raw.metadata.namespace : undefined;
  return typeof ns === 'string' && ns !== '' ? ns : defaultNamespace;
}

/** Oldest first, then `namespace/name` alphabetically: Gateway API's tie-break everywhere. */
export function byAge(a: { meta: Meta }, b: { meta: Meta }): number {
  return compare(a.meta.creationTimestamp, b.meta.creationTimestamp) || compare(a.meta.namespace, b.meta.namespace) || compare(a.meta.name, b.meta.name);
}

export function byName(a: { meta: Meta }, b: { meta: Meta }): number {
  return compare(a.meta.name, b.meta.name);
}
