// What an Envoy-stage case's `ir.yaml` holds. Kept to type-only imports of small modules: the
// loader type-checks every fixture against this in one compiler program.
import type { EndpointMode, EnvoyTarget } from '../../src/envoy-target.js';
import type { Gateway } from '../../src/resolve/ir.js';

/** An endpoint as the lookups return it. */
interface Host {
  address: string;
  port: number;
}

export interface EnvoyStageCase {
  /** The stage's target and endpoint mode; the other options are convert()'s defaults. */
  options?: { envoy?: EnvoyTarget; endpoints?: EndpointMode };
  /** The ready endpoints of each backend (by key) and each picker (by `namespace/service`). */
  endpoints?: { backends?: Record<string, Host[]>; pickers?: Record<string, Host[]> };
  /** Names in `certificates.yaml` the certificate lookup has (the Secrets and ConfigMaps that exist). */
  certificates?: string[];
  gateway: Gateway;
}
