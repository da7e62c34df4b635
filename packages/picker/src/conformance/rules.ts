/** The rules the conformance kit checks, each tied to the protocol text it comes from. */
export interface Rule {
  id: string;
  title: string;
  /** The requirement, quoted or summarised from the Endpoint Picker Protocol. */
  requirement: string;
}

export const RULES = [
  {
    id: 'ext-proc.answers',
    title: 'answers request headers over ext_proc',
    requirement: 'The EPP MUST implement the Envoy external processing service protocol.',
  },
  {
    id: 'endpoint.present',
    title: 'names an endpoint in the header and/or envoy.lb metadata',
    requirement: 'The EPP MUST communicate one or more selected endpoints via the x-gateway-destination-endpoint header or dynamic_metadata["envoy.lb"].',
  },
  {
    id: 'endpoint.format',
    title: 'every entry is ip:port or [ipv6]:port, spelt as Envoy compares, and the metadata value is a string',
    requirement: 'The value MUST contain at least one endpoint in <ip:port> format or multiple endpoints in <ip:port>,<ip:port>,... format.',
  },
  {
    id: 'endpoint.agree',
    title: 'header and metadata carry the same value',
    requirement: 'The EPP MUST not set two different values in the header and the inner response metadata value.',
  },
  {
    id: 'endpoint.ordered-list',
    title: 'the list is an ordered list Envoy can walk: no empty or repeated entries',
    requirement: 'The first valid endpoint in the list will be used; on retry the proxy goes sequentially down the list.',
  },
  {
    id: 'endpoint.client-header-ignored',
    title: 'a client-sent x-gateway-destination-endpoint never survives',
    requirement: 'A client must never be able to pick an endpoint by sending the header itself (extlb design rule).',
  },
  {
    id: 'subset.respected',
    title: 'picks only from the x-gateway-destination-endpoint-subset hint',
    requirement: 'If the key x-gateway-destination-endpoint-subset is set, the EPP MUST only select endpoints from the specified list.',
  },
  {
    id: 'subset.empty-503',
    title: 'answers ImmediateResponse 503 to an empty subset',
    requirement: 'If the list is empty, the EPP MUST return an ImmediateResponse with 503 (Service Unavailable).',
  },
  {
    id: 'subset.ineligible-503',
    title: 'answers ImmediateResponse 503 when no endpoint of the subset is eligible',
    requirement: 'If none of the endpoints in the list is eligible, the EPP MUST return an ImmediateResponse with 503.',
  },
  {
    id: 'served.accepted',
    title: 'accepts x-gateway-destination-endpoint-served on the response path',
    requirement: 'For each HTTP response, the data plane MUST communicate to the EPP the endpoint that served the request (metadata_context envoy.lb).',
  },
  {
    id: 'streaming.full-duplex',
    title: 'handles FULL_DUPLEX_STREAMED bodies and trailers',
    requirement: 'The EPP MUST support streaming mode for inference requests and responses.',
  },
  {
    id: 'health.services',
    title: 'serves gRPC health for liveness, readiness and envoy.service.ext_proc.v3.ExternalProcessor',
    requirement: 'The EPP MUST expose health check endpoints following the gRPC Health Checking Protocol.',
  },
] as const satisfies readonly Rule[];

export type RuleId = (typeof RULES)[number]['id'];
