// The identity a Gateway's proxies prove: a SPIFFE ID naming the Gateway,
// `spiffe://<trust-domain>/ns/<namespace>/gateway/<name>`, as a URI SAN of their client
// certificate. One ID per Gateway, so a certificate can be checked against the Gateway a stream
// claims (its node.cluster, `<namespace>/<name>`) by comparing two strings.

/** A SPIFFE trust domain: lowercase letters, digits, dots, dashes and underscores (the SPIFFE ID spec). */
const TRUST_DOMAIN = /^[a-z0-9._-]{1,255}$/;

export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

/** Throws with a message saying what a trust domain may be. */
export function checkTrustDomain(trustDomain: string): string {
  if (!TRUST_DOMAIN.test(trustDomain)) {
    throw new Error(`trust domain ${JSON.stringify(trustDomain.slice(0, 300))} is not one: use lowercase letters, digits, ".", "-" and "_" (at most 255)`);
  }
  return trustDomain;
}

/** The SPIFFE ID of a Gateway's proxies. */
export function gatewayIdentity(trustDomain: string, namespace: string, name: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/gateway/${name}`;
}

/** The SPIFFE ID of the controller's xDS server (its ServiceAccount's, as Kubernetes workloads are named). */
export function controllerIdentity(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** The `<namespace>/<name>` a Gateway ID names, in this trust domain; undefined for any other URI. */
export function gatewayOfIdentity(trustDomain: string, uri: string): string | undefined {
  const prefix = `spiffe://${trustDomain}/ns/`;
  if (!uri.startsWith(prefix)) return undefined;
  const [namespace, kind, name, ...rest] = uri.slice(prefix.length).split('/');
  if (rest.length > 0 || kind !== 'gateway' || !namespace || !name) return undefined;
  return `${namespace}/${name}`;
}
