// A Gateway's effective GatewayParameters: its class's (GatewayClass.spec.parametersRef), then its
// own (spec.infrastructure.parametersRef, same namespace) over them field by field, then the
// controller's defaults for whatever neither says. The converter has already checked that each
// reference names a valid GatewayParameters (else the class or the Gateway is not accepted and
// nothing is provisioned); this only merges. The access log is not here: it is Envoy configuration,
// which the converter resolves from the same references (resolve/parameters.ts).
import type { GatewayParametersSpec } from '@extlb/types';
import type { JsonObject } from '../cluster/api.js';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The image of each Envoy version target, when the parameters name none. */
export const ENVOY_IMAGES = { '1.35': 'envoyproxy/envoy:v1.35.6', '1.38': 'envoyproxy/envoy:v1.38.0' } as const;

export interface Effective {
  provision: boolean;
  image: string;
  version: '1.35' | '1.38';
  concurrency: number;
  logLevel: string;
  drainSeconds: number;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  /** Unset with autoscaling. */
  replicas?: number;
  autoscaling?: { minReplicas: number; maxReplicas: number; targetCPUUtilizationPercentage: number };
  pod: NonNullable<GatewayParametersSpec['pod']>;
  service: {
    type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
    annotations: Record<string, string>;
    externalTrafficPolicy?: 'Cluster' | 'Local';
    loadBalancerClass?: string;
  };
  podDisruptionBudget?: { minAvailable?: number; maxUnavailable?: number };
}

/** `over` on `base`: objects merge key by key, anything else (lists included) replaces. */
export function overlay(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = overlay(base[k], v);
  return out;
}

/** Seconds of a Gateway API duration (`1m30s`, `500ms`). */
function seconds(duration: string | undefined, fallback: number): number {
  if (duration === undefined) return fallback;
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(ms|h|m|s)/g)) total += Number(n) * ({ h: 3600, m: 60, s: 1, ms: 0.001 }[unit as 'h'] ?? 0);
  return Math.max(1, Math.ceil(total));
}

export function effective(classSpec: GatewayParametersSpec | undefined, gatewaySpec: GatewayParametersSpec | undefined): Effective {
  const p = overlay(classSpec ?? {}, gatewaySpec ?? {}) as GatewayParametersSpec;
  // A Gateway that says replicas drops the class's autoscaling, and the other way round.
  if (gatewaySpec?.replicas !== undefined) delete p.autoscaling;
  if (gatewaySpec?.autoscaling !== undefined) delete p.replicas;
  const version = p.envoy?.version ?? '1.38';
  const out: Effective = {
    provision: p.provision !== false,
    image: p.envoy?.image ?? ENVOY_IMAGES[version],
    version,
    concurrency: p.envoy?.concurrency ?? 2,
    logLevel: p.envoy?.logLevel ?? 'info',
    drainSeconds: seconds(p.envoy?.drainTime, 30),
    resources: {
      requests: p.envoy?.resources?.requests ?? { cpu: '200m', memory: '128Mi' },
      limits: p.envoy?.resources?.limits ?? { memory: '512Mi' },
    },
    pod: p.pod ?? {},
    service: { type: p.service?.type ?? 'LoadBalancer', annotations: p.service?.annotations ?? {} },
  };
  if (p.service?.externalTrafficPolicy) out.service.externalTrafficPolicy = p.service.externalTrafficPolicy;
  if (p.service?.loadBalancerClass) out.service.loadBalancerClass = p.service.loadBalancerClass;
  if (p.autoscaling) {
    out.autoscaling = {
      minReplicas: p.autoscaling.minReplicas ?? 1,
      maxReplicas: p.autoscaling.maxReplicas,
      targetCPUUtilizationPercentage: p.autoscaling.targetCPUUtilizationPercentage ?? 80,
    };
  } else out.replicas = p.replicas ?? 2;
  if (p.podDisruptionBudget) out.podDisruptionBudget = { ...p.podDisruptionBudget };
  return out;
}
