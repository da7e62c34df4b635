/**
 * The reference picker as an ext_proc gRPC server. One ext_proc stream is one HTTP request: the
 * picker decides on the request headers and answers at once — the ordered list in `envoy.lb`
 * dynamic metadata and/or the `x-gateway-destination-endpoint` header, always the same value —
 * or with an ImmediateResponse 503/429. In full-duplex streamed mode it then passes each body
 * chunk straight back as a streamed body response, as it arrives; on the response path it reads
 * the served endpoint. `stream.ts` stands between these answers and the network; `metrics.ts`
 * turns the picker's counts into Prometheus series.
 */
import type { Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { createLogger, createRegistry, type Logger, type Registry } from '@extlb/telemetry';
import { EPP } from '@extlb/types';
import type { Endpoint } from './codec.js';
import { grpcJsHealth, healthService, pickerHealth, type HealthRequest, type HealthService } from './health.js';
import { H2GrpcServer, serverStreamingMethod, unaryMethod, type H2Method } from './h2-server.js';
import { setHeader, type ProcessingResponse } from './messages.js';
import { listenForMetrics, registerPickerMetrics } from './metrics.js';
import { DEFAULT_SCRAPE, MetricsScraper, SERVER_METRICS, type ScrapeOptions, type SignalSource } from './signals.js';
import { EndpointPicker, type Pick, type PickRequest, type PickerOptions } from './picker.js';
import type { PromptReader } from './prompt.js';
import { loadProtos, type Protos } from './protos.js';
import type { PickerMessage } from './requests.js';
import {
  openExchange,
  serveExchange,
  type Answers,
  type EncodedOrMessage,
  type Exchange,
  type StreamCounters,
  type StreamEvents,
  type StreamPort,
} from './stream.js';
import { FIXED_ANSWERS, encodeEndpointAnswer, encodeStreamedBody } from './wire.js';

/** How the picker answers body chunks: as Envoy's FULL_DUPLEX_STREAMED mode needs, or as for STREAMED/BUFFERED. */
export type BodyMode = 'full-duplex' | 'buffered';
/** The gRPC server implementations the picker can run on. */
export const GRPC_TRANSPORTS = ['node-http2', 'grpc-js'] as const;
export type GrpcTransport = (typeof GRPC_TRANSPORTS)[number];
/** Where the picker puts its answer. */
export type AnswerWith = 'both' | 'metadata' | 'header';

export interface HandlerOptions {
  bodyMode?: BodyMode;
  answerWith?: AnswerWith;
  /** A pino logger, such as @extlb/telemetry's createLogger() makes. Default: logs nothing. */
  logger?: Logger;
}

export interface PickerServerOptions extends PickerOptions, HandlerOptions {
  /** `host:port` to listen on; port 0 picks a free one. Default `127.0.0.1:0`. */
  listen?: string;
  /**
   * The gRPC server implementation: the project's own minimal one on node:http2 (default; it
   * costs a decision less CPU, see the picker bench), or @grpc/grpc-js.
   */
  transport?: GrpcTransport;
  /** `host:port` of an HTTP listener serving GET /metrics; port 0 picks a free one. Default: none. */
  metricsListen?: string;
  /** Where the picker's metrics are registered, one picker per registry. Default: a new registry with the process metrics. */
  registry?: Registry;
  /** The load-aware profile without `signals`: how to scrape the endpoints' metrics. Default `DEFAULT_SCRAPE` with vLLM's names. */
  scrape?: Partial<ScrapeOptions>;
}

export interface RunningPicker {
  /** `host:port` actually bound. */
  address: string;
  port: number;
  /** `host:port` the metrics listener bound, when `metricsListen` was given. */
  metricsAddress?: string;
  picker: EndpointPicker;
  /** The gRPC server implementation serving it. */
  transport: GrpcTransport;
  /** The registry the picker's metrics are on. */
  registry: Registry;
  /** The load-aware profile's signals (the scraper it started, or the ones given). */
  signals?: SignalSource;
  close(): Promise<void>;
}

/** Addresses one log line names at most: a pool may hold thousands, and every change is logged. */
const LOGGED_ENDPOINTS = 64;

function poolFields(endpoints: readonly Endpoint[]): Record<string, unknown> {
  const fields: Record<string, unknown> = { count: endpoints.length, endpoints: endpoints.slice(0, LOGGED_ENDPOINTS).map((e) => e.address) };
  if (endpoints.length > LOGGED_ENDPOINTS) fields.omitted = endpoints.length - LOGGED_ENDPOINTS;
  return fields;
}

/** The answer to request headers naming `value`, in the places `answerWith` asks for. */
export function endpointAnswer(value: string, answerWith: AnswerWith): ProcessingResponse {
  const useHeader = answerWith !== 'metadata';
  const response: ProcessingResponse = {
    request_headers: {
      response: {
        // The header is always overwritten or removed, so a client can never pick an endpoint by sending it.
        header_mutation: useHeader ? { set_headers: [setHeader(EPP.header, value)] } : { remove_headers: [EPP.header] },
        clear_route_cache: true,
      },
    },
  };
  if (answerWith !== 'header') {
    response.dynamic_metadata = {
      fields: { [EPP.namespace]: { structValue: { fields: { [EPP.endpointKey]: { stringValue: value } } } } },
    };
  }
  return response;
}

/** How an exchange writes its answers: as messages for protobuf.js, or as bytes encoded once (`wire.ts`). */
interface AnswerCodec {
  endpoints(value: string): EncodedOrMessage;
  body(path: 'request' | 'response', body: Uint8Array, endOfStream: boolean): EncodedOrMessage;
  requestTrailers: EncodedOrMessage;
  responseHeaders: EncodedOrMessage;
  responseTrailers: EncodedOrMessage;
}

function messageCodec(bodyMode: BodyMode, answerWith: AnswerWith): AnswerCodec {
  return {
    endpoints: (value) => endpointAnswer(value, answerWith),
    body: (path, body, endOfStream) => {
      const response = bodyMode === 'buffered' ? {} : { body_mutation: { streamed_response: { body, end_of_stream: endOfStream } } };
      return path === 'request' ? { request_body: { response } } : { response_body: { response } };
    },
    requestTrailers: { request_trailers: {} },
    responseHeaders: { response_headers: { response: {} } },
    responseTrailers: { response_trailers: {} },
  };
}

/** Encoded answers to request headers kept per endpoint list: lists repeat, so most decisions reuse bytes. */
const ENCODED_ANSWERS_KEPT = 4096;

function encodedCodec(bodyMode: BodyMode, answerWith: AnswerWith): AnswerCodec {
  const answers = new Map<string, Buffer>();
  return {
    endpoints(value) {
      let bytes = answers.get(value);
      if (bytes === undefined) {
        // Dropping all at the bound keeps this a plain Map; a pool's lists refill it in a moment.
        if (answers.size >= ENCODED_ANSWERS_KEPT) answers.clear();
        bytes = encodeEndpointAnswer(value, answerWith);
        answers.set(value, bytes);
      }
      return bytes;
    },
    body: (path, body, endOfStream) =>
      bodyMode === 'buffered' ? (path === 'request' ? FIXED_ANSWERS.requestBody : FIXED_ANSWERS.responseBody) : encodeStreamedBody(path, body, endOfStream),
    requestTrailers: FIXED_ANSWERS.requestTrailers,
    responseHeaders: FIXED_ANSWERS.responseHeaders,
    responseTrailers: FIXED_ANSWERS.responseTrailers,
  };
}

const NONE: Answers = { responses: [] };
const NO_HEADERS: PickerMessage & { phase: 'request_headers' } = { phase: 'request_headers', headers: new Map(), subset: undefined, endOfStream: true };

/**
 * One HTTP request as the picker sees it: a pick, then pass-through. The pick is made on the
 * request headers, unless the picker's profile reads the prompt: then it waits for the first bytes
 * of the request body (at most what the prompt reader asks for, or the end of the body), holding
 * the messages received meanwhile, and answers them in order once it has decided.
 */
class PickerExchange implements Exchange {
  private pick: Pick | undefined;
  /** The request headers, once received (a decision is never made before them). */
  private headers: (PickerMessage & { phase: 'request_headers' }) | undefined;
  private prompt: PromptReader | undefined;
  /** Messages received while the decision waits (for the body, or for capacity), answered after it. */
  private held: PickerMessage[] | undefined;
  private pending: Promise<Answers> | undefined;
  private sink: ((answers: Answers) => void) | undefined;
  private released = false;

  constructor(
    private readonly picker: EndpointPicker,
    private readonly codec: AnswerCodec,
  ) {}

  bind(sink: (answers: Answers) => void): void {
    this.sink = sink;
  }

  answer(message: PickerMessage): Answers {
    if (this.held) {
      this.held.push(message);
      if (this.prompt === undefined || this.pending) return NONE;
      if (message.phase === 'request_body') {
        this.prompt.push(message.body);
        if (!this.prompt.done() && !message.endOfStream) return NONE;
      }
      // Enough of the body, its end, or a message that means the request has gone on: decide now.
      return this.decide();
    }
    if (message.phase === 'request_headers') {
      this.headers = message;
      const prompt = this.picker.promptReader();
      this.held = [];
      if (prompt !== undefined && !message.endOfStream) {
        this.prompt = prompt;
        return NONE;
      }
      return this.decide();
    }
    return { responses: [this.passThrough(message)] };
  }

  flush(): Answers | Promise<Answers> {
    // The sink sends the answers once the wait ends; the stream closes after that.
    if (this.pending) return this.pending.then(() => NONE);
    if (this.held && this.pick === undefined) return this.decide();
    return NONE;
  }

  private decide(): Answers {
    const { headers, subset } = this.headers ?? NO_HEADERS;
    const request: PickRequest = subset === undefined ? { headers } : { headers, subset };
    const prompt = this.prompt?.result();
    if (prompt) request.prompt = prompt;
    this.prompt = undefined;
    const pick = this.picker.pickOrWait(request);
    if (!(pick instanceof Promise)) return this.decided(pick);
    // The picker's waits end in a decision (a 429 at the deadline), never a rejection.
    this.pending = pick.then((p) => this.decided(p));
    this.pending.then(
      (answers) => this.sink?.(answers),
      () => undefined,
    );
    return NONE;
  }

  private decided(pick: Pick): Answers {
    if (this.released) {
      pick.finish();
      return NONE;
    }
    this.pick = pick;
    const held = this.held ?? [];
    this.held = undefined;
    const decision = pick.decision;
    if (decision.kind === 'reject') {
      const immediate = { status: { code: decision.status }, details: decision.reason, body: Buffer.from(`${decision.reason}\n`) };
      return { responses: [{ immediate_response: immediate }], last: true };
    }
    const responses: EncodedOrMessage[] = [this.codec.endpoints(joinAddresses(decision.endpoints))];
    for (const m of held) responses.push(this.passThrough(m));
    return { responses };
  }

  private passThrough(message: PickerMessage): EncodedOrMessage {
    switch (message.phase) {
      case 'request_headers':
        throw new Error('request headers are answered by the decision');
      case 'request_body':
        return this.codec.body('request', message.body, message.endOfStream);
      case 'request_trailers':
        return this.codec.requestTrailers;
      case 'response_headers':
        if (message.served !== undefined) this.picker.recordServed(message.served);
        return this.codec.responseHeaders;
      case 'response_body':
        return this.codec.body('response', message.body, message.endOfStream);
      case 'response_trailers':
        return this.codec.responseTrailers;
    }
  }

  release(): void {
    this.released = true;
    this.pick?.finish();
    this.pick = undefined;
  }
}

/** The answer's value: the endpoints' addresses, comma-separated. */
function joinAddresses(endpoints: readonly Endpoint[]): string {
  let value = (endpoints[0] as Endpoint).address;
  for (let i = 1; i < endpoints.length; i++) value += `,${(endpoints[i] as Endpoint).address}`;
  return value;
}

/** Opens one ext_proc stream's exchange on a stream port, for any gRPC server. */
export type OpenProcessStream = (port: StreamPort) => StreamEvents;

/**
 * The ext_proc `Process` streams of a picker, transport apart. With `encoded` (as `startPicker`
 * does) the answers leave as bytes encoded once per endpoint list; without it they are messages,
 * for a server whose own code looks at them.
 */
export function processStreams(picker: EndpointPicker, options: HandlerOptions & { encoded?: boolean } = {}): OpenProcessStream {
  const bodyMode = options.bodyMode ?? 'full-duplex';
  const answerWith = options.answerWith ?? 'both';
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const counters: StreamCounters = {
    recordInvalidMessage(details) {
      picker.recordInvalidMessage();
      logger.warn({ details }, 'ext_proc stream ended: invalid message');
    },
    recordInternalError(details) {
      picker.recordInternalError();
      logger.error({ details }, 'ext_proc stream ended: the picker failed');
    },
  };
  const codec = options.encoded ? encodedCodec(bodyMode, answerWith) : messageCodec(bodyMode, answerWith);
  return (port) => openExchange(port, new PickerExchange(picker, codec), counters);
}

/** The ext_proc `Process` handler for a picker on @grpc/grpc-js; mount it with `loadProtos().extProc`, which never fails to decode. */
export function createProcessHandler(
  picker: EndpointPicker,
  options: HandlerOptions & { encoded?: boolean } = {},
): grpc.handleBidiStreamingCall<unknown, EncodedOrMessage> {
  const open = processStreams(picker, options);
  return (call) => serveExchange(call, open);
}

function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Splits `host:port` / `[v6]:port`, as the CLI and the conformance kit accept them. */
export function splitHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`"${text}" is not HOST:PORT`);
  return { host: (m[1] ?? m[2]) as string, port };
}

/**
 * Starts the reference picker: ext_proc plus the health services on one gRPC server, and, with
 * `metricsListen`, an HTTP listener for Prometheus.
 */
export async function startPicker(options: PickerServerOptions): Promise<RunningPicker> {
  const { host, port } = splitHostPort(options.listen ?? '127.0.0.1:0');
  const metricsAt = options.metricsListen === undefined ? undefined : splitHostPort(options.metricsListen);
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const protos = loadProtos();
  const scrapeOptions: ScrapeOptions = { ...DEFAULT_SCRAPE, names: SERVER_METRICS.vllm, ...options.scrape };
  const scraper = options.strategy === 'load-aware' && options.signals === undefined ? new MetricsScraper(options.pool, scrapeOptions).start() : undefined;
  const signals = options.signals ?? scraper;
  const picker = new EndpointPicker(signals ? { ...options, signals } : options);
  const health = healthService(
    pickerHealth(
      () => picker.ready(),
      (l) => options.pool.onChange(l),
    ),
  );
  const transport = options.transport ?? 'node-http2';
  const open = processStreams(picker, { ...options, logger, encoded: true });
  const server = transport === 'grpc-js' ? await grpcJsServer(host, port, protos, open, health) : await h2Server(host, port, protos, open, health);
  const registry = options.registry ?? createRegistry();
  let metricsServer: Server | undefined;
  let metricsAddress: string | undefined;
  if (metricsAt) {
    try {
      const metrics = await listenForMetrics(registry, metricsAt.host, metricsAt.port, logger);
      metricsServer = metrics.server;
      metricsAddress = formatHostPort(metricsAt.host, metrics.port);
    } catch (err) {
      server.forceClose();
      throw new Error(`cannot serve metrics on ${options.metricsListen}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  registerPickerMetrics(registry, picker, options.pool, signals);
  const unsubscribe = [
    options.pool.onChange((endpoints) => logger.info(poolFields(endpoints), 'pool endpoints changed')),
    options.pool.onError((err) => logger.warn({ error: err.message }, 'endpoint reload failed, keeping the previous endpoints')),
  ];
  const address = formatHostPort(host, server.port);
  // What the load-aware profile scrapes, so an operator can see where its signals come from.
  const scraping = scraper ? { scrape: { port: scrapeOptions.port ?? "each endpoint's own", path: scrapeOptions.path, names: scrapeOptions.names } } : {};
  logger.info(
    {
      address,
      metricsAddress,
      transport,
      strategy: picker.strategyName,
      maxEndpoints: picker.maxEndpoints,
      ...scraping,
      ...poolFields(options.pool.endpoints()),
    },
    'listening',
  );
  return {
    address,
    port: server.port,
    ...(metricsAddress ? { metricsAddress } : {}),
    picker,
    transport,
    registry,
    ...(signals ? { signals } : {}),
    async close() {
      for (const stop of unsubscribe) stop();
      picker.close();
      await scraper?.close();
      health.closeWatches();
      metricsServer?.close();
      await server.close();
      logger.info('stopped');
    },
  };
}

/** The gRPC server under the picker, whichever implementation it is. */
interface ListeningServer {
  port: number;
  /** Lets open streams finish for a moment, then cuts them: a stuck client must not hang shutdown. */
  close(): Promise<void>;
  forceClose(): void;
}

/** Grace given to open streams at shutdown. */
const SHUTDOWN_GRACE_MS = 2000;

async function h2Server(host: string, port: number, protos: Protos, open: OpenProcessStream, health: HealthService): Promise<ListeningServer> {
  const process = protos.extProc.Process as grpc.MethodDefinition<unknown, unknown>;
  const check = protos.health.Check as grpc.MethodDefinition<unknown, unknown>;
  const watch = protos.health.Watch as grpc.MethodDefinition<unknown, unknown>;
  const methods = new Map<string, H2Method>([
    [process.path, { decode: process.requestDeserialize, encode: process.responseSerialize, open }],
    [check.path, unaryMethod(check.requestDeserialize, check.responseSerialize, (r) => health.check(r as HealthRequest))],
    [
      watch.path,
      serverStreamingMethod(watch.requestDeserialize, watch.responseSerialize, (r, port) =>
        health.watch(r as HealthRequest, { send: (m) => port.send(m), end: () => port.end() }),
      ),
    ],
  ]);
  const server = new H2GrpcServer(methods, SHUTDOWN_GRACE_MS);
  return { port: await server.listen(host, port), close: () => server.close(), forceClose: () => server.forceClose() };
}

async function grpcJsServer(host: string, port: number, protos: Protos, open: OpenProcessStream, health: HealthService): Promise<ListeningServer> {
  // Channelz's per-call bookkeeping serves no one here, and every request is a new ext_proc stream.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  server.addService(protos.extProc, { Process: (call: grpc.ServerDuplexStream<unknown, EncodedOrMessage>) => serveExchange(call, open) });
  server.addService(protos.health, grpcJsHealth(health));
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(formatHostPort(host, port), grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
    forceClose: () => server.forceShutdown(),
  };
}
