// The kind table: which resources the server serves, at which paths, and how each behaves (scope,
// status subresource, generation, field selectors, strategic-merge keys, defaulting).
import { fieldValue, type KubeObject } from './objects.js';
import { deploymentStrategy, namespaceStrategy, serviceStrategy, type Strategy } from './strategies.js';

export interface KindSpec {
  /** API group; `''` for the core group (`/api/v1`). */
  group: string;
  version: string;
  kind: string;
  /** The resource name in paths, e.g. `services`. */
  plural: string;
  /** Default: the kind in lower case. */
  singular?: string;
  namespaced: boolean;
  /** Served from a CustomResourceDefinition: list items carry apiVersion and kind, strategic merge patch is refused. */
  custom?: boolean;
  /** Has a `/status` subresource: the main resource ignores status, `/status` changes only status. */
  status?: boolean;
  /** Keeps `metadata.generation` (1 on create, +1 when anything but metadata and status changes). Default: `custom`. */
  generation?: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Field selectors beyond `metadata.name` and `metadata.namespace`, and how to read each from an object. */
  fields?: Record<string, (obj: KubeObject) => string | undefined>;
  /** Lists that strategic merge patch merges element by element, by dotted path: the merge key, or `''` for a set of scalars. */
  mergeKeys?: Record<string, string>;
  /** DELETE answers with the deleted object instead of a Status (as Pods and Services do). */
  returnDeletedObject?: boolean;
  /** Which name format `metadata.name` must follow. Default `subdomain`. */
  nameFormat?: 'subdomain' | 'label' | 'dns1035';
  /** Defaulting and update rules of the kind's REST strategy. */
  strategy?: Strategy;
}

/** A group and resource, the identity of a storage bucket whatever version a request uses. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function apiVersionOf(spec: Pick<KindSpec, 'group' | 'version'>): string {
  return spec.group ? `${spec.group}/${spec.version}` : spec.version;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Metadata lists every built-in kind merges by key. */
const META_MERGE_KEYS = { 'metadata.ownerReferences': 'uid', 'metadata.finalizers': '' };

function builtin(group: string, kind: string, plural: string, namespaced: boolean, extra: Partial<KindSpec> = {}): KindSpec {
  return { group, version: 'v1', kind, plural, namespaced, ...extra, mergeKeys: { ...META_MERGE_KEYS, ...extra.mergeKeys } };
}

function crd(group: string, version: string, kind: string, plural: string, namespaced: boolean, extra: Partial<KindSpec> = {}): KindSpec {
  return { group, version, kind, plural, namespaced, custom: true, status: true, ...extra };
}

const GATEWAY = 'gateway.networking.k8s.io';

/** A Deployment's Pod template merges its lists as a Pod does. */
const POD_TEMPLATE_MERGE_KEYS = {
  'spec.template.spec.containers': 'name',
  'spec.template.spec.initContainers': 'name',
  'spec.template.spec.containers.ports': 'containerPort',
  'spec.template.spec.containers.env': 'name',
  'spec.template.spec.containers.volumeMounts': 'mountPath',
  'spec.template.spec.volumes': 'name',
};

/** Field selectors that read the field of the same name. */
function byPath(...paths: string[]): Record<string, (obj: KubeObject) => string> {
  return Object.fromEntries(paths.map((p) => [p, (obj: KubeObject) => fieldValue(obj, p)]));
}

/** What the project reads and writes: core kinds, Gateway API, extlb and Gateway API Inference Extension. */
export const DEFAULT_KINDS: readonly KindSpec[] = [
  builtin('', 'Namespace', 'namespaces', false, {
    status: true,
    shortNames: ['ns'],
    nameFormat: 'label',
    fields: byPath('status.phase'),
    strategy: namespaceStrategy,
  }),
  builtin('', 'Service', 'services', true, {
    status: true,
    shortNames: ['svc'],
    nameFormat: 'dns1035',
    returnDeletedObject: true,
    mergeKeys: { 'spec.ports': 'port', 'status.conditions': 'type' },
    fields: byPath('spec.clusterIP', 'spec.type'),
    strategy: serviceStrategy,
  }),
  builtin('', 'Pod', 'pods', true, {
    status: true,
    shortNames: ['po'],
    returnDeletedObject: true,
    mergeKeys: {
      'spec.containers': 'name',
      'spec.initContainers': 'name',
      'spec.containers.ports': 'containerPort',
      'spec.containers.env': 'name',
      'spec.containers.volumeMounts': 'mountPath',
      'spec.volumes': 'name',
      'status.conditions': 'type',
    },
    fields: byPath(
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ),
  }),
  builtin('', 'Secret', 'secrets', true, { fields: byPath('type') }),
  builtin('', 'ConfigMap', 'configmaps', true, { shortNames: ['cm'] }),
  builtin('', 'ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'] }),
  builtin('apps', 'Deployment', 'deployments', true, {
    status: true,
    generation: true,
    shortNames: ['deploy'],
    mergeKeys: { ...POD_TEMPLATE_MERGE_KEYS, 'status.conditions': 'type' },
    strategy: deploymentStrategy,
  }),
  builtin('policy', 'PodDisruptionBudget', 'poddisruptionbudgets', true, { status: true, generation: true, shortNames: ['pdb'] }),
  { ...builtin('autoscaling', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, { status: true, shortNames: ['hpa'] }), version: 'v2' },
  builtin('discovery.k8s.io', 'EndpointSlice', 'endpointslices', true),
  builtin('coordination.k8s.io', 'Lease', 'leases', true),
  crd(GATEWAY, 'v1', 'GatewayClass', 'gatewayclasses', false, { shortNames: ['gc'], categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'Gateway', 'gateways', true, { shortNames: ['gtw'], categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'HTTPRoute', 'httproutes', true, { categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'GRPCRoute', 'grpcroutes', true, { categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'TLSRoute', 'tlsroutes', true, { categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'TCPRoute', 'tcproutes', true, { categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'UDPRoute', 'udproutes', true, { categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'ListenerSet', 'listenersets', true, { shortNames: ['lset'], categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'ReferenceGrant', 'referencegrants', true, { status: false, shortNames: ['refgrant'], categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1beta1', 'ReferenceGrant', 'referencegrants', true, { status: false, shortNames: ['refgrant'], categories: ['gateway-api'] }),
  crd(GATEWAY, 'v1', 'BackendTLSPolicy', 'backendtlspolicies', true, { shortNames: ['btlspolicy'], categories: ['gateway-api'] }),
  crd('extlb.dev', 'v1alpha1', 'BackendPool', 'backendpools', true, { shortNames: ['bpool'], categories: ['gateway-api', 'extlb'] }),
  crd('extlb.dev', 'v1alpha1', 'LoadBalancerPolicy', 'loadbalancerpolicies', true, { shortNames: ['lbpolicy'], categories: ['gateway-api', 'extlb'] }),
  crd('extlb.dev', 'v1alpha1', 'GatewayParameters', 'gatewayparameters', true, {
    status: false,
    singular: 'gatewayparameters',
    shortNames: ['gwparams'],
    categories: ['gateway-api', 'extlb'],
  }),
  crd('inference.networking.k8s.io', 'v1', 'InferencePool', 'inferencepools', true, { shortNames: ['infpool'] }),
];

/** The kinds a server serves, looked up by path (group, version, resource) or by apiVersion and kind. */
export class KindTable {
  private readonly byPath = new Map<string, KindSpec>();
  private readonly byKindName = new Map<string, KindSpec>();

  constructor(kinds: Iterable<KindSpec>) {
    for (const k of kinds) this.register(k);
  }

  /** Adds a kind; a second version of the same group and resource shares its objects, as in the API server. */
  register(spec: KindSpec): void {
    const path = `${spec.group}/${spec.version}/${spec.plural}`;
    if (this.byPath.has(path)) throw new Error(`kind table: ${apiVersionOf(spec)} ${spec.plural} is registered twice`);
    const sibling = [...this.byPath.values()].find((k) => k.group === spec.group && k.plural === spec.plural);
    if (sibling && (sibling.kind !== spec.kind || sibling.namespaced !== spec.namespaced)) {
      throw new Error(`kind table: ${apiVersionOf(spec)} ${spec.plural} must have the kind and scope of ${apiVersionOf(sibling)} ${sibling.plural}`);
    }
    this.byPath.set(path, spec);
    this.byKindName.set(`${apiVersionOf(spec)}/${spec.kind}`, spec);
  }

  resource(group: string, version: string, plural: string): KindSpec | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  kind(apiVersion: string, kind: string): KindSpec | undefined {
    return this.byKindName.get(`${apiVersion}/${kind}`);
  }

  /** The first registered version of a bucket's kind, the one the server's own controllers use. */
  forBucket(bucket: string): KindSpec | undefined {
    return this.all().find((k) => bucketOf(k) === bucket);
  }

  all(): KindSpec[] {
    return [...this.byPath.values()];
  }

  /** Every version a group serves, in registration order (the first is the preferred one). */
  versions(group: string): string[] {
    return [...new Set(this.all().flatMap((k) => (k.group === group ? [k.version] : [])))];
  }

  groups(): string[] {
    return [...new Set(this.all().flatMap((k) => (k.group ? [k.group] : [])))];
  }
}

export function groupResource(spec: KindSpec): GroupResource {
  return { group: spec.group, resource: spec.plural };
}

/** `services`, or `leases.coordination.k8s.io`: how the API server names a resource in messages. */
export function qualifiedResource({ group, resource }: GroupResource): string {
  return group ? `${resource}.${group}` : resource;
}

/** The storage bucket of a kind: all versions of a group resource share one. */
export function bucketOf(spec: KindSpec): string {
  return qualifiedResource(groupResource(spec));
}

export function tracksGeneration(spec: KindSpec): boolean {
  return spec.generation ?? spec.custom === true;
}
