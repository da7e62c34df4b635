// DiscoveryResponse and DeltaDiscoveryResponse written straight from bytes encoded once per
// resource: a push to a hundred proxies copies each resource's bytes, it never encodes them again.
// Field numbers are those of envoy/service/discovery/v3/discovery.proto.
import protobuf from 'protobufjs';

/** Tag bytes: (field number << 3) | 2, the wire type of strings, bytes and messages. */
const TAG = {
  f1: 0x0a,
  f2: 0x12,
  f3: 0x1a,
  f4: 0x22,
  f5: 0x2a,
  f6: 0x32,
  f7: 0x3a,
} as const;

function stringField(tag: number, value: string): Uint8Array {
  return protobuf.Writer.create().uint32(tag).string(value).finish();
}

function lengthDelimited(tag: number, body: Uint8Array): Buffer {
  const head = protobuf.Writer.create().uint32(tag).uint32(body.length).finish();
  return Buffer.concat([head, body]);
}

/** One `resources` entry of a DiscoveryResponse (field 2, a google.protobuf.Any). */
export function anyEntry(any: Uint8Array): Buffer {
  return lengthDelimited(TAG.f2, any);
}

/**
 * One `resources` entry of a DeltaDiscoveryResponse: a Resource {version = 1, name = 3,
 * resource = 2}. Its `resource` field has the same number as a DiscoveryResponse's `resources`,
 * so the Any entry is reused as it is.
 */
export function deltaResourceEntry(name: string, version: string, entry: Uint8Array): Buffer {
  return lengthDelimited(TAG.f2, Buffer.concat([stringField(TAG.f1, version), stringField(TAG.f3, name), entry]));
}

export interface SotwResponseParts {
  versionInfo: string;
  entries: readonly Uint8Array[];
  typeUrl: string;
  controlPlane: string | undefined;
}

/**
 * A response as it goes to the gRPC serializer: the part every stream in the same state shares
 * (encoded once per version, type and content) and the stream's own nonce field. Fields may come in
 * any order on the wire, so the nonce simply follows.
 */
export interface Response {
  body: Buffer;
  nonce: Buffer;
}

export function responseBytes(r: Response): Buffer {
  return Buffer.concat([r.body, r.nonce], r.body.length + r.nonce.length);
}

/** DiscoveryResponse.nonce (5) and DeltaDiscoveryResponse.nonce (5): the same field number. */
export function nonceField(nonce: string): Buffer {
  return Buffer.from(stringField(TAG.f5, nonce));
}

/** A DiscoveryResponse without its nonce. */
export function sotwBody(r: SotwResponseParts): Buffer {
  const parts: Uint8Array[] = [stringField(TAG.f1, r.versionInfo), ...r.entries, stringField(TAG.f4, r.typeUrl)];
  if (r.controlPlane) parts.push(lengthDelimited(TAG.f6, stringField(TAG.f1, r.controlPlane)));
  return Buffer.concat(parts);
}

export interface DeltaResponseParts {
  systemVersionInfo: string;
  entries: readonly Uint8Array[];
  typeUrl: string;
  removed: readonly string[];
  controlPlane: string | undefined;
}

/** A DeltaDiscoveryResponse without its nonce. */
export function deltaBody(r: DeltaResponseParts): Buffer {
  const parts: Uint8Array[] = [stringField(TAG.f1, r.systemVersionInfo), ...r.entries, stringField(TAG.f4, r.typeUrl)];
  for (const name of r.removed) parts.push(stringField(TAG.f6, name));
  if (r.controlPlane) parts.push(lengthDelimited(TAG.f7, stringField(TAG.f1, r.controlPlane)));
  return Buffer.concat(parts);
}
