// The controller's operations endpoints: /healthz (the process answers), /readyz (every informer
// has listed once and the xDS server listens), /metrics (Prometheus text).
import { type Server, createServer } from 'node:http';
import { type Registry, metricsHandler } from '@extlb/telemetry';

export interface OpsServerOptions {
  host?: string;
  port: number;
  registry: Registry;
  /** Undefined when ready; else why not. */
  notReady(): string | undefined;
}

export async function startOpsServer(o: OpsServerOptions): Promise<{ server: Server; port: number }> {
  const metrics = metricsHandler(o.registry);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      void metrics(req, res);
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const why = o.notReady();
      res.writeHead(why === undefined ? 200 : 503, { 'Content-Type': 'text/plain' }).end(`${why ?? 'ok'}\n`);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : o.port };
}
