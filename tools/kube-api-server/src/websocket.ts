// The server side of RFC 6455 WebSocket, as much as the API server's streaming subresources need:
// the opening handshake with a chosen subprotocol, masked client frames (fragmented or not, any
// length), ping/pong, the closing handshake, and unmasked binary frames back.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OP = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;
/** A message larger than this ends the connection (1009), as a server must bound what it buffers. */
const MAX_MESSAGE = 16 * 1024 * 1024;

/** The subprotocols a client offers (`Sec-WebSocket-Protocol`), in its order of preference. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  return (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** Whether a request asks to become a WebSocket (RFC 6455 section 4.2.1). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.method === 'GET' && /\bwebsocket\b/i.test(req.headers.upgrade ?? '') && typeof req.headers['sec-websocket-key'] === 'string';
}

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (length < 126) head[1] = length;
  else if (length < 65536) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([head, payload]);
}

export interface WebSocketEvents {
  message: [data: Buffer, binary: boolean];
  close: [code: number | undefined];
}

/** One accepted WebSocket. `message` for each whole data message; `close` once, however it ends. */
export class WebSocketConnection extends EventEmitter<WebSocketEvents> {
  private buffered: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentsBinary = false;
  private fragmentsSize = 0;
  private closeSent = false;
  private ended = false;

  constructor(
    private readonly socket: Duplex,
    readonly protocol: string,
    /** Bytes read past the handshake with the upgrade request. */
    head: Buffer = Buffer.alloc(0),
  ) {
    super();
    // Read once the caller has its listeners on.
    if (head.length > 0) queueMicrotask(() => this.read(Buffer.from(head)));
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => this.finish(undefined));
    socket.on('error', () => socket.destroy());
  }

  /** Sends one binary message. */
  send(data: Buffer): void {
    if (this.closeSent || this.ended) return;
    this.socket.write(frame(OP.binary, data));
  }

  /** Starts the closing handshake; the socket ends when the peer answers, or at once if it has gone. */
  close(code = 1000, reason = ''): void {
    if (this.closeSent || this.ended) return;
    this.closeSent = true;
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.socket.write(frame(OP.close, payload));
    // A peer that never answers the close frame must not hold the socket open.
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  private finish(code: number | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('close', code);
  }

  private fail(code: number): void {
    this.close(code);
    this.socket.end();
    this.finish(code);
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const b = this.buffered;
      if (b.length < 2) return;
      const fin = (b[0] as number) & 0x80;
      const opcode = (b[0] as number) & 0x0f;
      const masked = (b[1] as number) & 0x80;
      let length = (b[1] as number) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        const big = b.readBigUInt64BE(2);
        if (big > BigInt(MAX_MESSAGE)) {
          this.fail(1009);
          return;
        }
        length = Number(big);
        offset = 10;
      }
      // Every frame from a client is masked (RFC 6455 section 5.1).
      if (!masked) {
        this.fail(1002);
        return;
      }
      if (length > MAX_MESSAGE) {
        this.fail(1009);
        return;
      }
      if (b.length < offset + 4 + length) return;
      const mask = b.subarray(offset, offset + 4);
      const payload = Buffer.from(b.subarray(offset + 4, offset + 4 + length));
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (mask[i & 3] as number);
      this.buffered = b.subarray(offset + 4 + length);
      this.frame(opcode, fin !== 0, payload);
      if (this.ended) return;
    }
  }

  private frame(opcode: number, fin: boolean, payload: Buffer): void {
    switch (opcode) {
      case OP.ping:
        this.socket.write(frame(OP.pong, payload));
        return;
      case OP.pong:
        return;
      case OP.close: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : undefined;
        if (!this.closeSent) {
          this.closeSent = true;
          this.socket.write(frame(OP.close, payload.subarray(0, 2)));
        }
        this.socket.end();
        this.finish(code);
        return;
      }
      case OP.text:
      case OP.binary:
      case OP.continuation: {
        if (opcode !== OP.continuation) {
          this.fragments = [];
          this.fragmentsSize = 0;
          this.fragmentsBinary = opcode === OP.binary;
        }
        this.fragments.push(payload);
        this.fragmentsSize += payload.length;
        if (this.fragmentsSize > MAX_MESSAGE) {
          this.fail(1009);
          return;
        }
        if (!fin) return;
        const data = this.fragments.length === 1 ? (this.fragments[0] as Buffer) : Buffer.concat(this.fragments);
        this.fragments = [];
        this.fragmentsSize = 0;
        this.emit('message', data, this.fragmentsBinary);
        return;
      }
      default:
        this.fail(1002);
    }
  }
}

/** Answers the opening handshake with `protocol` and returns the connection. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string): WebSocketConnection {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${GUID}`).digest('base64');
  socket.write(
    [
      'HTTP/1.1 101 Switching Protocols',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Accept: ${accept}`,
      ...(protocol ? [`Sec-WebSocket-Protocol: ${protocol}`] : []),
      '',
      '',
    ].join('\r\n'),
  );
  return new WebSocketConnection(socket, protocol, head);
}
