// Requests to the Kubernetes API through a client-node KubeConfig (its server, TLS and credentials),
// answering plain JSON as the API server sends it: lists and objects keep their wire form (no typed
// models with Date objects), which is the form the converter reads.
//
// Every request has a deadline: a request that never gets an answer (a half-open connection, an
// API server restarting under it) would otherwise hold up whatever awaits it — a recompute, the
// Lease renewal — forever. Requests share one keep-alive agent whose idle sockets are dropped
// before the API server's own idle timeout, so a pooled socket is not reused just as the server
// closes it; a read (GET) that still meets a dead socket, a refused connection, 429 or a 5xx is
// tried again with backoff. Watches get connections of their own, and a bound on their silence.
// The server may be `https://` or plain `http://` (`kubectl proxy`, a local test cluster).
import { Agent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';
import fetch, { type Response } from 'node-fetch';
import { allowPlainHttp } from './kubeconfig.js';
import { watchEvent } from './wire.js';

export type JsonObject = Record<string, unknown>;

/** A failed request, with the API server's Status where it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The name client-node's ListWatch reads (410 Gone makes it list again). */
  get statusCode(): number {
    return this.status;
  }
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface KubeApiOptions {
  /** The longest one request may take, answer included. Default 10 s. */
  requestTimeoutMs?: number;
  /** Tries of a read (GET) that fails on the way (connection, 429, 5xx). Default 3. */
  attempts?: number;
  /** First delay between tries; doubles each time. Default 100 ms. */
  retryDelayMs?: number;
  /** Idle pooled sockets are closed after this; below the API server's keep-alive timeout (Go's and Node's: 5 s and more). Default 4 s. */
  idleSocketMs?: number;
  /**
   * Watches ask the server to end them after this many seconds, plus up to a quarter more at random
   * so that kinds do not all watch again at once; each then resumes from its resourceVersion
   * (nothing is listed). Default 20 (so 20–25 s).
   */
  watchTimeoutSeconds?: number;
  /**
   * A watch that has sent nothing — no event, no bookmark, not its end — for this long is cut (and
   * restarted by its informer). A healthy API server is never that silent: it ends every watch at
   * its timeout (and, asked for bookmarks, sends one 2 s before that and at least every minute), so
   * this must exceed the longest timeout a watch asks for. Default 30 000 ms.
   */
  watchSilenceMs?: number;
}

/** A watch that said nothing within its bound: no answer to the request, or silence after it. */
export class WatchTimeout extends Error {
  override readonly name = 'WatchTimeout';
  readonly code = 'ETIMEDOUT';
}

/** A watch the server ended cleanly within a second, having sent no event: no watch at all (client-go calls it a very short watch). */
export class ShortWatch extends Error {
  override readonly name = 'ShortWatch';
}

/** A watch shorter than this that brought nothing is a ShortWatch. */
const SHORT_WATCH_MS = 1000;

/** Errors of the connection, not of the API: the request may be tried again. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
function transient(err: unknown): boolean {
  const e = err as { code?: string; errno?: string; type?: string; name?: string };
  if (err instanceof ApiError) return err.status === 429 || (err.status >= 500 && err.status !== 501);
  return TRANSIENT_CODES.has(e.code ?? '') || TRANSIENT_CODES.has(e.errno ?? '') || e.type === 'request-timeout' || e.name === 'AbortError';
}
/** A connection refused never reached the server: any request, not only a read, may be sent again. */
const refused = (err: unknown) => (err as { code?: string }).code === 'ECONNREFUSED' || (err as { errno?: string }).errno === 'ECONNREFUSED';

async function apiError(method: string, path: string, response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let status: { reason?: string; message?: string } | undefined;
  try {
    status = text === '' ? undefined : JSON.parse(text);
  } catch {
    status = undefined;
  }
  return new ApiError(
    response.status,
    status?.reason ?? response.statusText,
    status?.message ?? `${method} ${path}: ${response.status} ${response.statusText}`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class KubeApi {
  private readonly requestTimeoutMs: number;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly idleSocketMs: number;
  readonly watchTimeoutSeconds: number;
  readonly watchSilenceMs: number;
  /** The kubeconfig as client-node will take it (see allowPlainHttp). */
  readonly kc: KubeConfig;
  private agents?: Promise<{ requests: Agent; watches: Agent }>;
  private unreachable = false;
  private readonly reachableListeners = new Set<() => void>();

  constructor(kc: KubeConfig, options: KubeApiOptions = {}) {
    this.kc = allowPlainHttp(kc);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.attempts = options.attempts ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 100;
    this.idleSocketMs = options.idleSocketMs ?? 4_000;
    this.watchTimeoutSeconds = options.watchTimeoutSeconds ?? 20;
    this.watchSilenceMs = options.watchSilenceMs ?? 30_000;
    const longest = this.watchTimeoutSeconds + Math.floor(this.watchTimeoutSeconds / 4);
    if (!(this.watchTimeoutSeconds >= 1 && this.watchSilenceMs > longest * 1000)) {
      throw new RangeError(
        `watchSilenceMs (${this.watchSilenceMs}) must exceed the longest watch timeout (${longest} s), and watchTimeoutSeconds be 1 or more`,
      );
    }
  }

  /** The timeout one watch asks for: `watchTimeoutSeconds` plus up to a quarter more. */
  private watchTimeout(): number {
    return this.watchTimeoutSeconds + Math.floor(Math.random() * (Math.floor(this.watchTimeoutSeconds / 4) + 1));
  }

  /** Calls `listener` whenever the API server answers again after requests failed to reach it. */
  onReachable(listener: () => void): () => void {
    this.reachableListeners.add(listener);
    return () => this.reachableListeners.delete(listener);
  }

  private reached(ok: boolean): void {
    if (!ok) {
      this.unreachable = true;
      return;
    }
    if (!this.unreachable) return;
    this.unreachable = false;
    for (const l of this.reachableListeners) l();
  }

  /** The kubeconfig's TLS settings (none for plain HTTP) on two agents: pooled keep-alive sockets for requests, a connection per watch. */
  private agentsFor(): Promise<{ requests: Agent; watches: Agent }> {
    this.agents ??= (async () => {
      if (this.kc.getCurrentCluster()?.server.startsWith('http:')) {
        return { requests: new Agent({ keepAlive: true, timeout: this.idleSocketMs, maxFreeSockets: 8 }), watches: new Agent({ keepAlive: false }) };
      }
      const opts: { agent?: HttpsAgent & { options?: AgentOptions } } = {};
      await this.kc.applyToHTTPSOptions(opts as never);
      const tls = (opts.agent?.options ?? {}) as AgentOptions;
      const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = tls;
      const base = { ca, cert, key, pfx, passphrase, servername, ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}) };
      // `timeout` on an agent closes its free sockets when idle that long (an active request is not cut by it).
      return {
        requests: new HttpsAgent({ ...base, keepAlive: true, timeout: this.idleSocketMs, maxFreeSockets: 8 }),
        watches: new HttpsAgent({ ...base, keepAlive: false }),
      };
    })();
    return this.agents;
  }

  /** Closes pooled sockets (on shutdown). */
  async close(): Promise<void> {
    if (!this.agents) return;
    const { requests, watches } = await this.agents;
    requests.destroy();
    watches.destroy();
  }

  private async fetchInit(method: string, agent: Agent, accept = 'application/json'): Promise<{ url: string; headers: Record<string, string>; agent: Agent }> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new ApiError(0, 'NoCluster', 'the kubeconfig names no current cluster');
    // Per request: credentials may rotate (a token file, an exec plugin).
    const init = await this.kc.applyToFetchOptions({ method });
    const headers = new Map<string, string>();
    (init.headers as unknown as Headers | undefined)?.forEach((value, key) => {
      headers.set(key, value);
    });
    headers.set('Accept', accept);
    return { url: cluster.server, headers: Object.fromEntries(headers), agent };
  }

  async request<T = JsonObject>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.once<T>(method, path, options);
        this.reached(true);
        return result;
      } catch (err) {
        const reachedServer = err instanceof ApiError;
        if (reachedServer) this.reached(true);
        else if (refused(err)) this.reached(false);
        const again = attempt < this.attempts && ((method === 'GET' && transient(err)) || refused(err));
        if (!again) throw err;
        await sleep(this.retryDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
      }
    }
  }

  private async once<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    const { requests } = await this.agentsFor();
    const { url: server, headers, agent } = await this.fetchInit(method, requests);
    const url = new URL(server + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
    const response = await fetch(url.toString(), {
      method,
      agent,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(this.requestTimeoutMs),
    } as Parameters<typeof fetch>[1]);
    if (!response.ok) throw await apiError(method, path, response);
    const text = await response.text();
    try {
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } catch {
      return undefined as T;
    }
  }

  /**
   * Watches `path` from `query.resourceVersion`: `onEvent` gets each event, checked first (see
   * `watchEvent`); `done` is called once, with an error or null when the stream ended. A line that
   * is not an event ends the watch with a MalformedResponse, a stream silent for `watchSilenceMs`
   * (a half-open connection, a stalled server) with a WatchTimeout, and one the server ended
   * within a second having sent nothing with a ShortWatch. The server is asked to end the watch
   * after `watchTimeoutSeconds` (plus jitter). Abort the returned controller to stop.
   */
  watch(
    path: string,
    query: Record<string, string | undefined>,
    onEvent: (type: string, object: unknown, event: unknown) => void,
    done: (err: unknown) => void,
  ): AbortController {
    const controller = new AbortController();
    let finished = false;
    let watchdog: NodeJS.Timeout | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      if (watchdog) clearTimeout(watchdog);
      controller.abort();
      done(err);
    };
    const arm = (ms: number, why: string) => {
      if (watchdog) clearTimeout(watchdog);
      watchdog = setTimeout(() => finish(new WatchTimeout(why)), ms);
      watchdog.unref?.();
    };
    // Stopped by its owner: nothing more to report.
    controller.signal.addEventListener('abort', () => {
      finished = true;
      if (watchdog) clearTimeout(watchdog);
    });
    const silenceMs = this.watchSilenceMs;
    const startedAt = Date.now();
    let events = 0;
    void (async () => {
      try {
        const { watches } = await this.agentsFor();
        const { url: server, headers, agent } = await this.fetchInit('GET', watches);
        const url = new URL(server + path);
        url.searchParams.set('watch', 'true');
        url.searchParams.set('timeoutSeconds', String(this.watchTimeout()));
        for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
        arm(this.requestTimeoutMs, `watch ${path}: no answer within ${this.requestTimeoutMs} ms`);
        const response = await fetch(url.toString(), { method: 'GET', agent, headers, signal: controller.signal } as Parameters<typeof fetch>[1]);
        if (!response.ok) {
          this.reached(true);
          return finish(await apiError('GET', path, response));
        }
        this.reached(true);
        arm(silenceMs, `watch ${path}: silent for ${silenceMs} ms`);
        const body = response.body as NodeJS.ReadableStream;
        body.on('error', finish);
        const lines = createInterface({ input: body });
        lines.on('error', finish);
        lines.on('line', (line) => {
          if (finished) return; // the rest of a stream already given up (a torn last line, say)
          arm(silenceMs, `watch ${path}: silent for ${silenceMs} ms`);
          try {
            const event = watchEvent(line, path);
            events++;
            onEvent(event.type, event.object, event);
          } catch (err) {
            finish(err); // not an event, or its handler failed: the watch is over either way
          }
        });
        lines.on('close', () =>
          finish(
            events === 0 && Date.now() - startedAt < SHORT_WATCH_MS
              ? new ShortWatch(`watch ${path}: ended by the server within ${SHORT_WATCH_MS} ms without an event`)
              : null,
          ),
        );
      } catch (err) {
        if (refused(err)) this.reached(false);
        finish(err);
      }
    })();
    return controller;
  }
}
