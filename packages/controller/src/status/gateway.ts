// What the converter cannot know about a Gateway and its class, added to their statuses: the
// addresses its proxies are reached at (from the Service in front of its Envoy pods), whether its
// proxies accepted the configuration (a NACK makes it Programmed=False with Envoy's words), and the
// acceptance of the GatewayClasses this controller owns.
import type { JsonObject } from '../cluster/api.js';

/** The label the Service in front of a Gateway's Envoy pods carries (Gateway API's usual one). */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Addresses of a Service, as Gateway status.addresses: load balancer ingress first, then the cluster IPs. */
export function serviceAddresses(service: JsonObject | undefined): JsonObject[] {
  if (!service) return [];
  const status = isObject(service.status) ? service.status : {};
  const lb = isObject(status.loadBalancer) ? status.loadBalancer : {};
  const out: JsonObject[] = [];
  for (const i of Array.isArray(lb.ingress) ? lb.ingress : []) {
    if (isObject(i) && typeof i.ip === 'string') out.push({ type: 'IPAddress', value: i.ip });
    else if (isObject(i) && typeof i.hostname === 'string') out.push({ type: 'Hostname', value: i.hostname });
  }
  if (out.length > 0) return out;
  const spec = isObject(service.spec) ? service.spec : {};
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : typeof spec.clusterIP === 'string' ? [spec.clusterIP] : [];
  return ips.filter((ip): ip is string => typeof ip === 'string' && ip !== 'None' && ip !== '').map((value) => ({ type: 'IPAddress', value }));
}

export interface GatewayFacts {
  /** The Service in front of a Gateway's Envoy pods, if there is one. */
  service(namespace: string, name: string): JsonObject | undefined;
  /** Envoy's NACKs for a Gateway, newest last. */
  nacks(namespace: string, name: string): { typeUrl: string; message: string }[];
  /** What is real of a provisioned Gateway's Deployment and Service (undefined: not provisioned by extlb). */
  infrastructure?(namespace: string, name: string): InfrastructureFacts | undefined;
  now: string;
}

/** The converter's proxy-facts shape (`setProxyFacts(key, { infrastructure })`). */
export interface InfrastructureFacts {
  addresses: { type: 'IPAddress' | 'Hostname'; value: string }[];
  available: boolean;
  problem?: { reason: string; message: string };
}

function setCondition(conditions: JsonObject[], c: JsonObject): JsonObject[] {
  return [...conditions.filter((x) => x.type !== c.type), c];
}

/** A Gateway status from the converter, with addresses and the proxies' verdict. */
export function withProxyFacts(status: JsonObject, gateway: { namespace: string; name: string; generation?: number }, facts: GatewayFacts): JsonObject {
  const out: JsonObject = { ...status };
  const infrastructure = facts.infrastructure?.(gateway.namespace, gateway.name);
  const addresses = infrastructure ? infrastructure.addresses : serviceAddresses(facts.service(gateway.namespace, gateway.name));
  if (addresses.length > 0) out.addresses = addresses;
  const nacks = facts.nacks(gateway.namespace, gateway.name);
  const last = nacks[nacks.length - 1];
  // A Gateway the converter could not program stays as the converter says; otherwise what the proxies and their infrastructure say.
  const converted = (Array.isArray(out.conditions) ? (out.conditions as JsonObject[]) : []).find((c) => c.type === 'Programmed');
  const notReal: { reason: string; message: string } | undefined = last
    ? { reason: 'Invalid', message: `Envoy rejected the ${last.typeUrl.split('.').pop()} update: ${last.message}` }
    : converted?.status === 'True' && infrastructure && (infrastructure.problem || !infrastructure.available)
      ? (infrastructure.problem ?? { reason: 'Pending', message: 'no Envoy replica is available yet' })
      : undefined;
  if (notReal) {
    const programmed: JsonObject = { type: 'Programmed', status: 'False' };
    if (gateway.generation !== undefined) programmed.observedGeneration = gateway.generation;
    Object.assign(programmed, { lastTransitionTime: facts.now, ...notReal });
    const conditions = Array.isArray(out.conditions) ? (out.conditions as JsonObject[]) : [];
    out.conditions = setCondition(conditions, programmed).sort((a, b) => conditionOrder(a) - conditionOrder(b));
  }
  return out;
}

const ORDER = ['Accepted', 'Programmed'];
function conditionOrder(c: JsonObject): number {
  const i = ORDER.indexOf(String(c.type));
  return i < 0 ? ORDER.length : i;
}

/** The status of a GatewayClass this controller owns. */
export function gatewayClassStatus(gc: JsonObject, now: string): JsonObject {
  const m = (isObject(gc.metadata) ? gc.metadata : {}) as JsonObject;
  const accepted: JsonObject = { type: 'Accepted', status: 'True' };
  if (typeof m.generation === 'number') accepted.observedGeneration = m.generation;
  Object.assign(accepted, { lastTransitionTime: now, reason: 'Accepted', message: 'extlb serves the Gateways of this class' });
  return { apiVersion: gc.apiVersion, kind: 'GatewayClass', metadata: { name: m.name }, status: { conditions: [accepted] } };
}
