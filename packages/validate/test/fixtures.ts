// Objects the tests start from, and a helper that changes one field of a copy.

export const condition = () => ({
  type: 'Accepted',
  status: 'True',
  observedGeneration: 1,
  lastTransitionTime: '2026-01-02T03:04:05Z',
  reason: 'Accepted',
  message: 'ok',
});

const parentRef = () => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw', sectionName: 'http', port: 80 });

/** A valid BackendPool with an External load balancer. */
export const backendPool = (): Record<string, unknown> => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'BackendPool',
  metadata: { name: 'pool', namespace: 'apps' },
  spec: {
    selector: { matchLabels: { app: 'model' } },
    targetPorts: [{ number: 8000 }],
    appProtocol: 'http',
    loadBalancer: {
      type: 'External',
      external: {
        refs: [{ group: '', kind: 'Service', name: 'picker', port: { number: 9002 } }],
        failureMode: 'FailClose',
        fallback: 'RoundRobin',
        endpointSource: 'Metadata',
        messageTimeout: '200ms',
        requestBodyMode: 'FullDuplexStreamed',
        responseBodyMode: 'None',
        reportServedEndpoint: false,
        maxEndpoints: 1,
      },
    },
  },
  status: { parents: [{ parentRef: parentRef(), controllerName: 'extlb.dev/gateway', conditions: [condition()] }] },
});

/** A valid LoadBalancerPolicy with a RingHash load balancer. */
export const loadBalancerPolicy = (): Record<string, unknown> => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'LoadBalancerPolicy',
  metadata: { name: 'policy', namespace: 'apps' },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: 'web', sectionName: 'http' }],
    loadBalancer: { type: 'RoundRobin', slowStart: { window: '30s', minWeightPercent: 10 } },
  },
  status: { ancestors: [{ ancestorRef: parentRef(), controllerName: 'extlb.dev/gateway', conditions: [condition()] }] },
});

/** A valid InferencePool v1. */
export const inferencePool = (): Record<string, unknown> => ({
  apiVersion: 'inference.networking.k8s.io/v1',
  kind: 'InferencePool',
  metadata: { name: 'llm', namespace: 'apps' },
  spec: {
    selector: { matchLabels: { app: 'vllm' } },
    targetPorts: [{ number: 8000 }],
    appProtocol: 'http',
    endpointPickerRef: { group: '', kind: 'Service', name: 'epp', port: { number: 9002 }, failureMode: 'FailClose' },
  },
  status: {
    parents: [
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra' },
        controllerName: 'extlb.dev/gateway',
        conditions: [condition()],
      },
    ],
  },
});

/** A valid GatewayParameters with every field set (replicas rather than autoscaling). */
export const gatewayParameters = (): Record<string, unknown> => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'GatewayParameters',
  metadata: { name: 'edge', namespace: 'apps' },
  spec: {
    provision: true,
    envoy: {
      image: 'envoyproxy/envoy:v1.38.0',
      version: '1.38',
      concurrency: 2,
      logLevel: 'info',
      drainTime: '30s',
      resources: { requests: { cpu: '200m', memory: '128Mi' }, limits: { memory: '512Mi' } },
    },
    replicas: 2,
    pod: {
      labels: { team: 'edge' },
      annotations: { owner: 'edge' },
      nodeSelector: { pool: 'edge' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule', tolerationSeconds: 60 }],
      affinity: { podAntiAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }],
      priorityClassName: 'edge',
    },
    service: { type: 'LoadBalancer', annotations: { scheme: 'internal' }, externalTrafficPolicy: 'Local', loadBalancerClass: 'example.com/lb' },
    podDisruptionBudget: { minAvailable: 1 },
    accessLog: { format: 'Text', text: '%RESPONSE_CODE%' },
  },
});

export const fixtures = {
  BackendPool: backendPool,
  LoadBalancerPolicy: loadBalancerPolicy,
  InferencePool: inferencePool,
  GatewayParameters: gatewayParameters,
};

/**
 * Each fixture plus every optional field the valid one leaves out, so that every schema location
 * exists somewhere. It breaks CEL unions on purpose; schema sweeps ignore CEL errors.
 */
export function everyField(kind: keyof typeof fixtures): Record<string, unknown> {
  const o = fixtures[kind]() as Record<string, unknown>;
  const lb = {
    type: 'RingHash',
    external: (backendPool() as any).spec.loadBalancer.external,
    consistentHash: { type: 'Cookie', header: { name: 'x-user' }, cookie: { name: 'session', ttl: '1h' } },
    slowStart: { window: '30s', minWeightPercent: 10 },
  };
  if (kind === 'BackendPool' || kind === 'LoadBalancerPolicy') (o as any).spec.loadBalancer = lb;
  if (kind === 'GatewayParameters') (o as any).spec.autoscaling = { minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 80 };
  return o;
}

export type PathPart = string | number;

/** `spec.targetPorts[0].number` → ['spec', 'targetPorts', 0, 'number']. */
export function parsePath(path: string): PathPart[] {
  const out: PathPart[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

/** A deep copy of `object` with the field at `path` set to `value` (or removed when value is REMOVE). */
export const REMOVE = Symbol('remove');
export function withField<T>(object: T, path: string, value: unknown): T {
  const copy = structuredClone(object) as any;
  const parts = parsePath(path);
  let at = copy;
  for (const p of parts.slice(0, -1)) {
    if (at[p] === undefined) at[p] = {};
    at = at[p];
  }
  const last = parts[parts.length - 1]!;
  if (value === REMOVE) delete at[last];
  else at[last] = value;
  return copy;
}
