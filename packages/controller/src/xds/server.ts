// The ADS server: envoy.service.discovery.v3.AggregatedDiscoveryService on @grpc/grpc-js, both
// variants, each stream fed from its Gateway's snapshot in SnapshotCache.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { DeltaStream, type DeltaRequest } from './delta-stream.js';
import { type RejectedFacts, silentXdsLogger, StatsRecorder, type XdsCallbacks, type XdsLogger, type XdsStats } from './events.js';
import { ConnectionGate } from './connection-gate.js';
import { connectionInjector } from './grpc-injector.js';
import { clip, DEFAULT_XDS_LIMITS, type XdsLimits } from './limits.js';
import { groupOfNode, type XdsNode } from './node.js';
import { ProtoJson, type JsonObject } from './proto-json.js';
import { PUSH_ORDER, type TypeUrl } from './resource-types.js';
import { type Response, responseBytes } from './wire.js';
import { envoyProtos } from './protos.js';
import type { SnapshotCache } from './snapshot.js';
import { type SotwRequest, sotwRequestDecoder } from './sotw-request.js';
import { SotwStream } from './sotw-stream.js';
import type { AdsStream, DecodedRequest, NackState, StreamContext, StreamStatus, StreamVerifier } from './stream.js';

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';

export interface XdsTlsFiles {
  /** PEM server certificate chain. */
  certFile: string;
  keyFile: string;
  /** PEM CA bundle; when set, clients must present a certificate it signed. */
  clientCaFile?: string;
}

export interface XdsListenOptions {
  /** Default `127.0.0.1`; `0.0.0.0` or `::` to serve other hosts. */
  host?: string;
  /** Default 0: any free port (see the returned one). */
  port?: number;
  tls?: XdsTlsFiles;
  /** TLS its owner keeps current (a rotating certificate and trust bundle); instead of `tls`. */
  credentials?: grpc.ServerCredentials;
}

export interface XdsServerOptions {
  cache: SnapshotCache;
  /** Maps a node to its group; default `groupOfNode` (node.cluster = `<namespace>/<gateway>`). Throw to refuse the node. */
  nodeGroup?: (node: XdsNode) => string;
  callbacks?: XdsCallbacks;
  logger?: XdsLogger;
  /** Sent as `control_plane.identifier` in every response (a pod name helps when reading Envoy's config dump). */
  controlPlaneId?: string;
  /**
   * The one verify step of a stream, once its first request names the node: whether its peer (the
   * TLS client certificate in `auth`) may have its group's resources. A refused stream ends with
   * PERMISSION_DENIED before any resource is sent; an admitted one is verified again when its
   * proof expires (`expiresAt`) and closed if it no longer passes. Without it every stream is
   * admitted and trusted for the group it names (plain text, for development).
   */
  verify?: StreamVerifier;
  /** What one client may make the server hold (see DEFAULT_XDS_LIMITS). */
  limits?: Partial<XdsLimits>;
  /**
   * Least time between two tallies of a group's NACKs into its proxy facts (`onProxyFacts`); the
   * first change after a quiet spell is told on the next turn. Default 250 ms.
   */
  proxyFactsIntervalMs?: number;
  /** gRPC server options, over the defaults below. */
  grpcOptions?: grpc.ServerOptions;
}

/** A NACK a proxy of a group stands by: it runs its last accepted version of that type. */
export interface GroupNack extends NackState {
  stream: number;
  node: string;
  typeUrl: string;
}

function grpcOptions(limits: XdsLimits): grpc.ServerOptions {
  return {
    // Pings find proxies that vanished without closing their connection.
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // A reconnecting delta client lists every resource it holds in its first request; grpc-js
    // bounds the size after decompression too, so a small gzipped request cannot unfold past it.
    'grpc.max_receive_message_length': limits.maxRequestBytes,
    'grpc.max_concurrent_streams': limits.maxStreamsPerConnection,
    // Per-call bookkeeping nothing here reads.
    'grpc.enable_channelz': 0,
  };
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`xDS TLS ${what} ${file}: ${(err as Error).message}`);
  }
}

function serverCredentials(tls: XdsTlsFiles | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  const cert = readPem(tls.certFile, 'certFile');
  const key = readPem(tls.keyFile, 'keyFile');
  const ca = tls.clientCaFile === undefined ? undefined : readPem(tls.clientCaFile, 'clientCaFile');
  try {
    // gRPC would only fail at the first handshake; a bad pair fails here, at start.
    createSecureContext({ cert, key, ca });
  } catch (err) {
    throw new Error(`xDS TLS certFile ${tls.certFile} / keyFile ${tls.keyFile}${ca ? ` / clientCaFile ${tls.clientCaFile}` : ''}: ${(err as Error).message}`);
  }
  return grpc.ServerCredentials.createSsl(ca ?? null, [{ cert_chain: cert, private_key: key }], ca !== undefined);
}

function adsService(root: protobuf.Root): grpc.ServiceDefinition {
  const deltaRequest = root.lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
  const method = (name: string, decode: (bytes: Buffer) => DecodedRequest): grpc.MethodDefinition<DecodedRequest, Response> => ({
    path: `/${ADS_SERVICE}/${name}`,
    requestStream: true,
    responseStream: true,
    requestSerialize: () => {
      throw new Error('the xDS server only reads requests');
    },
    requestDeserialize: decode,
    // Responses are written already encoded: a body shared by every stream in the same state, and the stream's nonce.
    responseSerialize: responseBytes,
    responseDeserialize: () => {
      throw new Error('the xDS server only writes responses');
    },
  });
  return {
    StreamAggregatedResources: method('StreamAggregatedResources', sotwRequestDecoder(root)),
    DeltaAggregatedResources: method('DeltaAggregatedResources', (bytes) => deltaRequest.decode(bytes) as unknown as DecodedRequest),
  };
}

export class XdsServer {
  private server: grpc.Server | undefined;
  private readonly open = new Set<AdsStream<DecodedRequest>>();
  private readonly byGroup = new Map<string, Set<AdsStream<DecodedRequest>>>();
  private readonly recorder = new StatsRecorder();
  private readonly log: XdsLogger;
  private unsubscribe: (() => void) | undefined;
  /** The rejected facts last told per group, as JSON: only a change is told. */
  private readonly factsSent = new Map<string, string>();
  /** Per group: the tally of its facts that is due, and when the last one ran. */
  private readonly factsTimers = new Map<string, NodeJS.Timeout | NodeJS.Immediate>();
  private readonly factsToldAt = new Map<string, number>();
  private readonly factsIntervalMs: number;
  private streamIds = 0;
  private boundPort = 0;

  readonly limits: Readonly<XdsLimits>;
  private gate: ConnectionGate | undefined;

  constructor(private readonly options: XdsServerOptions) {
    this.log = options.logger ?? silentXdsLogger;
    this.limits = { ...DEFAULT_XDS_LIMITS, ...options.limits };
    this.factsIntervalMs = options.proxyFactsIntervalMs ?? 250;
  }

  /** The bound port, 0 before start. */
  get port(): number {
    return this.boundPort;
  }

  /** Loads Envoy's protos, binds and serves. Rejects when the address or the TLS files are unusable. */
  async start(listen: XdsListenOptions = {}): Promise<{ host: string; port: number }> {
    if (this.server) throw new Error('the xDS server is already started');
    const host = listen.host ?? '127.0.0.1';
    const credentials = listen.credentials ?? serverCredentials(listen.tls);
    const root = envoyProtos();
    const context = this.context(root);
    const server = new grpc.Server({ ...grpcOptions(this.limits), ...this.options.grpcOptions });
    server.addService(adsService(root), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<SotwRequest, Response>) => {
        this.accept(new SotwStream(context, call, ++this.streamIds, 'sotw'));
      },
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaRequest, Response>) => {
        this.accept(new DeltaStream(context, call, ++this.streamIds, 'delta'));
      },
    });
    // Connections come through the gate, which refuses streams past their rate before gRPC sees them.
    const gate = new ConnectionGate(this.limits, this.recorder, this.log);
    const address = `${host.includes(':') ? `[${host}]` : host}:${listen.port ?? 0}`;
    try {
      this.boundPort = await gate.listen(host, listen.port ?? 0, connectionInjector(server, credentials));
    } catch (err) {
      gate.close();
      server.forceShutdown();
      throw new Error(`xDS server cannot listen on ${address}: ${(err as Error).message}`);
    }
    this.gate = gate;
    this.server = server;
    this.unsubscribe = this.options.cache.onChange((snapshot, changed) => {
      for (const stream of this.byGroup.get(snapshot.group) ?? []) stream.push(changed);
    });
    this.log.log('info', 'xDS server listening', {
      address: `${host}:${this.boundPort}`,
      tls: listen.tls !== undefined || listen.credentials?._isSecure() === true,
      clientCa: listen.tls?.clientCaFile !== undefined || this.options.verify !== undefined,
    });
    return { host, port: this.boundPort };
  }

  /**
   * Ends every stream with UNAVAILABLE, so each proxy reconnects (to another replica) and keeps
   * its configuration meanwhile, then waits up to `graceMs` for the connections to close.
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.gate?.close();
    this.gate = undefined;
    this.unsubscribe?.();
    for (const timer of this.factsTimers.values()) {
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
    }
    this.factsTimers.clear();
    for (const stream of this.open) stream.fail(grpc.status.UNAVAILABLE, 'the xDS server is shutting down; reconnect');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, options.graceMs ?? 5000);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.log.log('info', 'xDS server stopped', {});
  }

  stats(): XdsStats {
    let behind = 0;
    for (const s of this.open) if (s.behind) behind++;
    return { ...this.recorder.snapshot(), streamsBehind: behind };
  }

  /** The streams that have named their node, of one group or all. */
  streams(group?: string): StreamStatus[] {
    const streams = group === undefined ? this.open : (this.byGroup.get(group) ?? []);
    return [...streams].flatMap((s) => s.status() ?? []);
  }

  /**
   * The NACKs a group's proxies stand by now (what makes its Gateway `Programmed=False`): of live
   * streams only, and only of streams trusted for the group.
   */
  nacks(group: string): GroupNack[] {
    const trusted = [...(this.byGroup.get(group) ?? [])].filter((s) => s.trusted);
    return trusted.flatMap((stream) => {
      const s = stream.status();
      return s ? s.types.flatMap((t) => (t.nack ? [{ stream: s.id, node: s.node.id, typeUrl: t.typeUrl, ...t.nack }] : [])) : [];
    });
  }

  /** A group's NACKs as its proxy facts, undefined when there are none. */
  rejected(group: string): RejectedFacts | undefined {
    const counts = new Map<string, { typeUrl: string; message: string; proxies: number }>();
    for (const stream of this.byGroup.get(group) ?? []) {
      if (!stream.trusted) continue;
      for (const [typeUrl, nack] of stream.nacked()) {
        const key = `${typeUrl}\u0000${nack.message}`;
        const entry = counts.get(key);
        if (entry) entry.proxies++;
        else counts.set(key, { typeUrl, message: nack.message, proxies: 1 });
      }
    }
    // In a stable order, so that only a change of what is rejected reads as a change.
    const rejected = [...counts.values()].sort(
      (a, b) =>
        PUSH_ORDER.indexOf(a.typeUrl as TypeUrl) - PUSH_ORDER.indexOf(b.typeUrl as TypeUrl) || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0),
    );
    return rejected.length === 0 ? undefined : { rejected };
  }

  /**
   * A group's NACKs changed: its facts are tallied on the next turn, and then at most once per
   * `proxyFactsIntervalMs`, so a storm of NACKs costs a few tallies a second, not one per NACK.
   */
  private factsChanged(group: string): void {
    if (this.factsTimers.has(group)) return;
    const wait = (this.factsToldAt.get(group) ?? Number.NEGATIVE_INFINITY) + this.factsIntervalMs - performance.now();
    const tell = () => {
      this.factsTimers.delete(group);
      this.factsToldAt.set(group, performance.now());
      this.factsMaybeChanged(group);
    };
    this.factsTimers.set(group, wait > 0 ? setTimeout(tell, wait) : setImmediate(tell));
  }

  /** Tells the host when a group's rejected facts changed. */
  private factsMaybeChanged(group: string): void {
    const facts = this.rejected(group);
    const key = facts === undefined ? undefined : JSON.stringify(facts.rejected);
    if (key === this.factsSent.get(group)) return;
    if (key === undefined) this.factsSent.delete(group);
    else this.factsSent.set(group, key);
    const callbacks = this.options.callbacks;
    if (!callbacks?.onProxyFacts) return;
    try {
      callbacks.onProxyFacts(group, facts);
    } catch (err) {
      this.log.log('error', 'xDS onProxyFacts callback threw', { error: (err as Error).stack ?? String(err) });
    }
  }

  private accept(stream: AdsStream<DecodedRequest>): void {
    this.open.add(stream);
  }

  private context(root: protobuf.Root): StreamContext {
    const codec = new ProtoJson(root);
    const nodeType = root.lookupType('envoy.config.core.v3.Node');
    const callbacks = this.options.callbacks ?? {};
    const log = this.log;
    const stats = this.recorder;
    const notify: StreamContext['notify'] = (what, run) => {
      try {
        run();
      } catch (err) {
        log.log('error', `xDS ${what} callback threw`, { error: (err as Error).stack ?? String(err) });
      }
    };
    return {
      cache: this.options.cache,
      log,
      stats,
      callbacks,
      controlPlane: this.options.controlPlaneId,
      limits: this.limits,
      nodeJson: (node) => codec.toJson(nodeType, node as JsonObject) as JsonObject,
      nodeGroup: this.options.nodeGroup ?? groupOfNode,
      verify: this.options.verify,
      nacksChanged: (stream) => {
        if (stream.info && stream.trusted) this.factsChanged(stream.info.group);
      },
      notify,
      attach: (stream) => {
        const info = stream.info;
        if (!info) return;
        let streams = this.byGroup.get(info.group);
        if (!streams) {
          streams = new Set();
          this.byGroup.set(info.group, streams);
        }
        streams.add(stream);
        stats.counts.streamsOpen++;
        stats.counts.streamsOpened++;
        log.log('info', 'xDS stream opened', {
          stream: info.id,
          group: info.group,
          node: clip(info.node.id),
          variant: info.variant,
          userAgent: clip(info.node.userAgent),
          peer: info.peer,
        });
        notify('onStreamOpen', () => callbacks.onStreamOpen?.(info));
      },
      detach: (stream, reason) => {
        this.open.delete(stream);
        const info = stream.info;
        if (!info) return;
        const streams = this.byGroup.get(info.group);
        streams?.delete(stream);
        if (streams?.size === 0) this.byGroup.delete(info.group);
        stats.counts.streamsOpen--;
        log.log('info', 'xDS stream closed', { stream: info.id, group: info.group, node: clip(info.node.id), variant: info.variant, reason });
        notify('onStreamClose', () => callbacks.onStreamClose?.(info, reason));
      },
    };
  }
}
