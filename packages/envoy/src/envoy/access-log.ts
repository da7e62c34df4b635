// Access logs: each HTTP connection manager and each tcp_proxy writes one line per request (per
// connection for TCP and TLS) to the proxy's standard output with Envoy's stdout logger, so
// `kubectl logs` of a Gateway's Pods shows what it did. The JSON form names the request, its
// response, its timings, the upstream that answered, the route and the Gateway, and what the
// endpoint picker said; a GatewayParameters can ask for its own text format, or for none.
//
// Every value is an Envoy command operator (configuration/observability/access_log/usage.rst) or a
// constant the converter knows. Envoy has no per-request "failed open" flag: when a picker fails
// open, ext_proc carries on and override_host falls back. The line shows the parts instead: the
// backend's failure mode (cluster metadata, written by the converter), the picker call as ext_proc
// records it in filter state (its gRPC status) and an empty endpoint list.
import { EPP, GROUP } from '@extlb/types';
import type { Pb } from './types.js';
import type { BuildContext } from './context.js';
import type { AccessLog as AccessLogV3 } from '../generated/envoy/config/accesslog/v3.js';

export const STDOUT_LOGGER = 'envoy.access_loggers.stdout';
const STDOUT_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';

/** The cluster metadata namespace and key that say a backend's picker failure mode (FailOpen / FailClose). */
export const FAILURE_MODE_METADATA = { namespace: GROUP, key: 'picker_failure_mode' } as const;

/** What an HTTP server's log line says about pickers: which ext_proc filters it has, and what its target records. */
export interface PickerLogging {
  /** The server's ext_proc filter names (each keeps its record in filter state under its name). */
  filters: string[];
  /** Whether a backend reports the served endpoint (selected_host_key, Envoy 1.38). */
  served: boolean;
}

function stdout(logFormat: { json_format: Pb.Struct } | { text_format_source: { inline_string: string } }): AccessLogV3[] {
  return [{ name: STDOUT_LOGGER, typed_config: { '@type': STDOUT_TYPE, log_format: logFormat } }];
}

/** A user's text format, ending with the newline Envoy does not add. */
function textLog(text: string): AccessLogV3[] {
  return stdout({ text_format_source: { inline_string: text.endsWith('\n') ? text : `${text}\n` } });
}

/** The access_log of an HTTP connection manager. */
export function httpAccessLog(ctx: BuildContext, pickers: PickerLogging | undefined): AccessLogV3[] {
  const log = ctx.gateway.accessLog;
  if (log.format === 'Off') return [];
  if (log.format === 'Text') return textLog(log.text);
  const line: Pb.Struct = {
    start_time: '%START_TIME%',
    gateway: ctx.gateway.name,
    route: '%ROUTE_NAME%',
    method: '%REQ(:METHOD)%',
    authority: '%REQ(:AUTHORITY)%',
    path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
    protocol: '%PROTOCOL%',
    response_code: '%RESPONSE_CODE%',
    response_flags: '%RESPONSE_FLAGS%',
    response_code_details: '%RESPONSE_CODE_DETAILS%',
    duration_ms: '%DURATION%',
    request_duration_ms: '%REQUEST_DURATION%',
    response_duration_ms: '%RESPONSE_DURATION%',
    upstream_service_time_ms: '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%',
    bytes_received: '%BYTES_RECEIVED%',
    bytes_sent: '%BYTES_SENT%',
    downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
    request_id: '%REQ(X-REQUEST-ID)%',
    upstream_cluster: '%UPSTREAM_CLUSTER%',
    upstream_host: '%UPSTREAM_HOST%',
    upstream_attempts: '%UPSTREAM_REQUEST_ATTEMPT_COUNT%',
  };
  // %UPSTREAM_HOSTS_ATTEMPTED% is a 1.38 operator; an older Envoy rejects a format that names it.
  if (ctx.options.envoy === '1.38') line.upstream_hosts_attempted = '%UPSTREAM_HOSTS_ATTEMPTED%';
  if (pickers) {
    // The list as the picker returned it (dynamic metadata), and as a header (Header sources, and
    // the legacy ORIGINAL_DST target): the client's own copy is stripped before any picker runs.
    line.picker_endpoints = `%DYNAMIC_METADATA(${EPP.namespace}:${EPP.endpointKey})%`;
    line.picker_endpoints_header = `%REQ(${EPP.header})%`;
    if (pickers.served) line.served_endpoint = `%DYNAMIC_METADATA(${EPP.namespace}:${EPP.servedKey})%`;
    line.picker_failure_mode = `%CLUSTER_METADATA(${FAILURE_MODE_METADATA.namespace}:${FAILURE_MODE_METADATA.key})%`;
    line.picker_calls = Object.fromEntries(pickers.filters.map((f) => [f, `%FILTER_STATE(${f}:TYPED)%`]));
  }
  return stdout({ json_format: line });
}

/** The access_log of a tcp_proxy (a TCP or TLS stream): one line per connection. */
export function tcpAccessLog(ctx: BuildContext, route: string): AccessLogV3[] {
  const log = ctx.gateway.accessLog;
  if (log.format === 'Off') return [];
  if (log.format === 'Text') return textLog(log.text);
  return stdout({
    json_format: {
      start_time: '%START_TIME%',
      gateway: ctx.gateway.name,
      route,
      requested_server_name: '%REQUESTED_SERVER_NAME%',
      downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
      bytes_received: '%BYTES_RECEIVED%',
      bytes_sent: '%BYTES_SENT%',
      duration_ms: '%DURATION%',
      response_flags: '%RESPONSE_FLAGS%',
      upstream_cluster: '%UPSTREAM_CLUSTER%',
      upstream_host: '%UPSTREAM_HOST%',
      connection_termination_details: '%CONNECTION_TERMINATION_DETAILS%',
    },
  });
}
