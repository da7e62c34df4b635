// The ext_proc filter that asks an endpoint picker, and its per-route overrides. One filter per
// listener, disabled by default: only routes to an External backend turn it on, each with its own
// picker cluster, so a rule that splits traffic calls only the picker of the backend it selected.
import type { JsonObject } from '../json.js';
import type { BodyMode, External } from '../read/index.js';
import type { Backend } from '../resolve/index.js';
import { type BuildContext, serviceHost } from './context.js';
import { envoyDuration } from './duration.js';
import { EPP, NAME, TYPE } from './names.js';

const BODY: Record<BodyMode, string> = {
  None: 'NONE',
  Streamed: 'STREAMED',
  Buffered: 'BUFFERED',
  BufferedPartial: 'BUFFERED_PARTIAL',
  FullDuplexStreamed: 'FULL_DUPLEX_STREAMED',
};

/** Envoy rejects FULL_DUPLEX_STREAMED bodies unless the trailers of that direction are sent too. */
function processingMode(ext: External): JsonObject {
  const trailer = (mode: BodyMode) => (mode === 'FullDuplexStreamed' ? 'SEND' : 'SKIP');
  return {
    request_header_mode: 'SEND',
    response_header_mode: 'SEND',
    request_body_mode: BODY[ext.requestBodyMode],
    response_body_mode: BODY[ext.responseBodyMode],
    request_trailer_mode: trailer(ext.requestBodyMode),
    response_trailer_mode: trailer(ext.responseBodyMode),
  };
}

const METADATA_OPTIONS = {
  // Without a receiving namespace Envoy drops the picker's dynamic metadata, endpoint list included.
  receiving_namespaces: { untyped: [EPP.namespace] },
  // Forwarding lets the picker read x-gateway-destination-endpoint-served on the response path.
  forwarding_namespaces: { untyped: [EPP.namespace] },
};

/**
 * The listener's ext_proc filter. Envoy requires a valid top-level grpc_service even though every
 * route that enables the filter overrides it, so it points at one of the listener's picker clusters.
 * message_timeout cannot be overridden per route, so the longest requested timeout is used.
 */
export function extProcFilter(defaultCluster: string, messageTimeoutMs: number, failOpen: boolean): JsonObject {
  return {
    name: NAME.extProc,
    typed_config: {
      '@type': TYPE.extProc,
      grpc_service: { envoy_grpc: { cluster_name: defaultCluster } },
      failure_mode_allow: failOpen,
      processing_mode: { request_header_mode: 'SKIP', response_header_mode: 'SKIP' },
      message_timeout: envoyDuration(messageTimeoutMs),
      metadata_options: METADATA_OPTIONS,
      // The picker clears the route cache with its answer; re-routing could pick another weighted
      // backend whose picker was never asked, so the route chosen before the call is kept.
      route_cache_action: 'RETAIN',
    },
    disabled: true,
  };
}

/** Removes the client's own endpoint header before any picker runs, so a client never picks. */
export function stripEndpointHeaderFilter(): JsonObject {
  return { name: NAME.headerMutation, typed_config: { '@type': TYPE.headerMutation, mutations: { request_mutations: [{ remove: EPP.header }] } } };
}

/**
 * Per-route (or per weighted cluster) config that enables the filter for one backend's picker.
 * Envoy older than 1.35 has no per-route failure_mode_allow; legacy output sets it per listener.
 */
export function extProcOverrides(b: Backend, ctx: BuildContext): JsonObject {
  const ext = b.lb.external as External;
  const set = b.pickers === undefined ? undefined : ctx.gateway.pickerSets[b.pickers];
  const first = set?.pickers[0];
  const authority = first ? `${serviceHost(ctx, first.namespace, first.service)}:${first.port}` : '';
  const overrides: JsonObject = { processing_mode: processingMode(ext), grpc_service: { envoy_grpc: { cluster_name: b.pickers ?? '', authority } } };
  if (ctx.options.envoy !== 'legacy') overrides.failure_mode_allow = ext.failureMode === 'FailOpen';
  return { '@type': TYPE.extProcPerRoute, overrides };
}

export function extProcDisabled(): JsonObject {
  return { '@type': TYPE.extProcPerRoute, disabled: true };
}
