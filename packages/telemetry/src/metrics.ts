// Prometheus metrics through prom-client: one registry per server, with Node's default process
// metrics (CPU, memory, event-loop lag, GC, start time) beside the server's own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';

export interface RegistryOptions {
  /** Collect prom-client's default process and Node.js metrics. Default true. */
  defaultMetrics?: boolean;
  /** Labels added to every series, e.g. `{ component: 'picker' }`. */
  labels?: Record<string, string>;
}

/** A new registry, with the default process metrics unless told otherwise. */
export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.labels) registry.setDefaultLabels(options.labels);
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * A request handler that answers with every metric of `registry` in the Prometheus text format.
 * It writes the status and body itself; headers set on `res` beforehand are kept.
 */
export function metricsHandler(registry: Registry): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (_req, res) => {
    let status = 200;
    let contentType: string = registry.contentType;
    let body: string;
    try {
      body = await registry.metrics();
    } catch (err) {
      // A collect() callback that throws must cost one scrape, not the server.
      status = 500;
      contentType = 'text/plain; charset=utf-8';
      body = `metrics could not be collected: ${err instanceof Error ? err.message : String(err)}\n`;
    }
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
}
