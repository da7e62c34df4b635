// DiscoveryRequest read by hand. Most requests are ACKs that repeat every name the proxy holds
// (for its endpoint assignments, thousands), so the names stay bytes, compared with the stream's
// previous request as bytes, and are decoded only when they differ. The proxies of one Gateway
// hold the same names, so the same bytes come from each of them after every change: the last few
// long runs of names are kept, and a request carrying one of them is matched with one comparison
// instead of a walk over every name. Field numbers from envoy/service/discovery/v3/discovery.proto.
import protobuf from 'protobufjs';
import type { DecodedRequest } from './stream.js';

export interface SotwRequest extends DecodedRequest {
  version_info: string;
  /** Every `resource_names` entry as it came on the wire, tags included. */
  namesBytes: Buffer;
}

const NO_BYTES = Buffer.alloc(0);
const NAMES_TAG = 0x1a;
/** Runs of names kept to match: the distinct lists a control plane's proxies hold at once are few. */
const KEPT_RUNS = 4;
/** Shorter runs cost little to walk; longer ones than this are not kept (a proxy's names are bounded well below). */
const MIN_KEPT_BYTES = 1024;
const MAX_KEPT_BYTES = 1024 * 1024;

/** Whether `bytes` holds `run` at `at` (more names right after it extend the run as usual). */
function holdsRun(bytes: Buffer, at: number, run: Buffer): boolean {
  const end = at + run.length;
  return end <= bytes.length && bytes.compare(run, 0, run.length, at, end) === 0;
}

/** A gRPC deserializer for DiscoveryRequest; the node and error_detail messages decode as protobufjs messages. */
export function sotwRequestDecoder(root: protobuf.Root): (bytes: Buffer) => SotwRequest {
  const nodeType = root.lookupType('envoy.config.core.v3.Node');
  const statusType = root.lookupType('google.rpc.Status');
  /** The last long runs of names read, most recent first; each an own copy. */
  const kept: Buffer[] = [];
  const keep = (run: Buffer) => {
    if (run.length < MIN_KEPT_BYTES || run.length > MAX_KEPT_BYTES) return;
    kept.unshift(Buffer.from(run));
    if (kept.length > KEPT_RUNS) kept.pop();
  };
  return (bytes) => {
    const reader = protobuf.Reader.create(bytes);
    let matched: Buffer | undefined;
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
        case NAMES_TAG:
          if (namesStart < 0) {
            matched = kept.find((run) => holdsRun(bytes, start, run));
            if (matched) {
              namesStart = start;
              namesEnd = reader.pos = start + matched.length;
              break;
            }
          }
          reader.skipType(2);
          matched = undefined;
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
    if (matched && scattered.length === 0) {
      req.namesBytes = matched;
      // Most recent first: the run every proxy is repeating is the first one compared.
      if (kept[0] !== matched) {
        kept.splice(kept.indexOf(matched), 1);
        kept.unshift(matched);
      }
    } else if (namesStart >= 0) {
      const last = bytes.subarray(namesStart, namesEnd);
      req.namesBytes = scattered.length === 0 ? last : Buffer.concat([...scattered, last]);
      keep(req.namesBytes);
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
