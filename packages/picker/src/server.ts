/**
 * The reference picker as an ext_proc gRPC server. One ext_proc stream is one HTTP request: the
 * picker decides on the request headers and answers at once — the ordered list in `envoy.lb`
 * dynamic metadata and/or the `x-gateway-destination-endpoint` header, always the same value —
 * or with an ImmediateResponse 503/429. In full-duplex streamed mode it then passes each body
 * chunk straight back as a streamed body response, as it arrives; on the response path it reads
 * the served endpoint. `stream.ts` stands between these answers and the network.
 */
import * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';
import { healthHandlers, pickerHealth } from './health.js';
import { setHeader, type ProcessingResponse } from './messages.js';
import { EndpointPicker, type Pick, type PickerOptions } from './picker.js';
import { loadProtos } from './protos.js';
import type { PickerMessage } from './requests.js';
import { serveExchange, type Exchange } from './stream.js';

/** How the picker answers body chunks: as Envoy's FULL_DUPLEX_STREAMED mode needs, or as for STREAMED/BUFFERED. */
export type BodyMode = 'full-duplex' | 'buffered';
/** Where the picker puts its answer. */
export type AnswerWith = 'both' | 'metadata' | 'header';

export interface HandlerOptions {
  bodyMode?: BodyMode;
  answerWith?: AnswerWith;
}

export interface PickerServerOptions extends PickerOptions, HandlerOptions {
  /** `host:port` to listen on; port 0 picks a free one. Default `127.0.0.1:0`. */
  listen?: string;
}

export interface RunningPicker {
  /** `host:port` actually bound. */
  address: string;
  port: number;
  picker: EndpointPicker;
  server: grpc.Server;
  close(): Promise<void>;
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
  return (call) => serveExchange(call, new PickerExchange(picker, bodyMode, answerWith), picker);
}

/** Splits `host:port` / `[v6]:port`, as the CLI and the conformance kit accept them. */
export function splitHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`"${text}" is not HOST:PORT`);
  return { host: (m[1] ?? m[2]) as string, port };
}

/** Starts the reference picker: ext_proc plus the health services on one gRPC server. */
export async function startPicker(options: PickerServerOptions): Promise<RunningPicker> {
  const { host, port } = splitHostPort(options.listen ?? '127.0.0.1:0');
  const protos = loadProtos();
  const picker = new EndpointPicker(options);
  // Channelz's per-call bookkeeping serves no one here, and every request is a new ext_proc stream.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  server.addService(protos.extProc, { Process: createProcessHandler(picker, options) });
  const health = healthHandlers(
    pickerHealth(
      () => picker.ready(),
      (l) => options.pool.onChange(l),
    ),
  );
  server.addService(protos.health, health.handlers);
  const bindHost = host.includes(':') ? `[${host}]` : host;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${bindHost}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    address: `${bindHost}:${bound}`,
    port: bound,
    picker,
    server,
    async close() {
      health.closeWatches();
      await new Promise<void>((resolve) => {
        // Give open streams a moment to finish, then cut them: a stuck client must not hang shutdown.
        const timer = setTimeout(() => server.forceShutdown(), 2000);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
