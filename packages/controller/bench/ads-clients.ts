// Bench child process: many ADS clients playing Envoy, each on its own connection. They subscribe
// as Envoy does (wildcard listeners and clusters, named routes and endpoints), ACK every response
// and read only the envelope of each response, so the measure is the server's.
// Driven over IPC by xds.bench.ts: {cmd: 'connect', ...} then {cmd: 'close'}.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { TYPE_URL } from '../src/index.js';

export interface ConnectCommand {
  cmd: 'connect';
  address: string;
  variant: 'sotw' | 'delta';
  /** One entry per client: its node and the names it subscribes to. */
  clients: { id: string; cluster: string; routes: string[]; endpoints: string[] }[];
}

export type ChildMessage = { event: 'synced'; clients: number; ms: number } | { event: 'progress'; synced: number };

const string = (id: number) => ({ type: 'string', id });
const strings = (id: number) => ({ rule: 'repeated', type: 'string', id });
// The fields of discovery.proto these clients use, with `resources` of SotW read as bytes: the Any
// inside is never decoded.
const root = protobuf.Root.fromJSON({
  nested: {
    Node: { fields: { id: string(1), cluster: string(2), user_agent_name: string(6) } },
    DiscoveryRequest: {
      fields: { version_info: string(1), node: { type: 'Node', id: 2 }, resource_names: strings(3), type_url: string(4), response_nonce: string(5) },
    },
    DiscoveryResponse: { fields: { version_info: string(1), resources: { rule: 'repeated', type: 'bytes', id: 2 }, type_url: string(4), nonce: string(5) } },
    DeltaDiscoveryRequest: {
      fields: { node: { type: 'Node', id: 1 }, type_url: string(2), resource_names_subscribe: strings(3), response_nonce: string(6) },
    },
    Resource: { fields: { version: string(1), name: string(3) } },
    DeltaDiscoveryResponse: {
      fields: {
        system_version_info: string(1),
        resources: { rule: 'repeated', type: 'Resource', id: 2 },
        type_url: string(4),
        nonce: string(5),
        removed_resources: strings(6),
      },
    },
  },
});

const METHOD = {
  sotw: {
    path: '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
    request: 'DiscoveryRequest',
    response: 'DiscoveryResponse',
  },
  delta: {
    path: '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
    request: 'DeltaDiscoveryRequest',
    response: 'DeltaDiscoveryResponse',
  },
} as const;

type Message = Record<string, any>;

const SUBSCRIBED = [TYPE_URL.cluster, TYPE_URL.listener, TYPE_URL.endpoint, TYPE_URL.route];

function connect(command: ConnectCommand, client: ConnectCommand['clients'][number], onSynced: () => void): grpc.Client {
  const method = METHOD[command.variant];
  const requestType = root.lookupType(method.request);
  const responseType = root.lookupType(method.response);
  const channel = new grpc.Client(command.address, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': -1,
  });
  const call = channel.makeBidiStreamRequest<Message | Buffer, Message>(
    method.path,
    (m) => (Buffer.isBuffer(m) ? m : Buffer.from(requestType.encode(m).finish())),
    (b) => responseType.decode(b) as unknown as Message,
  );
  call.on('error', () => {});
  const names: Record<string, string[]> = {
    [TYPE_URL.cluster]: [],
    [TYPE_URL.listener]: [],
    [TYPE_URL.endpoint]: client.endpoints,
    [TYPE_URL.route]: client.routes,
  };
  const seen = new Set<string>();
  // A SotW ACK repeats every name the client holds; encoded once here, as Envoy's C++ would not
  // spend the bench's one client core on it.
  const encodedNames = new Map<string, Buffer>();
  const namesField = (typeUrl: string) => {
    let bytes = encodedNames.get(typeUrl);
    if (!bytes) {
      bytes = Buffer.from(requestType.encode({ resource_names: names[typeUrl] ?? [] }).finish());
      encodedNames.set(typeUrl, bytes);
    }
    return bytes;
  };
  const node = { id: client.id, cluster: client.cluster, user_agent_name: 'extlb-bench' };
  SUBSCRIBED.forEach((typeUrl, i) => {
    const first = i === 0 ? { node } : {};
    if (command.variant === 'sotw') call.write({ ...first, type_url: typeUrl, resource_names: names[typeUrl] });
    else call.write({ ...first, type_url: typeUrl, resource_names_subscribe: names[typeUrl] });
  });
  call.on('data', (r: Message) => {
    if (command.variant === 'sotw') call.write(sotwAck(r, namesField(r.type_url)));
    else call.write({ type_url: r.type_url, response_nonce: r.nonce });
    if (seen.size < SUBSCRIBED.length) {
      seen.add(r.type_url);
      if (seen.size === SUBSCRIBED.length) onSynced();
    }
  });
  return channel;
}

/** A DiscoveryRequest ACK written from its parts: the protobuf fields may come in any order. */
function sotwAck(r: Message, names: Buffer): Buffer {
  const head = root.lookupType('DiscoveryRequest').encode({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce }).finish();
  return Buffer.concat([head, names]);
}

const channels: grpc.Client[] = [];

process.on('message', (message: ConnectCommand | { cmd: 'close' }) => {
  if (message.cmd === 'close') {
    for (const c of channels) c.close();
    process.exit(0);
  }
  const start = performance.now();
  let synced = 0;
  const progress = setInterval(() => process.send?.({ event: 'progress', synced } satisfies ChildMessage), 5000);
  for (const client of message.clients) {
    channels.push(
      connect(message, client, () => {
        synced++;
        if (synced === message.clients.length) {
          clearInterval(progress);
          process.send?.({ event: 'synced', clients: synced, ms: performance.now() - start } satisfies ChildMessage);
        }
      }),
    );
  }
});
