// The Envoy stage's output for one Gateway.
import type { ObjectRef } from '../diagnostics.js';
import type { JsonObject } from '../json.js';

/** The Envoy configuration of one Gateway; each list is sorted by name. */
export interface EnvoyConfig {
  /** The Gateway this proxy serves. */
  gateway: ObjectRef;
  listeners: JsonObject[];
  routes: JsonObject[];
  clusters: JsonObject[];
  /** ClusterLoadAssignments (eds mode only). */
  endpoints: JsonObject[];
  /**
   * The certificates and keys HTTPS listeners serve and clusters present to their backends, as SDS
   * `Secret`s named `<namespace>/<name>` after their Kubernetes Secret; listeners and clusters
   * name them and never hold a private key themselves.
   */
  secrets: JsonObject[];
  /** Kubernetes objects the configuration relies on (dns mode: headless Services). */
  manifests: JsonObject[];
}
