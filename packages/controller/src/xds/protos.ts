// Envoy's API protos as one protobufjs root: the one `@extlb/envoy/proto` loads (it adds the
// messages newer than the protos @grpc/grpc-js-xds bundles, such as override_host, so every type
// the converter emits resolves), plus the discovery service.
import { loadEnvoyProtos } from '@extlb/envoy/proto';
import type protobuf from 'protobufjs';

let root: protobuf.Root | undefined;

/** Loads the protos once per process (about half a second). */
export function envoyProtos(): protobuf.Root {
  if (!root) {
    const r = loadEnvoyProtos();
    // The root resolves imports against the bundled proto folders, so loading one more entry file
    // pulls in what it needs and skips what is already there.
    r.loadSync('envoy/service/discovery/v3/ads.proto', { keepCase: true });
    r.resolveAll();
    root = r;
  }
  return root;
}
