// extlb's xDS server: per-Gateway snapshots served over ADS (state of the world and incremental).
export {
  EncodedResource,
  SnapshotCache,
  SnapshotError,
  type Snapshot,
  type SnapshotIssue,
  type SnapshotListener,
  type SnapshotResources,
  type SnapshotUpdate,
  type TypeResources,
  type XdsResource,
} from './snapshot.js';
export { clip, DEFAULT_XDS_LIMITS, MAX_LOGGED_CHARS, MAX_NACK_MESSAGE_CHARS, type XdsLimits } from './limits.js';
export { ADS_SERVICE, XdsServer, type GroupNack, type XdsListenOptions, type XdsServerOptions, type XdsTlsFiles } from './server.js';
export type { NackState, PeerAuth, StreamStatus, StreamVerdict, StreamVerifier, TypeStatus } from './stream.js';
export {
  PUSH_LATENCY_BUCKETS_MS,
  silentXdsLogger,
  type AckInfo,
  type LogLevel,
  type NackInfo,
  type RejectedFacts,
  type ResponseInfo,
  type StreamInfo,
  type XdsCallbacks,
  type XdsLogger,
  type XdsStats,
  type XdsVariant,
} from './events.js';
export { gatewayGroup, groupOfNode, type XdsNode } from './node.js';
export { isRootType, KIND_TYPE_URL, PUSH_ORDER, TYPE_URL, type ResourceKind, type TypeUrl } from './resource-types.js';
export { ProtoJson, ProtoJsonError, type JsonObject } from './proto-json.js';
export { envoyProtos } from './protos.js';
