// Reads and writes with the API server's semantics: create (system fields, AlreadyExists, namespace
// lifecycle), update with optimistic concurrency (409 on a stale resourceVersion, no-op updates keep
// the resourceVersion), the status subresource, generation, finalizers, and DELETE with its
// preconditions and propagation policies. The garbage collector finishes what DELETE starts.
import { randomUUID } from 'node:crypto';
import { apiVersionOf, bucketOf, groupResource, type KindSpec, type KindTable, splitApiVersion, tracksGeneration } from './kinds.js';
import { clone, deepEqual, isRecord, type KubeObject, objectKey, timestamp } from './objects.js';
import { APPLY_PATCH, applyJsonPatch, applyMergePatch, applyStrategicMergePatch, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from './patch.js';
import { parse as parseYaml } from 'yaml';
import { recordUpdate, serverSideApply } from './apply.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  fieldError,
  forbidden,
  internalError,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  success,
  unsupportedMediaType,
} from './status.js';
import { generateName, validateName } from './names.js';
import type { Store } from './store.js';
import type { StrategyContext } from './strategies.js';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WriteOptions {
  subresource?: 'status';
  dryRun?: boolean;
  fieldManager?: string;
  /** Apply only: take over the fields other managers own instead of answering 409. */
  force?: boolean;
}

export interface Reply {
  code: number;
  body: unknown;
}

/** The finalizer the garbage collector uses for foreground deletion. */
export const FOREGROUND = 'foregroundDeletion';

/** Where Namespaces are stored, whichever kind table the server has. */
export const NAMESPACES = 'namespaces';

/** Everything but metadata and status: what `metadata.generation` counts changes of. */
function specPart(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

function contentTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** What holds an object being deleted: its finalizers, and for a Namespace also spec.finalizers (the namespace controller's). */
function pendingFinalizers(spec: KindSpec, obj: KubeObject): string[] {
  const own = obj.metadata.finalizers ?? [];
  const namespaceFinalizers =
    bucketOf(spec) === NAMESPACES && isRecord(obj.spec) && Array.isArray(obj.spec.finalizers) ? (obj.spec.finalizers as string[]) : [];
  return [...own, ...namespaceFinalizers];
}

export class Registry implements StrategyContext {
  private clusterIPs = 10;

  constructor(
    private readonly store: Store,
    readonly kinds: KindTable,
    private readonly namespaceLifecycle: boolean,
  ) {}

  allocateClusterIP(): string {
    const n = this.clusterIPs++;
    return `10.96.${(n >> 8) & 255}.${n & 255}`;
  }

  /** The object as a request for `spec`'s version sees it: apiVersion and kind first. */
  present(obj: KubeObject, spec: KindSpec): KubeObject {
    const { apiVersion: _a, kind: _k, ...rest } = clone(obj);
    return { apiVersion: apiVersionOf(spec), kind: spec.kind, ...rest } as KubeObject;
  }

  stored(spec: KindSpec, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(bucketOf(spec), objectKey(spec.namespaced ? namespace : undefined, name));
  }

  get(spec: KindSpec, namespace: string | undefined, name: string): KubeObject {
    const obj = this.stored(spec, namespace, name);
    if (!obj) throw notFound(groupResource(spec), name);
    return this.present(obj, spec);
  }

  /** Reads a request body as an object of `spec`'s kind (any served version of its group). */
  private decode(spec: KindSpec, body: unknown): KubeObject {
    if (!isRecord(body)) throw badRequest(`the body of the request is not a JSON object: ${JSON.stringify(body)?.slice(0, 80)}`);
    const kind = typeof body.kind === 'string' && body.kind !== '' ? body.kind : spec.kind;
    const apiVersion = typeof body.apiVersion === 'string' && body.apiVersion !== '' ? body.apiVersion : apiVersionOf(spec);
    const { group, version } = splitApiVersion(apiVersion);
    if (kind !== spec.kind || group !== spec.group || !this.kinds.resource(group, version, spec.plural)) {
      throw badRequest(`${kind} in version "${version}" cannot be handled as a ${spec.kind}: no kind "${kind}" is registered for version "${apiVersion}"`);
    }
    if (body.metadata !== undefined && !isRecord(body.metadata)) throw badRequest(`${spec.kind}: metadata is not an object`);
    const obj = clone(body) as KubeObject;
    obj.metadata ??= {};
    return obj;
  }

  private checkNamespace(spec: KindSpec, obj: KubeObject): void {
    if (!spec.namespaced || !this.namespaceLifecycle) return;
    const ns = this.store.get(NAMESPACES, objectKey(undefined, obj.metadata.namespace ?? ''));
    if (!ns) throw notFound({ group: '', resource: NAMESPACES }, obj.metadata.namespace ?? '');
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(groupResource(spec), obj.metadata.name, `unable to create new content in namespace ${ns.metadata.name} because it is being terminated`, [
        { reason: 'NamespaceTerminating', message: `namespace ${ns.metadata.name} is being terminated`, field: 'metadata.namespace' },
      ]);
    }
  }

  /** Sets the namespace from the path; a body that names another one is refused. */
  private placeIn(spec: KindSpec, obj: KubeObject, namespace: string | undefined): void {
    if (!spec.namespaced) {
      delete obj.metadata.namespace;
      return;
    }
    if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    obj.metadata.namespace = namespace;
  }

  /** A create request; with `seed`, an object already in the cluster, whose uid, creationTimestamp and status are kept. */
  create(spec: KindSpec, namespace: string | undefined, body: unknown, options: { dryRun?: boolean; seed?: boolean } = {}): KubeObject {
    const obj = this.decode(spec, body);
    this.placeIn(spec, obj, namespace);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    validateName(spec, obj);
    if (meta.resourceVersion) throw internalError('resourceVersion should not be set on objects to be created');
    this.checkNamespace(spec, obj);
    if (this.stored(spec, namespace, meta.name as string)) throw alreadyExists(groupResource(spec), meta.name as string);
    if (!options.seed || !meta.uid) meta.uid = randomUUID();
    if (!options.seed || !meta.creationTimestamp) meta.creationTimestamp = timestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (tracksGeneration(spec)) meta.generation = 1;
    else delete meta.generation;
    const status = obj.status;
    if (spec.status) delete obj.status;
    spec.strategy?.defaults?.(obj);
    spec.strategy?.prepareForCreate?.(obj, this);
    if (options.seed && status !== undefined) obj.status = status;
    return this.commit(spec, undefined, obj, options.dryRun);
  }

  update(spec: KindSpec, namespace: string | undefined, name: string, body: unknown, options: WriteOptions = {}): KubeObject {
    const prev = this.stored(spec, namespace, name);
    if (!prev) throw notFound(groupResource(spec), name);
    return this.updateFrom(spec, prev, this.decode(spec, body), options);
  }

  private updateFrom(spec: KindSpec, prev: KubeObject, obj: KubeObject, options: WriteOptions, applied = false): KubeObject {
    const name = prev.metadata.name as string;
    if (obj.metadata.name !== name) throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    this.placeIn(spec, obj, prev.metadata.namespace);
    const gr = groupResource(spec);
    if (obj.metadata.uid && obj.metadata.uid !== prev.metadata.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${prev.metadata.uid}`);
    }
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== prev.metadata.resourceVersion) throw conflict(gr, name, MODIFIED_CONFLICT);
    let next: KubeObject;
    if (options.subresource === 'status') {
      next = clone(prev);
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
    } else {
      next = obj;
      for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
        if (prev.metadata[field] === undefined) delete next.metadata[field];
        else next.metadata[field] = prev.metadata[field] as never;
      }
      if (spec.status) {
        if (prev.status === undefined) delete next.status;
        else next.status = prev.status;
      }
      spec.strategy?.defaults?.(next);
      spec.strategy?.prepareForUpdate?.(next, prev);
      if (tracksGeneration(spec) && !deepEqual(specPart(prev), specPart(next))) next.metadata.generation = (prev.metadata.generation ?? 0) + 1;
    }
    // Field ownership is tracked from the first apply on: an update then belongs to its manager.
    if (!applied && Array.isArray(prev.metadata.managedFields)) {
      recordUpdate(prev, next, options.fieldManager ?? 'unknown', apiVersionOf(spec), spec.mergeKeys ?? {}, options.subresource);
    }
    return this.commit(spec, prev, next, options.dryRun);
  }

  /**
   * Stores `next` as a new revision, unless nothing changed (the API server then keeps the
   * resourceVersion and sends no event). An object being deleted goes once its last finalizer does.
   */
  private commit(spec: KindSpec, prev: KubeObject | undefined, next: KubeObject, dryRun = false): KubeObject {
    next.apiVersion = apiVersionOf(spec);
    next.kind = spec.kind;
    if (prev) next.metadata.resourceVersion = prev.metadata.resourceVersion as string;
    else delete next.metadata.resourceVersion;
    if (prev && deepEqual(this.present(prev, spec), next)) return this.present(prev, spec);
    if (dryRun) return this.present(next, spec);
    const key = objectKey(next.metadata.namespace, next.metadata.name as string);
    const finished = next.metadata.deletionTimestamp && pendingFinalizers(spec, next).length === 0;
    if (finished) {
      this.store.commit(bucketOf(spec), key, undefined);
      return this.present(next, spec);
    }
    return this.present(this.store.commit(bucketOf(spec), key, next).object, spec);
  }

  patch(spec: KindSpec, namespace: string | undefined, name: string, contentType: string | undefined, raw: string, options: WriteOptions = {}): Reply {
    const type = contentTypeOf(contentType);
    const accepted = spec.custom ? [JSON_PATCH, MERGE_PATCH, APPLY_PATCH] : [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH];
    if (!accepted.includes(type)) throw unsupportedMediaType(type, accepted);
    if (type === APPLY_PATCH) return this.apply(spec, namespace, name, raw, options);
    if (options.force !== undefined) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [fieldError('force', 'FieldValueForbidden', 'may not be specified for non-apply patch')]);
    }
    const prev = this.stored(spec, namespace, name);
    if (!prev) throw notFound(groupResource(spec), name);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      throw badRequest(`error decoding patch: ${(err as Error).message}`);
    }
    const current = this.present(prev, spec);
    let patched: unknown;
    if (type === JSON_PATCH) patched = applyJsonPatch(current, body);
    else if (type === MERGE_PATCH) patched = applyMergePatch(current, body);
    else patched = applyStrategicMergePatch(current, body, spec.mergeKeys ?? {});
    const obj = this.decode(spec, patched);
    // A patch that drops the resourceVersion is unconditional; one that sets it is a precondition.
    obj.metadata.resourceVersion ||= prev.metadata.resourceVersion;
    return { code: 200, body: this.updateFrom(spec, prev, obj, options) };
  }

  /** Server-side apply (apply.ts): creates the object or merges the configuration in, by field ownership. */
  private apply(spec: KindSpec, namespace: string | undefined, name: string, raw: string, options: WriteOptions): Reply {
    if (!options.fieldManager) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [fieldError('fieldManager', 'FieldValueRequired', 'is required for apply patch')]);
    }
    let applied: unknown;
    try {
      applied = parseYaml(raw);
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
    const obj = this.decode(spec, applied);
    if (obj.metadata.name !== name) throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    const prev = this.stored(spec, namespace, name);
    if (!prev && options.subresource) throw notFound(groupResource(spec), name);
    const request = {
      manager: options.fieldManager,
      force: options.force === true,
      apiVersion: apiVersionOf(spec),
      keys: spec.mergeKeys ?? {},
      ignoreStatus: spec.status === true && options.subresource !== 'status',
    };
    if (!prev) return { code: 201, body: this.create(spec, namespace, serverSideApply(undefined, obj, request), options) };
    const merged = this.decode(spec, serverSideApply(this.present(prev, spec), obj, request));
    return { code: 200, body: this.updateFrom(spec, prev, merged, options, true) };
  }

  delete(spec: KindSpec, namespace: string | undefined, name: string, options: DeleteOptions = {}): Reply {
    const gr = groupResource(spec);
    const prev = this.stored(spec, namespace, name);
    if (!prev) throw notFound(gr, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== prev.metadata.uid)
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${prev.metadata.uid}`);
    if (resourceVersion && resourceVersion !== prev.metadata.resourceVersion) {
      throw conflict(
        gr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${prev.metadata.resourceVersion}`,
      );
    }
    const policy = options.propagationPolicy ?? (options.orphanDependents ? 'Orphan' : 'Background');
    const next = clone(prev);
    const finalizers = [...(next.metadata.finalizers ?? [])];
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND)) finalizers.push(FOREGROUND);
    // A Namespace waits for the namespace controller (its spec.finalizers), an object with
    // finalizers for whoever owns them: both are only marked, and answered 200 with the object.
    const isNamespace = bucketOf(spec) === NAMESPACES;
    if (finalizers.length > 0 || pendingFinalizers(spec, prev).length > 0) {
      if (finalizers.length > 0) next.metadata.finalizers = finalizers;
      next.metadata.deletionTimestamp ??= timestamp();
      next.metadata.deletionGracePeriodSeconds ??= 0;
      if (isNamespace) next.status = { ...(isRecord(next.status) ? next.status : {}), phase: 'Terminating' };
      return { code: 200, body: this.commit(spec, prev, next, options.dryRun) };
    }
    if (policy === 'Orphan' && !options.dryRun) this.orphanDependents(prev);
    if (options.dryRun) return { code: 200, body: spec.returnDeletedObject ? this.present(prev, spec) : success(gr, name, prev.metadata.uid) };
    const change = this.store.commit(bucketOf(spec), objectKey(prev.metadata.namespace, name), undefined);
    return { code: 200, body: spec.returnDeletedObject ? this.present(change.object, spec) : success(gr, name, prev.metadata.uid) };
  }

  /** Orphan propagation: the dependents lose their reference to the owner and stay. */
  private orphanDependents(owner: KubeObject): void {
    for (const { spec, obj } of this.dependentsOf(owner.metadata.uid as string)) {
      const next = clone(obj);
      next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      this.commit(spec, obj, next);
    }
  }

  /** Every stored object with an owner reference to `uid`. */
  private dependentsOf(uid: string): { spec: KindSpec; obj: KubeObject }[] {
    return this.store.dependents(uid).flatMap(({ bucket, key }) => {
      const spec = this.kinds.forBucket(bucket);
      const obj = this.store.get(bucket, key);
      return spec && obj ? [{ spec, obj }] : [];
    });
  }

  /** A write by the server's own controllers: no preconditions, status kept. */
  systemUpdate(spec: KindSpec, prev: KubeObject, next: KubeObject): KubeObject {
    return this.commit(spec, prev, next);
  }

  /**
   * Creates or replaces an object as it would be stored after a create (defaults applied; status,
   * uid and creationTimestamp kept when given): how tests seed a cluster. The kind must be registered.
   */
  put(object: KubeObject): KubeObject {
    const spec = this.kinds.kind(object.apiVersion ?? '', object.kind ?? '');
    if (!spec) throw new Error(`kube-api-server: no kind ${object.apiVersion} ${object.kind} is registered`);
    const namespace = spec.namespaced ? (object.metadata?.namespace ?? 'default') : undefined;
    const body = clone(object);
    delete body.metadata.resourceVersion;
    const prev = this.stored(spec, namespace, body.metadata.name ?? '');
    if (!prev) return this.create(spec, namespace, body, { seed: true });
    this.placeIn(spec, body, namespace);
    for (const field of ['uid', 'creationTimestamp'] as const) body.metadata[field] ??= prev.metadata[field];
    spec.strategy?.defaults?.(body);
    spec.strategy?.prepareForUpdate?.(body, prev);
    if (tracksGeneration(spec)) body.metadata.generation = (prev.metadata.generation ?? 1) + (deepEqual(specPart(prev), specPart(body)) ? 0 : 1);
    return this.commit(spec, prev, body);
  }
}
