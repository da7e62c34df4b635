// grpc-js serves connections handed to it (a connection injector) through an HTTP/2 server of its
// own that it does not expose. The connection gate needs that server's sessions and streams before
// grpc-js sees them (to refuse a stream without building a call), so it is found in the one place
// grpc-js keeps it; a grpc-js that keeps it elsewhere fails here, at start, not silently.
import type http2 from 'node:http2';
import type net from 'node:net';
import type * as grpc from '@grpc/grpc-js';

export type GrpcHttp2Server = http2.Http2Server | http2.Http2SecureServer;

export interface Injector {
  inject(connection: net.Socket): void;
  http2: GrpcHttp2Server;
}

function http2Servers(server: grpc.Server): Map<GrpcHttp2Server, unknown> {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) throw new Error('xDS server: this @grpc/grpc-js keeps its HTTP/2 servers where the connection gate cannot find them');
  return servers as Map<GrpcHttp2Server, unknown>;
}

/** A connection injector of `server` for `credentials`, with the HTTP/2 server it feeds. */
export function connectionInjector(server: grpc.Server, credentials: grpc.ServerCredentials): Injector {
  const servers = http2Servers(server);
  const before = new Set(servers.keys());
  const injector = server.createConnectionInjector(credentials);
  const created = [...servers.keys()].filter((s) => !before.has(s));
  const http2Server = created[0];
  if (created.length !== 1 || http2Server === undefined)
    throw new Error('xDS server: the connection gate cannot tell which HTTP/2 server @grpc/grpc-js made for it');
  return { inject: (connection) => injector.injectConnection(connection), http2: http2Server };
}
