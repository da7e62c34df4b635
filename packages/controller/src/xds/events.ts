// What the xDS server tells its host: callbacks per event, counters and a push latency histogram
// as plain numbers (a metrics library can read them, or be fed from the callbacks), and a logger
// of the same shape as @extlb/webhook's, so one JSON logger serves both.
import type { XdsNode } from './node.js';

export type XdsVariant = 'sotw' | 'delta';

export interface StreamInfo {
  /** Unique per server, counting from 1. */
  readonly id: number;
  /** `sotw` for StreamAggregatedResources, `delta` for DeltaAggregatedResources. */
  readonly variant: XdsVariant;
  readonly node: XdsNode;
  /** The Gateway whose snapshot the stream gets (`namespace/name`). */
  readonly group: string;
  /** The client's address as gRPC reports it, e.g. `127.0.0.1:53422`. */
  readonly peer: string;
  /** The identity the verify step admitted the stream with (a SPIFFE ID); unset without one. */
  readonly identity?: string;
}

/**
 * What a Gateway's proxies stand by, for its status: the NACKs its live, trusted streams hold now,
 * one entry per type and message with how many proxies sent it. The shape `Converter.setProxyFacts`
 * of `@extlb/envoy` takes for `rejected`.
 */
export interface RejectedFacts {
  rejected: { typeUrl: string; message: string; proxies: number }[];
}

export interface ResponseInfo {
  typeUrl: string;
  /** The type's version (DiscoveryResponse.version_info, DeltaDiscoveryResponse.system_version_info). */
  version: string;
  nonce: string;
  /** Resources in the response. */
  resources: number;
  /** Names in `removed_resources` (incremental only). */
  removed: number;
  bytes: number;
}

export interface AckInfo {
  typeUrl: string;
  /** The version the client accepted. */
  version: string;
  nonce: string;
  /**
   * From the moment the configuration was there to send (the snapshot was set, or the request
   * that asked for it arrived, whichever is later) to the client's answer.
   */
  latencyMs: number;
}

export interface NackInfo extends AckInfo {
  /** Envoy's reason for rejecting the version: `error_detail` of its request. */
  errorDetail: { code: number; message: string };
}

/** Called synchronously; an exception thrown by one is logged and otherwise ignored. */
export interface XdsCallbacks {
  /** A stream named its node and group (its first request). */
  onStreamOpen?(stream: StreamInfo): void;
  onStreamClose?(stream: StreamInfo, reason: string): void;
  onResponse?(stream: StreamInfo, response: ResponseInfo): void;
  onAck?(stream: StreamInfo, ack: AckInfo): void;
  /** The proxy rejected a version and keeps running its last accepted one. */
  onNack?(stream: StreamInfo, nack: NackInfo): void;
  /**
   * What a Gateway's trusted proxies reject changed: a NACK came, or the last proxy holding one
   * ACKed or went away (then `facts` is undefined: the fact clears). NACKs of streams that did not
   * prove they are the Gateway's proxies never count.
   */
  onProxyFacts?(group: string, facts: RejectedFacts | undefined): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface XdsLogger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

export const silentXdsLogger: XdsLogger = { log() {} };

/** Upper bounds (ms) of the push latency histogram's buckets. */
export const PUSH_LATENCY_BUCKETS_MS: readonly number[] = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

export interface XdsStats {
  /** Streams open now that have named their node. */
  streamsOpen: number;
  /** Streams that have named their node since the server started. */
  streamsOpened: number;
  /** Streams closed because the node named no valid group, or broke the protocol. */
  streamsRejected: number;
  responses: number;
  responseBytes: number;
  acks: number;
  nacks: number;
  /** Requests answering a response that a newer one had superseded; ignored, as the protocol says. */
  staleRequests: number;
  /** Listener or route responses held until the clusters they name were in place on the proxy (make before break). */
  heldForWarming: number;
  /** Streams ended with RESOURCE_EXHAUSTED: a subscription past the server's bounds, or streams opened too fast on one connection. */
  streamsExhausted: number;
  /** Streams refused at once, before gRPC saw them, because their connection (or the server) opened streams faster than its rate. */
  streamsRateLimited: number;
  /** Connections closed (GOAWAY ENHANCE_YOUR_CALM) for opening streams past their own rate again and again; their addresses are held back. */
  connectionsClosed: number;
  /** Connections from a held-back address, made to wait before their TLS handshake until the hold ended. */
  connectionsHeld: number;
  /** Connections from a held-back address closed at once: as many were waiting as the server lets wait. */
  connectionsDropped: number;
  /**
   * Streams behind now: a response written that the client has not yet taken (HTTP/2 flow control
   * holds it). Such a stream gets nothing more until it drains, then only the newest version of
   * each type, so its queue is one response and it holds up no other stream.
   */
  streamsBehind: number;
  /** ACK and NACK latencies: cumulative bucket counts (`le` in ms, the last is +Inf), count and sum. */
  pushLatency: { buckets: { le: number; count: number }[]; count: number; sumMs: number };
}

export class StatsRecorder {
  readonly counts = {
    streamsOpen: 0,
    streamsOpened: 0,
    streamsRejected: 0,
    responses: 0,
    responseBytes: 0,
    acks: 0,
    nacks: 0,
    staleRequests: 0,
    heldForWarming: 0,
    streamsExhausted: 0,
    streamsRateLimited: 0,
    connectionsClosed: 0,
    connectionsHeld: 0,
    connectionsDropped: 0,
  };
  private readonly buckets = new Array<number>(PUSH_LATENCY_BUCKETS_MS.length + 1).fill(0);
  private latencyCount = 0;
  private latencySum = 0;

  latency(ms: number): void {
    let i = PUSH_LATENCY_BUCKETS_MS.findIndex((le) => ms <= le);
    if (i < 0) i = PUSH_LATENCY_BUCKETS_MS.length;
    this.buckets[i] = (this.buckets[i] ?? 0) + 1;
    this.latencyCount++;
    this.latencySum += ms;
  }

  snapshot(): XdsStats {
    let cumulative = 0;
    const buckets = this.buckets.map((n, i) => {
      cumulative += n;
      return { le: PUSH_LATENCY_BUCKETS_MS[i] ?? Number.POSITIVE_INFINITY, count: cumulative };
    });
    return { ...this.counts, streamsBehind: 0, pushLatency: { buckets, count: this.latencyCount, sumMs: this.latencySum } };
  }
}
