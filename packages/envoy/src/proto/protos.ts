// Envoy's API protos as one protobufjs root, loaded once per process: the converter's validator,
// the xDS server's encoder and the type generator (tools/envoy-types) all read this one.
//
// The protos come from @grpc/grpc-js-xds, pinned to an Envoy API of mid-2024. The few messages and
// values extlb needs that are newer (override_host, FULL_DUPLEX_STREAMED, newer ext_proc fields) are
// added below from the field tables of the Envoy API (names, numbers, types, validation rules).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

/** The proto files whose messages the converter writes, or packs into an `Any`. */
export const ENTRY_FILES: readonly string[] = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/config/core/v3/http_service.proto',
  'envoy/type/v3/http_status.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/udp/udp_proxy/v3/udp_proxy.proto',
  'envoy/extensions/filters/udp/udp_proxy/v3/route.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
  'envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto',
  'envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto',
  'envoy/extensions/access_loggers/stream/v3/stream.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
  'envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto',
  'envoy/extensions/load_balancing_policies/random/v3/random.proto',
  'envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto',
  'envoy/extensions/load_balancing_policies/maglev/v3/maglev.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
];

/** envoy/extensions/load_balancing_policies/override_host/v3/override_host.proto (Envoy 1.35; field 2 since 1.38). */
const OVERRIDE_HOST_PROTO = `
syntax = "proto3";
package envoy.extensions.load_balancing_policies.override_host.v3;
import "envoy/config/cluster/v3/cluster.proto";
import "envoy/type/metadata/v3/metadata.proto";
import "validate/validate.proto";
message OverrideHost {
  message OverrideHostSource {
    string header = 1 [(validate.rules).string = {well_known_regex: HTTP_HEADER_VALUE, strict: false}];
    envoy.type.metadata.v3.MetadataKey metadata = 2;
  }
  repeated OverrideHostSource override_host_sources = 1 [(validate.rules).repeated = {min_items: 1}];
  envoy.type.metadata.v3.MetadataKey selected_host_key = 2;
  envoy.config.cluster.v3.LoadBalancingPolicy fallback_policy = 3 [(validate.rules).message = {required: true}];
}
`;

/** ext_proc additions after the bundled API: `ExtProcHttpService` is field 20's message. */
const EXT_PROC_ADDITIONS = `
syntax = "proto3";
package envoy.extensions.filters.http.ext_proc.v3;
import "envoy/config/core/v3/http_service.proto";
message ExtProcHttpService {
  envoy.config.core.v3.HttpService http_service = 1;
}
`;

export const EXT_PROC = 'envoy.extensions.filters.http.ext_proc.v3';

/** Fields added after the bundled protos: [message, field, number, type, repeated]. */
const ADDED_FIELDS: [string, string, number, string, boolean?][] = [
  [`${EXT_PROC}.ExternalProcessor`, 'http_service', 20, 'ExtProcHttpService'],
  [`${EXT_PROC}.ExternalProcessor`, 'send_body_without_waiting_for_header_response', 21, 'bool'],
  [`${EXT_PROC}.ExternalProcessor`, 'allowed_override_modes', 22, 'ProcessingMode', true],
  [`${EXT_PROC}.ExternalProcessor`, 'on_processing_response', 23, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.ExternalProcessor`, 'status_on_error', 24, 'envoy.type.v3.HttpStatus'],
  [`${EXT_PROC}.ExternalProcessor`, 'processing_request_modifier', 25, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.ExternalProcessor`, 'allow_content_length_header', 26, 'bool'],
  [`${EXT_PROC}.ExtProcOverrides`, 'failure_mode_allow', 8, 'google.protobuf.BoolValue'],
  [`${EXT_PROC}.ExtProcOverrides`, 'processing_request_modifier', 9, 'envoy.config.core.v3.TypedExtensionConfig'],
  [`${EXT_PROC}.MetadataOptions`, 'cluster_metadata_forwarding_namespaces', 3, 'MetadataOptions.MetadataNamespaces'],
];

/** The folders the bundled proto files are found in. */
export function protoRoots(): string[] {
  const require = createRequire(import.meta.url);
  // grpc-js-xds exports no package.json; its main file sits in build/src.
  const xds = join(dirname(require.resolve('@grpc/grpc-js-xds')), '..', '..', 'deps');
  const pbjs = dirname(require.resolve('protobufjs/package.json'));
  return [join(xds, 'envoy-api'), join(xds, 'googleapis'), join(xds, 'protoc-gen-validate'), join(xds, 'xds'), pbjs];
}

function loadRoot(): protobuf.Root {
  const roots = protoRoots();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const r of roots) {
      const p = join(r, target);
      if (existsSync(p)) return p;
    }
    return target; // google/protobuf/*.proto: protobufjs has them built in
  };
  root.loadSync([...ENTRY_FILES], { keepCase: true });
  protobuf.parse(OVERRIDE_HOST_PROTO, root, { keepCase: true });
  protobuf.parse(EXT_PROC_ADDITIONS, root, { keepCase: true });
  const body = root.lookupEnum(`${EXT_PROC}.ProcessingMode.BodySendMode`);
  if (body.values.FULL_DUPLEX_STREAMED === undefined) body.add('FULL_DUPLEX_STREAMED', 4);
  if (body.values.GRPC === undefined) body.add('GRPC', 5);
  for (const [message, field, id, type, repeated] of ADDED_FIELDS) {
    const t = root.lookupType(message);
    if (t.fields[field]) continue;
    const f = new protobuf.Field(field, id, type, repeated ? 'repeated' : undefined);
    t.add(f);
    f.resolve(); // the type is already resolved, so resolveAll() would skip the new field
  }
  // Newer APIs accept http_service instead; "exactly one of the two" is a load-time rule of the validator.
  const grpc = root.lookupType(`${EXT_PROC}.ExternalProcessor`).fields.grpc_service;
  if (grpc?.options) delete grpc.options['(validate.rules).message.required'];
  root.resolveAll();
  return root;
}

let shared: protobuf.Root | undefined;

/** Loads the protos once per process (about half a second). */
export function loadEnvoyProtos(): protobuf.Root {
  shared ??= loadRoot();
  return shared;
}
