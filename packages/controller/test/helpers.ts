// Test parts: an ADS client that plays Envoy, built from Envoy's protos with @grpc/proto-loader
// (independent of the server's hand-written response encoding), and small Gateway snapshots.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type http2 from 'node:http2';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConvertOptions, convert, toXds } from '@extlb/envoy';
import protobuf from 'protobufjs';
import { parseAllDocuments } from 'yaml';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { KubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { after } from 'node:test';
import { Controller, type ControllerOptions } from '../src/index.js';
import { envoyProtos, ProtoJson, SnapshotCache, type SnapshotResources, TYPE_URL, type XdsResource, XdsServer, type XdsServerOptions } from '../src/index.js';

const require = createRequire(import.meta.url);
const DEPS = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const INCLUDE_DIRS = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => join(DEPS, d));

let clientConstructor: grpc.ServiceClientConstructor | undefined;

function adsClientConstructor(): grpc.ServiceClientConstructor {
  if (!clientConstructor) {
    const definition = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
      includeDirs: INCLUDE_DIRS,
    });
    const loaded = grpc.loadPackageDefinition(definition) as any;
    clientConstructor = loaded.envoy.service.discovery.v3.AggregatedDiscoveryService as grpc.ServiceClientConstructor;
  }
  return clientConstructor;
}

let codec: ProtoJson | undefined;
/** Decodes resources for assertions. */
export function testCodec(): ProtoJson {
  codec ??= new ProtoJson(envoyProtos());
  return codec;
}

export interface AnyMessage {
  type_url: string;
  value: Buffer;
}

export interface SotwResponse {
  version_info?: string;
  resources?: AnyMessage[];
  type_url: string;
  nonce: string;
  control_plane?: { identifier?: string };
}

export interface DeltaResponse {
  system_version_info?: string;
  resources?: { name: string; version: string; resource?: AnyMessage }[];
  removed_resources?: string[];
  type_url: string;
  nonce: string;
}

export interface TestNode {
  id: string;
  cluster: string;
}

/** One ADS stream playing a proxy: sends requests as written, queues what the server sends. */
export class AdsTestClient<Res extends SotwResponse | DeltaResponse> {
  readonly client: grpc.Client;
  readonly stream: grpc.ClientDuplexStream<unknown, Res>;
  private readonly queue: Res[] = [];
  private readonly waiters: ((r: Res) => void)[] = [];
  /** Set when the stream ends: the status the server closed it with. */
  status: grpc.StatusObject | undefined;
  private readonly ended: Promise<grpc.StatusObject>;

  constructor(address: string, variant: 'sotw' | 'delta', credentials = grpc.credentials.createInsecure(), options: grpc.ClientOptions = {}) {
    const Client = adsClientConstructor();
    // A connection of its own, as each Envoy has; and no 4 MiB cap on responses, as Envoy has none.
    this.client = new Client(address, credentials, { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': -1, ...options });
    const method = variant === 'sotw' ? 'StreamAggregatedResources' : 'DeltaAggregatedResources';
    this.stream = (this.client as any)[method]() as grpc.ClientDuplexStream<unknown, Res>;
    this.stream.on('data', (r: Res) => {
      const waiter = this.waiters.shift();
      if (waiter) waiter(r);
      else this.queue.push(r);
    });
    this.ended = new Promise((resolve) => {
      this.stream.on('status', (s: grpc.StatusObject) => {
        this.status = s;
        resolve(s);
      });
    });
    this.stream.on('error', () => {}); // the status event carries it
  }

  send(request: object): void {
    this.stream.write(request);
  }

  /** The next response; fails after `timeoutMs` so a broken server fails the test instead of hanging it. */
  next(timeoutMs = 10_000): Promise<Res> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no xDS response within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (r: Res) => {
        clearTimeout(timer);
        resolve(r);
      };
      this.waiters.push(waiter);
    });
  }

  /** Responses already received and not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  /** Waits for the server to end the stream. */
  closed(): Promise<grpc.StatusObject> {
    return this.ended;
  }

  close(): void {
    this.stream.cancel();
    this.client.close();
  }
}

export type SotwClient = AdsTestClient<SotwResponse>;
export type DeltaClient = AdsTestClient<DeltaResponse>;

export function sotwClient(address: string, credentials?: grpc.ChannelCredentials): SotwClient {
  return new AdsTestClient<SotwResponse>(address, 'sotw', credentials);
}

export function deltaClient(address: string): DeltaClient {
  return new AdsTestClient<DeltaResponse>(address, 'delta');
}

/** The resources of a response as proto3 JSON. */
export function decoded(response: SotwResponse): Record<string, unknown>[] {
  return (response.resources ?? []).map((r) => testCodec().decode(r.type_url, r.value));
}

/** The names of a response's resources, in order. */
export function names(response: SotwResponse | DeltaResponse): string[] {
  if ('system_version_info' in response || !('version_info' in response)) {
    return ((response as DeltaResponse).resources ?? []).map((r) => r.name);
  }
  return decoded(response as SotwResponse).map((r) => String(r.name ?? r.cluster_name));
}

export function shortType(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}

const ADS = { ads: {}, resource_api_version: 'V3' };

export interface GatewayOptions {
  /** Backends of the one route: cluster name -> endpoint addresses `ip:port`. */
  backends?: Record<string, string[]>;
  /** Serve HTTPS with this certificate secret (SDS). */
  tlsSecret?: string;
  port?: number;
}

/** A Gateway's snapshot as the converter shapes one: a listener, its routes, EDS clusters and their endpoints. */
export function gatewaySnapshot(gateway: string, options: GatewayOptions = {}): SnapshotResources {
  const backends = options.backends ?? { [`${gateway}/backend`]: ['10.0.0.1:8080'] };
  const port = options.port ?? 8080;
  const routeName = `${gateway}/${port}`;
  const hcm: XdsResource = {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    stat_prefix: routeName.replaceAll('/', '_'),
    rds: { route_config_name: routeName, config_source: ADS },
    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
  };
  const chain: Record<string, unknown> = { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] };
  if (options.tlsSecret) {
    chain.transport_socket = {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
        common_tls_context: { tls_certificate_sds_secret_configs: [{ name: options.tlsSecret, sds_config: ADS }] },
      },
    };
  }
  const clusters = Object.keys(backends);
  return {
    listeners: [
      {
        '@type': TYPE_URL.listener,
        name: routeName,
        address: { socket_address: { address: '0.0.0.0', port_value: port } },
        filter_chains: [chain],
      },
    ],
    routes: [
      {
        '@type': TYPE_URL.route,
        name: routeName,
        virtual_hosts: [
          {
            name: `${routeName}/*`,
            domains: ['*'],
            routes: [
              {
                match: { prefix: '/' },
                route:
                  clusters.length === 1
                    ? { cluster: clusters[0], timeout: '15s' }
                    : { weighted_clusters: { clusters: clusters.map((name) => ({ name, weight: 1 })) }, timeout: '15s' },
              },
            ],
          },
        ],
      },
    ],
    clusters: clusters.map((name) => ({
      '@type': TYPE_URL.cluster,
      name,
      type: 'EDS',
      connect_timeout: '5s',
      eds_cluster_config: { eds_config: ADS },
    })),
    endpoints: clusters.map((name) => ({
      '@type': TYPE_URL.endpoint,
      cluster_name: name,
      endpoints: [
        {
          lb_endpoints: (backends[name] ?? []).map((hostPort) => {
            const [address, portValue] = hostPort.split(':');
            return { endpoint: { address: { socket_address: { address, port_value: Number(portValue) } } } };
          }),
        },
      ],
    })),
    secrets: options.tlsSecret
      ? [
          {
            '@type': TYPE_URL.secret,
            name: options.tlsSecret,
            tls_certificate: {
              certificate_chain: { inline_string: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' },
              private_key: { inline_string: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' },
            },
          },
        ]
      : [],
  };
}

/** A Gateway `gateway` with `n` clusters whose metadata pads each by 2 KB: a CDS response of about `n` × 2 KB. */
export function bigSnapshot(gateway: string, n: number, tag: string): SnapshotResources {
  const backends = Object.fromEntries(Array.from({ length: n }, (_, i) => [`${gateway}/backend-${i}`, [`10.0.${i >> 8}.${i & 255}:8080`]]));
  const s = gatewaySnapshot(gateway, { backends });
  for (const c of s.clusters ?? []) (c as { metadata?: unknown }).metadata = { filter_metadata: { 'extlb.dev': { tag, padding: 'x'.repeat(2048) } } };
  return s;
}

/** A request of the state-of-the-world variant. */
export function sotwRequest(typeUrl: string, resourceNames: string[], extra: { node?: TestNode; version?: string; nonce?: string; error?: string } = {}) {
  return {
    node: extra.node,
    type_url: typeUrl,
    resource_names: resourceNames,
    version_info: extra.version ?? '',
    response_nonce: extra.nonce ?? '',
    error_detail: extra.error === undefined ? undefined : { code: 3, message: extra.error },
  };
}

/** ACKs (or, with `error`, NACKs) a state-of-the-world response; `names` defaults to none (a wildcard keeps going). */
export function sotwAnswer(response: SotwResponse, resourceNames: string[] = [], error?: string, previousVersion = '') {
  return sotwRequest(response.type_url, resourceNames, {
    version: error === undefined ? response.version_info : previousVersion,
    nonce: response.nonce,
    ...(error === undefined ? {} : { error }),
  });
}

export function deltaRequest(
  typeUrl: string,
  extra: { node?: TestNode; subscribe?: string[]; unsubscribe?: string[]; initial?: Record<string, string>; nonce?: string; error?: string } = {},
) {
  return {
    node: extra.node,
    type_url: typeUrl,
    resource_names_subscribe: extra.subscribe ?? [],
    resource_names_unsubscribe: extra.unsubscribe ?? [],
    initial_resource_versions: extra.initial ?? {},
    response_nonce: extra.nonce ?? '',
    error_detail: extra.error === undefined ? undefined : { code: 3, message: extra.error },
  };
}

/** A raw HTTP/2 ADS (state-of-the-world) stream on `session`, its request headers as gRPC sends them; errors are left to the stream's events. */
export function adsStream(session: http2.ClientHttp2Session): http2.ClientHttp2Stream {
  const stream = session.request({
    ':method': 'POST',
    ':path': '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => {});
  return stream;
}

/** A SotW first request (node `id` of `group`, clusters) as gRPC frames it on the wire, for raw HTTP/2 clients. */
export function framedRequest(id: string, group = 'default/gw'): Buffer {
  const node = protobuf.Writer.create().uint32(0x0a).string(id).uint32(0x12).string(group).finish();
  const msg = protobuf.Writer.create().uint32(0x12).bytes(node).uint32(0x22).string(TYPE_URL.cluster).finish();
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}

/** Resolves after every callback queued so far in the event loop has run (not a timing assumption). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Polls a condition the server reaches by itself (after a request is read); fails instead of hanging. */
export async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const SCENARIOS = fileURLToPath(new URL('../../envoy/test/scenarios/', import.meta.url));

/** The converter's golden scenarios, by folder name. */
export const scenarioNames = readdirSync(SCENARIOS).sort();

/** The xDS lists the converter makes of a scenario's input.yaml (with its options.json), for its first Gateway. */
export function scenarioXds(name: string): Record<string, Record<string, unknown>[]> {
  const dir = join(SCENARIOS, name);
  const objects = parseAllDocuments(readFileSync(join(dir, 'input.yaml'), 'utf8'))
    .map((d) => d.toJS())
    .filter((o) => o !== null);
  const optionsFile = join(dir, 'options.json');
  const options: ConvertOptions = existsSync(optionsFile) ? (JSON.parse(readFileSync(optionsFile, 'utf8')) as ConvertOptions) : {};
  const [config] = Object.values(convert(objects, { now: '2026-01-01T00:00:00Z', ...options }).gateways);
  if (!config) throw new Error(`scenario ${name} converts no Gateway`);
  return toXds(config) as Record<string, Record<string, unknown>[]>;
}

/**
 * A started server with its cache, stopped after the test, and `connect()` for clients of the
 * given variant, closed after the test too.
 */
export async function serveXds<V extends 'sotw' | 'delta'>(
  t: { after: (fn: () => unknown) => void },
  variant: V,
  options: Omit<XdsServerOptions, 'cache'> = {},
): Promise<{ cache: SnapshotCache; server: XdsServer; connect: () => V extends 'sotw' ? SotwClient : DeltaClient }> {
  const cache = new SnapshotCache();
  const server = new XdsServer({ cache, ...options });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  const connect = () => {
    const client = variant === 'sotw' ? sotwClient(`127.0.0.1:${port}`) : deltaClient(`127.0.0.1:${port}`);
    t.after(() => client.close());
    return client as V extends 'sotw' ? SotwClient : DeltaClient;
  };
  return { cache, server, connect };
}

/** Polls `probe` until it answers (neither undefined nor false); fails naming `what` after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every form a private key's bytes could leak in: the PEM, each base64 line of its body, its DER in base64 and hex, the PEM in base64. */
export function keyForms(pem: string): string[] {
  const body = pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));
  const der = Buffer.from(body.join(''), 'base64');
  return [pem, ...body.filter((l) => l.length >= 16), der.toString('base64'), der.toString('hex'), Buffer.from(pem).toString('base64')];
}

/**
 * A controller on `api` that leads at once and retries quickly, stopped after the test; `xds` is
 * plaintext unless the test asks for identity.
 */
export async function startTestController(
  api: KubeApiServer,
  xds: ControllerOptions['xds'] = { host: '127.0.0.1', port: 0, plaintext: true },
): Promise<Controller> {
  const c = new Controller({
    kubeConfig: api.kubeConfig(),
    identity: 'solo',
    leaseNamespace: 'extlb-system',
    xds,
    delayMs: 20,
    maxDelayMs: 100,
    logger: createLogger({ level: 'silent' }),
    lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
  });
  after(() => c.stop(50));
  await c.start();
  return c;
}
