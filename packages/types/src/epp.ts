/**
 * The fixed names of the Endpoint Picker Protocol (GIE proposal 004, with its 2026 revisions):
 * what a proxy and an endpoint picker must spell the same way. The converter writes them into
 * Envoy's configuration and the picker reads and writes them on the wire, so they are kept once,
 * here.
 */
export const EPP = {
  /** Request header carrying the picked endpoints, `ip:port,ip:port,…` (picker → proxy). */
  header: 'x-gateway-destination-endpoint',
  /**
   * Unstructured metadata namespace of the picked list (dynamic metadata, picker → proxy) and of
   * the served endpoint (filter metadata, proxy → picker).
   */
  namespace: 'envoy.lb',
  /** Key of the picked list in `namespace`: one string, the same value as the header. */
  endpointKey: 'x-gateway-destination-endpoint',
  /** Key of the endpoint that served the response in `namespace` (Envoy's selected_host_key). */
  servedKey: 'x-gateway-destination-endpoint-served',
  /** Filter-metadata namespace of the subset hint (proxy → picker). */
  subsetNamespace: 'envoy.lb.subset_hint',
  /** Key of the subset hint in `subsetNamespace`: the `ip:port` entries the picker must choose from. */
  subsetKey: 'x-gateway-destination-endpoint-subset',
  /** The gRPC service a picker implements (Envoy's ext_proc). */
  extProcService: 'envoy.service.ext_proc.v3.ExternalProcessor',
  /** The gRPC Health Checking Protocol service names a picker must serve. */
  healthServices: {
    /** SERVING while the process answers gRPC at all. */
    liveness: 'liveness',
    /** SERVING once the picker knows its pool (and leads, when replicas elect one). */
    readiness: 'readiness',
    /** The ext_proc service itself: the same status as readiness. */
    extProc: 'envoy.service.ext_proc.v3.ExternalProcessor',
  },
  /** ImmediateResponse statuses of a picker that names no endpoint. */
  status: {
    /** No ready endpoint, or none of the subset hint is eligible. */
    noEndpoint: 503,
    /** The request is dropped to shed load. */
    shedding: 429,
  },
} as const;
