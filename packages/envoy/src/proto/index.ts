// Entry point `@extlb/envoy/proto`: Envoy's protos and the one proto3 JSON encoder (and checker)
// over them, shared by the converter's validator and the controller's xDS server. Kept apart from
// the converter because it needs protobufjs and the protos of @grpc/grpc-js-xds, which convert()
// does not.
export { ENTRY_FILES, loadEnvoyProtos, protoRoots } from './protos.js';
export {
  isJsonObject,
  parseProtoDuration,
  ProtoJson,
  ProtoJsonError,
  type JsonObject,
  type ProtoDuration,
  type ProtoJsonIssue,
  type ProtoRules,
  type Report,
} from './proto-json.js';
