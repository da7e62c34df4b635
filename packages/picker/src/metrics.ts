/**
 * The reference picker's Prometheus metrics, on a registry from @extlb/telemetry (prom-client, with
 * its default process metrics), and the HTTP handler that serves them at /metrics.
 *
 * The picker keeps its own counts (`stats()`), which it needs anyway to decide and to answer
 * synchronously; every series here reads them when Prometheus scrapes, so a decision pays nothing
 * for being measured.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, metricsHandler, type Logger, type Registry } from '@extlb/telemetry';
import type { EndpointPicker } from './picker.js';
import type { PoolMembers } from './pool-members.js';
import type { SignalSource } from './signals.js';

type Series<L extends string> = ReadonlyArray<readonly [Partial<Record<L, string>>, number]>;

/** A counter whose totals are counts the picker keeps: rebuilt from them at each scrape, as a counter cannot be set. */
function countedBy<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], read: () => Series<L>): void {
  new Counter<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.inc(labels, value);
    },
  });
}

function gaugedBy(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** Registers the picker's series on `registry`. */
export function registerPickerMetrics(registry: Registry, picker: EndpointPicker, pool: PoolMembers, signals?: SignalSource): void {
  countedBy(registry, 'extlb_picker_picks_total', 'Decisions on request headers, by result (picked, no_endpoint: 503, shedding: 429).', ['result'], () => {
    const { picked, noEndpoint, shedding } = picker.stats().picks;
    return [
      [{ result: 'picked' }, picked],
      [{ result: 'no_endpoint' }, noEndpoint],
      [{ result: 'shedding' }, shedding],
    ];
  });
  countedBy(
    registry,
    'extlb_picker_stream_errors_total',
    'ext_proc streams ended with an error status, by reason (invalid_message: INVALID_ARGUMENT, internal_error: INTERNAL).',
    ['reason'],
    () => {
      const { invalidMessages, internalErrors } = picker.stats();
      return [
        [{ reason: 'invalid_message' }, invalidMessages],
        [{ reason: 'internal_error' }, internalErrors],
      ];
    },
  );
  countedBy(
    registry,
    'extlb_picker_served_total',
    'Requests the data plane reported as served, by endpoint; only current pool members are kept.',
    ['endpoint'],
    () => Object.entries(picker.stats().served).map(([endpoint, n]) => [{ endpoint }, n] as const),
  );
  countedBy(registry, 'extlb_picker_served_ignored_total', 'Served endpoints reported that are no pool member, so not counted by endpoint.', [], () => [
    [{}, picker.stats().ignoredServed],
  ]);
  gaugedBy(registry, 'extlb_picker_requests_in_flight', 'Requests picked for whose ext_proc stream has not ended yet.', () => picker.stats().inFlight);
  gaugedBy(registry, 'extlb_picker_pool_endpoints', "Endpoints in the picker's pool now.", () => pool.endpoints().length);
  gaugedBy(
    registry,
    'extlb_picker_requests_waiting',
    'Requests waiting for an endpoint below the saturation thresholds (load-aware queue shedding).',
    () => picker.stats().waiting,
  );
  if (!signals) return;
  new Gauge({
    name: 'extlb_picker_endpoint_signals',
    help: 'Pool endpoints by the state of their load signals: fresh, or stale/unreachable/malformed/missing/pending (scored as the worst, never as idle).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const [state, n] of Object.entries(signals.states())) this.set({ state }, n);
    },
  });
}

/** GET /metrics, nothing else. */
function metricsEndpoint(registry: Registry): (req: IncomingMessage, res: ServerResponse) => void {
  const serveMetrics = metricsHandler(registry);
  return (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('no such path (the picker serves GET /metrics here)\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, HEAD' }).end('/metrics accepts GET and HEAD only\n');
    } else {
      void serveMetrics(req, res);
    }
  };
}

/** An HTTP listener serving `registry` at /metrics; resolves once it listens, with the port bound. */
export async function listenForMetrics(registry: Registry, host: string, port: number, logger: Logger): Promise<{ server: Server; port: number }> {
  const server = createServer(metricsEndpoint(registry));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once listening, a server error costs a log line, not the process.
  server.on('error', (err) => logger.error({ error: err.message }, 'metrics listener error'));
  return { server, port: (server.address() as AddressInfo).port };
}
