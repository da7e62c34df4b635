// Entry point `@extlb/envoy/validator`: kept apart from the converter because it needs
// protobufjs and the Envoy protos of @grpc/grpc-js-xds, which convert() does not.
export { EnvoyValidator, loadEnvoyValidator, type ValidationIssue } from './proto.js';
