// One bench proxy's ADS stream on its own HTTP/2 connection, opened as Envoy's gRPC client opens
// it: Envoy's default windows, gRPC messages framed by hand. Responses are read as they arrive, a
// DATA frame at a time: of each message only its envelope (version, type, nonce) is taken on the
// way, and the frames are joined only if the resources are asked for. A hundred clients in one
// Node process joining and collecting a hundred copies of each 4 MB snapshot (what grpc-js does)
// spent as much CPU as the server pushing it, on the same two cores.
import http2 from 'node:http2';

/**
 * Envoy's HTTP/2 windows when http2_protocol_options leave them unset, as its gRPC client to an xDS
 * cluster does: 256 MiB per stream and per connection (Http2ProtocolOptions
 * initial_stream_window_size and initial_connection_window_size); Node's default is 64 KiB.
 */
export const ENVOY_HTTP2_WINDOW = 256 * 1024 * 1024;

/** The fields of a DiscoveryResponse and a DeltaDiscoveryResponse read on the way: the same numbers in both. */
export interface Envelope {
  /** version_info (SotW) or system_version_info (delta). */
  version: string;
  type_url: string;
  nonce: string;
  /** The whole message, its frames joined on first use. */
  bytes(): Buffer;
}

const FIELD = { version: 1, type_url: 4, nonce: 5 } as const;

/** Reads gRPC messages off a stream's DATA frames and hands each one's envelope over. */
class ResponseReader {
  private readonly prefix = Buffer.alloc(5);
  private prefixBytes = 0;
  /** Bytes of the message under way still to come. */
  private left = 0;
  private parts: Buffer[] = [];
  // The scan of the message's fields, each length-delimited (wire type 2): a varint tag, a varint
  // length, then the value, any of which may straddle frames.
  private phase: 'tag' | 'length' | 'value' = 'tag';
  private varint = 0;
  private shift = 0;
  private field = 0;
  private valueLeft = 0;
  private captured: Buffer[] = [];
  private envelope: Record<string, string> = {};

  constructor(private readonly onMessage: (envelope: Envelope) => void) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.left === 0 && this.prefixBytes < 5) {
        this.prefix[this.prefixBytes++] = chunk[at++] as number;
        if (this.prefixBytes === 5) {
          if (this.prefix[0] !== 0) throw new Error('bench: a compressed gRPC message, never asked for');
          this.left = this.prefix.readUInt32BE(1);
          if (this.left === 0) this.end();
        }
        continue;
      }
      const part = chunk.subarray(at, at + Math.min(this.left, chunk.length - at));
      this.parts.push(part);
      this.scan(part);
      at += part.length;
      this.left -= part.length;
      if (this.left === 0) this.end();
    }
  }

  private scan(part: Buffer): void {
    for (let i = 0; i < part.length; ) {
      if (this.phase === 'value') {
        const n = Math.min(this.valueLeft, part.length - i);
        if (this.wanted()) this.captured.push(part.subarray(i, i + n));
        i += n;
        this.valueLeft -= n;
        if (this.valueLeft === 0) this.valueDone();
        continue;
      }
      const b = part[i++] as number;
      this.varint += (b & 0x7f) * 2 ** this.shift;
      this.shift += 7;
      if (b & 0x80) continue;
      const v = this.varint;
      this.varint = 0;
      this.shift = 0;
      if (this.phase === 'tag') {
        if ((v & 7) !== 2) throw new Error(`bench: wire type ${v & 7} in a discovery response`);
        this.field = Math.floor(v / 8);
        this.phase = 'length';
      } else {
        this.valueLeft = v;
        this.phase = 'value';
        if (v === 0) this.valueDone();
      }
    }
  }

  private wanted(): boolean {
    return this.field === FIELD.version || this.field === FIELD.type_url || this.field === FIELD.nonce;
  }

  private valueDone(): void {
    if (this.wanted()) this.envelope[this.field] = Buffer.concat(this.captured).toString('utf8');
    this.captured = [];
    this.phase = 'tag';
  }

  private end(): void {
    const parts = this.parts;
    const e = this.envelope;
    this.parts = [];
    this.envelope = {};
    this.prefixBytes = 0;
    this.phase = 'tag';
    let joined: Buffer | undefined;
    this.onMessage({
      version: e[FIELD.version] ?? '',
      type_url: e[FIELD.type_url] ?? '',
      nonce: e[FIELD.nonce] ?? '',
      bytes: () => {
        joined ??= parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
        return joined;
      },
    });
  }
}

export class AdsCall {
  private readonly session: http2.ClientHttp2Session;
  private readonly stream: http2.ClientHttp2Stream;

  constructor(address: string, path: string, onMessage: (envelope: Envelope) => void) {
    this.session = http2.connect(`http://${address}`, {
      settings: { initialWindowSize: ENVOY_HTTP2_WINDOW },
      // Node's bound on what a session may hold unread; Envoy has none of its own here.
      maxSessionMemory: 1024,
    });
    this.session.on('error', () => {});
    this.session.on('connect', () => this.session.setLocalWindowSize(ENVOY_HTTP2_WINDOW));
    this.stream = this.session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    this.stream.on('error', () => {});
    const reader = new ResponseReader(onMessage);
    this.stream.on('data', (chunk: Buffer) => reader.push(chunk));
  }

  /** Writes one message given in parts, framed: an uncompressed flag and its length, then its bytes. */
  write(parts: readonly Uint8Array[]): void {
    const head = Buffer.alloc(5);
    head.writeUInt32BE(
      parts.reduce((n, p) => n + p.length, 0),
      1,
    );
    this.stream.write(head);
    for (const p of parts) this.stream.write(p);
  }

  close(): void {
    this.session.destroy();
  }
}
