// The Envoy stage's output for one Gateway.
import type { ObjectRef } from '../diagnostics.js';
import type { JsonObject } from '../json.js';
import type { ClusterV3, EndpointV3, ListenerV3, RouteV3, TlsV3 } from './types.js';

/** The Envoy configuration of one Gateway; each list is sorted by name. */
export interface EnvoyConfig {
  /** The Gateway this proxy serves. */
  gateway: ObjectRef;
  listeners: ListenerV3.Listener[];
  routes: RouteV3.RouteConfiguration[];
  clusters: ClusterV3.Cluster[];
  /** ClusterLoadAssignments (eds mode only). */
  endpoints: EndpointV3.ClusterLoadAssignment[];
  /**
   * The certificates and keys HTTPS listeners serve and clusters present to their backends, as SDS
   * `Secret`s named `<namespace>/<name>` after their Kubernetes Secret; listeners and clusters
   * name them and never hold a private key themselves.
   */
  secrets: TlsV3.Secret[];
  /** Kubernetes objects the configuration relies on (dns mode: headless Services). */
  manifests: JsonObject[];
}
