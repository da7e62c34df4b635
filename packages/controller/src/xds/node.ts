// Which Gateway an Envoy belongs to. A proxy announces it in its bootstrap as
// `node.cluster: <namespace>/<gateway>` (Envoy's --service-cluster flag sets the same field), and
// gets exactly that Gateway's snapshot. node.cluster alone decides; node metadata never overrides
// it, so one field, visible in Envoy's own stats and admin page, says where a proxy belongs.
import { clip } from './limits.js';
import type { JsonObject } from './proto-json.js';

/** What an xDS client tells about itself in its first request. */
export interface XdsNode {
  id: string;
  cluster: string;
  /** `user_agent_name/user_agent_version`, e.g. `envoy/1.35.0`; '' when unset. */
  userAgent: string;
  metadata: JsonObject;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The group key of a Gateway: the key SnapshotCache.setSnapshot takes. */
export function gatewayGroup(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * The group of a node: its `cluster`, which must be `<namespace>/<gateway>`. Throws an Error
 * whose message says what the node sent and what it should send.
 */
export function groupOfNode(node: XdsNode): string {
  const [namespace, name, ...rest] = node.cluster.split('/');
  const ok =
    rest.length === 0 &&
    namespace !== undefined &&
    name !== undefined &&
    namespace.length <= 63 &&
    DNS_LABEL.test(namespace) &&
    name.length <= 253 &&
    DNS_SUBDOMAIN.test(name);
  if (!ok) {
    throw new Error(
      `node ${JSON.stringify(clip(node.id))} has cluster ${JSON.stringify(clip(node.cluster))}; set node.cluster (Envoy's --service-cluster) to "<namespace>/<gateway>" of the Gateway this proxy serves`,
    );
  }
  return node.cluster;
}

/** An XdsNode from a Node in proto3 JSON. */
export function nodeFromJson(json: JsonObject): XdsNode {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const name = str(json.user_agent_name);
  const version = str(json.user_agent_version);
  const metadata = json.metadata;
  return {
    id: str(json.id),
    cluster: str(json.cluster),
    userAgent: name && version ? `${name}/${version}` : name,
    metadata: typeof metadata === 'object' && metadata !== null ? (metadata as JsonObject) : {},
  };
}
