// The parts of the built-in kinds' REST strategies a controller can observe: defaulted fields it did
// not write (a Service's type, protocols, target ports, cluster IP) and fields the server keeps on
// update. A controller that compares what it wants with what it reads back must cope with these.
import { isRecord, type KubeObject } from './objects.js';

export interface StrategyContext {
  allocateClusterIP(): string;
}

export interface Strategy {
  /** Defaulting, applied to every create and update body, as the API server's decoder does. */
  defaults?(obj: KubeObject): void;
  /** Fields the server sets on create. */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void;
  /** Fields an update keeps from the stored object when the body leaves them out. */
  prepareForUpdate?(next: KubeObject, prev: KubeObject): void;
}

function record(obj: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = obj[field];
  if (isRecord(value)) return value;
  const fresh: Record<string, unknown> = {};
  obj[field] = fresh;
  return fresh;
}

export const serviceStrategy: Strategy = {
  defaults(obj) {
    const spec = record(obj, 'spec');
    spec.type ??= 'ClusterIP';
    if (spec.type === 'ExternalName') return;
    spec.sessionAffinity ??= 'None';
    spec.internalTrafficPolicy ??= 'Cluster';
    for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
      if (!isRecord(port)) continue;
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
    }
  },
  prepareForCreate(obj, ctx) {
    const spec = record(obj, 'spec');
    obj.status = { loadBalancer: {} };
    if (spec.type === 'ExternalName') return;
    if (typeof spec.clusterIP !== 'string' || spec.clusterIP === '') spec.clusterIP = ctx.allocateClusterIP();
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  },
  prepareForUpdate(next, prev) {
    // An update that leaves out the allocated addresses keeps them (the API server's patchAllocatedValues).
    const spec = record(next, 'spec');
    const old = isRecord(prev.spec) ? prev.spec : {};
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'] as const) {
      if ((spec[field] === undefined || spec[field] === '') && old[field] !== undefined) spec[field] = old[field];
    }
  },
};

const NAME_LABEL = 'kubernetes.io/metadata.name';

export const namespaceStrategy: Strategy = {
  defaults(obj) {
    // The API server always sets this label to the name, on create and on update.
    obj.metadata.labels = { ...obj.metadata.labels, [NAME_LABEL]: obj.metadata.name ?? '' };
  },
  prepareForCreate(obj) {
    const spec = record(obj, 'spec');
    spec.finalizers ??= ['kubernetes'];
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(next, prev) {
    // spec.finalizers changes only through the finalize subresource.
    record(next, 'spec').finalizers = isRecord(prev.spec) ? prev.spec.finalizers : undefined;
  },
};

export const deploymentStrategy: Strategy = {
  defaults(obj) {
    const spec = record(obj, 'spec');
    // A Deployment without replicas runs one (what a user's HPA then owns, once it scales).
    spec.replicas ??= 1;
  },
  prepareForCreate(obj) {
    obj.status = {};
  },
};
