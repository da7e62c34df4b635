// GET on a collection: label and field selectors, `limit`/`continue` chunking over a consistent
// snapshot, and the resourceVersion / resourceVersionMatch semantics of the API concepts page.
import { apiVersionOf, bucketOf, type KindSpec } from './kinds.js';
import type { KubeObject } from './objects.js';
import type { Registry } from './registry.js';
import { isTrue } from './request-info.js';
import { type Matcher, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, expired, type FieldError, fieldError, invalid, timeout, tooOldResourceVersion } from './status.js';
import type { Store } from './store.js';

export interface ListContext {
  store: Store;
  registry: Registry;
  spec: KindSpec;
  /** The namespace of the path; undefined lists across all namespaces. */
  namespace: string | undefined;
  /** How long a request for a resourceVersion the server has not reached waits before 504 (the API server waits 3 s). */
  waitMs: number;
}

interface ContinueToken {
  v: 'meta.k8s.io/v1';
  /** The snapshot's revision; -1 reads the current state (the "inconsistent continue"). */
  rv: number;
  /** The first key the next page may hold. */
  start: string;
}

const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  let token: unknown;
  try {
    token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: the token is not base64-encoded JSON');
  }
  const t = token as Partial<ContinueToken>;
  if (t.v !== 'meta.k8s.io/v1' || typeof t.rv !== 'number' || typeof t.start !== 'string') {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  return t as ContinueToken;
}

/** A resourceVersion query parameter as a revision; `undefined` when unset or empty. */
export function parseResourceVersion(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`invalid resource version: ${JSON.stringify(value)}`);
  return Number(value);
}

/** Resolves once the store reaches `revision`, or answers 504 as the API server does after waiting. */
export async function waitForRevision(store: Store, revision: number, waitMs: number): Promise<void> {
  if (store.revision >= revision) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(
        timeout(`Too large resource version: ${revision}, current: ${store.revision}`, 1, [
          { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
        ]),
      );
    }, waitMs);
    const off = store.onChange(() => {
      if (store.revision < revision) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

export function validateListOptions(params: URLSearchParams, watch: boolean): void {
  const rv = params.get('resourceVersion') ?? '';
  const match = params.get('resourceVersionMatch') ?? '';
  const errors: FieldError[] = [];
  const forbid = (field: string, detail: string) => errors.push(fieldError(field, 'FieldValueForbidden', detail));
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    errors.push(fieldError('resourceVersionMatch', 'FieldValueNotSupported', 'supported values: "Exact", "NotOlderThan"', match));
  }
  const sendInitialEvents = params.get('sendInitialEvents');
  if (watch && sendInitialEvents === 'true') {
    if (match !== 'NotOlderThan') forbid('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    if (!isTrue(params.get('allowWatchBookmarks'))) forbid('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true');
  } else if (watch && match !== '') forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  else if (!watch && sendInitialEvents !== null) forbid('sendInitialEvents', 'sendInitialEvents is forbidden for list');
  else if (match !== '' && rv === '') forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
  else if (match !== '' && params.get('continue')) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
  else if (match === 'Exact' && rv === '0') forbid('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  if (errors.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', errors);
}

export interface Selection {
  namespace: string | undefined;
  label: Matcher | undefined;
  field: Matcher | undefined;
}

export function selection(spec: KindSpec, namespace: string | undefined, params: URLSearchParams): Selection {
  return { namespace, label: parseLabelSelector(params.get('labelSelector')), field: parseFieldSelector(spec, params.get('fieldSelector')) };
}

export function selects(s: Selection, obj: KubeObject): boolean {
  return (s.namespace === undefined || obj.metadata.namespace === s.namespace) && (!s.label || s.label(obj)) && (!s.field || s.field(obj));
}

/** A list item as the API server writes it: built-in kinds leave apiVersion and kind to the list. */
export function listItem(registry: Registry, spec: KindSpec, obj: KubeObject): KubeObject {
  const item = registry.present(obj, spec);
  if (spec.custom) return item;
  const { apiVersion: _a, kind: _k, ...rest } = item;
  return rest as KubeObject;
}

/** Which revision to read: the snapshot a continue token names, an exact one, or the current state. */
async function snapshotRevision(ctx: ListContext, params: URLSearchParams, token: ContinueToken | undefined): Promise<number> {
  const { store } = ctx;
  if (token) {
    if (token.rv === -1) return store.revision;
    if (token.rv < store.oldest) {
      const error = expired(CONTINUE_TOO_OLD);
      error.status.metadata.continue = encodeContinue({ ...token, rv: -1 });
      throw error;
    }
    return token.rv;
  }
  const rv = parseResourceVersion(params.get('resourceVersion'));
  if (rv === undefined || rv === 0) return store.revision;
  const match = params.get('resourceVersionMatch');
  // Without a match, a resourceVersion with a limit means Exact (the API concepts page's legacy rule).
  const exact = match === 'Exact' || (!match && Number(params.get('limit') ?? 0) > 0);
  await waitForRevision(store, rv, ctx.waitMs);
  if (!exact) return store.revision;
  if (rv < store.oldest) throw tooOldResourceVersion(rv, store.oldest);
  return rv;
}

export async function list(ctx: ListContext, params: URLSearchParams): Promise<unknown> {
  validateListOptions(params, false);
  const { spec, store, registry } = ctx;
  const continueParam = params.get('continue');
  const token = continueParam ? decodeContinue(continueParam) : undefined;
  const rvParam = params.get('resourceVersion');
  if (token && rvParam && rvParam !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  const limitParam = params.get('limit');
  if (limitParam !== null && !/^-?\d+$/.test(limitParam)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(limitParam)}: invalid syntax`);
  const limit = Number(limitParam ?? 0);
  const chosen = selection(spec, ctx.namespace, params);
  const revision = await snapshotRevision(ctx, params, token);

  const prefix = ctx.namespace === undefined ? '' : `${ctx.namespace}/`;
  const keys = store.items(bucketOf(spec), revision).filter(([key]) => key.startsWith(prefix) && (!token || key >= token.start));
  const items: KubeObject[] = [];
  let taken = 0;
  for (const [, obj] of keys) {
    if (limit > 0 && items.length === limit) break;
    taken++;
    if (selects(chosen, obj)) items.push(listItem(registry, spec, obj));
  }
  const metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(revision) };
  if (taken < keys.length) {
    metadata.continue = encodeContinue({ v: 'meta.k8s.io/v1', rv: revision, start: `${(keys[taken - 1] as [string, KubeObject])[0]}\u0000` });
    if (!chosen.label && !chosen.field) metadata.remainingItemCount = keys.length - taken;
  }
  return { apiVersion: apiVersionOf(spec), kind: `${spec.kind}List`, metadata, items };
}
