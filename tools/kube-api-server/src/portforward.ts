// `pods/portforward` over WebSocket, as the API server proxies it to the kubelet and as
// @kubernetes/client-node's PortForward speaks it:
//   GET /api/v1/namespaces/NS/pods/NAME/portforward?ports=P  (Upgrade: websocket)
// The subprotocol is `v4.channel.k8s.io` (the client offers v5 first; port-forward has no v5).
// Every binary message starts with its channel byte: for the i-th port, channel 2i carries the
// data both ways and 2i+1 errors from the server. Each of the two channels first carries the port
// as two little-endian bytes; then the server connects, and a failed connection is a text message
// on the error channel followed by the end of the WebSocket. The TCP connection ending ends it too,
// and the client's close ends the TCP connection.
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type AuthOptions, checkAccess, identify } from './auth.js';
import type { KubeObject } from './objects.js';
import { requestInfo } from './request-info.js';
import { type RequestRecord, recordOf } from './request-log.js';
import { ApiError, badRequest, failure, internalError, notFound } from './status.js';
import { acceptWebSocket, isWebSocketUpgrade, offeredProtocols } from './websocket.js';

/** The channel protocols port-forward speaks, in the server's order. */
export const PORT_FORWARD_PROTOCOLS = ['v4.channel.k8s.io'] as const;

export interface PortForwardTarget {
  namespace: string;
  pod: string;
  /** The port asked for, inside the Pod. */
  port: number;
  object: KubeObject;
}

/**
 * Where a forwarded port of a Pod is reached on this machine. Default: the Pod's `status.podIP`
 * (127.0.0.1 without one) and the same port — the kubelet dials localhost inside the Pod's network
 * namespace; a test running several "Pods" on one host maps each to its own port.
 */
export type PortForwardResolver = (target: PortForwardTarget) => { host: string; port: number };

export interface PortForwardContext {
  log: RequestRecord[];
  auth: AuthOptions | undefined;
  pod(namespace: string, name: string): KubeObject | undefined;
  resolve: PortForwardResolver | undefined;
  /** Open forwarded connections, so stop() cuts them. */
  connections: Set<Socket>;
}

export const defaultResolver: PortForwardResolver = ({ object, port }) => {
  const ip = (object.status as { podIP?: unknown } | undefined)?.podIP;
  return { host: typeof ip === 'string' && ip !== '' ? ip : '127.0.0.1', port };
};

function refuse(socket: Duplex, record: RequestRecord, error: ApiError): void {
  record.code = error.code;
  const body = JSON.stringify(error.status);
  socket.end(
    `HTTP/1.1 ${error.code} ${error.status.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function parsePorts(values: string[]): number[] {
  const ports = values.flatMap((v) => v.split(',')).filter((v) => v !== '');
  if (ports.length === 0) throw badRequest('at least one port must be specified');
  return ports.map((p) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw badRequest(`unable to parse "${p}" as a port: port must be in the range 1..65535`);
    return n;
  });
}

/** The server's `upgrade` listener; `false` when the request is not one it serves (the caller answers it). */
export function handlePortForwardUpgrade(ctx: PortForwardContext, req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
  const url = new URL(req.url ?? '/', 'https://kube-api-server');
  const info = requestInfo('GET', url);
  if (!(info.resource === 'pods' && info.subresource === 'portforward' && info.group === '' && info.version === 'v1')) return false;
  // Authorized as `create` on pods/portforward, the verb RBAC grants port-forward with.
  info.verb = 'create';
  const record = recordOf('GET', url, info);
  ctx.log.push(record);
  const user = identify(req.headers.authorization, ctx.auth);
  if (user !== undefined) record.user = user;
  try {
    if (!isWebSocketUpgrade(req)) throw badRequest('Upgrade request required');
    checkAccess(info, user, ctx.auth);
    const namespace = info.namespace ?? '';
    const name = info.name ?? '';
    const pod = ctx.pod(namespace, name);
    if (!pod) throw notFound({ group: '', resource: 'pods' }, name);
    const phase = (pod.status as { phase?: unknown } | undefined)?.phase;
    if (phase !== 'Running') throw badRequest(`pod ${name} is not running (phase ${String(phase ?? 'unknown')})`);
    const ports = parsePorts(url.searchParams.getAll('ports'));
    const offered = offeredProtocols(req);
    const protocol = PORT_FORWARD_PROTOCOLS.find((p) => offered.includes(p));
    if (!protocol)
      throw failure(400, 'BadRequest', `none of the offered subprotocols (${offered.join(', ') || 'none'}) is supported: ${PORT_FORWARD_PROTOCOLS.join(', ')}`);
    record.code = 101;
    forward(ctx, acceptWebSocket(req, socket, head, protocol), { namespace, pod: name, object: pod }, ports);
  } catch (err) {
    refuse(socket, record, err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err)));
  }
  return true;
}

function forward(ctx: PortForwardContext, ws: ReturnType<typeof acceptWebSocket>, pod: Omit<PortForwardTarget, 'port'>, ports: number[]): void {
  const resolve = ctx.resolve ?? defaultResolver;
  const sockets: Socket[] = [];
  const channel = (n: number, data: Buffer) => Buffer.concat([Buffer.from([n]), data]);
  let open = ports.length;
  const done = () => {
    open--;
    if (open === 0) ws.close();
  };
  ports.forEach((port, i) => {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port, 0);
    ws.send(channel(2 * i, portBytes));
    ws.send(channel(2 * i + 1, portBytes));
    const target = resolve({ ...pod, port });
    const socket = connect(target.port, target.host);
    sockets[i] = socket;
    ctx.connections.add(socket);
    let connected = false;
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (data: Buffer) => ws.send(channel(2 * i, data)));
    socket.on('error', (err) => {
      // The kubelet's words for a port nothing listens on.
      const why = connected ? err.message : `failed to connect to localhost:${port} inside namespace "${pod.namespace}": ${err.message}`;
      ws.send(channel(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${pod.pod}, uid ${String(pod.object.metadata.uid ?? '')}: ${why}`)));
    });
    socket.on('close', () => {
      ctx.connections.delete(socket);
      done();
    });
  });
  ws.on('message', (data) => {
    const n = data[0];
    if (n === undefined || n % 2 === 1) return;
    sockets[n / 2]?.write(data.subarray(1));
  });
  ws.on('close', () => {
    for (const s of sockets) s.end();
  });
}
