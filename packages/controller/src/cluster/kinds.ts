// The Kubernetes kinds the controller watches, where their API lives, and which part of the
// converter's input each one is.

export interface WatchedKind {
  apiVersion: string;
  kind: string;
  /** The resource's plural, for API paths. */
  plural: string;
  namespaced: boolean;
  /** Only these objects matter (a field selector the API server applies). */
  fieldSelector?: string;
  /** Only these objects matter (a label selector the API server applies). */
  labelSelector?: string;
  /** Read by the provisioner only, not an input of the converter. */
  provisionOnly?: boolean;
  /** Changes to it move endpoints only: the controller updates endpoint assignments, nothing else. */
  endpointsOnly?: boolean;
  /**
   * The controller writes its status and reads nothing of it: an update that changes only the
   * status (the controller's own write, most often) is no change of the controller's inputs.
   */
  statusWritten?: boolean;
}

const GATEWAY_API = 'gateway.networking.k8s.io';

/**
 * Everything the converter reads from a cluster. Pods are not here: a pool's endpoints come from the
 * EndpointSlices of its shadow Service, so Kubernetes decides readiness and no Pod is watched.
 * Secrets are TLS Secrets only (certificates of HTTPS listeners).
 */
export const WATCHED_KINDS: readonly WatchedKind[] = [
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'GatewayClass', plural: 'gatewayclasses', namespaced: false, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'Gateway', plural: 'gateways', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'HTTPRoute', plural: 'httproutes', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'TLSRoute', plural: 'tlsroutes', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'TCPRoute', plural: 'tcproutes', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'UDPRoute', plural: 'udproutes', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'ListenerSet', plural: 'listenersets', namespaced: true, statusWritten: true },
  { apiVersion: `${GATEWAY_API}/v1beta1`, kind: 'ReferenceGrant', plural: 'referencegrants', namespaced: true },
  { apiVersion: `${GATEWAY_API}/v1`, kind: 'BackendTLSPolicy', plural: 'backendtlspolicies', namespaced: true, statusWritten: true },
  { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true, endpointsOnly: true },
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, fieldSelector: 'type=kubernetes.io/tls' },
  { apiVersion: 'extlb.dev/v1alpha1', kind: 'BackendPool', plural: 'backendpools', namespaced: true, statusWritten: true },
  { apiVersion: 'extlb.dev/v1alpha1', kind: 'LoadBalancerPolicy', plural: 'loadbalancerpolicies', namespaced: true, statusWritten: true },
  { apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', plural: 'inferencepools', namespaced: true, statusWritten: true },
  { apiVersion: 'extlb.dev/v1alpha1', kind: 'GatewayParameters', plural: 'gatewayparameters', namespaced: true },
  // The Envoy Deployments the controller provisions: their availability is the Gateways' Programmed.
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    labelSelector: 'app.kubernetes.io/managed-by=extlb',
    provisionOnly: true,
  },
];

/**
 * ConfigMaps are not listed cluster-wide: only those a Gateway or BackendTLSPolicy names as a CA
 * bundle are watched, each by name (the Converter says which: `update.needs.configMaps`).
 */
export const CONFIG_MAP: WatchedKind = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

/** `/api/v1/services`, `/apis/gateway.networking.k8s.io/v1/gateways`: every namespace. */
export function collectionPath(k: Pick<WatchedKind, 'apiVersion' | 'plural'>): string {
  return `${k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`}/${k.plural}`;
}

/** The path of one object (or of one of its subresources). */
export function objectPath(
  k: Pick<WatchedKind, 'apiVersion' | 'plural' | 'namespaced'>,
  namespace: string | undefined,
  name: string,
  subresource?: string,
): string {
  const base = k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  const ns = k.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? '')}` : '';
  return `${base}${ns}/${k.plural}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

export function kindOf(apiVersion: unknown, kind: unknown): WatchedKind | undefined {
  return WATCHED_KINDS.find((k) => k.kind === kind && k.apiVersion === apiVersion);
}
