// What is true of a provisioned Gateway's infrastructure, read from the Deployment and Service the
// controller owns: the addresses the Service has, whether an Envoy replica is available, and what
// is missing when not. This is the shape the converter's proxy facts take
// (`setProxyFacts(gatewayKey, { infrastructure })`), so the statuses follow what is real.
import type { JsonObject } from '../cluster/api.js';
import type { GatewayProxyFacts } from '@extlb/envoy';
import { serviceAddresses } from '../status/gateway.js';

/** The Converter's infrastructure facts (`setProxyFacts(gatewayKey, { infrastructure })`). */
export type InfrastructureFacts = NonNullable<GatewayProxyFacts['infrastructure']>;

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const status = (o: JsonObject | undefined) => (o && isObject(o.status) ? o.status : {});

/** The facts of one Gateway; `wanted`: its spec.addresses; `refused`: why the last write of its objects failed. */
export function infrastructureFacts(
  names: { deployment: string; service: string },
  deployment: JsonObject | undefined,
  service: JsonObject | undefined,
  wanted: { type: string; value?: string }[],
  refused?: string,
): InfrastructureFacts {
  const spec = service && isObject(service.spec) ? service.spec : {};
  // Static external IPs (spec.addresses on a ClusterIP or NodePort Service) before the cluster IP.
  const external = (Array.isArray(spec.externalIPs) ? spec.externalIPs : []).map((value) => ({ type: 'IPAddress' as const, value: String(value) }));
  const fromService = serviceAddresses(service) as InfrastructureFacts['addresses'];
  const addresses = external.length > 0 && !hasIngress(service ?? {}) ? external : fromService;
  const d = status(deployment);
  const available = typeof d.availableReplicas === 'number' && d.availableReplicas > 0;
  // A problem makes the Gateway not available (the Converter sets Programmed=False with its reason).
  const facts: InfrastructureFacts = { addresses, available };
  if (refused !== undefined) {
    return { addresses, available: false, problem: { reason: 'Invalid', message: `the API server refused the Gateway's objects: ${refused}` } };
  }
  const usable = addressProblem(wanted, service);
  if (usable) return { addresses, available: false, problem: usable };
  if (!deployment) facts.problem = { reason: 'Pending', message: `Deployment ${names.deployment} does not exist yet` };
  else if (!available) {
    const conditions = Array.isArray(d.conditions) ? (d.conditions as JsonObject[]) : [];
    const failure = conditions.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
    const dspec = isObject(deployment.spec) ? deployment.spec : {};
    facts.problem = failure
      ? { reason: 'NoResources', message: `Deployment ${names.deployment} cannot make Envoy Pods: ${String(failure.message ?? failure.reason ?? '')}` }
      : {
          reason: 'Pending',
          message: `no Envoy Pod of Deployment ${names.deployment} is ready yet (0 of ${typeof dspec.replicas === 'number' ? dspec.replicas : '?'} available)`,
        };
  } else if (service && spec.type === 'LoadBalancer' && !hasIngress(service)) {
    return { addresses, available: false, problem: { reason: 'AddressNotAssigned', message: `Service ${names.service} has no load balancer address yet` } };
  }
  return facts;
}

function hasIngress(service: JsonObject): boolean {
  const lb = status(service).loadBalancer;
  return isObject(lb) && Array.isArray(lb.ingress) && lb.ingress.length > 0;
}

/** spec.addresses a Service cannot hold (AddressNotUsable), or that it holds but was not given (AddressNotAssigned). */
function addressProblem(wanted: { type: string; value?: string }[], service: JsonObject | undefined): InfrastructureFacts['problem'] {
  const statics = wanted.filter((a) => a.value !== undefined);
  const hostnames = statics.filter((a) => a.type === 'Hostname');
  if (hostnames.length > 0) {
    return { reason: 'AddressNotUsable', message: `a Service cannot be given a hostname, so ${hostnames.map((a) => a.value).join(', ')} cannot be used` };
  }
  const ips = statics.filter((a) => a.type === 'IPAddress').map((a) => a.value as string);
  const spec = service && isObject(service.spec) ? service.spec : {};
  if (ips.length > 1 && spec.type === 'LoadBalancer') {
    return { reason: 'AddressNotUsable', message: `a LoadBalancer Service takes one requested IP, so ${ips.slice(1).join(', ')} cannot be used` };
  }
  if (ips.length === 0 || !service) return undefined;
  const held = new Set(serviceAddresses(service).map((a) => String(a.value)));
  for (const ip of Array.isArray(spec.externalIPs) ? spec.externalIPs : []) held.add(String(ip));
  const missing = ips.filter((ip) => !held.has(ip));
  if (missing.length > 0)
    return { reason: 'AddressNotAssigned', message: `Service ${String((service.metadata as JsonObject)?.name)} has not been given ${missing.join(', ')}` };
  return undefined;
}
