// DiscoveryRequest read by hand. Most requests are ACKs that repeat every name the proxy holds
// (for its endpoint assignments, thousands), so the names stay bytes, compared with the stream's
// previous request as bytes, and are decoded only when they differ. Field numbers from
// envoy/service/discovery/v3/discovery.proto.
import protobuf from 'protobufjs';
import type { DecodedRequest } from './stream.js';

export interface SotwRequest extends DecodedRequest {
  version_info: string;
  /** Every `resource_names` entry as it came on the wire, tags included. */
  namesBytes: Buffer;
}

const NO_BYTES = Buffer.alloc(0);

/** A gRPC deserializer for DiscoveryRequest; the node and error_detail messages decode as protobufjs messages. */
export function sotwRequestDecoder(root: protobuf.Root): (bytes: Buffer) => SotwRequest {
  const nodeType = root.lookupType('envoy.config.core.v3.Node');
  const statusType = root.lookupType('google.rpc.Status');
  return (bytes) => {
    const reader = protobuf.Reader.create(bytes);
    const req: SotwRequest = { version_info: '', node: null, type_url: '', response_nonce: '', error_detail: null, namesBytes: NO_BYTES };
    let namesStart = -1;
    let namesEnd = -1;
    const scattered: Buffer[] = [];
    while (reader.pos < reader.len) {
      const start = reader.pos;
      const tag = reader.uint32();
      switch (tag) {
        case 0x0a:
          req.version_info = reader.string();
          break;
        case 0x12:
          req.node = nodeType.decode(reader, reader.uint32());
          break;
        case 0x1a:
          reader.skipType(2);
          if (namesStart < 0) {
            namesStart = start;
          } else if (start !== namesEnd) {
            // Entries come one after another; should another field come between, they are gathered.
            scattered.push(bytes.subarray(namesStart, namesEnd));
            namesStart = start;
          }
          namesEnd = reader.pos;
          break;
        case 0x22:
          req.type_url = reader.string();
          break;
        case 0x2a:
          req.response_nonce = reader.string();
          break;
        case 0x32:
          req.error_detail = statusType.decode(reader, reader.uint32()) as unknown as DecodedRequest['error_detail'];
          break;
        default:
          reader.skipType(tag & 7);
      }
    }
    if (namesStart >= 0) {
      const last = bytes.subarray(namesStart, namesEnd);
      req.namesBytes = scattered.length === 0 ? last : Buffer.concat([...scattered, last]);
    }
    return req;
  };
}

/** The names of `namesBytes`. */
export function resourceNames(namesBytes: Buffer): string[] {
  const reader = protobuf.Reader.create(namesBytes);
  const names: string[] = [];
  while (reader.pos < reader.len) {
    reader.uint32(); // the tag: always resource_names
    names.push(reader.string());
  }
  return names;
}
