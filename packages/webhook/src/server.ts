// The webhook's HTTPS server: TLS with certificate reload, timeouts, and the life cycle of
// listen() and close(). What a request gets is router.ts; how the server stops is drain.ts.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger, createRegistry, type Logger, type Registry } from '@extlb/telemetry';
import { reviewAdmission, type ReviewOptions, type ReviewResult } from './admission.js';
import { MAX_BODY_BYTES } from './body.js';
import { Drain } from './drain.js';
import { WebhookMetrics } from './metrics.js';
import { answerClientError, createRouter } from './router.js';
import { CertificateWatcher, loadKeyPair, secureContextOptions } from './tls.js';
import type { AdmissionReview } from './types.js';

export interface WebhookServerOptions {
  certFile: string;
  keyFile: string;
  /** Default 0.0.0.0. */
  host?: string;
  /** Default 8443; 0 picks a free port. */
  port?: number;
  /** A pino logger, such as @extlb/telemetry's createLogger() makes. Default: logs nothing. */
  logger?: Logger;
  /** Where the webhook's metrics are registered. Default: a new registry with the process metrics. */
  registry?: Registry;
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
   * requests in flight finish and their answers flush (for at most `graceMs`) and closes every
   * connection. Resolves once the server is closed; later calls return the same promise.
   */
  close(options?: CloseOptions): Promise<void>;
  address(): AddressInfo | null;
  /** Re-reads the certificate and key now; true when a different, valid pair was loaded. */
  reloadCertificate(): boolean;
  /** The registry the webhook's metrics are on. */
  readonly registry: Registry;
  readonly ready: boolean;
}

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const registry = options.registry ?? createRegistry();
  const metrics = new WebhookMetrics(registry);
  // Read now so that a missing or mismatched pair fails at start-up, not at the first handshake.
  const initial = loadKeyPair(options.certFile, options.keyFile);
  let listening = false;
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
  const drain = new Drain(server);
  const route = createRouter({
    logger,
    metrics,
    registry,
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    review: options.review ?? reviewAdmission,
    notReady: () => (drain.draining ? 'shutting down' : listening ? undefined : 'not listening'),
    draining: () => drain.draining,
  });

  server.on('request', (req, res) => {
    drain.track(req, res);
    route(req, res);
  });
  server.on('tlsClientError', (err, socket) => {
    logger.debug({ error: err.message }, 'TLS handshake failed');
    // Node leaves the socket open after a handshake timeout: a client that never finishes its
    // handshake would otherwise hold the connection for good.
    socket.destroy();
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => answerClientError(err, socket, metrics, logger));

  function startWatching(): void {
    watcher = new CertificateWatcher(
      {
        certFile: options.certFile,
        keyFile: options.keyFile,
        pollIntervalMs: options.certPollIntervalMs ?? 2_000,
        onChange: (pair) => {
          server.setSecureContext(secureContextOptions(pair));
          metrics.certReloads.inc({ result: 'success' });
          logger.info({ certFile: options.certFile }, 'certificate reloaded');
        },
        onError: (err) => {
          metrics.certReloads.inc({ result: 'failure' });
          logger.warn({ error: err.message }, 'certificate files changed but cannot be used; keeping the previous pair');
        },
      },
      initial,
    );
  }

  async function stop(graceMs: number): Promise<void> {
    watcher?.close();
    if (!listening) {
      server.close();
      return;
    }
    logger.info({ inFlight: drain.inFlight }, 'draining');
    await drain.stop(graceMs);
    listening = false;
    logger.info('stopped');
  }

  return {
    registry,
    get ready() {
      return listening && !drain.draining;
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
          server.on('error', (err) => logger.error({ error: err.message }, 'server error'));
          startWatching();
          listening = true;
          const address = server.address() as AddressInfo;
          // Time since the process started: cold start as an operator sees it in the logs.
          logger.info({ address: address.address, port: address.port, startupMs: Math.round(performance.now()) }, 'listening');
          resolve(address);
        });
      });
    },
    close({ graceMs = 25_000, delayMs = 0 }: CloseOptions = {}) {
      closing ??= (async () => {
        drain.begin();
        if (listening && delayMs > 0) {
          logger.info({ delayMs }, 'not ready; still accepting until endpoints update');
          await delay(delayMs);
        }
        await stop(graceMs);
      })();
      return closing;
    },
  };
}
