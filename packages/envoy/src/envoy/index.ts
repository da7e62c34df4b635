// The Envoy stage: one Gateway's IR (and its endpoints) → Envoy resources.
import type { Diagnostics } from '../diagnostics.js';
import { type JsonObject, compare } from '../json.js';
import type { CertificateLookup } from '../resolve/certificates.js';
import type { EndpointLookup } from '../resolve/endpoints.js';
import { type Gateway, usesPicker } from '../resolve/index.js';
import { backendCluster, pickerCluster } from './clusters.js';
import type { EnvoyConfig } from './config.js';
import type { BuildContext, EnvoyOptions } from './context.js';
import { envoyListener } from './listeners.js';

export type { EnvoyConfig } from './config.js';
export type { EnvoyOptions } from './context.js';
export { envoyDuration } from './duration.js';
export { adsBootstrap, type BootstrapOptions, parseHostPort, toBootstrap, toXds } from './output.js';

function byName(a: JsonObject, b: JsonObject): number {
  return compare(String(a.name ?? a.cluster_name ?? ''), String(b.name ?? b.cluster_name ?? ''));
}

export function toEnvoy(gateway: Gateway, endpoints: EndpointLookup, certificates: CertificateLookup, options: EnvoyOptions, diags: Diagnostics): EnvoyConfig {
  const ctx: BuildContext = { gateway, options, endpoints, certificates, diags, manifests: new Map(), assignments: new Map(), secrets: new Map() };
  const listeners: JsonObject[] = [];
  const routes: JsonObject[] = [];
  for (const l of gateway.listeners) {
    const built = envoyListener(l, ctx);
    listeners.push(built.listener);
    routes.push(...built.routes);
  }
  const clusters = Object.values(gateway.backends).map((b) => backendCluster(b, ctx));
  const pickerSets = new Set(Object.values(gateway.backends).flatMap((b) => (usesPicker(b) && b.pickers !== undefined ? [b.pickers] : [])));
  for (const key of pickerSets) {
    const set = gateway.pickerSets[key];
    if (set) clusters.push(pickerCluster(set, ctx));
  }
  return {
    gateway: gateway.ref,
    listeners: listeners.sort(byName),
    routes: routes.sort(byName),
    clusters: clusters.sort(byName),
    endpoints: [...ctx.assignments.values()].sort(byName),
    secrets: [...ctx.secrets.values()].sort(byName),
    manifests: [...ctx.manifests.entries()].sort(([a], [b]) => compare(a, b)).map(([, m]) => m),
  };
}
