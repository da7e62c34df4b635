// What one xDS client may make the server hold, and how much of what it sends is ever logged.
// A stream's subscription is the only state a client grows at will (delta adds names request by
// request); past a bound the stream ends with RESOURCE_EXHAUSTED, before the names are kept.

export interface XdsLimits {
  /** gRPC receive size of one request, after decompression (grpc-js answers RESOURCE_EXHAUSTED past it). Default 8 MiB. */
  maxRequestBytes: number;
  /** Names one stream may subscribe to, or list in initial_resource_versions, per type. Default 100,000. */
  maxNamesPerType: number;
  /** Bytes of one resource name. Default 2,048: extlb's names are Kubernetes names joined, well under it. */
  maxNameBytes: number;
  /** Bytes of every name a stream holds over all its types. Default 8 MiB. */
  maxSubscriptionBytes: number;
  /** Distinct type URLs a stream may ask for that the server does not serve; past it the stream is ended. Default 16. */
  maxUnknownTypes: number;
  /** HTTP/2 streams at once on one connection (an Envoy uses one). Default 16. */
  maxStreamsPerConnection: number;
  /** Streams a connection may open per second, sustained, and in a burst; past it they are refused with RESOURCE_EXHAUSTED. Default 5/s, burst 10: an Envoy keeps its one stream for hours. */
  streamsPerSecond: number;
  streamBurst: number;
  /**
   * Streams the whole server admits per second, and in a burst: many connections churning at their
   * own rate still cannot take the event loop from the streams already up. Default 200/s, burst 2,000
   * (a fleet reconnecting after a restart is admitted in seconds; the rest retry with Envoy's backoff).
   */
  serverStreamsPerSecond: number;
  serverStreamBurst: number;
  /**
   * Streams a connection may have refused by its own rate before it is closed (GOAWAY
   * ENHANCE_YOUR_CALM) and its peer address held back. Default 10.
   */
  maxRefusedStreamsPerConnection: number;
  /**
   * How long an address is held back after such a close: new connections from it wait, before the
   * TLS handshake, until the hold ends. Doubled each time it offends again within five times the
   * longest hold, up to `maxAddressHoldMs`. Default 5 s, at most 60 s.
   */
  addressHoldMs: number;
  maxAddressHoldMs: number;
  /** Connections waiting out holds at once, over all addresses; past it they are closed at once. Default 1,024. */
  maxHeldConnections: number;
  /** Responses a stream may have written and not yet taken by the client before it counts as behind. Default 4 MiB. */
  maxQueuedBytes: number;
}

export const DEFAULT_XDS_LIMITS: Readonly<XdsLimits> = {
  maxRequestBytes: 8 * 1024 * 1024,
  maxNamesPerType: 100_000,
  maxNameBytes: 2048,
  maxSubscriptionBytes: 8 * 1024 * 1024,
  maxUnknownTypes: 16,
  maxStreamsPerConnection: 16,
  streamsPerSecond: 5,
  streamBurst: 10,
  serverStreamsPerSecond: 200,
  serverStreamBurst: 2000,
  maxRefusedStreamsPerConnection: 10,
  addressHoldMs: 5000,
  maxAddressHoldMs: 60_000,
  maxHeldConnections: 1024,
  maxQueuedBytes: 4 * 1024 * 1024,
};

/** The longest client string (node id, type URL, NACK message, user agent) a log line or status carries. */
export const MAX_LOGGED_CHARS = 256;
/** The longest NACK message kept for a Gateway's status; Gateway API bounds condition messages at 32,768. */
export const MAX_NACK_MESSAGE_CHARS = 4096;

/** A client string cut to `max` characters, its full length noted. */
export function clip(text: string, max = MAX_LOGGED_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
