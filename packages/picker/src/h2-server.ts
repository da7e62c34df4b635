/**
 * A minimal gRPC server on node:http2, for the picker's three methods: ext_proc `Process` (bidi
 * streaming) and the health service's `Check` (unary) and `Watch` (server streaming). It does what
 * the gRPC over HTTP/2 protocol asks of a server and no more — no interceptors, channelz, per-call
 * metadata objects or message queues — because on the picker's hot path @grpc/grpc-js's own
 * bookkeeping per call cost more than the decision (see the profile the picker bench prints).
 *
 * What it keeps of the protocol: POST with an `application/grpc` content type (else HTTP 415, as
 * grpc-js answers), UNIMPLEMENTED for an unknown method or message encoding, length-prefixed
 * messages reassembled across DATA frames, `identity`/`gzip`/`deflate` compressed messages,
 * RESOURCE_EXHAUSTED past the 4 MiB receive limit (grpc-js's default), `grpc-timeout` deadlines,
 * statuses in trailers (or trailers-only when nothing was sent) with `grpc-message` percent-encoded
 * as grpc-js does, and a graceful shutdown that cuts streams still open after a grace period.
 */
import { constants, createServer, type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';
import { status as Status } from '@grpc/grpc-js';

/** A call's status: OK without one. */
export interface CallStatus {
  code: Status;
  details: string;
}

/** The server's side of one call. */
export interface CallPort {
  /** Sends one message: bytes already encoded as protobuf, or a value for the method's encoder. */
  send(message: unknown): void;
  end(status?: CallStatus): void;
}

/** What a method does with a call's events. */
export interface CallEvents {
  message(message: unknown): void;
  halfClose(): void;
  /** The call was cancelled or broken; no status can be sent any more. */
  gone(): void;
}

export interface H2Method {
  /** Bytes that do not decode (it throws) end the call with INTERNAL, as grpc-js does. */
  decode(bytes: Buffer): unknown;
  encode(message: unknown): Buffer;
  open(port: CallPort): CallEvents;
}

/** grpc-js's default receive limit. */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;
const GRPC_HEADERS = { ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity,deflate,gzip' } as const;
const WAIT_FOR_TRAILERS = Object.freeze({ waitForTrailers: true });
const EMPTY = Buffer.alloc(0);
const DECOMPRESS: Record<string, ((b: Buffer) => Buffer) | undefined> = { identity: undefined, gzip: gunzipSync, deflate: inflateSync };
const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/** `grpc-timeout` in ms (1 to 8 digits and a unit), or undefined when absent or malformed. */
export function parseGrpcTimeout(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  return m ? Number(m[1]) * (TIMEOUT_UNITS[m[2] as string] as number) : undefined;
}

/** A unary method: one request in, one response or a status out. */
export function unaryMethod(
  decode: (b: Buffer) => unknown,
  encode: (m: unknown) => Buffer,
  handle: (request: unknown) => { response: unknown } | CallStatus,
): H2Method {
  return {
    decode,
    encode,
    open(port) {
      let request: unknown;
      let received = 0;
      return {
        message(m) {
          received++;
          request = m;
        },
        halfClose() {
          if (received !== 1) return port.end({ code: Status.UNIMPLEMENTED, details: `a unary call takes one request message, got ${received}` });
          let answer: { response: unknown } | CallStatus;
          try {
            answer = handle(request);
          } catch (err) {
            return port.end({ code: Status.INTERNAL, details: err instanceof Error ? err.message : String(err) });
          }
          if ('response' in answer) {
            port.send(answer.response);
            port.end();
          } else port.end(answer);
        },
        gone() {},
      };
    },
  };
}

/** A server-streaming method: one request in, `start` sends messages until the call ends (it returns what stops it). */
export function serverStreamingMethod(
  decode: (b: Buffer) => unknown,
  encode: (m: unknown) => Buffer,
  start: (request: unknown, port: CallPort) => () => void,
): H2Method {
  return {
    decode,
    encode,
    open(port) {
      let stop: (() => void) | undefined;
      return {
        message(m) {
          if (stop) {
            stop();
            return port.end({ code: Status.UNIMPLEMENTED, details: 'a server-streaming call takes one request message' });
          }
          stop = start(m, {
            send: (message) => port.send(message),
            end: (status) => {
              stop?.();
              port.end(status);
            },
          });
        },
        halfClose() {
          if (!stop) port.end({ code: Status.UNIMPLEMENTED, details: 'a server-streaming call takes one request message, got none' });
        },
        gone() {
          stop?.();
        },
      };
    },
  };
}

/** The trailers of a call that ends OK (node:http2 copies trailers it is given, so one object serves every call). */
const OK_TRAILERS: Readonly<Record<string, string>> = Object.freeze({ 'grpc-status': '0' });

/** Where a stream's call is kept, so that one set of listener functions serves every stream (no closures per call). */
const CALL = Symbol('call');
type CallStream = ServerHttp2Stream & { [CALL]: Call };
function onData(this: CallStream, chunk: Buffer): void {
  this[CALL].data(chunk);
}
function onEnd(this: CallStream): void {
  this[CALL].halfClosed();
}
function onGone(this: CallStream): void {
  this[CALL].gone();
}
function onWantTrailers(this: CallStream): void {
  this.sendTrailers(this[CALL].trailers);
}
function ignore(): void {}

/** gRPC frames of answers sent again and again (the encoded answers of `wire.ts`), made once per answer. */
const FRAMES = new WeakMap<Uint8Array, Buffer>();
/** Answers up to this size have their frame kept; bigger ones (body chunks passed back) are framed each time. */
const FRAMED_KEPT_BYTES = 1024;

function frameOf(bytes: Uint8Array): Buffer {
  let frame = FRAMES.get(bytes);
  if (frame !== undefined) return frame;
  frame = Buffer.allocUnsafe(5 + bytes.length);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  if (bytes.length <= FRAMED_KEPT_BYTES) FRAMES.set(bytes, frame);
  return frame;
}

/** One call on one HTTP/2 stream. */
class Call implements CallPort {
  private headersSent = false;
  private ended = false;
  trailers: Readonly<Record<string, string>> = OK_TRAILERS;
  private readonly events: CallEvents;
  /** The DATA chunks of a message not complete yet, joined once it is (not at each chunk: a 4 MiB message comes in hundreds). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the pending message needs in all: its 5-byte prefix, then the prefix and its length once that is known. */
  private pendingNeed = 5;
  private timer: NodeJS.Timeout | undefined;
  private goneReported = false;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly method: H2Method,
    private readonly decompress: ((b: Buffer) => Buffer) | undefined,
    deadlineMs: number | undefined,
  ) {
    this.events = method.open(this);
    (stream as CallStream)[CALL] = this;
    stream.on('data', onData);
    stream.on('end', onEnd);
    // A reset from the peer, a broken connection or a cut at shutdown: the call is gone.
    stream.on('close', onGone);
    stream.on('error', onGone);
    if (deadlineMs !== undefined) {
      this.timer = setTimeout(() => this.abort({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }), deadlineMs);
    }
  }

  halfClosed(): void {
    if (this.ended) return;
    if (this.pendingBytes > 0) this.abort({ code: Status.INTERNAL, details: 'the request ended inside a message' });
    else this.events.halfClose();
  }

  /** Tells the method, once, that the call is over (however it ended: its pick, its watch, are let go). */
  gone(): void {
    if (this.timer) clearTimeout(this.timer);
    this.ended = true;
    if (this.goneReported) return;
    this.goneReported = true;
    this.events.gone();
  }

  /** Ends the call with a status of the server's own (the method did not choose it), and lets the method go. */
  private abort(status: CallStatus): void {
    this.end(status);
    this.gone();
  }

  data(chunk: Buffer): void {
    const problem = this.readMessages(chunk);
    if (problem) this.abort(problem);
  }

  /** Hands the method every whole message so far, keeping the rest for the next chunk; a status when the bytes break the framing. */
  private readMessages(chunk: Buffer): CallStatus | undefined {
    let buf = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      if (this.pendingBytes < this.pendingNeed) return undefined;
      buf = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    while (!this.ended && buf.length > 0) {
      const length = buf.length < 5 ? -1 : buf.readUInt32BE(1);
      if (length > MAX_RECEIVE_MESSAGE_BYTES) {
        return { code: Status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${length} vs ${MAX_RECEIVE_MESSAGE_BYTES})` };
      }
      if (length < 0 || buf.length < 5 + length) {
        this.pending = [buf];
        this.pendingBytes = buf.length;
        this.pendingNeed = length < 0 ? 5 : 5 + length;
        return undefined;
      }
      const compressed = buf[0] as number;
      let payload = buf.subarray(5, 5 + length);
      buf = buf.length === 5 + length ? EMPTY : buf.subarray(5 + length);
      if (compressed !== 0) {
        if (compressed !== 1 || this.decompress === undefined) {
          return {
            code: Status.INTERNAL,
            details: `a message flagged ${compressed === 1 ? 'compressed on a call without grpc-encoding' : `with compression flag ${compressed}`}`,
          };
        }
        try {
          payload = this.decompress(payload);
        } catch (err) {
          return {
            code: Status.INTERNAL,
            details: `a compressed message does not decompress: ${err instanceof Error ? err.message : String(err)}`,
          };
        }
        if (payload.length > MAX_RECEIVE_MESSAGE_BYTES) {
          return {
            code: Status.RESOURCE_EXHAUSTED,
            details: `Received message that decompresses to a size larger than ${MAX_RECEIVE_MESSAGE_BYTES}`,
          };
        }
      }
      let message: unknown;
      try {
        message = this.method.decode(payload);
      } catch (err) {
        return { code: Status.INTERNAL, details: `Error deserializing request: ${err instanceof Error ? err.message : String(err)}` };
      }
      this.events.message(message);
    }
    return undefined;
  }

  send(message: unknown): void {
    if (this.ended || this.stream.destroyed || this.stream.closed) return;
    const frame = frameOf(message instanceof Uint8Array ? message : this.method.encode(message));
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond(GRPC_HEADERS, WAIT_FOR_TRAILERS);
      this.stream.once('wantTrailers', onWantTrailers);
    }
    this.stream.write(frame);
  }

  end(status?: CallStatus): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.pending = [];
    this.pendingBytes = 0;
    if (this.stream.destroyed || this.stream.closed) return;
    const trailers: Record<string, string> = status === undefined ? OK_TRAILERS : { 'grpc-status': String(status.code) };
    if (status?.details) trailers['grpc-message'] = encodeURI(status.details);
    if (this.headersSent) {
      this.trailers = trailers;
      this.stream.end();
    } else {
      this.stream.respond({ ...GRPC_HEADERS, ...trailers }, { endStream: true });
    }
  }
}

export class H2GrpcServer {
  private readonly server: Http2Server;
  private readonly sessions = new Set<Http2Session>();

  /** `graceMs`: how long `close` lets open calls finish before cutting them. */
  constructor(
    private readonly methods: ReadonlyMap<string, H2Method>,
    private readonly graceMs = 2000,
  ) {
    this.server = createServer();
    this.server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      // A broken connection ends its streams (each reported gone); it never reaches the process.
      session.on('error', () => undefined);
    });
    this.server.on('stream', (stream, headers) => this.stream(stream, headers));
  }

  private stream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', ignore);
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': constants.HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE }, { endStream: true });
      return;
    }
    const trailersOnly = (code: Status, details: string): void => {
      stream.respond({ ...GRPC_HEADERS, 'grpc-status': String(code), 'grpc-message': encodeURI(details) }, { endStream: true });
    };
    const path = headers[':path'] ?? '';
    const method = headers[':method'] === 'POST' ? this.methods.get(path) : undefined;
    const encoding = headers['grpc-encoding'] ?? 'identity';
    if (method === undefined) trailersOnly(Status.UNIMPLEMENTED, `The server does not implement the method ${path}`);
    else if (typeof encoding !== 'string' || !(encoding in DECOMPRESS))
      trailersOnly(Status.UNIMPLEMENTED, `Received message compressed with unsupported encoding "${encoding}"`);
    else new Call(stream, method, DECOMPRESS[encoding], parseGrpcTimeout(headers['grpc-timeout']));
  }

  /** Listens; resolves with the port bound. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting, lets open calls finish for a moment, then cuts them. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.forceClose(), this.graceMs);
      timer.unref();
      this.server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const session of this.sessions) session.close();
    });
  }

  /** Cuts every connection now. */
  forceClose(): void {
    for (const session of this.sessions) session.destroy();
    this.server.close();
  }
}
