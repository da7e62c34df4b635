import type { BackendPool, GatewayParameters, InferencePool, LoadBalancerPolicy } from './generated/types.js';

export const GROUP = 'extlb.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

export const INFERENCE_GROUP = 'inference.networking.k8s.io';
export const INFERENCE_API_VERSION = `${INFERENCE_GROUP}/v1` as const;

/** The label Gateway API asks every policy CRD and policy kind to carry (GEP-713). */
export const POLICY_LABEL = 'gateway.networking.k8s.io/policy';

/** apiVersion and kind of every kind extlb defines or reads, keyed by kind. */
export const KINDS = {
  BackendPool: { apiVersion: API_VERSION, kind: 'BackendPool' },
  LoadBalancerPolicy: { apiVersion: API_VERSION, kind: 'LoadBalancerPolicy' },
  GatewayParameters: { apiVersion: API_VERSION, kind: 'GatewayParameters' },
  InferencePool: { apiVersion: INFERENCE_API_VERSION, kind: 'InferencePool' },
} as const;

export type KindName = keyof typeof KINDS;

function hasKind(value: unknown, kind: KindName): boolean {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { apiVersion?: unknown; kind?: unknown };
  return v.apiVersion === KINDS[kind].apiVersion && v.kind === kind;
}

/**
 * Type guards on apiVersion and kind only: they say what an object claims to be, not that it is
 * valid. Use @extlb/validate for that.
 */
export function isBackendPool(value: unknown): value is BackendPool {
  return hasKind(value, 'BackendPool');
}

export function isLoadBalancerPolicy(value: unknown): value is LoadBalancerPolicy {
  return hasKind(value, 'LoadBalancerPolicy');
}

export function isGatewayParameters(value: unknown): value is GatewayParameters {
  return hasKind(value, 'GatewayParameters');
}

export function isInferencePool(value: unknown): value is InferencePool {
  return hasKind(value, 'InferencePool');
}

/** The kind name when `value` claims to be one of extlb's kinds, else undefined. */
export function kindOf(value: unknown): KindName | undefined {
  for (const kind of Object.keys(KINDS) as KindName[]) if (hasKind(value, kind)) return kind;
  return undefined;
}
