// What the Envoy stage remembers of a Gateway between updates: each cluster and each listener
// (with its route configurations) as last built, under a fingerprint of everything it was built
// from. A resource whose fingerprint is unchanged, and whose endpoints and certificates did not
// change, is the very object built before, so a snapshot never sees it change and its serialized
// form and size are reused.
import type { Diagnostic } from '../diagnostics.js';
import { Diagnostics } from '../diagnostics.js';
import type { JsonObject } from '../json.js';
import type { Backend, PickerSet } from '../resolve/index.js';
import type { BuildContext } from './context.js';
import type { EndpointV3, TlsV3 } from './types.js';

/** What changed since the memo was filled, besides the IR (which the fingerprints cover). */
export interface Dirty {
  /** Everything: no memo entry is used. */
  all: boolean;
  /** Services (`namespace/name`) whose EndpointSlices changed. */
  services: ReadonlySet<string>;
  /** Some Pod changed (pools without a shadow Service select Pods). */
  pods: boolean;
  /** Some Secret or ConfigMap changed (certificates, CA bundles). */
  certificates: boolean;
}

export const CLEAN: Dirty = { all: false, services: new Set(), pods: false, certificates: false };
export const ALL_DIRTY: Dirty = { all: true, services: new Set(), pods: true, certificates: true };

/** What a build did besides returning its value. */
export interface Effects {
  diagnostics: readonly Diagnostic[];
  manifests: [string, JsonObject][];
  assignments: [string, EndpointV3.ClusterLoadAssignment][];
  secrets: [string, TlsV3.Secret][];
}

export interface MemoEntry<T> {
  /** Made when first compared: a first build (nothing to compare with) makes none. */
  fingerprint: () => string;
  /** What it was built from, when that is one object taken as immutable: the very same one needs no fingerprint. */
  source?: object;
  value: T;
  effects: Effects;
}

/** Per Gateway: clusters by name, listeners by name. */
export interface EnvoyMemo {
  clusters: Map<string, MemoEntry<unknown>>;
  listeners: Map<string, MemoEntry<unknown>>;
  /** What every listener also reads: the Gateway's backends and picker sets, fingerprinted. */
  shared?: () => string;
}

export const emptyMemo = (): EnvoyMemo => ({ clusters: new Map(), listeners: new Map() });

/** Builds with a context of its own, so that what the build adds to the shared one is known. */
export function recorded<T>(ctx: BuildContext, build: (ctx: BuildContext) => T): { value: T; effects: Effects } {
  const own: BuildContext = {
    ...ctx,
    diags: new Diagnostics(),
    manifests: new Map(),
    assignments: new Map(),
    secrets: new Map(),
    // One ExtProcPerRoute per backend and build: the objects are equal whichever build made them.
    perRoute: new Map(),
  };
  const value = build(own);
  const effects: Effects = {
    diagnostics: own.diags.list,
    manifests: [...own.manifests],
    assignments: [...own.assignments],
    secrets: [...own.secrets],
  };
  replay(ctx, effects);
  return { value, effects };
}

export function replay(ctx: BuildContext, effects: Effects): void {
  for (const d of effects.diagnostics) ctx.diags.list.push(d);
  for (const [k, m] of effects.manifests) ctx.manifests.set(k, m);
  for (const [k, a] of effects.assignments) ctx.assignments.set(k, a);
  for (const [k, s] of effects.secrets) if (!ctx.secrets.has(k)) ctx.secrets.set(k, s);
}

/** The Service whose EndpointSlices feed a backend (a pool's shadow Service). */
export function backendService(b: Backend): string {
  const e = b.endpoints;
  return `${e.namespace}/${e.type === 'service' ? e.service : e.shadowService}`;
}

export function backendEndpointsDirty(b: Backend, dirty: Dirty): boolean {
  return dirty.services.has(backendService(b)) || (dirty.pods && b.endpoints.type === 'pool');
}

export function pickerEndpointsDirty(set: PickerSet, dirty: Dirty): boolean {
  return set.pickers.some((p) => dirty.services.has(`${p.namespace}/${p.service}`));
}

/** A function's value, made on first call. */
export function once(f: () => string): () => string {
  let v: string | undefined;
  return () => {
    v ??= f();
    return v;
  };
}
