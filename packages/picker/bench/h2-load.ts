// The picker bench's load generator: a minimal HTTP/2 client on a bare TCP socket that plays
// Envoy's ext_proc streams as cheaply as it can, so that on a small machine it leaves the CPU to
// the server measured. node:http2's client made a stream object, header objects and a handful of
// listeners per request and cost the load generator more per decision than the picker itself.
//
// What it keeps of HTTP/2 (RFC 9113): the preface and SETTINGS (acknowledged), PING answered,
// the connection's send window honoured (requests wait for WINDOW_UPDATE), the receive window
// opened wide at the start and topped up, RST_STREAM and GOAWAY failing what they end. Requests
// are written from one template with only the stream id patched, their header block as HPACK
// literals without indexing (RFC 7541 §6.2.2), which need no compression state. Response header
// blocks are never decoded: a request is answered by its first DATA frame (the gRPC message; the
// caller checks its first byte) and is over at the HEADERS frame that ends the stream.
import { connect, type Socket } from 'node:net';

const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const FRAME_HEADER = 9;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** The connection's receive window, opened at the start and topped up when half used. */
const RECEIVE_WINDOW = 2 ** 30;
const INITIAL_WINDOW = 65_535;
const SETTINGS_ENABLE_PUSH = 0x2;

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId, 5);
  payload.copy(out, FRAME_HEADER);
  return out;
}

/** An HPACK literal header field without indexing, new name (RFC 7541 §6.2.2), for names and values under 127 bytes. */
function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  if (n.length > 126 || v.length > 126) throw new RangeError('header too long for a one-byte HPACK length');
  return Buffer.concat([Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v]);
}

function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(WINDOW_UPDATE, 0, streamId, payload);
}

/** What the caller hears of one request: its answer's first DATA payload, or why it has none. */
export type Answered = (error: Error | undefined, firstData: Buffer | undefined) => void;

interface Pending {
  answered: Answered | undefined;
}

export class RawH2Client {
  private readonly socket: Socket;
  private nextStreamId = 1;
  private readonly streams = new Map<number, Pending>();
  /** The request template (HEADERS then DATA) and where its two stream ids go. */
  private readonly template: Buffer;
  private readonly dataAt: number;
  private readonly dataLength: number;
  private readonly halfClose = frame(DATA, END_STREAM, 0);
  private sendWindow = INITIAL_WINDOW;
  /** Requests written only once the peer's window lets them (their DATA counts against it). */
  private readonly waitingForWindow: Array<() => void> = [];
  private receivedSinceUpdate = 0;
  private inbox: Buffer = Buffer.alloc(0);
  /** Bytes to write, gathered for one write per turn of the event loop. */
  private outbox: Buffer[] = [];
  private flushScheduled = false;
  private failed: Error | undefined;

  private constructor(socket: Socket, authority: string, path: string, message: Buffer) {
    this.socket = socket;
    const block = Buffer.concat([
      literal(':method', 'POST'),
      literal(':scheme', 'http'),
      literal(':authority', authority),
      literal(':path', path),
      literal('content-type', 'application/grpc'),
      literal('te', 'trailers'),
    ]);
    const headers = frame(HEADERS, END_HEADERS, 0, block);
    const data = frame(DATA, 0, 0, message);
    this.template = Buffer.concat([headers, data]);
    this.dataAt = headers.length;
    this.dataLength = message.length;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the connection closed')));
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, 0);
    this.send(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, settings), windowUpdate(0, RECEIVE_WINDOW - INITIAL_WINDOW)]));
  }

  /** Connects to `host:port`; every request will POST `message` (a whole gRPC message frame) to `path`. */
  static connect(address: string, path: string, message: Buffer): Promise<RawH2Client> {
    const at = address.lastIndexOf(':');
    const host = address.slice(0, at).replace(/^\[|\]$/g, '');
    const port = Number(address.slice(at + 1));
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new RawH2Client(socket, address, path, message));
      });
      socket.once('error', reject);
    });
  }

  /** Opens one stream with the request; `answered` hears of its first DATA frame, after which the stream is half-closed. */
  request(answered: Answered): void {
    if (this.failed) {
      answered(this.failed, undefined);
      return;
    }
    if (this.sendWindow < this.dataLength) {
      this.waitingForWindow.push(() => this.request(answered));
      return;
    }
    this.sendWindow -= this.dataLength;
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const bytes = Buffer.from(this.template);
    bytes.writeUInt32BE(id, 5);
    bytes.writeUInt32BE(id, this.dataAt + 5);
    this.streams.set(id, { answered });
    this.send(bytes);
  }

  close(): void {
    this.failed ??= new Error('closed');
    this.socket.end();
  }

  private send(bytes: Buffer): void {
    this.outbox.push(bytes);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const out = this.outbox;
      this.outbox = [];
      if (!this.socket.destroyed) this.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
    });
  }

  private read(chunk: Buffer): void {
    let buf = this.inbox.length === 0 ? chunk : Buffer.concat([this.inbox, chunk]);
    while (buf.length >= FRAME_HEADER) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < FRAME_HEADER + length) break;
      this.frame(buf[3] as number, buf[4] as number, buf.readUInt32BE(5) & 0x7fff_ffff, buf.subarray(FRAME_HEADER, FRAME_HEADER + length));
      buf = buf.subarray(FRAME_HEADER + length);
    }
    this.inbox = buf;
  }

  private frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    switch (type) {
      case DATA: {
        this.receivedSinceUpdate += payload.length;
        if (this.receivedSinceUpdate >= RECEIVE_WINDOW / 2) {
          this.send(windowUpdate(0, this.receivedSinceUpdate));
          this.receivedSinceUpdate = 0;
        }
        const stream = this.streams.get(streamId);
        const answered = stream?.answered;
        if (stream === undefined || answered === undefined) return;
        stream.answered = undefined;
        const data = flags & PADDED ? payload.subarray(1, payload.length - (payload[0] as number)) : payload;
        const end = Buffer.from(this.halfClose);
        end.writeUInt32BE(streamId, 5);
        this.send(end);
        if (flags & END_STREAM) this.streams.delete(streamId);
        answered(undefined, data);
        return;
      }
      case HEADERS:
        // Response headers, or the trailers that end the stream; the block itself is not read.
        if (flags & END_STREAM) this.end(streamId, 'the stream ended without an answer');
        return;
      case RST_STREAM:
        this.end(streamId, `the stream was reset (error code ${payload.length >= 4 ? payload.readUInt32BE(0) : '?'})`);
        return;
      case SETTINGS:
        if (!(flags & ACK)) this.send(frame(SETTINGS, ACK, 0));
        return;
      case PING:
        if (!(flags & ACK)) this.send(frame(PING, ACK, 0, Buffer.from(payload)));
        return;
      case GOAWAY:
        this.fail(new Error(`the server went away (error code ${payload.length >= 8 ? payload.readUInt32BE(4) : '?'})`));
        return;
      case WINDOW_UPDATE:
        if (streamId === 0 && payload.length >= 4) {
          this.sendWindow += payload.readUInt32BE(0) & 0x7fff_ffff;
          for (const next of this.waitingForWindow.splice(0)) next();
        }
        return;
      default:
      // PRIORITY, PUSH_PROMISE (refused by SETTINGS), CONTINUATION (of a block not read), extensions: nothing to do.
    }
  }

  /** A stream is over: its request fails if it was not answered. */
  private end(streamId: number, why: string): void {
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    this.streams.delete(streamId);
    stream.answered?.(new Error(why), undefined);
  }

  private fail(err: Error): void {
    this.failed ??= err;
    for (const [id, stream] of this.streams) {
      this.streams.delete(id);
      stream.answered?.(err, undefined);
    }
    for (const next of this.waitingForWindow.splice(0)) next();
  }
}
