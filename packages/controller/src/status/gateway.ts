// The Service in front of a Gateway's Envoy pods, as the Gateway's infrastructure facts: the
// addresses its proxies are reached at. The Converter merges them into the Gateway's status.
import type { GatewayProxyFacts, JsonObject } from '@extlb/envoy';

/** The label the Service in front of a Gateway's Envoy pods carries (Gateway API's usual one). */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

type Address = NonNullable<GatewayProxyFacts['infrastructure']>['addresses'][number];

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Addresses of a Service, as Gateway status.addresses: load balancer ingress first, then the cluster IPs. */
export function serviceAddresses(service: JsonObject | undefined): Address[] {
  if (!service) return [];
  const status = isObject(service.status) ? service.status : {};
  const lb = isObject(status.loadBalancer) ? status.loadBalancer : {};
  const out: Address[] = [];
  for (const i of Array.isArray(lb.ingress) ? lb.ingress : []) {
    if (isObject(i) && typeof i.ip === 'string') out.push({ type: 'IPAddress', value: i.ip });
    else if (isObject(i) && typeof i.hostname === 'string') out.push({ type: 'Hostname', value: i.hostname });
  }
  if (out.length > 0) return out;
  const spec = isObject(service.spec) ? service.spec : {};
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : typeof spec.clusterIP === 'string' ? [spec.clusterIP] : [];
  return ips.filter((ip): ip is string => typeof ip === 'string' && ip !== 'None' && ip !== '').map((value) => ({ type: 'IPAddress', value }));
}

/**
 * The infrastructure facts a Service gives: its addresses when it has some. Whether the proxies
 * behind it are up is for whatever provisions them to say; a Service alone says nothing of it.
 */
export function infrastructureOf(service: JsonObject | undefined): GatewayProxyFacts['infrastructure'] {
  const addresses = serviceAddresses(service);
  return addresses.length > 0 ? { addresses, available: true } : undefined;
}
