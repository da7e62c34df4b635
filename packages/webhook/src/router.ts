// One request from arrival to answer: which endpoint, the limits on its body, the review, and the
// log line and metrics it leaves behind.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { metricsHandler, type Logger, type Registry } from '@extlb/telemetry';
import { BadRequestError, parseAdmissionReview, type ReviewOptions, type ReviewResult } from './admission.js';
import { HttpError, readBody } from './body.js';
import { clip } from './bounds.js';
import type { WebhookMetrics } from './metrics.js';
import { ADMISSION_API_VERSION, type AdmissionReview } from './types.js';

export interface RouterOptions {
  logger: Logger;
  metrics: WebhookMetrics;
  registry: Registry;
  maxBodyBytes: number;
  review: (review: AdmissionReview, options: ReviewOptions) => ReviewResult;
  /** Why /readyz answers 503, or undefined when ready. */
  notReady: () => string | undefined;
  /** Whether the server is shutting down: every answer then closes its connection. */
  draining: () => boolean;
}

const REVIEW_PATHS: Record<string, { mutate: boolean }> = { '/validate': { mutate: false }, '/mutate': { mutate: true } };
const GET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
/** Characters of a denial's message that go into its log line; the answer carries all of it. */
const LOGGED_MESSAGE = 2048;

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const type = header.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json' || type === '*/*';
}

function internalErrorReview(review: AdmissionReview, err: unknown): AdmissionReview {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    response: {
      uid: review.request?.uid ?? '',
      allowed: false,
      status: {
        status: 'Failure',
        code: 500,
        reason: 'InternalError',
        message: `the extlb webhook could not check this object: ${clip(err instanceof Error ? err.message : String(err), 1024)}`,
      },
    },
  };
}

/** The request handler of the webhook's HTTPS server. */
export function createRouter(options: RouterOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { logger, metrics } = options;
  const serveMetrics = metricsHandler(options.registry);

  /** While draining, each connection closes after its answer instead of idling until the deadline. */
  function closeIfDraining(res: ServerResponse): void {
    if (options.draining()) res.setHeader('Connection', 'close');
  }

  function send(res: ServerResponse, status: number, body: string, contentType: string, headers: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    closeIfDraining(res);
    res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
    // A string, not a Buffer: node then joins headers and body into one chunk instead of two.
    res.end(body);
  }

  async function review(req: IncomingMessage, mutate: boolean): Promise<{ result?: ReviewResult; body: string; uid: string | undefined }> {
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new HttpError(415, `Content-Type must be application/json, not ${clip(String(req.headers['content-type']), 100)}`);
    }
    const raw = await readBody(req, options.maxBodyBytes);
    let parsed: AdmissionReview;
    try {
      parsed = parseAdmissionReview(raw.toString('utf8'));
    } catch (err) {
      if (err instanceof BadRequestError) throw new HttpError(400, err.message);
      throw err;
    }
    const uid = parsed.request?.uid;
    try {
      const result = options.review(parsed, { mutate });
      return { result, body: JSON.stringify(result.review), uid };
    } catch (err) {
      if (err instanceof BadRequestError) throw new HttpError(400, err.message);
      logger.error({ uid, error: err instanceof Error ? err.stack : String(err) }, 'validation failed with an internal error');
      return { body: JSON.stringify(internalErrorReview(parsed, err)), uid };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const endpoint = Object.hasOwn(REVIEW_PATHS, path) ? REVIEW_PATHS[path] : undefined;
    const fields: Record<string, unknown> = { method: req.method, path: clip(path, 256), remote: req.socket.remoteAddress };
    let level: 'debug' | 'info' | 'warn' = endpoint ? 'info' : 'debug';
    let kind = '';
    let verdict = '';
    try {
      if (endpoint) {
        if (req.method !== 'POST') throw new HttpError(405, `${path} accepts POST only`, { Allow: 'POST' });
        const { result, body, uid } = await review(req, endpoint.mutate);
        kind = result ? (result.kind ?? 'other') : 'unknown';
        verdict = result ? result.verdict : 'error';
        Object.assign(fields, { uid: uid && clip(uid, 256), kind, verdict });
        if (result && !result.review.response?.allowed) {
          fields.message = clip(String(result.review.response?.status?.message), LOGGED_MESSAGE);
          fields.errorCount = result.errorCount;
        }
        if (!result) level = 'warn';
        send(res, 200, body, 'application/json');
      } else if (GET_PATHS.has(path)) {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `${path} accepts GET and HEAD only`, { Allow: 'GET, HEAD' });
        const notReady = path === '/readyz' ? options.notReady() : undefined;
        if (path === '/metrics') {
          closeIfDraining(res);
          await serveMetrics(req, res);
        } else if (notReady) send(res, 503, `${notReady}\n`, 'text/plain; charset=utf-8');
        else send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
      } else {
        throw new HttpError(404, `no such path: ${clip(path, 256)} (the webhook serves POST /validate, POST /mutate, GET /healthz, /readyz, /metrics)`);
      }
    } catch (err) {
      const http = err instanceof HttpError ? err : new HttpError(500, 'internal error');
      if (!(err instanceof HttpError)) {
        level = 'warn';
        fields.error = err instanceof Error ? err.stack : String(err);
      }
      if (level !== 'warn') level = endpoint ? 'warn' : 'info';
      if (endpoint) {
        kind = 'unknown';
        verdict = http.status < 500 ? 'bad_request' : 'error';
      }
      // A body left unread may still be arriving: close the connection rather than read the rest.
      const close: Record<string, string> = req.complete ? {} : { Connection: 'close' };
      fields.error ??= http.message;
      send(res, http.status, `${http.message}\n`, 'text/plain; charset=utf-8', { ...http.headers, ...close });
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (endpoint) metrics.recordReview(path.slice(1), kind, verdict, seconds);
      metrics.httpResponses.inc({ code: String(res.statusCode) });
      fields.status = res.statusCode;
      fields.durationMs = Math.round(seconds * 1e6) / 1e3;
      logger[level](fields, 'request');
    }
  }

  return (req, res) => {
    metrics.inFlight.inc();
    res.once('close', () => metrics.inFlight.dec());
    handle(req, res).catch((err: unknown) => {
      // handle() answers every error itself; reaching this is a bug, and still not a crash.
      logger.error({ error: err instanceof Error ? err.stack : String(err) }, 'request handler failed');
      res.destroy();
    });
  };
}

/**
 * Answers a request Node's HTTP parser refused before any handler saw it (headers too large or too
 * slow, malformed HTTP), and counts the answer with the others.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, metrics: WebhookMetrics, logger: Logger): void {
  logger.debug({ error: err.message, code: err.code }, 'malformed HTTP request');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? '408 Request Timeout'
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : '400 Bad Request';
  metrics.httpResponses.inc({ code: status.slice(0, 3) });
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
