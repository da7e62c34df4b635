// What every Envoy builder of one Gateway shares.
import type { Diagnostics } from '../diagnostics.js';
import type { EndpointMode, EnvoyTarget } from '../envoy-target.js';
import type { JsonObject } from '../json.js';
import type { CertificateLookup } from '../resolve/certificates.js';
import type { EndpointLookup } from '../resolve/endpoints.js';
import type { Gateway } from '../resolve/index.js';
import type { TYPE } from './names.js';
import type { AnyOf, EndpointV3, TlsV3 } from './types.js';

export interface EnvoyOptions {
  envoy: EnvoyTarget;
  endpoints: EndpointMode;
  connectTimeoutMs: number;
  /** Per-try timeout when a route walks a picker's list and sets no backendRequest timeout. */
  perTryTimeoutMs: number;
  clusterDomain: string;
  /** The proxy's system CA bundle, which BackendTLSPolicy's `wellKnownCACertificates: System` trusts. */
  systemCaFile: string;
}

export interface BuildContext {
  gateway: Gateway;
  options: EnvoyOptions;
  endpoints: EndpointLookup;
  certificates: CertificateLookup;
  diags: Diagnostics;
  /** Kubernetes objects the output relies on (dns mode: headless Services), by `namespace/name`. */
  manifests: Map<string, JsonObject>;
  /** ClusterLoadAssignments (eds mode), by cluster name. */
  assignments: Map<string, EndpointV3.ClusterLoadAssignment>;
  /** TLS certificates the listeners and clusters name (SDS Secrets), by name. */
  secrets: Map<string, TlsV3.Secret>;
  /** The ExtProcPerRoute that enables a backend's picker, by backend key: one object however many routes use it. */
  perRoute: Map<string, AnyOf<typeof TYPE.extProcPerRoute>>;
}

/** DNS name of a Service inside the cluster. */
export function serviceHost(ctx: BuildContext, namespace: string, name: string): string {
  return `${name}.${namespace}.svc.${ctx.options.clusterDomain}`;
}
