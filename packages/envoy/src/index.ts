// @extlb/envoy: Gateway API and extlb objects → one Envoy configuration per Gateway, and statuses.
// The Converter is the one composition of the stages (read, resolve, Envoy, status): a controller
// holds one and feeds it changes and proxy facts; convert() is a one-shot use of it. The stages
// themselves are not part of the API.
export {
  type ClusterNeeds,
  conditionMessage,
  Converter,
  type ConverterChange,
  type ConverterUpdate,
  type ConvertOptions,
  type GatewayProxyFacts,
  MAX_CONDITION_MESSAGE,
  SHADOW_SERVICE_LABELS,
  type UpdateTimings,
} from './converter/index.js';
export { convert, DEFAULT_CONTROLLER, type ConvertResult } from './convert.js';
export { DEFAULT_MAX_OUTPUT_BYTES, jsonSize } from './output-size.js';
export { describeRef, DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode, type ObjectRef, type Severity } from './diagnostics.js';
export type { EndpointMode, EnvoyTarget } from './envoy-target.js';
export {
  adsBootstrap,
  parseHostPort,
  toBootstrap,
  toXds,
  type BootstrapOptions,
  type EnvoyConfig,
  type XdsResources,
  type XdsTls,
  XDS_IDENTITY,
  xdsIdentitySdsFiles,
} from './envoy/index.js';
/** The generated types of Envoy's messages in proto3 JSON form, one namespace per proto package (`EnvoyTypes.envoy_config_cluster_v3.Cluster`). */
export type * as EnvoyTypes from './generated/index.js';
export type { JsonObject } from './json.js';
export type { IR } from './resolve/index.js';
export { shadowServiceName } from './resolve/index.js';
