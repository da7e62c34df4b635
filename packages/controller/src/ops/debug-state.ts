// What the debug endpoints tell, made from the xDS server's and the snapshot cache's public
// accessors only: the proxies connected to this replica with their per-type versions, and the
// snapshot each Gateway is served, decoded back to proto3 JSON with every secret value redacted.
import protobuf from 'protobufjs';
import { type JsonObject, ProtoJson } from '../xds/proto-json.js';
import { envoyProtos } from '../xds/protos.js';
import { KIND_TYPE_URL, PUSH_ORDER, type ResourceKind, type TypeUrl } from '../xds/resource-types.js';
import type { Snapshot, SnapshotCache } from '../xds/snapshot.js';
import type { StreamStatus } from '../xds/stream.js';

/** One xDS type on one proxy's stream. */
export interface ProxyTypeStatus {
  type: ResourceKind;
  typeUrl: TypeUrl;
  /** The version the controller serves the Gateway now; undefined when it has no snapshot. */
  served: string | undefined;
  sent: string | undefined;
  acked: string | undefined;
  /** Set while the proxy's last answer for this type rejected `version`. */
  nacked: { version: string; message: string; at: string } | undefined;
  /** ACKed the served version and rejects nothing. */
  inSync: boolean;
}

export interface ProxyStatus {
  gateway: string;
  node: string;
  stream: number;
  variant: 'sotw' | 'delta';
  peer: string;
  userAgent: string;
  connectedAt: string;
  types: ProxyTypeStatus[];
  inSync: boolean;
}

export interface ProxiesReport {
  replica: string;
  leader: boolean;
  /** Gateways this replica has a snapshot for, with the snapshot's version. */
  gateways: { gateway: string; version: string }[];
  proxies: ProxyStatus[];
}

const KIND_OF = new Map<TypeUrl, ResourceKind>(Object.entries(KIND_TYPE_URL).map(([kind, url]) => [url, kind as ResourceKind]));

/** The proxies of every stream, each type compared with what the cache serves its Gateway. */
export function proxyStatus(streams: readonly StreamStatus[], cache: SnapshotCache): ProxyStatus[] {
  return streams
    .map((s) => {
      const snapshot = cache.getSnapshot(s.group);
      const types = s.types.map((t): ProxyTypeStatus => {
        const served = snapshot?.types.get(t.typeUrl)?.version;
        const nacked = t.nack ? { version: t.nack.version, message: t.nack.message, at: t.nack.at.toISOString() } : undefined;
        return {
          type: KIND_OF.get(t.typeUrl) ?? 'listeners',
          typeUrl: t.typeUrl,
          served,
          sent: t.sentVersion,
          acked: t.ackedVersion,
          nacked,
          inSync: served !== undefined && t.ackedVersion === served && nacked === undefined,
        };
      });
      return {
        gateway: s.group,
        node: s.node.id,
        stream: s.id,
        variant: s.variant,
        peer: s.peer,
        userAgent: s.node.userAgent,
        connectedAt: s.openedAt.toISOString(),
        types,
        inSync: types.length > 0 && types.every((t) => t.inSync),
      };
    })
    .sort((a, b) => a.gateway.localeCompare(b.gateway) || a.node.localeCompare(b.node) || a.stream - b.stream);
}

/** What replaces a secret value: its size, never a byte of it. */
export const REDACTED = '[redacted]';

/**
 * Fields of Envoy's TLS and secret messages whose value is secret (a DataSource, or a list of
 * them): the private key and its password, session ticket keys, generic secrets, HMAC secrets.
 * Matched wherever they appear, in both of proto3 JSON's spellings.
 */
const SECRET_FIELDS = /^(private_?key|password|session_?ticket_?keys|secret|hmac_?secret|pkcs12|keys)$/i;

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object') return { redacted: REDACTED };
  return REDACTED;
}

/** A copy of `value` with every secret field's value replaced. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELDS.test(k) ? redactValue(v) : redact(v);
  return out;
}

export interface ConfigDump {
  gateway: string;
  version: string;
  /** Per type: its version and resources (decoded from the bytes sent, secrets redacted). */
  types: Partial<Record<ResourceKind, { version: string; resources: unknown[] }>>;
}

let codec: ProtoJson | undefined;

/** The google.protobuf.Any inside a DiscoveryResponse `resources` entry (field 2, length-delimited). */
function anyBytes(entry: Uint8Array): Uint8Array {
  const reader = protobuf.Reader.create(entry);
  reader.uint32();
  return reader.bytes();
}

/** The snapshot served to a Gateway as proto3 JSON, decoded from what goes on the wire, redacted. */
export function configDump(snapshot: Snapshot, only?: ResourceKind): ConfigDump {
  codec ??= new ProtoJson(envoyProtos());
  const types: ConfigDump['types'] = {};
  for (const typeUrl of PUSH_ORDER) {
    const kind = KIND_OF.get(typeUrl) as ResourceKind;
    if (only !== undefined && kind !== only) continue;
    const t = snapshot.types.get(typeUrl);
    if (!t) continue;
    const resources = [...t.resources.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((r) => redact((codec as ProtoJson).decodeAny(anyBytes(r.entry))));
    types[kind] = { version: t.version, resources };
  }
  return { gateway: snapshot.group, version: snapshot.version, types };
}
