// The generated Envoy types (packages/envoy/src/generated, from Envoy's protos) as the builders
// name them: each proto package as a namespace.
import type { Any } from '../generated/index.js';

export type {
  Any,
  envoy_config_bootstrap_v3 as BootstrapV3,
  envoy_config_cluster_v3 as ClusterV3,
  envoy_config_core_v3 as CoreV3,
  envoy_config_endpoint_v3 as EndpointV3,
  envoy_config_listener_v3 as ListenerV3,
  envoy_config_route_v3 as RouteV3,
  envoy_extensions_filters_http_cors_v3 as CorsV3,
  envoy_extensions_filters_http_ext_proc_v3 as ExtProcV3,
  envoy_extensions_filters_http_header_mutation_v3 as HeaderMutationV3,
  envoy_extensions_filters_network_http_connection_manager_v3 as HcmV3,
  envoy_extensions_filters_network_tcp_proxy_v3 as TcpProxyV3,
  envoy_extensions_filters_udp_udp_proxy_v3 as UdpProxyV3,
  envoy_extensions_load_balancing_policies_common_v3 as LbCommonV3,
  envoy_extensions_load_balancing_policies_override_host_v3 as OverrideHostV3,
  envoy_extensions_transport_sockets_tls_v3 as TlsV3,
  envoy_type_matcher_v3 as MatcherV3,
  envoy_type_metadata_v3 as MetadataV3,
  envoy_type_v3 as TypeV3,
  google_protobuf as Pb,
} from '../generated/index.js';

/** The Any holding the message whose type URL is `U`. */
export type AnyOf<U extends Any['@type']> = Extract<Any, { '@type': U }>;
