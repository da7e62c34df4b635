// @extlb/envoy: Gateway API and extlb objects → one Envoy configuration per Gateway, and statuses.
// convert() runs every stage; the stages are exported for callers that drive them one by one (a
// controller re-running only the Envoy stage when endpoints change, a benchmark timing each).
export { boundedEnvoy, convert, DEFAULT_CONTROLLER, envoyOptions, type ConvertOptions, type ConvertResult } from './convert.js';
export { DEFAULT_MAX_OUTPUT_BYTES, jsonSize } from './output-size.js';
export { describeRef, DIAGNOSTIC_CODES, Diagnostics, type Diagnostic, type DiagnosticCode, type ObjectRef, type Severity } from './diagnostics.js';
export type { EndpointMode, EnvoyTarget } from './envoy-target.js';
export {
  adsBootstrap,
  endpointAssignments,
  parseHostPort,
  toBootstrap,
  toEnvoy,
  toXds,
  type BootstrapOptions,
  type EnvoyConfig,
  type EnvoyOptions,
  type XdsResources,
  type XdsTls,
  XDS_IDENTITY,
  xdsIdentitySdsFiles,
} from './envoy/index.js';
/** The generated types of Envoy's messages in proto3 JSON form, one namespace per proto package (`EnvoyTypes.envoy_config_cluster_v3.Cluster`). */
export type * as EnvoyTypes from './generated/index.js';
export type { JsonObject } from './json.js';
export { readInputs, type Inputs } from './read/index.js';
export { InputEndpoints, type EndpointLookup, type HostPort } from './resolve/endpoints.js';
export {
  InputCertificates,
  resolve,
  shadowServiceName,
  type CertificateLookup,
  type IR,
  type Outcomes,
  type Resolved,
  type ResolveOptions,
} from './resolve/index.js';
export { statuses, type StatusOptions } from './status/index.js';
