// The HTTPS server: routing, limits, probes, metrics, logs, certificate reload and graceful stop.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { BadRequestError, parseAdmissionReview, reviewAdmission, type ReviewOptions, type ReviewResult } from './admission.js';
import { HttpError, MAX_BODY_BYTES, readBody } from './body.js';
import { silentLogger, type Logger } from './log.js';
import { METRICS_CONTENT_TYPE, WebhookMetrics } from './metrics.js';
import { CertificateWatcher, loadKeyPair, secureContextOptions } from './tls.js';
import { ADMISSION_API_VERSION, type AdmissionReview } from './types.js';

export interface WebhookServerOptions {
  certFile: string;
  keyFile: string;
  /** Default 0.0.0.0. */
  host?: string;
  /** Default 8443; 0 picks a free port. */
  port?: number;
  logger?: Logger;
  /** Default 3 MiB. */
  maxBodyBytes?: number;
  /** Time allowed for a client to send its request headers. Default 10 s. */
  headersTimeoutMs?: number;
  /** Time allowed for a whole request. Default 30 s, the API server's longest webhook timeout. */
  requestTimeoutMs?: number;
  /** How often the two timeouts above are enforced. Default 1 s. */
  timeoutCheckIntervalMs?: number;
  /** Time allowed for a TLS handshake. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** How often the certificate files' stats are polled besides fs.watch. Default 2 s. */
  certPollIntervalMs?: number;
  /**
   * Answers a parsed review; default reviewAdmission. Wrap it to add checks of your own. If it
   * throws, the request is denied with code 500 and the server carries on.
   */
  review?: (review: AdmissionReview, options: ReviewOptions) => ReviewResult;
}

export interface CloseOptions {
  /** How long requests in flight may take once the listener is closed. Default 25 s. */
  graceMs?: number;
  /**
   * How long to keep accepting after /readyz turns 503. Kubernetes removes a terminating Pod from
   * Service endpoints only after a moment; closing at once refuses the requests sent meanwhile,
   * which a `failurePolicy: Fail` webhook turns into rejected writes. Default 0.
   */
  delayMs?: number;
}

export interface WebhookServer {
  /** Starts listening; resolves with the bound address once the server is ready. */
  listen(): Promise<AddressInfo>;
  /**
   * Reports not ready, keeps serving for `delayMs`, then stops accepting connections, lets the
   * requests in flight finish (for at most `graceMs`) and closes every connection. Resolves once
   * the server is closed; later calls return the same promise.
   */
  close(options?: CloseOptions): Promise<void>;
  address(): AddressInfo | null;
  /** Re-reads the certificate and key now; true when a different, valid pair was loaded. */
  reloadCertificate(): boolean;
  readonly metrics: WebhookMetrics;
  readonly ready: boolean;
}

const REVIEW_PATHS: Record<string, { mutate: boolean }> = { '/validate': { mutate: false }, '/mutate': { mutate: true } };
const GET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

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
        message: `the extlb webhook could not check this object: ${err instanceof Error ? err.message : String(err)}`,
      },
    },
  };
}

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const logger = options.logger ?? silentLogger;
  const metrics = new WebhookMetrics();
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const answerReview = options.review ?? reviewAdmission;
  // Read now so that a missing or mismatched pair fails at start-up, not at the first handshake.
  const initial = loadKeyPair(options.certFile, options.keyFile);
  let listening = false;
  let draining = false;
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  let watcher: CertificateWatcher | undefined;

  const server: Server = createServer({
    ...secureContextOptions(initial),
    headersTimeout: options.headersTimeoutMs ?? 10_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    connectionsCheckingInterval: options.timeoutCheckIntervalMs ?? 1_000,
    handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
  });
  // Longer than the API server's idle-connection timeout (90 s), so it is always the client that
  // closes an idle connection and never races a request against the server closing it.
  server.keepAliveTimeout = 95_000;

  function send(res: ServerResponse, status: number, body: string, contentType: string, headers: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // While draining, each connection closes after its reply instead of idling until the deadline.
    const close: Record<string, string> = draining ? { Connection: 'close' } : {};
    res.writeHead(status, { ...headers, ...close, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
    // A string, not a Buffer: node then joins headers and body into one chunk instead of two.
    res.end(body);
  }

  async function handleReview(req: IncomingMessage, mutate: boolean): Promise<{ result?: ReviewResult; body: string; uid: string | undefined }> {
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new HttpError(415, `Content-Type must be application/json, not ${req.headers['content-type']}`);
    }
    const raw = await readBody(req, maxBody);
    let review: AdmissionReview;
    try {
      review = parseAdmissionReview(raw.toString('utf8'));
    } catch (err) {
      if (err instanceof BadRequestError) throw new HttpError(400, err.message);
      throw err;
    }
    try {
      const result = answerReview(review, { mutate });
      return { result, body: JSON.stringify(result.review), uid: review.request?.uid };
    } catch (err) {
      if (err instanceof BadRequestError) throw new HttpError(400, err.message);
      logger.log('error', 'validation failed with an internal error', { uid: review.request?.uid, error: err instanceof Error ? err.stack : String(err) });
      return { body: JSON.stringify(internalErrorReview(review, err)), uid: review.request?.uid };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const review = Object.hasOwn(REVIEW_PATHS, path) ? REVIEW_PATHS[path] : undefined;
    const fields: Record<string, unknown> = { method: req.method, path, remote: req.socket.remoteAddress };
    let level: 'debug' | 'info' | 'warn' = review ? 'info' : 'debug';
    let kind = '';
    let verdict = '';
    try {
      if (review) {
        if (req.method !== 'POST') throw new HttpError(405, `${path} accepts POST only`, { Allow: 'POST' });
        const { result, body, uid } = await handleReview(req, review.mutate);
        kind = result ? (result.kind ?? 'other') : 'unknown';
        verdict = result ? result.verdict : 'error';
        fields.uid = uid;
        fields.kind = kind;
        fields.verdict = verdict;
        if (result && !result.review.response?.allowed) fields.message = result.review.response?.status?.message;
        if (!result) level = 'warn';
        send(res, 200, body, 'application/json');
      } else if (GET_PATHS.has(path)) {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `${path} accepts GET and HEAD only`, { Allow: 'GET, HEAD' });
        if (path === '/metrics') send(res, 200, metrics.render(), METRICS_CONTENT_TYPE);
        else if (path === '/readyz' && (!listening || draining)) send(res, 503, draining ? 'shutting down\n' : 'not listening\n', 'text/plain; charset=utf-8');
        else send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
      } else {
        throw new HttpError(404, `no such path: ${path} (the webhook serves POST /validate, POST /mutate, GET /healthz, /readyz, /metrics)`);
      }
    } catch (err) {
      const http = err instanceof HttpError ? err : new HttpError(500, 'internal error');
      if (!(err instanceof HttpError)) {
        level = 'warn';
        fields.error = err instanceof Error ? err.stack : String(err);
      }
      if (level !== 'warn') level = review ? 'warn' : 'info';
      if (review) {
        kind = 'unknown';
        verdict = http.status < 500 ? 'bad_request' : 'error';
      }
      // A body left unread may still be arriving: close the connection rather than read the rest.
      const close: Record<string, string> = req.complete ? {} : { Connection: 'close' };
      fields.error ??= http.message;
      send(res, http.status, `${http.message}\n`, 'text/plain; charset=utf-8', { ...http.headers, ...close });
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (review) metrics.recordReview(path.slice(1), kind, verdict, seconds);
      metrics.httpResponses.inc({ code: String(res.statusCode) });
      fields.status = res.statusCode;
      fields.durationMs = Math.round(seconds * 1e6) / 1e3;
      logger.log(level, 'request', fields);
    }
  }

  function stop(graceMs: number): Promise<void> {
    watcher?.close();
    if (!listening) {
      server.close();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      force.unref();
      onIdle = () => server.closeIdleConnections();
      server.close(() => {
        clearTimeout(force);
        listening = false;
        logger.log('info', 'stopped');
        resolve();
      });
      logger.log('info', 'draining', { inFlight });
      server.closeIdleConnections();
    });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    metrics.inFlight.inc();
    res.once('close', () => {
      inFlight--;
      metrics.inFlight.inc({}, -1);
      if (inFlight === 0) onIdle?.();
    });
    handle(req, res).catch((err: unknown) => {
      // handle() answers every error itself; reaching this is a bug, and still not a crash.
      logger.log('error', 'request handler failed', { error: err instanceof Error ? err.stack : String(err) });
      res.destroy();
    });
  });
  server.on('tlsClientError', (err, socket) => {
    logger.log('debug', 'TLS handshake failed', { error: err.message });
    // Node leaves the socket open after a handshake timeout: a client that never finishes its
    // handshake would otherwise hold the connection for good.
    socket.destroy();
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    logger.log('debug', 'malformed HTTP request', { error: err.message, code: err.code });
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
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });

  return {
    metrics,
    get ready() {
      return listening && !draining;
    },
    address() {
      const a = server.address();
      return a && typeof a === 'object' ? a : null;
    },
    reloadCertificate() {
      return watcher?.reload() ?? false;
    },
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen(options.port ?? 8443, options.host ?? '0.0.0.0', () => {
          server.off('error', onError);
          server.on('error', (err) => logger.log('error', 'server error', { error: err.message }));
          watcher = new CertificateWatcher(
            {
              certFile: options.certFile,
              keyFile: options.keyFile,
              pollIntervalMs: options.certPollIntervalMs ?? 2_000,
              onChange: (pair) => {
                server.setSecureContext(secureContextOptions(pair));
                metrics.certReloads.inc({ result: 'success' });
                logger.log('info', 'certificate reloaded', { certFile: options.certFile });
              },
              onError: (err) => {
                metrics.certReloads.inc({ result: 'failure' });
                logger.log('warn', 'certificate files changed but cannot be used; keeping the previous pair', { error: err.message });
              },
            },
            initial,
          );
          listening = true;
          const address = server.address() as AddressInfo;
          // Time since the process started: cold start as an operator sees it in the logs.
          logger.log('info', 'listening', { address: address.address, port: address.port, startupMs: Math.round(performance.now()) });
          resolve(address);
        });
      });
    },
    close({ graceMs = 25_000, delayMs = 0 }: CloseOptions = {}) {
      closing ??= (async () => {
        draining = true;
        if (listening && delayMs > 0) {
          logger.log('info', 'not ready; still accepting until endpoints update', { delayMs });
          await delay(delayMs);
        }
        await stop(graceMs);
      })();
      return closing;
    },
  };
}
