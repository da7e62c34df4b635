// How a stream's responses reach HTTP/2. A push to a hundred proxies of one Gateway writes the same
// body to each; grpc-js would copy every message twice on the way (the serializer's one buffer, then
// its 5-byte gRPC prefix in front of a fresh copy), which for a 4 MB snapshot and a hundred streams
// is most of the push's CPU and its garbage. Here each stream writes a small head of its own (the
// prefix and its nonce field) and then the shared body itself, so the body's bytes are never copied
// in JavaScript and are held once however many streams still have them queued.
import type { ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { Response } from './wire.js';

export interface ResponseWriter {
  /**
   * Writes one response. `done` runs once, when HTTP/2 has taken it (flow control let it out) or the
   * stream is gone.
   */
  write(response: Response, done: () => void): void;
  /** Whether responses go to HTTP/2 directly (true with the grpc-js this package is built with). */
  readonly direct: boolean;
}

type Call = grpc.ServerDuplexStream<unknown, Response>;

/**
 * The call's HTTP/2 stream: grpc-js keeps it on the call it wraps (BaseServerInterceptingCall), a
 * detail of its own. Undefined when that is not so (another grpc-js, interceptors): responses then
 * go through grpc-js's own write, copies included.
 */
function http2StreamOf(call: Call): ServerHttp2Stream | undefined {
  const inner = (call as unknown as { call?: { stream?: unknown } }).call?.stream as Partial<ServerHttp2Stream> | undefined;
  const isStream = typeof inner?.write === 'function' && typeof inner.respond === 'function' && typeof inner.sendTrailers === 'function';
  return isStream ? (inner as ServerHttp2Stream) : undefined;
}

/** The gRPC message prefix (not compressed, length) and the stream's nonce field: what precedes the shared body. */
function head(response: Response): Buffer {
  const bytes = Buffer.allocUnsafe(5 + response.nonce.length);
  bytes[0] = 0;
  bytes.writeUInt32BE(response.body.length + response.nonce.length, 1);
  response.nonce.copy(bytes, 5);
  return bytes;
}

export function responseWriter(call: Call): ResponseWriter {
  const stream = http2StreamOf(call);
  if (!stream) return { direct: false, write: (response, done) => call.write(response, once(done)) };
  const metadata = new grpc.Metadata();
  return {
    direct: true,
    write(response, done) {
      const finish = once(done);
      if (call.cancelled || stream.destroyed || !stream.writable) {
        finish();
        return;
      }
      // The response headers go first, once; grpc-js sends the trailers when the call ends, after
      // what was written here.
      call.sendMetadata(metadata);
      stream.cork();
      stream.write(head(response));
      stream.write(response.body, finish);
      stream.uncork();
    },
  };
}

function once(run: () => void): () => void {
  let ran = false;
  return () => {
    if (ran) return;
    ran = true;
    run();
  };
}
