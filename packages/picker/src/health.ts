/**
 * The gRPC Health Checking Protocol as the Endpoint Picker Protocol asks for it: `liveness`,
 * `readiness` and `envoy.service.ext_proc.v3.ExternalProcessor` (the same as readiness), plus the
 * empty name for the server as a whole.
 */
import * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';

export const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
/** The service names the Endpoint Picker Protocol asks for. */
export const HEALTH_SERVICES = Object.values(EPP.healthServices);
/** The gRPC Health Checking Protocol's name for the server as a whole. */
export const WHOLE_SERVER = '';

export interface HealthState {
  /** The status of a service name, or undefined for a name this server does not know. */
  status(service: string): number | undefined;
  /** Called whenever a status may have changed; returns an unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export function pickerHealth(ready: () => boolean, subscribe: (listener: () => void) => () => void): HealthState {
  return {
    status(service) {
      if (service === EPP.healthServices.liveness) return SERVING_STATUS.SERVING;
      if (service === WHOLE_SERVER || service === EPP.healthServices.readiness || service === EPP.healthServices.extProc) {
        return ready() ? SERVING_STATUS.SERVING : SERVING_STATUS.NOT_SERVING;
      }
      return undefined;
    },
    subscribe,
  };
}

export interface HealthRequest {
  service?: string;
}
export interface HealthResponse {
  status: number;
}

/** Where a Watch sends its statuses, whichever gRPC server carries it. */
export interface WatchPort {
  send(response: HealthResponse): void;
  end(): void;
}

/** The health service apart from any transport; `closeWatches` ends every open Watch. */
export interface HealthService {
  check(request: HealthRequest): { response: HealthResponse } | { code: grpc.status; details: string };
  /** Starts a Watch; returns what stops it when its call ends. */
  watch(request: HealthRequest, port: WatchPort): () => void;
  closeWatches(): void;
}

export function healthService(state: HealthState): HealthService {
  const watches = new Set<WatchPort>();
  return {
    check(request) {
      const service = request.service ?? '';
      const status = state.status(service);
      return status === undefined ? { code: grpc.status.NOT_FOUND, details: `unknown service "${service}"` } : { response: { status } };
    },
    watch(request, port) {
      const service = request.service ?? '';
      let last = -1;
      const send = (): void => {
        const status = state.status(service) ?? SERVING_STATUS.SERVICE_UNKNOWN;
        // Watch reports changes only, as the protocol asks.
        if (status !== last) {
          last = status;
          port.send({ status });
        }
      };
      const unsubscribe = state.subscribe(send);
      watches.add(port);
      send();
      return () => {
        unsubscribe();
        watches.delete(port);
      };
    },
    closeWatches() {
      for (const port of watches) port.end();
      watches.clear();
    },
  };
}

/** The health service's handlers on @grpc/grpc-js. */
export function grpcJsHealth(health: HealthService): grpc.UntypedServiceImplementation {
  const check: grpc.handleUnaryCall<HealthRequest, HealthResponse> = (call, callback) => {
    const answer = health.check(call.request);
    if ('response' in answer) callback(null, answer.response);
    else callback(answer);
  };
  const watch: grpc.handleServerStreamingCall<HealthRequest, HealthResponse> = (call) => {
    const stop = health.watch(call.request, { send: (r) => void call.write(r), end: () => call.end() });
    call.on('cancelled', stop);
    call.on('close', stop);
  };
  return { Check: check, Watch: watch } as grpc.UntypedServiceImplementation;
}

/** Handlers for the `grpc.health.v1.Health` service on @grpc/grpc-js; `closeWatches` ends every open Watch stream. */
export function healthHandlers(state: HealthState): { handlers: grpc.UntypedServiceImplementation; closeWatches(): void } {
  const health = healthService(state);
  return { handlers: grpcJsHealth(health), closeWatches: () => health.closeWatches() };
}
