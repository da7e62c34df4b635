import type { IncomingMessage } from 'node:http';

/** 3 MiB: the API server's own limit on a request body, so nothing it sends is ever refused. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** An HTTP status and a message for the client; everything else that goes wrong is a 500. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length over the limit is
 * refused before a byte is read; a chunked body is cut off as soon as it passes the limit.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `request body exceeds the ${limit}-byte limit`);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.pause();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new HttpError(400, `request body could not be read: ${err.message}`));
    };
    const onAborted = () => onError(new Error('the client closed the connection'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
