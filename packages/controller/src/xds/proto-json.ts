// The proto3 JSON encoder the xDS server sends resources with: the one `@extlb/envoy/proto` has,
// which the converter's validator checks its output with too, so what passes the check encodes.
export { isJsonObject, ProtoJson, ProtoJsonError, type JsonObject } from '@extlb/envoy/proto';
