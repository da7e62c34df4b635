// The ext_proc filter that asks an endpoint picker, and its per-route overrides. One filter per
// listener, disabled by default: only routes to an External backend turn it on, each with its own
// picker cluster, so a rule that splits traffic calls only the picker of the backend it selected.
import { EPP } from '@extlb/types';
import type { BodyMode, External } from '../read/index.js';
import { type Backend, usesPicker } from '../resolve/index.js';
import { type BuildContext, serviceHost } from './context.js';
import { envoyDuration } from './proto-duration.js';
import { NAME, TYPE } from './names.js';
import type { AnyOf, ExtProcV3, HcmV3, RouteV3 } from './types.js';

const BODY: Record<BodyMode, ExtProcV3.ProcessingMode_BodySendMode> = {
  None: 'NONE',
  Streamed: 'STREAMED',
  Buffered: 'BUFFERED',
  BufferedPartial: 'BUFFERED_PARTIAL',
  FullDuplexStreamed: 'FULL_DUPLEX_STREAMED',
};

/** Envoy rejects FULL_DUPLEX_STREAMED bodies unless the trailers of that direction are sent too. */
function processingMode(ext: External): ExtProcV3.ProcessingMode {
  const trailer = (mode: BodyMode): ExtProcV3.ProcessingMode_HeaderSendMode => (mode === 'FullDuplexStreamed' ? 'SEND' : 'SKIP');
  return {
    request_header_mode: 'SEND',
    response_header_mode: 'SEND',
    request_body_mode: BODY[ext.requestBodyMode],
    response_body_mode: BODY[ext.responseBodyMode],
    request_trailer_mode: trailer(ext.requestBodyMode),
    response_trailer_mode: trailer(ext.responseBodyMode),
  };
}

const METADATA_OPTIONS: ExtProcV3.MetadataOptions = {
  // Without a receiving namespace Envoy drops the picker's dynamic metadata, endpoint list included.
  receiving_namespaces: { untyped: [EPP.namespace] },
  // Forwarding lets the picker read x-gateway-destination-endpoint-served on the response path.
  forwarding_namespaces: { untyped: [EPP.namespace] },
};

/** A duration as Gateway API writes it: `200ms`, `1s`, `1m30s`. */
function shortDuration(ms: number): string {
  const units: [string, number][] = [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ];
  let rest = ms;
  let out = '';
  for (const [unit, size] of units) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out || '0s';
}

/**
 * The ext_proc filter a backend's picker is asked through. Envoy cannot set message_timeout per
 * route (nor, before 1.35, failure_mode_allow), so backends that need different values get
 * different filters, named after those values; each route enables the one of its backend.
 */
export function extProcFilterName(b: Backend, ctx: BuildContext): string {
  const ext = b.lb.external as External;
  const failOpen = ctx.options.envoy === 'legacy' && ext.failureMode === 'FailOpen';
  return `${NAME.extProc}/${shortDuration(ext.messageTimeoutMs)}${failOpen ? '/fail-open' : ''}`;
}

/**
 * An ext_proc filter, disabled until a route enables it. Envoy requires a valid top-level
 * grpc_service even though every route that enables the filter overrides it, so it points at one
 * of the picker clusters that use it.
 */
export function extProcFilter(b: Backend, defaultCluster: string, ctx: BuildContext): HcmV3.HttpFilter {
  const ext = b.lb.external as External;
  return {
    name: extProcFilterName(b, ctx),
    typed_config: {
      '@type': TYPE.extProc,
      grpc_service: { envoy_grpc: { cluster_name: defaultCluster } },
      failure_mode_allow: ctx.options.envoy === 'legacy' && ext.failureMode === 'FailOpen',
      processing_mode: { request_header_mode: 'SKIP', response_header_mode: 'SKIP' },
      message_timeout: envoyDuration(ext.messageTimeoutMs),
      metadata_options: METADATA_OPTIONS,
      // The picker clears the route cache with its answer; re-routing could pick another weighted
      // backend whose picker was never asked, so the route chosen before the call is kept.
      route_cache_action: 'RETAIN',
    },
    disabled: true,
  };
}

/** Removes the client's own endpoint header before any picker runs, so a client never picks. */
export function stripEndpointHeaderFilter(): HcmV3.HttpFilter {
  return { name: NAME.headerMutation, typed_config: { '@type': TYPE.headerMutation, mutations: { request_mutations: [{ remove: EPP.header }] } } };
}

/**
 * Per-route (or per weighted cluster) config that enables a backend's filter for its picker.
 * Envoy older than 1.35 has no per-route failure_mode_allow; legacy output sets it per filter.
 * Made once per backend and shared by every route and match that sends to it.
 */
function extProcOverrides(b: Backend, ctx: BuildContext): AnyOf<typeof TYPE.extProcPerRoute> {
  const made = ctx.perRoute.get(b.key);
  if (made) return made;
  const ext = b.lb.external as External;
  const set = b.pickers === undefined ? undefined : ctx.gateway.pickerSets[b.pickers];
  const first = set?.pickers[0];
  const authority = first ? `${serviceHost(ctx, first.namespace, first.service)}:${first.port}` : '';
  const overrides: ExtProcV3.ExtProcOverrides = {
    processing_mode: processingMode(ext),
    grpc_service: { envoy_grpc: { cluster_name: b.pickers ?? '', authority } },
  };
  if (ctx.options.envoy !== 'legacy') overrides.failure_mode_allow = ext.failureMode === 'FailOpen';
  const config: AnyOf<typeof TYPE.extProcPerRoute> = { '@type': TYPE.extProcPerRoute, overrides };
  ctx.perRoute.set(b.key, config);
  return config;
}

/** A route's or weighted cluster's `typed_per_filter_config`: filter name → its per-route config. */
export type TypedPerFilterConfig = NonNullable<RouteV3.Route['typed_per_filter_config']>;

const DISABLED: AnyOf<typeof TYPE.extProcPerRoute> = { '@type': TYPE.extProcPerRoute, disabled: true };

/**
 * The typed_per_filter_config that makes a request to `b` ask its picker and no other: its own
 * filter enabled with its picker cluster and, when the route level enables another picker filter
 * (`routeFilter`), that one turned off. Filters the route leaves alone stay disabled by default, so
 * each entry carries at most two configs however many pickers the route's backends use: the
 * output grows linearly with the backends, not with their square.
 */
export function extProcConfig(b: Backend | undefined, routeFilter: string | undefined, ctx: BuildContext): TypedPerFilterConfig {
  const own = b && usesPicker(b) ? extProcFilterName(b, ctx) : undefined;
  const out: TypedPerFilterConfig = {};
  if (own && b) out[own] = extProcOverrides(b, ctx);
  if (routeFilter !== undefined && routeFilter !== own) out[routeFilter] = DISABLED;
  return out;
}
