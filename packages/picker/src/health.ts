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

interface HealthRequest {
  service?: string;
}
interface HealthResponse {
  status: number;
}

/** Handlers for the `grpc.health.v1.Health` service; `closeWatches` ends every open Watch stream. */
export function healthHandlers(state: HealthState): { handlers: grpc.UntypedServiceImplementation; closeWatches(): void } {
  const watches = new Set<grpc.ServerWritableStream<HealthRequest, HealthResponse>>();
  const check: grpc.handleUnaryCall<HealthRequest, HealthResponse> = (call, callback) => {
    const service = call.request.service ?? '';
    const status = state.status(service);
    if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${service}"` });
    else callback(null, { status });
  };
  const watchCall: grpc.handleServerStreamingCall<HealthRequest, HealthResponse> = (call) => {
    const service = call.request.service ?? '';
    let last = -1;
    const send = (): void => {
      const status = state.status(service) ?? SERVING_STATUS.SERVICE_UNKNOWN;
      // Watch reports changes only, as the protocol asks.
      if (status !== last) {
        last = status;
        call.write({ status });
      }
    };
    const unsubscribe = state.subscribe(send);
    watches.add(call);
    const stop = (): void => {
      unsubscribe();
      watches.delete(call);
    };
    call.on('cancelled', stop);
    call.on('close', stop);
    send();
  };
  return {
    handlers: { Check: check, Watch: watchCall } as grpc.UntypedServiceImplementation,
    closeWatches() {
      for (const call of watches) call.end();
      watches.clear();
    },
  };
}
