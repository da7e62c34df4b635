// The controller's debug endpoints. They listen on loopback only, so from outside the Pod they are
// reached through the Kubernetes API's port-forward: only someone RBAC lets create
// `pods/portforward` on the controller can read them (as istioctl and egctl reach theirs).
//   GET /debug/proxies                         the proxies connected to this replica, per type sent/ACKed/NACKed
//   GET /debug/config?gateway=NS/NAME[&type=K] the snapshot served to a Gateway, secret values redacted
//   GET /debug/health                          ready or why not, leader, the xDS serving certificate's expiry
import { isIP } from 'node:net';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { SnapshotCache } from '../xds/snapshot.js';
import type { StreamStatus } from '../xds/stream.js';
import { KIND_TYPE_URL, type ResourceKind } from '../xds/resource-types.js';
import { configDump, type ProxiesReport, proxyStatus } from './debug-state.js';

/** What the debug endpoints read; each a public accessor of the controller's parts. */
export interface DebugSource {
  replica: string;
  isLeader(): boolean;
  streams(): StreamStatus[];
  cache: SnapshotCache;
  /** Undefined when ready; else why not. */
  notReady(): string | undefined;
  /** When the xDS serving certificate expires (ms since the epoch); undefined with plain-text xDS. */
  servingExpiresAt(): number | undefined;
}

export interface DebugHealth {
  replica: string;
  ready: boolean;
  reason?: string;
  leader: boolean;
  /** Absent with plain-text xDS. */
  xdsCertificate?: { expiresAt: string; valid: boolean };
}

export const DEFAULT_DEBUG_PORT = 9091;

/** A loopback address: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function json(res: ServerResponse, code: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The answer to one GET: a status code and a JSON body. */
function answer(source: DebugSource, url: URL): [number, unknown] {
  if (url.pathname === '/debug/proxies') {
    const report: ProxiesReport = {
      replica: source.replica,
      leader: source.isLeader(),
      gateways: source.cache
        .groups()
        .sort()
        .map((gateway) => ({ gateway, version: source.cache.getSnapshot(gateway)?.version ?? '' })),
      proxies: proxyStatus(source.streams(), source.cache),
    };
    return [200, report];
  }
  if (url.pathname === '/debug/config') {
    const gateway = url.searchParams.get('gateway') ?? '';
    if (!/^[^/]+\/[^/]+$/.test(gateway)) return [400, { error: `gateway must be NAMESPACE/NAME, not ${JSON.stringify(gateway)}` }];
    const type = url.searchParams.get('type') ?? undefined;
    if (type !== undefined && !Object.hasOwn(KIND_TYPE_URL, type))
      return [400, { error: `type must be one of ${Object.keys(KIND_TYPE_URL).join(', ')}, not ${JSON.stringify(type)}` }];
    const snapshot = source.cache.getSnapshot(gateway);
    if (!snapshot) return [404, { error: `replica ${source.replica} serves no configuration to Gateway ${gateway}` }];
    return [200, configDump(snapshot, type as ResourceKind | undefined)];
  }
  if (url.pathname === '/debug/health') {
    const why = source.notReady();
    const expires = source.servingExpiresAt();
    const health: DebugHealth = {
      replica: source.replica,
      ready: why === undefined,
      ...(why !== undefined ? { reason: why } : {}),
      leader: source.isLeader(),
      ...(expires !== undefined ? { xdsCertificate: { expiresAt: new Date(expires).toISOString(), valid: expires > Date.now() } } : {}),
    };
    return [200, health];
  }
  return [404, { error: `no debug endpoint ${url.pathname}; there are /debug/proxies, /debug/config, /debug/health` }];
}

export function debugHandler(source: DebugSource): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.method !== 'GET') {
      json(res, 405, { error: `${req.method} is not allowed; the debug endpoints only answer GET` });
      return;
    }
    try {
      const [code, body] = answer(source, new URL(req.url ?? '/', 'http://localhost'));
      json(res, code, body);
    } catch (err) {
      json(res, 500, { error: err instanceof Error ? err.message : String(err) });
    }
  };
}

/** Listens on a loopback address only; any other host is refused before anything listens. */
export async function startDebugServer(o: { host?: string; port: number; source: DebugSource }): Promise<{ server: Server; port: number }> {
  const host = o.host ?? '127.0.0.1';
  if (!isLoopback(host))
    throw new Error(`the debug endpoints listen on loopback only (127.0.0.1, ::1, localhost), not ${host}: reach them through port-forward`);
  const server = createServer(debugHandler(o.source));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, host, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : o.port };
}
