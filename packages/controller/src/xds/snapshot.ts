// Per-Gateway snapshots of xDS resources. Each resource is encoded once (shared between groups
// that hold the same one) and versioned by a hash of its bytes, each type by a hash of its names
// and versions: recomputing an unchanged input gives the same versions, and nothing is sent. A list
// given again as the same list is taken as it was, and one that replaces some objects of the last
// under their own names costs the replacements, so a change costs what it touches.
import { createHash } from 'node:crypto';
import { collectReferences, emptyReferences, missingReferences, type References, type SnapshotIssue } from './consistency.js';
import { clustersNamedBy, edsNameOf } from './dependencies.js';
import { isJsonObject, type JsonObject, ProtoJson, ProtoJsonError } from './proto-json.js';
import { envoyProtos } from './protos.js';
import { KIND_TYPE_URL, nameField, PUSH_ORDER, type ResourceKind, TYPE_URL, type TypeUrl } from './resource-types.js';
import { ResourceMap } from './resource-map.js';
import { anyEntry, deltaResourceEntry } from './wire.js';

/** One resource in proto3 JSON with its `@type`, as `toXds()` of `@extlb/envoy` writes it. */
export type XdsResource = Readonly<Record<string, unknown>>;

/** What a Gateway's proxies get: the shape `toXds()` returns, plus `secrets`. */
export type SnapshotResources = Partial<Record<ResourceKind, readonly XdsResource[]>>;

export type { SnapshotIssue } from './consistency.js';

/** A resource encoded for the wire. The same content always gets the same version. */
export class EncodedResource {
  private deltaBytes: Buffer | undefined;
  private hash: bigint | undefined;
  /** How many snapshots hold this resource; it leaves the cache at zero. */
  refs = 0;

  constructor(
    readonly name: string,
    readonly version: string,
    /** The resource as a DiscoveryResponse `resources` entry (a google.protobuf.Any). */
    readonly entry: Buffer,
    /** The hash of the JSON it was encoded from: the cache's key. */
    readonly key: string,
    /** A listener's or route's: the names it uses as clusters (make before break waits for those). */
    readonly needs: readonly string[] = [],
    /** An EDS cluster's: the ClusterLoadAssignment it warms on. */
    readonly edsName: string | undefined = undefined,
  ) {}

  /** The resource as a DeltaDiscoveryResponse `resources` entry, made on first use. */
  /** A hash of the name and version, for the type's version. */
  get entryHash(): bigint {
    this.hash ??= BigInt(`0x${digest(`${this.name}\0${this.version}`)}`);
    return this.hash;
  }

  get deltaEntry(): Buffer {
    this.deltaBytes ??= deltaResourceEntry(this.name, this.version, this.entry);
    return this.deltaBytes;
  }
}

export interface TypeResources {
  readonly typeUrl: TypeUrl;
  /** A hash of the names and versions of every resource of the type. */
  readonly version: string;
  readonly resources: ReadonlyMap<string, EncodedResource>;
  /** `performance.now()` when this version became the group's: where push latency starts. */
  readonly since: number;
  /**
   * While this is the group's current version: the one it replaced and the names added, changed
   * or removed since, so a stream in step with the previous one looks at those names only.
   */
  readonly previous?: TypeResources | undefined;
  readonly changes?: ReadonlySet<string> | undefined;
}

type MutableTypeResources = { -readonly [K in keyof TypeResources]: TypeResources[K] };

/** The names whose version differs between two versions of a type, removed ones included. */
function changedNames(before: TypeResources, after: ReadonlyMap<string, EncodedResource>): Set<string> {
  const names = new Set<string>();
  for (const [name, r] of after) if (before.resources.get(name)?.version !== r.version) names.add(name);
  for (const name of before.resources.keys()) if (!after.has(name)) names.add(name);
  return names;
}

export interface Snapshot {
  readonly group: string;
  /** A hash of the five type versions. */
  readonly version: string;
  /** Every type, empty or not. */
  readonly types: ReadonlyMap<TypeUrl, TypeResources>;
}

export interface SnapshotUpdate {
  version: string;
  /** The types whose version changed, in push order; empty when the input was unchanged. */
  changed: TypeUrl[];
}

export class SnapshotError extends Error {
  constructor(
    readonly group: string,
    readonly issues: readonly SnapshotIssue[],
  ) {
    const lines = issues.map((i) => `  ${i.kind}${i.name ? ` ${JSON.stringify(i.name)}` : ''}${i.path ? ` ${i.path}` : ''}: ${i.message}`);
    super(`xDS snapshot for ${group} rejected (the previous one stays in use):\n${lines.join('\n')}`);
    this.name = 'SnapshotError';
  }
}

export type SnapshotListener = (snapshot: Snapshot, changed: readonly TypeUrl[]) => void;

function digest(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 16);
}

const MASK = (1n << 64n) - 1n;
/**
 * A type's version is the sum of a hash of each resource's name and version (mod 2^64): the same
 * for the same resources in any order, an addition per resource (each hash is made once), and a
 * subtraction and an addition per resource replaced.
 */
function hashSum(resources: Iterable<EncodedResource>): bigint {
  let sum = 0n;
  for (const r of resources) sum = (sum + r.entryHash) & MASK;
  return sum;
}
const versionOf = (sum: bigint) => sum.toString(16).padStart(16, '0');

const KIND_OF = Object.fromEntries(Object.entries(KIND_TYPE_URL).map(([kind, typeUrl]) => [typeUrl, kind])) as Record<TypeUrl, ResourceKind>;

/** A list left out of a snapshot: the same one each time, so it reads as unchanged. */
const NONE: readonly unknown[] = Object.freeze([]);

/** What one kind's list was made into: the encoding of each of its objects, in list order. */
interface MadeList {
  readonly list: readonly unknown[];
  readonly encoded: readonly EncodedResource[];
  /** Each object and its encoding, made when a later list has to be matched object by object. */
  byObject?: Map<XdsResource, EncodedResource>;
}

function objectsOf(made: MadeList): ReadonlyMap<XdsResource, EncodedResource> {
  if (!made.byObject) {
    made.byObject = new Map();
    for (const [i, o] of made.list.entries()) made.byObject.set(o as XdsResource, made.encoded[i] as EncodedResource);
  }
  return made.byObject;
}

/** What a group's snapshot was made from, so the next one redoes only the lists that changed. */
interface Made {
  lists: Map<ResourceKind, MadeList>;
  /** What its listeners and clusters ask for over ADS. */
  refs: References;
}

/**
 * One kind's list taken into a snapshot: its resources by name and how they came. `same`: the
 * very list of the last snapshot; `replaced`: the last list with objects at some places replaced
 * by ones of the same name (`changes` and `sum` then come from the replacements alone);
 * `rebuilt`: matched object by object.
 */
interface Taken {
  how: 'same' | 'replaced' | 'rebuilt';
  named: ReadonlyMap<string, EncodedResource>;
  made: MadeList | undefined;
  changes?: Set<string>;
  sum?: bigint;
  /** Encodings of the last snapshot this one no longer holds, released once it is set. */
  dropped: EncodedResource[];
}

function resourceName(typeUrl: TypeUrl, resource: XdsResource): unknown {
  const field = nameField(typeUrl);
  return resource[field] ?? (field === 'cluster_name' ? resource.clusterName : undefined);
}

export class SnapshotCache {
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly encoded = new Map<string, EncodedResource>();
  /**
   * The cache key of each resource object already set. A snapshot made from the previous one (an
   * endpoint-only recompute keeps every listener, route and cluster object) is then not turned into
   * JSON and hashed again: for a large Gateway that was most of an endpoint update's cost.
   * Resources are taken as immutable once set.
   */
  private readonly keys = new WeakMap<XdsResource, string>();
  /** Per group, what its snapshot was made from. */
  private readonly made = new Map<string, Made>();
  /** Per listener or cluster object, what it asks for (and its inline private keys): walked once. */
  private readonly references = new WeakMap<XdsResource, { kind: ResourceKind; name: string; refs: References; issues: SnapshotIssue[] }>();
  private readonly listeners = new Set<SnapshotListener>();
  private codec: ProtoJson | undefined;

  /** `codec` defaults to one over Envoy's protos (loaded on first use). */
  constructor(options: { codec?: ProtoJson } = {}) {
    this.codec = options.codec;
  }

  /**
   * Makes `resources` the configuration of `group` (a Gateway, `namespace/name`) and pushes what
   * changed to its proxies. Throws a SnapshotError, keeping the previous snapshot, when a resource
   * does not encode, is named twice, or is asked for by a listener or cluster but missing.
   */
  setSnapshot(group: string, resources: SnapshotResources): SnapshotUpdate {
    const issues: SnapshotIssue[] = [];
    if (!isJsonObject(resources)) throw new SnapshotError(group, [{ kind: 'listeners', name: '', path: '', message: 'resources must be an object of lists' }]);
    for (const key of Object.keys(resources)) {
      if (!Object.hasOwn(KIND_TYPE_URL, key))
        issues.push({ kind: key as ResourceKind, name: '', path: '', message: 'unknown list; expected listeners, routes, clusters, endpoints or secrets' });
    }
    const previous = this.snapshots.get(group);
    const made = previous ? this.made.get(group) : undefined;
    /** Encoded for this snapshot (the last one held the others): released again if it is refused. */
    const acquired: EncodedResource[] = [];
    const taken = new Map<ResourceKind, Taken>();
    for (const [kind, typeUrl] of Object.entries(KIND_TYPE_URL) as [ResourceKind, TypeUrl][]) {
      const list: unknown = resources[kind] ?? NONE;
      const held = made?.lists.get(kind);
      const before = previous?.types.get(typeUrl);
      const take =
        held && before && held.list === list
          ? { how: 'same' as const, named: before.resources, made: held, dropped: [] }
          : ((held && before && this.replacedIn(typeUrl, list, held, before, acquired)) ?? this.rebuilt(kind, typeUrl, list, held, issues, acquired));
      taken.set(kind, take);
    }
    const named = (kind: ResourceKind) => taken.get(kind)?.named;
    const next: Made = { lists: new Map(), refs: emptyReferences() };
    for (const [kind, t] of taken) if (t.made) next.lists.set(kind, t.made);
    // What listeners and clusters ask for, in list order (the first asker is the one reported).
    const unchanged = (kind: ResourceKind) => taken.get(kind)?.how === 'same';
    if (made && unchanged('listeners') && unchanged('clusters')) next.refs = made.refs;
    else {
      for (const kind of ['listeners', 'clusters'] as const) {
        const own = next.lists.get(kind);
        for (const [i, encoded] of (own?.encoded ?? []).entries()) {
          const refs = this.referencesOf(kind, encoded.name, own?.list[i] as XdsResource);
          issues.push(...refs.issues);
          for (const k of ['routes', 'endpoints', 'secrets'] as const)
            for (const [ref, referrer] of refs.refs[k]) if (!next.refs[k].has(ref)) next.refs[k].set(ref, referrer);
        }
      }
    }
    // The same askers and the same names of every kind as the last snapshot, which passed this.
    const sameNames = next.refs === made?.refs && [...taken.values()].every((t) => t.how !== 'rebuilt');
    if (!sameNames) issues.push(...missingReferences(next.refs, (kind, name) => named(kind)?.has(name) === true));
    if (issues.length > 0) {
      this.release(acquired);
      throw new SnapshotError(group, issues);
    }
    for (const t of taken.values()) this.release(t.dropped);
    this.made.set(group, next);

    const since = performance.now();
    const types = new Map<TypeUrl, TypeResources>();
    const changed: TypeUrl[] = [];
    for (const typeUrl of PUSH_ORDER) {
      const before = previous?.types.get(typeUrl);
      const t = taken.get(KIND_OF[typeUrl]);
      const resources = t?.named ?? new Map<string, EncodedResource>();
      if (before && resources === before.resources) {
        types.set(typeUrl, before);
        continue;
      }
      const version = versionOf(t?.sum ?? hashSum(resources.values()));
      if (before?.version === version) {
        types.set(typeUrl, before);
        continue;
      }
      const fresh: MutableTypeResources = { typeUrl, version, resources, since };
      if (before) {
        fresh.previous = before;
        fresh.changes = t?.changes ?? changedNames(before, resources);
        // Only one step back is kept: a stream further behind compares everything.
        const old = before as MutableTypeResources;
        old.previous = undefined;
        old.changes = undefined;
      }
      types.set(typeUrl, fresh);
      changed.push(typeUrl);
    }
    if (previous && changed.length === 0) return { version: previous.version, changed };
    const snapshot: Snapshot = { group, version: digest(PUSH_ORDER.map((t) => types.get(t)?.version).join('\n')), types };
    this.snapshots.set(group, snapshot);
    for (const listener of this.listeners) listener(snapshot, changed);
    return { version: snapshot.version, changed };
  }

  /**
   * `list` taken as the last one with some of its objects replaced, each by one of the same name
   * at the same place: a change costs the objects replaced, not the list (an endpoint change
   * replaces one ClusterLoadAssignment of thousands). Undefined when the list is not such a one
   * (another length, a name moved, an object that does not encode): it is then rebuilt, which
   * reports what is wrong with it.
   */
  private replacedIn(typeUrl: TypeUrl, list: unknown, held: MadeList, before: TypeResources, acquired: EncodedResource[]): Taken | undefined {
    if (!Array.isArray(list) || list.length !== held.list.length) return undefined;
    let encoded: EncodedResource[] | undefined;
    const replacements = new Map<string, EncodedResource>();
    const changes = new Set<string>();
    const dropped: EncodedResource[] = [];
    // The type's version is the sum its hashes make: the replaced ones' taken out, the new ones' put in.
    let sum = BigInt(`0x${before.version}`);
    const own: EncodedResource[] = [];
    for (let i = 0; i < list.length; i++) {
      const resource: unknown = list[i];
      if (resource === held.list[i]) continue;
      const old = held.encoded[i] as EncodedResource;
      let fresh: EncodedResource | undefined;
      if (isJsonObject(resource) && resource['@type'] === typeUrl && resourceName(typeUrl, resource) === old.name) {
        try {
          fresh = this.acquire(typeUrl, old.name, resource);
        } catch (err) {
          if (!(err instanceof ProtoJsonError)) throw err;
        }
      }
      if (!fresh) {
        this.release(own);
        return undefined;
      }
      own.push(fresh);
      dropped.push(old);
      encoded ??= [...held.encoded];
      encoded[i] = fresh;
      if (fresh === old) continue;
      replacements.set(old.name, fresh);
      if (fresh.version !== old.version) {
        changes.add(old.name);
        sum = (sum - old.entryHash + fresh.entryHash) & MASK;
      }
    }
    acquired.push(...own);
    const madeList: MadeList = { list, encoded: encoded ?? held.encoded, ...(encoded ? {} : { byObject: held.byObject }) };
    if (replacements.size === 0) return { how: 'replaced', named: before.resources, made: madeList, dropped };
    return { how: 'replaced', named: ResourceMap.of(before.resources).replacing(replacements), made: madeList, changes, sum, dropped };
  }

  /** `list` taken object by object: one the last snapshot held keeps its encoding, a new one is checked and encoded. */
  private rebuilt(
    kind: ResourceKind,
    typeUrl: TypeUrl,
    list: unknown,
    held: MadeList | undefined,
    issues: SnapshotIssue[],
    acquired: EncodedResource[],
  ): Taken {
    const named = new Map<string, EncodedResource>();
    if (!Array.isArray(list)) {
      issues.push({ kind, name: '', path: '', message: 'must be a list' });
      return { how: 'rebuilt', named, made: undefined, dropped: [] };
    }
    const heldObjects = held ? objectsOf(held) : undefined;
    const objects = new Map<XdsResource, EncodedResource>();
    const encoded: EncodedResource[] = [];
    /** The objects taken, in step with `encoded`: the list itself unless one is refused (then the snapshot is). */
    const took: unknown[] = [];
    for (const [i, resource] of (list as unknown[]).entries()) {
      // An object the last snapshot held was checked then, and is taken as immutable: it keeps
      // its encoding (and its count in the cache). Only a name given twice is looked for.
      const kept = heldObjects?.get(resource as XdsResource);
      if (kept) {
        if (named.has(kept.name)) issues.push({ kind, name: kept.name, path: '', message: `is in the list twice (again at [${i}])` });
        else {
          named.set(kept.name, kept);
          objects.set(resource as XdsResource, kept);
          encoded.push(kept);
          took.push(resource);
        }
        continue;
      }
      if (!isJsonObject(resource)) {
        issues.push({ kind, name: '', path: `[${i}]`, message: 'must be an object' });
        continue;
      }
      const name = resourceName(typeUrl, resource);
      if (typeof name !== 'string' || name === '') {
        issues.push({ kind, name: '', path: `[${i}].${nameField(typeUrl)}`, message: 'must be a non-empty string' });
        continue;
      }
      if (resource['@type'] !== typeUrl) {
        issues.push({ kind, name, path: '@type', message: `must be ${typeUrl}, got ${JSON.stringify(resource['@type'])}` });
      } else if (named.has(name)) {
        issues.push({ kind, name, path: '', message: `is in the list twice (again at [${i}])` });
      } else {
        let fresh: EncodedResource;
        try {
          fresh = this.acquire(typeUrl, name, resource);
        } catch (err) {
          if (!(err instanceof ProtoJsonError)) throw err;
          issues.push({ kind, name, path: err.path, message: err.detail });
          continue;
        }
        acquired.push(fresh);
        named.set(name, fresh);
        objects.set(resource, fresh);
        encoded.push(fresh);
        took.push(resource);
      }
    }
    // The last snapshot's encodings this one no longer holds (none when it holds every object).
    const dropped: EncodedResource[] = [];
    if (heldObjects) for (const [o, e] of heldObjects) if (objects.get(o) !== e) dropped.push(e);
    return { how: 'rebuilt', named, made: { list: took.length === list.length ? list : took, encoded, byObject: objects }, dropped };
  }

  /**
   * Forgets a group. Its connected proxies keep the configuration they have and get nothing more
   * until the group has a snapshot again; to take a Gateway's configuration away from its proxies,
   * set an empty snapshot instead.
   */
  clearSnapshot(group: string): boolean {
    const snapshot = this.snapshots.get(group);
    if (!snapshot) return false;
    this.snapshots.delete(group);
    this.made.delete(group);
    this.release(allResources(snapshot));
    return true;
  }

  getSnapshot(group: string): Snapshot | undefined {
    return this.snapshots.get(group);
  }

  groups(): string[] {
    return [...this.snapshots.keys()];
  }

  /** Distinct resources held in encoded form (shared between groups). */
  get encodedCount(): number {
    return this.encoded.size;
  }

  /** Calls `listener` after each snapshot that changes something; returns the unsubscribe. */
  onChange(listener: SnapshotListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private referencesOf(kind: ResourceKind, name: string, resource: XdsResource): { refs: References; issues: SnapshotIssue[] } {
    let held = this.references.get(resource);
    if (held?.kind !== kind || held.name !== name) {
      held = { kind, name, refs: emptyReferences(), issues: [] };
      collectReferences(kind, name, resource as JsonObject, held.refs, held.issues);
      this.references.set(resource, held);
    }
    return held;
  }

  private acquire(typeUrl: TypeUrl, name: string, resource: XdsResource): EncodedResource {
    let key = this.keys.get(resource);
    if (key === undefined) {
      let json: string;
      try {
        json = JSON.stringify(resource);
      } catch (err) {
        throw new ProtoJsonError('', `is not JSON (${(err as Error).message})`);
      }
      key = digest(json);
      this.keys.set(resource, key);
    }
    let encoded = this.encoded.get(key);
    if (!encoded) {
      this.codec ??= new ProtoJson(envoyProtos());
      const any = this.codec.encodeAny(resource);
      const needs = typeUrl === TYPE_URL.listener || typeUrl === TYPE_URL.route ? clustersNamedBy(resource) : [];
      const edsName = typeUrl === TYPE_URL.cluster ? edsNameOf(resource as JsonObject) : undefined;
      encoded = new EncodedResource(name, digest(any), anyEntry(any), key, needs, edsName);
      this.encoded.set(key, encoded);
    }
    encoded.refs++;
    return encoded;
  }

  private release(resources: Iterable<EncodedResource>): void {
    for (const r of resources) {
      r.refs--;
      if (r.refs === 0) this.encoded.delete(r.key);
    }
  }
}

function* allResources(snapshot: Snapshot): Iterable<EncodedResource> {
  for (const t of snapshot.types.values()) yield* t.resources.values();
}
