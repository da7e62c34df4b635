// The provisioner (GEP-1762): for each Gateway of this controller's classes whose parameters ask
// for it, the leader server-side-applies (field manager `extlb`) the Gateway's ServiceAccount,
// bootstrap ConfigMap, Envoy Deployment and Service, and its PodDisruptionBudget and
// HorizontalPodAutoscaler when the parameters ask. Objects of Gateways it no longer provisions
// (moved to another class, `provision: false`) are deleted; those of a deleted Gateway go with it
// (their ownerReference, through Kubernetes' garbage collector).
//
// It never forces an apply: a field another manager owns stays theirs. The one field extlb
// expects to lose is `replicas`, to an autoscaler: once the live Deployment's replicas belong to
// another manager (a user's HPA attached by name, GEP-1762's example), extlb leaves them out.
import { createHash } from 'node:crypto';
import type { GatewayParametersSpec } from '@extlb/types';
import { ApiError, type JsonObject, type KubeApi } from '../cluster/api.js';
import { objectPath } from '../cluster/kinds.js';
import { type InfrastructureFacts, infrastructureFacts } from './facts.js';
import {
  type DesiredObjects,
  GATEWAY_CLASS_LABEL,
  GATEWAY_NAME_LABEL,
  MANAGED_BY_LABEL,
  type ProvisionedGateway,
  type ProvisionSettings,
  desiredObjects,
  provisionedName,
} from './objects.js';
import { effective } from './parameters.js';

export { infrastructureFacts, type InfrastructureFacts } from './facts.js';
export { provisionedBootstrap, provisionedName, type ProvisionSettings } from './objects.js';

export const FIELD_MANAGER = 'extlb';
const APPLY = 'application/apply-patch+yaml';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const meta = (o: JsonObject) => (isObject(o.metadata) ? o.metadata : {}) as JsonObject;

/** Where each provisioned kind lives in the API. */
const KINDS = {
  ServiceAccount: { apiVersion: 'v1', plural: 'serviceaccounts', namespaced: true },
  ConfigMap: { apiVersion: 'v1', plural: 'configmaps', namespaced: true },
  Deployment: { apiVersion: 'apps/v1', plural: 'deployments', namespaced: true },
  Service: { apiVersion: 'v1', plural: 'services', namespaced: true },
  PodDisruptionBudget: { apiVersion: 'policy/v1', plural: 'poddisruptionbudgets', namespaced: true },
  HorizontalPodAutoscaler: { apiVersion: 'autoscaling/v2', plural: 'horizontalpodautoscalers', namespaced: true },
} as const;
type ProvisionedKind = keyof typeof KINDS;

export interface ProvisionInput {
  /** Gateways of this controller's classes. */
  gateways: JsonObject[];
  /** This controller's GatewayClasses, by name. */
  classes: Map<string, JsonObject>;
  /** A GatewayParameters by namespace and name. */
  parameters(namespace: string, name: string): JsonObject | undefined;
  /** The Deployments extlb manages (the informer's), and a Service by namespace and name. */
  deployments: JsonObject[];
  service(namespace: string, name: string): JsonObject | undefined;
}

export interface ProvisionReport {
  applied: string[];
  unchanged: number;
  deleted: string[];
  failed: { object: string; message: string }[];
}

/** The spec of a referenced GatewayParameters; undefined when there is none; 'invalid' when it cannot be used. */
function referenced(ref: unknown, namespace: string | undefined, input: ProvisionInput): GatewayParametersSpec | undefined | 'invalid' {
  if (!isObject(ref)) return undefined;
  if (ref.group !== 'extlb.dev' || ref.kind !== 'GatewayParameters' || typeof ref.name !== 'string') return 'invalid';
  const ns = namespace ?? (typeof ref.namespace === 'string' ? ref.namespace : undefined);
  const found = ns === undefined ? undefined : input.parameters(ns, ref.name);
  if (!found) return 'invalid';
  return (isObject(found.spec) ? found.spec : {}) as GatewayParametersSpec;
}

/** Whether another manager owns the live Deployment's replicas (an autoscaler). */
function replicasOwnedElsewhere(deployment: JsonObject | undefined): boolean {
  const entries = deployment ? meta(deployment).managedFields : undefined;
  if (!Array.isArray(entries)) return false;
  return entries.some((e) => {
    if (!isObject(e) || e.manager === FIELD_MANAGER) return false;
    const spec = isObject(e.fieldsV1) ? e.fieldsV1['f:spec'] : undefined;
    return isObject(spec) && spec['f:replicas'] !== undefined;
  });
}

export class Provisioner {
  /** What was last applied, by object, as a hash: an unchanged object is not sent again. */
  private readonly applied = new Map<string, string>();
  /** Why the API server refused a Gateway's objects, by `namespace/name`. */
  private readonly refused = new Map<string, string>();
  /** The Gateways provisioned at the last pass, with their object names and wanted addresses. */
  private provisioned = new Map<string, { deployment: string; service: string; addresses: { type: string; value?: string }[] }>();

  constructor(
    private readonly api: KubeApi,
    private readonly settings: ProvisionSettings,
  ) {}

  /** Whether the Gateway `namespace/name` was provisioned at the last pass (it then gets an xDS identity Secret). */
  provisions(key: string): boolean {
    return this.provisioned.has(key);
  }

  /** The Gateway's infrastructure facts, from the live objects; undefined for a Gateway not provisioned. */
  facts(
    key: string,
    deployment: (namespace: string, name: string) => JsonObject | undefined,
    service: (namespace: string, name: string) => JsonObject | undefined,
  ): InfrastructureFacts | undefined {
    const p = this.provisioned.get(key);
    if (!p) return undefined;
    const namespace = key.split('/')[0] ?? '';
    return infrastructureFacts(p, deployment(namespace, p.deployment), service(namespace, p.service), p.addresses, this.refused.get(key));
  }

  async reconcile(input: ProvisionInput): Promise<ProvisionReport> {
    const report: ProvisionReport = { applied: [], unchanged: 0, deleted: [], failed: [] };
    const next = new Map<string, { deployment: string; service: string; addresses: { type: string; value?: string }[] }>();
    for (const gw of input.gateways) {
      const m = meta(gw);
      const spec = (isObject(gw.spec) ? gw.spec : {}) as JsonObject;
      const className = String(spec.gatewayClassName ?? '');
      const gc = input.classes.get(className);
      if (!gc || m.deletionTimestamp || typeof m.uid !== 'string') continue;
      const namespace = String(m.namespace);
      const name = String(m.name);
      const infra = (isObject(spec.infrastructure) ? spec.infrastructure : {}) as JsonObject;
      const classParams = referenced(isObject(gc.spec) ? gc.spec.parametersRef : undefined, undefined, input);
      const gatewayParams = referenced(infra.parametersRef, namespace, input);
      // An unusable reference leaves the class or the Gateway not accepted (the converter says why): nothing is provisioned.
      if (classParams === 'invalid' || gatewayParams === 'invalid') continue;
      const params = effective(classParams, gatewayParams);
      if (!params.provision) continue;
      const target: ProvisionedGateway = {
        namespace,
        name,
        uid: m.uid,
        className,
        listeners: (Array.isArray(spec.listeners) ? spec.listeners : []).filter(isObject).map((l) => ({
          name: String(l.name),
          port: Number(l.port),
          protocol: String(l.protocol),
        })),
        addresses: (Array.isArray(spec.addresses) ? spec.addresses : []).filter(isObject).map((a) => ({
          type: String(a.type ?? 'IPAddress'),
          ...(typeof a.value === 'string' ? { value: a.value } : {}),
        })),
        infrastructure: {
          labels: (isObject(infra.labels) ? infra.labels : {}) as Record<string, string>,
          annotations: (isObject(infra.annotations) ? infra.annotations : {}) as Record<string, string>,
        },
      };
      const objectName = provisionedName(name, className);
      const live = input.deployments.find((d) => meta(d).namespace === namespace && meta(d).name === objectName);
      const desired = desiredObjects(target, params, this.settings, params.autoscaling !== undefined || replicasOwnedElsewhere(live));
      const key = `${namespace}/${name}`;
      next.set(key, { deployment: objectName, service: objectName, addresses: target.addresses });
      const failures = await this.applyAll(desired, { deployment: live, service: input.service(namespace, objectName) }, report);
      if (failures.length > 0) this.refused.set(key, failures.join('; '));
      else this.refused.delete(key);
    }
    // Objects of Gateways no longer provisioned here: the managed Deployments tell which.
    for (const d of input.deployments) {
      const m = meta(d);
      const labels = (isObject(m.labels) ? m.labels : {}) as Record<string, string>;
      if (labels[MANAGED_BY_LABEL] !== 'extlb' || labels[GATEWAY_NAME_LABEL] === undefined) continue;
      const owner = next.get(`${m.namespace}/${labels[GATEWAY_NAME_LABEL]}`);
      if (owner?.deployment === m.name && labels[GATEWAY_CLASS_LABEL] !== undefined) continue;
      await this.deleteAll(String(m.namespace), String(m.name), report);
    }
    for (const key of this.refused.keys()) if (!next.has(key)) this.refused.delete(key);
    this.provisioned = next;
    return report;
  }

  private async applyAll(desired: DesiredObjects, live: { deployment?: JsonObject; service?: JsonObject }, report: ProvisionReport): Promise<string[]> {
    const failures: string[] = [];
    const objects = Object.values(desired).filter((o): o is JsonObject => o !== undefined);
    for (const o of objects) {
      const kind = o.kind as ProvisionedKind;
      const m = meta(o);
      const id = `${kind} ${m.namespace}/${m.name}`;
      const hash = createHash('sha256').update(JSON.stringify(o)).digest('hex');
      // Sent again when it changed, or when the watched live object went away.
      const gone = (kind === 'Deployment' && !live.deployment) || (kind === 'Service' && !live.service);
      if (this.applied.get(id) === hash && !gone) {
        report.unchanged++;
        continue;
      }
      try {
        await this.api.request('PATCH', objectPath(KINDS[kind], String(m.namespace), String(m.name)), {
          query: { fieldManager: FIELD_MANAGER },
          body: o,
          contentType: APPLY,
        });
        this.applied.set(id, hash);
        report.applied.push(id);
      } catch (err) {
        this.applied.delete(id);
        const message = err instanceof Error ? err.message : String(err);
        report.failed.push({ object: id, message });
        failures.push(`${id}: ${message}`);
      }
    }
    return failures;
  }

  private async deleteAll(namespace: string, name: string, report: ProvisionReport): Promise<void> {
    for (const kind of Object.keys(KINDS) as ProvisionedKind[]) {
      const id = `${kind} ${namespace}/${name}`;
      try {
        await this.api.request('DELETE', objectPath(KINDS[kind], namespace, name));
        report.deleted.push(id);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) report.failed.push({ object: id, message: err instanceof Error ? err.message : String(err) });
      }
      this.applied.delete(id);
    }
  }
}
