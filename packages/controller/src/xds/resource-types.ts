// The five resource types extlb serves, their type URLs, and the facts the protocol attaches to each.

export const TYPE_URL = {
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  secret: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
} as const;

export type TypeUrl = (typeof TYPE_URL)[keyof typeof TYPE_URL];

/** A snapshot's lists, named as `toXds()` of `@extlb/envoy` names them (plus secrets). */
export type ResourceKind = 'listeners' | 'routes' | 'clusters' | 'endpoints' | 'secrets';

export const KIND_TYPE_URL: Readonly<Record<ResourceKind, TypeUrl>> = {
  listeners: TYPE_URL.listener,
  routes: TYPE_URL.route,
  clusters: TYPE_URL.cluster,
  endpoints: TYPE_URL.endpoint,
  secrets: TYPE_URL.secret,
};

/**
 * The order changes go out on one stream, make before break as the xDS protocol asks: clusters,
 * then their endpoints, then the listeners and routes that use them. Secrets come last: a new
 * secret is only asked for once the listener or cluster naming it has arrived, and a secret that
 * goes away should leave after the listener that used it.
 */
export const PUSH_ORDER: readonly TypeUrl[] = [TYPE_URL.cluster, TYPE_URL.endpoint, TYPE_URL.listener, TYPE_URL.route, TYPE_URL.secret];

const KNOWN = new Set<string>(PUSH_ORDER);

export function isTypeUrl(url: string): url is TypeUrl {
  return KNOWN.has(url);
}

/**
 * Listeners and clusters are the roots of a proxy's configuration: a state-of-the-world response
 * for them carries every resource, so a missing one is a removed one, and a first request with no
 * names subscribes to all of them (the legacy wildcard).
 */
export function isRootType(typeUrl: TypeUrl): boolean {
  return typeUrl === TYPE_URL.listener || typeUrl === TYPE_URL.cluster;
}

/** A ClusterLoadAssignment is named by `cluster_name`; every other resource by `name`. */
export function nameField(typeUrl: TypeUrl): 'cluster_name' | 'name' {
  return typeUrl === TYPE_URL.endpoint ? 'cluster_name' : 'name';
}

/** `Listener` for `type.googleapis.com/envoy.config.listener.v3.Listener`: for logs and messages. */
export function shortTypeName(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}
