/**
 * The reference picker as an ext_proc gRPC server. One ext_proc stream is one HTTP request: the
 * picker decides on the request headers and answers at once — the ordered list in `envoy.lb`
 * dynamic metadata and/or the `x-gateway-destination-endpoint` header, always the same value —
 * or with an ImmediateResponse 503/429. In full-duplex streamed mode it then passes the body
 * through as streamed body responses; on the response path it reads the served endpoint.
 */
import * as grpc from '@grpc/grpc-js';
import {
  DESTINATION_ENDPOINT_KEY,
  DESTINATION_ENDPOINT_SERVED_KEY,
  DESTINATION_ENDPOINT_SUBSET_KEY,
  LB_METADATA_NAMESPACE,
  SUBSET_HINT_NAMESPACE,
} from './codec.js';
import { healthHandlers, pickerHealth } from './health.js';
import { headerMap, setHeader, type HttpBody, type PbStruct, type ProcessingRequest, type ProcessingResponse } from './messages.js';
import { EndpointPicker, type Pick, type PickerOptions } from './picker.js';
import { loadProtos } from './protos.js';

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

/** Reads the subset hint: a list of strings, or (as some data planes send it) one comma-separated string. */
export function readSubsetHint(request: ProcessingRequest): string[] | undefined {
  const ns: PbStruct | undefined = request.metadata_context?.filter_metadata?.[SUBSET_HINT_NAMESPACE];
  const value = ns?.fields?.[DESTINATION_ENDPOINT_SUBSET_KEY];
  if (!value) return undefined;
  if (value.listValue) return (value.listValue.values ?? []).flatMap((v) => (typeof v.stringValue === 'string' ? [v.stringValue] : []));
  if (typeof value.stringValue === 'string')
    return value.stringValue
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  return [];
}

function readServed(request: ProcessingRequest): string | undefined {
  return request.metadata_context?.filter_metadata?.[LB_METADATA_NAMESPACE]?.fields?.[DESTINATION_ENDPOINT_SERVED_KEY]?.stringValue;
}

/** The answer to request headers naming `value`, in the places `answerWith` asks for. */
export function endpointAnswer(value: string, answerWith: AnswerWith): ProcessingResponse {
  const useHeader = answerWith !== 'metadata';
  const response: ProcessingResponse = {
    request_headers: {
      response: {
        // The header is always overwritten or removed, so a client can never pick an endpoint by sending it.
        header_mutation: useHeader ? { set_headers: [setHeader(DESTINATION_ENDPOINT_KEY, value)] } : { remove_headers: [DESTINATION_ENDPOINT_KEY] },
        clear_route_cache: true,
      },
    },
  };
  if (answerWith !== 'header') {
    response.dynamic_metadata = {
      fields: { [LB_METADATA_NAMESPACE]: { structValue: { fields: { [DESTINATION_ENDPOINT_KEY]: { stringValue: value } } } } },
    };
  }
  return response;
}

function bodyAnswer(body: HttpBody, mode: BodyMode): { response: object } {
  if (mode === 'buffered') return { response: {} };
  return { response: { body_mutation: { streamed_response: { body: body.body ?? Buffer.alloc(0), end_of_stream: body.end_of_stream ?? false } } } };
}

/** The ext_proc `Process` handler for a picker. */
export function createProcessHandler(
  picker: EndpointPicker,
  options: HandlerOptions = {},
): grpc.handleBidiStreamingCall<ProcessingRequest, ProcessingResponse> {
  const bodyMode = options.bodyMode ?? 'full-duplex';
  const answerWith = options.answerWith ?? 'both';
  return (call) => {
    let pick: Pick | undefined;
    let closed = false;
    const finish = (): void => {
      pick?.finish();
      pick = undefined;
    };
    const fail = (details: string): void => {
      if (closed) return;
      closed = true;
      finish();
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details });
    };
    call.on('data', (request: ProcessingRequest) => {
      if (closed) return;
      switch (request.request) {
        case 'request_headers': {
          if (pick) return fail('request_headers received twice on one stream');
          const headers = headerMap(request.request_headers?.headers);
          const subset = readSubsetHint(request);
          pick = picker.pick(subset === undefined ? { headers } : { headers, subset });
          const decision = pick.decision;
          if (decision.kind === 'reject') {
            call.write({ immediate_response: { status: { code: decision.status }, details: decision.reason, body: Buffer.from(`${decision.reason}\n`) } });
            closed = true;
            finish();
            call.end();
            return;
          }
          call.write(endpointAnswer(decision.endpoints.map((e) => e.address).join(','), answerWith));
          return;
        }
        case 'request_body':
          call.write({ request_body: bodyAnswer(request.request_body ?? {}, bodyMode) });
          return;
        case 'request_trailers':
          call.write({ request_trailers: {} });
          return;
        case 'response_headers': {
          const served = readServed(request);
          if (served !== undefined) picker.recordServed(served);
          call.write({ response_headers: { response: {} } });
          return;
        }
        case 'response_body':
          call.write({ response_body: bodyAnswer(request.response_body ?? {}, bodyMode) });
          return;
        case 'response_trailers':
          call.write({ response_trailers: {} });
          return;
        default:
          return fail('ProcessingRequest carries none of the request/response phases');
      }
    });
    call.on('end', () => {
      finish();
      if (!closed) {
        closed = true;
        call.end();
      }
    });
    call.on('cancelled', finish);
    call.on('error', finish);
  };
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
      (l) => options.source.onChange(l),
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
