// The ConfigMaps the controller's inputs name as CA bundles: a BackendTLSPolicy's
// `spec.validation.caCertificateRefs` (in the policy's namespace) and a Gateway's frontend TLS
// validation (`spec.tls.frontend.default` and `perPort[].tls`, in the Gateway's namespace unless the
// reference names another). Only these are watched, each by name; whether a reference may be used
// (a ReferenceGrant for another namespace) is the converter's call, not this one's.
import type { JsonObject } from './api.js';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const array = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** `namespace/name` of each ConfigMap among `refs` (references without a namespace are in `namespace`). */
function configMaps(refs: unknown, namespace: string, crossNamespace: boolean): string[] {
  return array(refs).flatMap((ref) => {
    if (!isObject(ref) || ref.kind !== 'ConfigMap' || (ref.group ?? '') !== '' || typeof ref.name !== 'string' || ref.name === '') return [];
    const ns = crossNamespace && typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace;
    return [`${ns}/${ref.name}`];
  });
}

const namespaceOf = (o: JsonObject) => (isObject(o.metadata) && typeof o.metadata.namespace === 'string' ? o.metadata.namespace : '');
const path = (o: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);

/** The ConfigMaps (`namespace/name`) that `policies` (BackendTLSPolicies) and `gateways` reference, sorted. */
export function referencedConfigMaps(policies: readonly JsonObject[], gateways: readonly JsonObject[]): string[] {
  const out = new Set<string>();
  for (const p of policies) for (const k of configMaps(path(p, 'spec', 'validation', 'caCertificateRefs'), namespaceOf(p), false)) out.add(k);
  for (const g of gateways) {
    const frontend = path(g, 'spec', 'tls', 'frontend');
    const validations = [path(frontend, 'default', 'validation'), ...array(path(frontend, 'perPort')).map((e) => path(e, 'tls', 'validation'))];
    for (const v of validations) for (const k of configMaps(path(v, 'caCertificateRefs'), namespaceOf(g), true)) out.add(k);
  }
  return [...out].sort();
}
