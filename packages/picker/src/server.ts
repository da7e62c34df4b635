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
import { healthHandlers, pickerHealth } from './health.js';
import { setHeader, type ProcessingResponse } from './messages.js';
import { listenForMetrics, registerPickerMetrics } from './metrics.js';
import { EndpointPicker, type Pick, type PickerOptions } from './picker.js';
import { loadProtos } from './protos.js';
import type { PickerMessage } from './requests.js';
import { serveExchange, type Exchange, type StreamCounters } from './stream.js';

/** How the picker answers body chunks: as Envoy's FULL_DUPLEX_STREAMED mode needs, or as for STREAMED/BUFFERED. */
export type BodyMode = 'full-duplex' | 'buffered';
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
  /** `host:port` of an HTTP listener serving GET /metrics; port 0 picks a free one. Default: none. */
  metricsListen?: string;
  /** Where the picker's metrics are registered, one picker per registry. Default: a new registry with the process metrics. */
  registry?: Registry;
}

export interface RunningPicker {
  /** `host:port` actually bound. */
  address: string;
  port: number;
  /** `host:port` the metrics listener bound, when `metricsListen` was given. */
  metricsAddress?: string;
  picker: EndpointPicker;
  server: grpc.Server;
  /** The registry the picker's metrics are on. */
  registry: Registry;
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

function bodyAnswer(body: Buffer | Uint8Array, endOfStream: boolean, mode: BodyMode): { response: object } {
  if (mode === 'buffered') return { response: {} };
  return { response: { body_mutation: { streamed_response: { body, end_of_stream: endOfStream } } } };
}

/** One HTTP request as the picker sees it: a pick on the request headers, then pass-through. */
class PickerExchange implements Exchange {
  private pick: Pick | undefined;

  constructor(
    private readonly picker: EndpointPicker,
    private readonly bodyMode: BodyMode,
    private readonly answerWith: AnswerWith,
  ) {}

  answer(message: PickerMessage): { response: ProcessingResponse; last?: boolean } {
    switch (message.phase) {
      case 'request_headers': {
        const { headers, subset } = message;
        this.pick = this.picker.pick(subset === undefined ? { headers } : { headers, subset });
        const decision = this.pick.decision;
        if (decision.kind === 'reject') {
          const immediate = { status: { code: decision.status }, details: decision.reason, body: Buffer.from(`${decision.reason}\n`) };
          return { response: { immediate_response: immediate }, last: true };
        }
        return { response: endpointAnswer(decision.endpoints.map((e) => e.address).join(','), this.answerWith) };
      }
      case 'request_body':
        return { response: { request_body: bodyAnswer(message.body, message.endOfStream, this.bodyMode) } };
      case 'request_trailers':
        return { response: { request_trailers: {} } };
      case 'response_headers':
        if (message.served !== undefined) this.picker.recordServed(message.served);
        return { response: { response_headers: { response: {} } } };
      case 'response_body':
        return { response: { response_body: bodyAnswer(message.body, message.endOfStream, this.bodyMode) } };
      case 'response_trailers':
        return { response: { response_trailers: {} } };
    }
  }

  release(): void {
    this.pick?.finish();
    this.pick = undefined;
  }
}

/** The ext_proc `Process` handler for a picker; mount it with `loadProtos().extProc`, which never fails to decode. */
export function createProcessHandler(picker: EndpointPicker, options: HandlerOptions = {}): grpc.handleBidiStreamingCall<unknown, ProcessingResponse> {
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
  return (call) => serveExchange(call, new PickerExchange(picker, bodyMode, answerWith), counters);
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
  const picker = new EndpointPicker(options);
  // Channelz's per-call bookkeeping serves no one here, and every request is a new ext_proc stream.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  server.addService(protos.extProc, { Process: createProcessHandler(picker, { ...options, logger }) });
  const health = healthHandlers(
    pickerHealth(
      () => picker.ready(),
      (l) => options.pool.onChange(l),
    ),
  );
  server.addService(protos.health, health.handlers);
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(formatHostPort(host, port), grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  const registry = options.registry ?? createRegistry();
  let metricsServer: Server | undefined;
  let metricsAddress: string | undefined;
  if (metricsAt) {
    try {
      const metrics = await listenForMetrics(registry, metricsAt.host, metricsAt.port, logger);
      metricsServer = metrics.server;
      metricsAddress = formatHostPort(metricsAt.host, metrics.port);
    } catch (err) {
      server.forceShutdown();
      throw new Error(`cannot serve metrics on ${options.metricsListen}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  registerPickerMetrics(registry, picker, options.pool);
  const unsubscribe = [
    options.pool.onChange((endpoints) => logger.info(poolFields(endpoints), 'pool endpoints changed')),
    options.pool.onError((err) => logger.warn({ error: err.message }, 'endpoint reload failed, keeping the previous endpoints')),
  ];
  const address = formatHostPort(host, bound);
  logger.info(
    { address, metricsAddress, strategy: picker.strategyName, maxEndpoints: picker.maxEndpoints, ...poolFields(options.pool.endpoints()) },
    'listening',
  );
  return {
    address,
    port: bound,
    ...(metricsAddress ? { metricsAddress } : {}),
    picker,
    server,
    registry,
    async close() {
      for (const stop of unsubscribe) stop();
      health.closeWatches();
      metricsServer?.close();
      await new Promise<void>((resolve) => {
        // Give open streams a moment to finish, then cut them: a stuck client must not hang shutdown.
        const timer = setTimeout(() => server.forceShutdown(), 2000);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      logger.info('stopped');
    },
  };
}
