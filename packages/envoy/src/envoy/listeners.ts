// IR listeners to Envoy listeners and route configurations: one Envoy listener per port, one filter
// chain per server (TLS chosen by SNI), its HTTP filters, and one route table per server.
import { type Backend, type Listener, type Server, usesPicker } from '../resolve/index.js';
import { httpAccessLog, type PickerLogging } from './access-log.js';
import type { BuildContext } from './context.js';
import { corsFilter } from './cors.js';
import { extProcFilter, extProcFilterName, stripEndpointHeaderFilter } from './ext-proc.js';
import { NAME, statSegment, TYPE } from './names.js';
import { envoyRoute } from './routes.js';
import { streamChains, udpListener } from './streams.js';
import { downstreamTls } from './tls.js';
import type { HcmV3, ListenerV3, RouteV3 } from './types.js';
import { compare } from '../json.js';

/** The backends a server's routes send to or mirror to. */
function usedBackends(server: Server, ctx: BuildContext): Backend[] {
  const keys = new Set<string>();
  for (const vh of server.virtualHosts) {
    for (const r of vh.routes) {
      if (r.action.type !== 'forward') continue;
      for (const d of r.action.destinations) if (d.backend !== undefined) keys.add(d.backend);
      for (const m of r.action.mirrors) keys.add(m.backend);
    }
  }
  return [...keys].flatMap((k) => ctx.gateway.backends[k] ?? []);
}

/** Whether a route of the server answers cross-origin requests. */
function usesCors(server: Server): boolean {
  return server.virtualHosts.some((vh) => vh.routes.some((r) => r.action.type === 'forward' && r.action.cors !== undefined));
}

/**
 * The HTTP filters of a server: CORS first when a route uses it (a preflight it answers reaches no
 * picker); when a backend reads the endpoint header, strip the client's copy; then one ext_proc
 * filter per picker setting Envoy cannot change per route (disabled until a route enables it); the
 * router last.
 */
function httpFilters(server: Server, ctx: BuildContext): HcmV3.HttpFilter[] {
  const used = usedBackends(server, ctx);
  const pickers = used.filter(usesPicker);
  const filters: HcmV3.HttpFilter[] = [];
  if (usesCors(server)) filters.push(corsFilter());
  if (used.some((b) => b.lb.type === 'External')) filters.push(stripEndpointHeaderFilter());
  const byName = new Map<string, Backend[]>();
  for (const b of pickers) {
    const name = extProcFilterName(b, ctx);
    byName.set(name, [...(byName.get(name) ?? []), b]);
  }
  for (const [, backends] of [...byName].sort(([a], [b]) => compare(a, b))) {
    const defaultCluster = backends.map((b) => b.pickers ?? '').sort(compare)[0] ?? '';
    filters.push(extProcFilter(backends[0] as Backend, defaultCluster, ctx));
  }
  filters.push({ name: NAME.router, typed_config: { '@type': TYPE.router } });
  return filters;
}

/** What the server's log line says about its pickers; undefined when no route of it asks one. */
function pickerLogging(server: Server, filters: HcmV3.HttpFilter[], ctx: BuildContext): PickerLogging | undefined {
  const pickers = usedBackends(server, ctx).filter(usesPicker);
  if (pickers.length === 0) return undefined;
  return {
    filters: filters.map((f) => f.name).filter((n) => n.startsWith(`${NAME.extProc}/`)),
    served: ctx.options.envoy === '1.38' && pickers.some((b) => b.lb.external?.reportServedEndpoint === true),
  };
}

/** One filter chain: TLS for an HTTPS server, then the HTTP connection manager. */
function filterChain(server: Server, ctx: BuildContext): ListenerV3.FilterChain {
  const fc: ListenerV3.FilterChain = {};
  if (server.tls) {
    if (server.tls.hostname) fc.filter_chain_match = { server_names: [server.tls.hostname] };
    fc.transport_socket = downstreamTls(server.tls, ctx);
  }
  const filters = httpFilters(server, ctx);
  const accessLog = httpAccessLog(ctx, pickerLogging(server, filters, ctx));
  fc.filters = [
    {
      name: NAME.hcm,
      typed_config: {
        '@type': TYPE.hcm,
        stat_prefix: statSegment(server.name),
        codec_type: 'AUTO',
        rds: { route_config_name: server.name, config_source: { ads: {}, resource_api_version: 'V3' } },
        http_filters: filters,
        normalize_path: true,
        ...(accessLog.length > 0 ? { access_log: accessLog } : {}),
      },
    },
  ];
  return fc;
}

function routeConfig(server: Server, listener: Listener, ctx: BuildContext): RouteV3.RouteConfiguration {
  return {
    name: server.name,
    virtual_hosts: server.virtualHosts.map((vh) => ({
      name: vh.hostname,
      domains: [vh.hostname],
      routes: vh.misdirected
        ? [{ name: `${server.name}/misdirected/${vh.hostname}`, match: { prefix: '/' }, direct_response: { status: 421 } }]
        : vh.routes.map((r) => envoyRoute(r, listener, ctx)),
    })),
    validate_clusters: false,
    // Hostnames match whatever port the Host header carries; the header itself goes on unchanged.
    ignore_port_in_host_matching: true,
  };
}

/** An Envoy listener and the route configurations its servers use. */
export function envoyListener(l: Listener, ctx: BuildContext): { listener: ListenerV3.Listener; routes: RouteV3.RouteConfiguration[] } {
  if (l.protocol === 'UDP') return { listener: udpListener(l, ctx), routes: [] };
  const streams = streamChains(l, ctx);
  const listener: ListenerV3.Listener = {
    name: l.name,
    address: { socket_address: { address: '0.0.0.0', port_value: l.port } },
  };
  if (streams.listenerFilters.length > 0) listener.listener_filters = streams.listenerFilters;
  listener.filter_chains = [...l.servers.map((s) => filterChain(s, ctx)), ...streams.chains];
  return { listener, routes: l.servers.map((s) => routeConfig(s, l, ctx)) };
}
