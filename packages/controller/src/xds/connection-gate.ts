// The xDS server's door: it accepts TCP connections itself and hands them to grpc-js, and it sees
// every HTTP/2 stream before grpc-js does. A stream past its connection's rate (or the server's) is
// answered there with a trailers-only RESOURCE_EXHAUSTED — one HEADERS frame, no gRPC call built.
// A connection whose streams keep being refused by its own rate is closed with GOAWAY
// ENHANCE_YOUR_CALM, and its peer address is held back: new connections from it wait, before the
// TLS handshake and without being read, until the hold ends (longer each time it offends again).
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { AddressHolds } from './address-hold.js';
import type { StatsRecorder, XdsLogger } from './events.js';
import type { Injector } from './grpc-injector.js';
import { clip, type XdsLimits } from './limits.js';
import { RateBucket } from './stream-rate.js';

type GateLimits = Pick<
  XdsLimits,
  | 'streamsPerSecond'
  | 'streamBurst'
  | 'serverStreamsPerSecond'
  | 'serverStreamBurst'
  | 'maxRefusedStreamsPerConnection'
  | 'addressHoldMs'
  | 'maxAddressHoldMs'
  | 'maxHeldConnections'
>;

interface Connection {
  readonly streams: RateBucket;
  /** Streams refused by this connection's own rate. */
  refused: number;
}

const ignore = () => {};

export class ConnectionGate {
  private readonly tcp = net.createServer({ pauseOnConnect: true }, (socket) => this.connected(socket));
  private readonly holds: AddressHolds;
  private readonly serverStreams: RateBucket;
  private readonly connections = new WeakMap<http2.Http2Session, Connection>();
  /** Connections waiting for their address's hold to end, by address. */
  private readonly parked = new Map<string, Set<net.Socket>>();
  private parkedCount = 0;
  private readonly releases = new Map<string, NodeJS.Timeout>();
  private readonly refusal: http2.OutgoingHttpHeaders;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private injector: Injector | undefined;

  constructor(
    private readonly limits: GateLimits,
    private readonly stats: StatsRecorder,
    private readonly log: XdsLogger,
  ) {
    this.holds = new AddressHolds(limits.addressHoldMs, limits.maxAddressHoldMs);
    this.serverStreams = new RateBucket(limits.serverStreamsPerSecond, limits.serverStreamBurst);
    this.refusal = {
      ':status': 200,
      'content-type': 'application/grpc+proto',
      'grpc-status': String(grpc.status.RESOURCE_EXHAUSTED),
      'grpc-message': `too many new streams: at most ${limits.streamsPerSecond} a second per connection (burst ${limits.streamBurst}) and ${limits.serverStreamsPerSecond} a second in all (burst ${limits.serverStreamBurst}); an xDS client keeps its stream open, retry with backoff`,
    };
  }

  /** Listens for connections and hands each to `injector`, whose HTTP/2 server's streams pass the gate first. */
  listen(host: string, port: number, injector: Injector): Promise<number> {
    this.injector = injector;
    this.guard(injector.http2);
    return new Promise((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen({ host, port }, () => {
        this.tcp.off('error', reject);
        const address = this.tcp.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Stops accepting; connections waiting out a hold are dropped. */
  close(): void {
    this.tcp.close();
    for (const timer of this.releases.values()) clearTimeout(timer);
    this.releases.clear();
    for (const sockets of this.parked.values()) for (const socket of sockets) socket.destroy();
    this.parked.clear();
    this.parkedCount = 0;
  }

  /** Streams go through `admit` before grpc-js's handlers; sessions get their connection's state. */
  private guard(server: Injector['http2']): void {
    const grpcHandlers = server.listeners('stream') as ((...args: unknown[]) => void)[];
    server.removeAllListeners('stream');
    server.on('stream', (stream: http2.ServerHttp2Stream, ...rest: unknown[]) => {
      if (!this.admit(stream)) return;
      for (const handler of grpcHandlers) handler.call(server, stream, ...rest);
    });
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.connections.set(session, { streams: new RateBucket(this.limits.streamsPerSecond, this.limits.streamBurst), refused: 0 });
    });
  }

  private connected(socket: net.Socket): void {
    const address = socket.remoteAddress ?? '';
    if (this.holds.heldFor(address) <= 0) {
      this.pass(socket);
      return;
    }
    if (this.parkedCount >= this.limits.maxHeldConnections) {
      this.stats.counts.connectionsDropped++;
      socket.destroy();
      return;
    }
    this.stats.counts.connectionsHeld++;
    let sockets = this.parked.get(address);
    if (!sockets) {
      sockets = new Set();
      this.parked.set(address, sockets);
    }
    sockets.add(socket);
    this.parkedCount++;
    socket.on('error', ignore);
    this.armRelease(address);
  }

  /** Hands a connection to gRPC; it was accepted paused (so that one held back is not read), and reads from here on. */
  private pass(socket: net.Socket): void {
    socket.resume();
    this.injector?.inject(socket);
  }

  /** When the address's hold ends, its waiting connections go on to the handshake. */
  private armRelease(address: string): void {
    if (this.releases.has(address)) return;
    const timer = setTimeout(
      () => {
        this.releases.delete(address);
        if (this.holds.heldFor(address) > 0) {
          this.armRelease(address);
          return;
        }
        const sockets = this.parked.get(address) ?? new Set();
        this.parked.delete(address);
        this.parkedCount -= sockets.size;
        for (const socket of sockets) {
          socket.off('error', ignore);
          if (!socket.destroyed) this.pass(socket);
        }
      },
      Math.ceil(this.holds.heldFor(address)),
    );
    timer.unref();
    this.releases.set(address, timer);
  }

  /** Whether a new stream may reach gRPC; if not it is answered RESOURCE_EXHAUSTED here. */
  private admit(stream: http2.ServerHttp2Stream): boolean {
    const session = stream.session;
    const connection = session ? this.connections.get(session) : undefined;
    if (!connection) return true;
    const own = connection.streams.take();
    if (own && this.serverStreams.take()) return true;
    this.stats.counts.streamsRateLimited++;
    stream.on('error', ignore);
    if (!stream.destroyed) stream.respond(this.refusal, { endStream: true });
    if (!own && ++connection.refused > this.limits.maxRefusedStreamsPerConnection && session) this.shut(session);
    else this.logRefusal(session?.socket?.remoteAddress, session?.socket?.remotePort);
    return false;
  }

  /** Closes a connection that keeps opening streams past its rate, and holds its address back. */
  private shut(session: http2.Http2Session): void {
    const address = session.socket?.remoteAddress ?? '';
    const port = session.socket?.remotePort;
    this.connections.delete(session);
    this.stats.counts.connectionsClosed++;
    const heldMs = this.holds.hold(address);
    // The GOAWAY is written before the connection goes: the client learns why, and retries with backoff.
    session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    setImmediate(() => session.destroy());
    this.log.log('warn', 'xDS connection closed: it kept opening streams past its rate; its address is held back', {
      peer: clip(`${address}:${port}`),
      refusedStreams: this.limits.maxRefusedStreamsPerConnection + 1,
      heldMs,
    });
  }

  private logRefusal(address: string | undefined, port: number | undefined): void {
    const t = performance.now();
    if (t - this.loggedAt <= 1000) return;
    this.loggedAt = t;
    this.log.log('warn', 'xDS streams refused: opened too fast', { peer: clip(`${address}:${port}`), refused: this.stats.counts.streamsRateLimited });
  }
}
