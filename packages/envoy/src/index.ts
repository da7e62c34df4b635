export { convert, DEFAULT_CONTROLLER, type ConvertOptions, type ConvertResult, type EnvoyConfig } from './convert.js';
export { toBootstrap, toXds, type BootstrapOptions } from './output.js';
export { describeRef, type Diagnostic, type ObjectRef, type Severity } from './diagnostics.js';
export type { EndpointMode, EnvoyTarget } from './clusters.js';
