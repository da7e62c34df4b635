// An xDS client nobody here wrote: @grpc/grpc-js-xds resolves `xds:///echo.test` through this ADS
// server (named LDS, RDS, CDS and EDS subscriptions, state of the world) and reaches a test
// backend, then follows an endpoint change to another one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as grpcXds from '@grpc/grpc-js-xds';
import { type NackInfo, SnapshotCache, type SnapshotResources, TYPE_URL, XdsServer } from '../src/index.js';
import { waitFor } from './helpers.js';

const GW = 'default/grpc-gw';
const ADS = { ads: {}, resource_api_version: 'V3' };
const SAY = '/test.Echo/Say';

/** A gRPC server with one method that answers with the server's name. */
async function backend(name: string): Promise<{ port: number; stop: () => void }> {
  const server = new grpc.Server();
  server.addService(
    {
      Say: {
        path: SAY,
        requestStream: false,
        responseStream: false,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => b,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    },
    { Say: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.from(name)) },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port, stop: () => server.forceShutdown() };
}

/** What a gRPC client needs for `xds:///echo.test`: an API listener, its routes, an EDS cluster and its endpoints. */
function grpcSnapshot(backendPort: number): SnapshotResources {
  return {
    listeners: [
      {
        '@type': TYPE_URL.listener,
        name: 'echo.test',
        api_listener: {
          api_listener: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
            rds: { route_config_name: 'echo-route', config_source: ADS },
            http_filters: [{ name: 'router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
          },
        },
      },
    ],
    routes: [
      {
        '@type': TYPE_URL.route,
        name: 'echo-route',
        virtual_hosts: [{ name: 'echo', domains: ['echo.test'], routes: [{ match: { prefix: '' }, route: { cluster: 'echo-cluster', timeout: '5s' } }] }],
      },
    ],
    clusters: [{ '@type': TYPE_URL.cluster, name: 'echo-cluster', type: 'EDS', eds_cluster_config: { eds_config: ADS }, lb_policy: 'ROUND_ROBIN' }],
    endpoints: [
      {
        '@type': TYPE_URL.endpoint,
        cluster_name: 'echo-cluster',
        endpoints: [
          {
            locality: { region: 'test', zone: 'a' },
            load_balancing_weight: 1,
            lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: backendPort } } }, health_status: 'HEALTHY' }],
          },
        ],
      },
    ],
  };
}

function say(client: grpc.Client): Promise<string> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      SAY,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from('hi'),
      { deadline: Date.now() + 10_000 },
      (err, reply) => (err ? reject(err) : resolve(String(reply))),
    );
  });
}

test('@grpc/grpc-js-xds resolves an xds:/// target through extlb’s ADS server and follows an endpoint change', async (t) => {
  const a = await backend('backend-a');
  const b = await backend('backend-b');
  t.after(() => {
    a.stop();
    b.stop();
  });
  const cache = new SnapshotCache();
  const nacks: NackInfo[] = [];
  const server = new XdsServer({ cache, callbacks: { onNack: (_s, n) => nacks.push(n) } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  cache.setSnapshot(GW, grpcSnapshot(a.port));

  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id: 'grpc-client-1', cluster: GW, locality: {} },
  });
  grpcXds.register();
  const client = new grpc.Client('xds:///echo.test', grpc.credentials.createInsecure());

  assert.equal(await say(client), 'backend-a');
  const [stream] = server.streams(GW);
  assert.equal(stream?.node.id, 'grpc-client-1');
  assert.match(stream?.node.userAgent ?? '', /^gRPC Node/);
  assert.deepEqual(
    stream?.types.map((x) => [x.typeUrl, x.wildcard, x.names]),
    [
      [TYPE_URL.cluster, false, 1],
      [TYPE_URL.endpoint, false, 1],
      [TYPE_URL.listener, false, 1],
      [TYPE_URL.route, false, 1],
    ],
    'a gRPC client asks for each resource by name',
  );

  cache.setSnapshot(GW, grpcSnapshot(b.port));
  await waitFor(
    () =>
      server.streams(GW)[0]?.types.find((x) => x.typeUrl === TYPE_URL.endpoint)?.ackedVersion === cache.getSnapshot(GW)?.types.get(TYPE_URL.endpoint)?.version,
  );
  let answer = '';
  for (let i = 0; i < 50 && answer !== 'backend-b'; i++) answer = await say(client);
  assert.equal(answer, 'backend-b');
  assert.deepEqual(nacks, [], 'the gRPC client accepted every resource');
  assert.ok(server.stats().acks >= 5);
  client.close();
  // With its last channel gone, the xDS client drops its subscriptions and its ADS stream.
  await waitFor(() => server.streams(GW).length === 0);
});
