// Bench child process: many ADS clients playing Envoy, each on its own HTTP/2 connection with
// Envoy's windows (ads-call.ts). They subscribe as Envoy does (wildcard listeners and clusters,
// named routes and endpoints), ACK every response and read little more than the envelope of each
// response, so the measure is the server's.
// Clients given no names learn them as Envoy does: the endpoints of the EDS clusters they get, the
// route configurations their listeners' connection managers ask for over RDS (each distinct
// version decoded once for all of them).
// Driven over IPC by the benches: {cmd: 'connect', ...}, {cmd: 'expect', ...}, then {cmd: 'close'};
// {cmd: 'gc'} and {cmd: 'collect'} at any time.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import protobuf from 'protobufjs';
import { TYPE_URL } from '../src/index.js';
import { AdsCall, type Envelope } from './ads-call.js';
import { collect, GcPauses, type Pause } from './figures.js';

interface ClientSpec {
  id: string;
  cluster: string;
  /** The names to subscribe to; without them the client learns them from its clusters and listeners. */
  routes?: string[];
  endpoints?: string[];
}

export interface ConnectCommand {
  cmd: 'connect';
  address: string;
  variant: 'sotw' | 'delta';
  /** One entry per client: its node and what it subscribes to. */
  clients: ClientSpec[];
  /** Where to write the client process's CPU profile from connecting until every client synced. */
  profile?: string;
}

/** Times, for every client, the first response of `typeUrl` carrying `name` from now on. */
export interface ExpectCommand {
  cmd: 'expect';
  id: number;
  typeUrl: string;
  name: string;
}

export type ChildMessage =
  | { event: 'ready' }
  /**
   * Every client has had a response of each type. `cpuMs`: the client process's CPU time since
   * connecting; `decodeMs`: of it, decoding responses; `firstAt`/`lastAt`: when the first and the
   * last client synced.
   */
  | { event: 'synced'; clients: number; ms: number; cpuMs: number; decodeMs: number; firstAt: number; lastAt: number }
  | { event: 'progress'; synced: number }
  /** `at`: per client, when it had ACKed the expected response (performance.timeOrigin + performance.now()). */
  | { event: 'reached'; id: number; at: number[] }
  /** The answer to {cmd: 'gc'}: the garbage collector's pauses since the last one. */
  | { event: 'gc'; pauses: Pause[] }
  /** The answer to {cmd: 'collect'}: a full collection was made (the process runs with --expose-gc). */
  | { event: 'collected' };

const string = (id: number) => ({ type: 'string', id });
const strings = (id: number) => ({ rule: 'repeated', type: 'string', id });
const bytes = (id: number) => ({ type: 'bytes', id });
// The fields of discovery.proto these clients use, with `resources` of SotW read as bytes: the Any
// inside is decoded only where a client needs a name from it. Then the few fields of Cluster,
// Listener and HttpConnectionManager that say which endpoints and routes to ask for.
const root = protobuf.Root.fromJSON({
  nested: {
    Node: { fields: { id: string(1), cluster: string(2), user_agent_name: string(6) } },
    DiscoveryRequest: {
      fields: { version_info: string(1), node: { type: 'Node', id: 2 }, resource_names: strings(3), type_url: string(4), response_nonce: string(5) },
    },
    DiscoveryResponse: { fields: { version_info: string(1), resources: { rule: 'repeated', type: 'bytes', id: 2 }, type_url: string(4), nonce: string(5) } },
    DeltaDiscoveryRequest: {
      fields: {
        node: { type: 'Node', id: 1 },
        type_url: string(2),
        resource_names_subscribe: strings(3),
        resource_names_unsubscribe: strings(4),
        response_nonce: string(6),
      },
    },
    Resource: { fields: { version: string(1), resource: { type: 'Any', id: 2 }, name: string(3) } },
    DeltaDiscoveryResponse: {
      fields: {
        system_version_info: string(1),
        resources: { rule: 'repeated', type: 'Resource', id: 2 },
        type_url: string(4),
        nonce: string(5),
        removed_resources: strings(6),
      },
    },
    Any: { fields: { type_url: string(1), value: bytes(2) } },
    /** Listener, Cluster, RouteConfiguration and ClusterLoadAssignment all carry their name in field 1. */
    Named: { fields: { name: string(1) } },
    Cluster: { fields: { name: string(1), type: { type: 'int32', id: 2 }, eds_cluster_config: { type: 'EdsClusterConfig', id: 3 } } },
    EdsClusterConfig: { fields: { service_name: string(2) } },
    Listener: { fields: { filter_chains: { rule: 'repeated', type: 'FilterChain', id: 3 } } },
    FilterChain: { fields: { filters: { rule: 'repeated', type: 'Filter', id: 3 } } },
    Filter: { fields: { typed_config: { type: 'Any', id: 4 } } },
    HttpConnectionManager: { fields: { rds: { type: 'Rds', id: 3 } } },
    Rds: { fields: { route_config_name: string(2) } },
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
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const EDS = 3; // Cluster.DiscoveryType
const types = new Map<string, protobuf.Type>();
/** A message type of `root`, looked up once: a hundred clients look up a few types per response. */
const type = (name: string) => {
  let t = types.get(name);
  if (!t) {
    t = root.lookupType(name);
    types.set(name, t);
  }
  return t;
};
const now = () => performance.timeOrigin + performance.now();
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/** Time spent decoding responses, over every client. */
let decodeMs = 0;

/**
 * A response as these clients read it: SotW by its envelope, its thousands of resources cut out
 * only when asked for (once per version for all clients, or while a change is timed), so a hundred
 * clients do not make a hundred copies of each resource's bytes; delta whole.
 */
function response(variant: 'sotw' | 'delta', e: Envelope): Message {
  if (variant === 'delta') return timedDecode('DeltaDiscoveryResponse', e.bytes());
  const r: Message = { version_info: e.version, type_url: e.type_url, nonce: e.nonce };
  let resources: Uint8Array[] | undefined;
  Object.defineProperty(r, 'resources', {
    get: () => {
      resources ??= timedDecode('DiscoveryResponse', e.bytes()).resources ?? [];
      return resources;
    },
  });
  return r;
}

function timedDecode(name: string, bytes: Buffer): Message {
  const t = performance.now();
  const m = type(name).decode(bytes) as unknown as Message;
  decodeMs += performance.now() - t;
  return m;
}

/** The resources of a response, as Any messages. */
function anys(r: Message): Message[] {
  return (r.resources ?? []).map((x: Message | Uint8Array) => (x instanceof Uint8Array ? type('Any').decode(x) : (x.resource ?? {})) as Message);
}

/** What a resource makes a proxy ask for: a cluster its endpoints, a listener its route configurations. */
function wantedOf(typeUrl: string, any: Message): string[] {
  if (typeUrl === TYPE_URL.cluster) {
    const c = type('Cluster').decode(any.value) as Message;
    return c.type === EDS ? [c.eds_cluster_config?.service_name || c.name] : [];
  }
  const l = type('Listener').decode(any.value) as Message;
  return (l.filter_chains ?? []).flatMap((fc: Message) =>
    (fc.filters ?? []).flatMap((f: Message) => {
      if (f.typed_config?.type_url !== HCM) return [];
      const name = (type('HttpConnectionManager').decode(f.typed_config.value) as Message).rds?.route_config_name;
      return name ? [name] : [];
    }),
  );
}

/** Decoded once for all clients: every proxy of a Gateway gets the same resources. */
const learned = new Map<string, string[]>();
function cached(key: string, names: () => string[]): string[] {
  let list = learned.get(key);
  if (!list) {
    list = [...new Set(names())].sort();
    learned.set(key, list);
  }
  return list;
}

/** What a client asks for, learned from its clusters (endpoints) or listeners (routes). */
class Learner {
  /** Delta: what each held resource asks for. */
  private readonly held = new Map<string, string[]>();
  names: string[] = [];

  constructor(private readonly typeUrl: string) {}

  /** Takes a response of the type learned from; returns the names to add and drop when they change. */
  take(r: Message, variant: 'sotw' | 'delta'): { add: string[]; drop: string[] } | undefined {
    let next: string[];
    if (variant === 'sotw') next = cached(`${this.typeUrl}\0${r.version_info}`, () => anys(r).flatMap((a) => wantedOf(this.typeUrl, a)));
    else {
      for (const res of r.resources ?? [])
        this.held.set(
          res.name,
          cached(`${this.typeUrl}\0${res.version}`, () => wantedOf(this.typeUrl, res.resource ?? {})),
        );
      for (const name of r.removed_resources ?? []) this.held.delete(name);
      next = [...new Set([...this.held.values()].flat())].sort();
    }
    const before = new Set(this.names);
    const after = new Set(next);
    const add = next.filter((n) => !before.has(n));
    const drop = this.names.filter((n) => !after.has(n));
    this.names = next;
    return add.length > 0 || drop.length > 0 ? { add, drop } : undefined;
  }
}

/** The names of a response's resources. */
function responseNames(r: Message): string[] {
  if (r.system_version_info !== undefined || r.removed_resources !== undefined) return (r.resources ?? []).map((x: Message) => x.name);
  return anys(r).map((a) => (type('Named').decode(a.value) as Message).name);
}

interface Expectation extends ExpectCommand {
  at: (number | undefined)[];
  left: number;
}
let expectation: Expectation | undefined;

/** `ackedAt`: when the client wrote its ACK of `r`, taken before this check (the bench's, not Envoy's). */
function reached(k: number, r: Message, ackedAt: number): void {
  const e = expectation;
  if (!e || e.at[k] !== undefined || r.type_url !== e.typeUrl || !responseNames(r).includes(e.name)) return;
  e.at[k] = ackedAt;
  if (--e.left === 0) {
    expectation = undefined;
    process.send?.({ event: 'reached', id: e.id, at: e.at as number[] } satisfies ChildMessage);
  }
}

function connect(command: ConnectCommand, client: ClientSpec, k: number, onSynced: () => void): AdsCall {
  const { variant } = command;
  const method = METHOD[variant];
  const requestType = type(method.request);
  const call = new AdsCall(command.address, method.path, (e) => onResponse(response(variant, e)));
  const write = (m: Message | Buffer[]) => call.write(Array.isArray(m) ? m : [requestType.encode(m).finish()]);
  // Where names are not given, endpoints are learned from clusters and routes from listeners.
  const learners = new Map<string, { learner: Learner; for: string }>();
  if (!client.endpoints) learners.set(TYPE_URL.cluster, { learner: new Learner(TYPE_URL.cluster), for: TYPE_URL.endpoint });
  if (!client.routes) learners.set(TYPE_URL.listener, { learner: new Learner(TYPE_URL.listener), for: TYPE_URL.route });
  const names: Record<string, string[]> = {
    [TYPE_URL.cluster]: [],
    [TYPE_URL.listener]: [],
    [TYPE_URL.endpoint]: client.endpoints ?? [],
    [TYPE_URL.route]: client.routes ?? [],
  };
  const last: Record<string, { version: string; nonce: string }> = {};
  const seen = new Set<string>();
  const node = { id: client.id, cluster: client.cluster, user_agent_name: 'extlb-bench' };
  const subscribe = (typeUrl: string, add: string[], drop: string[] = []) => {
    if (variant === 'delta') write({ type_url: typeUrl, resource_names_subscribe: add, resource_names_unsubscribe: drop });
    else write({ type_url: typeUrl, resource_names: names[typeUrl], version_info: last[typeUrl]?.version ?? '', response_nonce: last[typeUrl]?.nonce ?? '' });
  };
  SUBSCRIBED.forEach((typeUrl, i) => {
    const first = i === 0 ? { node } : {};
    const learnedLater = [...learners.values()].some((l) => l.for === typeUrl);
    if (learnedLater) return;
    if (variant === 'sotw') write({ ...first, type_url: typeUrl, resource_names: names[typeUrl] });
    else write({ ...first, type_url: typeUrl, resource_names_subscribe: names[typeUrl] });
  });
  const onResponse = (r: Message) => {
    if (variant === 'sotw') {
      last[r.type_url] = { version: r.version_info, nonce: r.nonce };
      write(sotwAck(r, namesField(names[r.type_url] ?? [])));
    } else write({ type_url: r.type_url, response_nonce: r.nonce });
    const ackedAt = now();
    // As Envoy: the update is taken (and ACKed), then what it needs is asked for.
    const l = learners.get(r.type_url);
    const change = l?.learner.take(r, variant);
    if (l && change) {
      names[l.for] = l.learner.names;
      subscribe(l.for, change.add, change.drop);
    }
    reached(k, r, ackedAt);
    if (seen.size < SUBSCRIBED.length) {
      seen.add(r.type_url);
      if (seen.size === SUBSCRIBED.length) onSynced();
    }
  };
  return call;
}

// A SotW ACK repeats every name the client holds; encoded once per list here (clients share their
// lists), as Envoy's C++ would not spend the bench's one client core on it.
const encodedNames = new WeakMap<string[], Buffer>();
function namesField(names: string[]): Buffer {
  let bytes = encodedNames.get(names);
  if (!bytes) {
    bytes = Buffer.from(type('DiscoveryRequest').encode({ resource_names: names }).finish());
    encodedNames.set(names, bytes);
  }
  return bytes;
}

/** A DiscoveryRequest ACK in its parts, written one after the other: the protobuf fields may come in any order. */
function sotwAck(r: Message, names: Buffer): Buffer[] {
  return [Buffer.from(type('DiscoveryRequest').encode({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce }).finish()), names];
}

const channels: AdsCall[] = [];

const gcPauses = new GcPauses();

process.on('message', (message: ConnectCommand | ExpectCommand | { cmd: 'close' } | { cmd: 'gc' } | { cmd: 'collect' }) => {
  if (message.cmd === 'gc') {
    process.send?.({ event: 'gc', pauses: gcPauses.take() } satisfies ChildMessage);
    return;
  }
  if (message.cmd === 'collect') {
    collect();
    process.send?.({ event: 'collected' } satisfies ChildMessage);
    return;
  }
  if (message.cmd === 'close') {
    for (const c of channels) c.close();
    process.exit(0);
  }
  if (message.cmd === 'expect') {
    expectation = { ...message, at: channels.map(() => undefined), left: channels.length };
    return;
  }
  const start = performance.now();
  const cpuAtStart = cpuMs();
  const decodedBefore = decodeMs;
  const profiling = message.profile ? startProfile() : undefined;
  let synced = 0;
  let firstAt = 0;
  const progress = setInterval(() => process.send?.({ event: 'progress', synced } satisfies ChildMessage), 5000);
  for (const client of message.clients) {
    channels.push(
      connect(message, client, channels.length, () => {
        synced++;
        if (synced === 1) firstAt = now();
        if (synced === message.clients.length) {
          clearInterval(progress);
          const figures = {
            clients: synced,
            ms: performance.now() - start,
            cpuMs: cpuMs() - cpuAtStart,
            decodeMs: decodeMs - decodedBefore,
            firstAt,
            lastAt: now(),
          };
          const file = message.profile;
          const written = profiling && file ? profiling.then((session) => writeProfile(session, file)) : Promise.resolve();
          void written.then(() => process.send?.({ event: 'synced', ...figures } satisfies ChildMessage));
        }
      }),
    );
  }
});

async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return session;
}

async function writeProfile(session: Session, file: string): Promise<void> {
  writeFileSync(file, JSON.stringify((await session.post('Profiler.stop')).profile));
  session.disconnect();
}
process.send?.({ event: 'ready' } satisfies ChildMessage);
