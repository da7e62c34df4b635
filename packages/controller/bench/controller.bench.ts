// The controller end to end, printed as figures and ratios to the aims (never asserted):
//  - an estate of 10k HTTPRoutes, 1k BackendPools with pickers and 50k endpoints (EndpointSlices of
//    the pools' shadow Services and of plain Services) in the in-process Kubernetes API server;
//  - a Controller in a child process, as `extlb controller` runs it (its own memory, default
//    debounce), and 100 ADS clients of its Gateway in another, learning and ACKing as Envoy does;
//  - the time from the controller's start to the first full snapshot at every client; then, with
//    the statuses written and everything settled, one EndpointSlice changed through the API until
//    every client has ACKed the endpoint update (aim: p99 under 50 ms), and the same for one
//    HTTPRoute and its route update (aim: p99 under 300 ms); the controller's RSS and heap (aim: RSS
//    under 1.5 GiB); and what 1,000 idle ADS streams (100 small Gateways x 10 proxies) add to it.
// Each phase starts with one untimed change (the writer's connection opening, the path's first run)
// and a full collection in every process, so that it does not pay for the garbage of the phases
// before it (the start's hundreds of MB).
// Latencies run from just before the API write to each client's ACK of the update; beside them,
// where the time went: the write, the watch event and debounce and recompute until the snapshot
// was set, and the push to the last ACK; for the slowest changes, how long the garbage collector
// paused each process within them. Three processes share the machine's cores (the API server
// here, the controller, the clients), so a loaded machine shows in every figure; the load is
// printed beside them.
// The controller starts as a new replica (or a rollout) does on an established estate: the statuses
// and shadow Services a previous leader left are there, so it writes little. EXTLB_BENCH_FRESH=1
// starts it on the bare objects instead, as at install, when it writes every status and Service.
// Environment: EXTLB_BENCH_SCALE=0.1 runs a tenth of everything (estate, clients, idle streams);
// EXTLB_BENCH_VARIANT=delta has the clients speak incremental xDS (default: state of the world);
// EXTLB_BENCH_CPU_PROF=<dir> writes there the controller's CPU profile of each phase
// (<phase>.cpuprofile, for Chrome DevTools or any .cpuprofile reader).
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter, shadowServiceName } from '@extlb/envoy';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { KubeApi, TYPE_URL, WATCHED_KINDS } from '../src/index.js';
import type { ChildMessage, ConnectCommand, ExpectCommand } from './ads-clients.js';
import { BENCH_NAMESPACE, type ClusterEstateSize, clusterEstate, endpointSlices, GATEWAY, httpRoute, poolName, routeName, tenant } from './cluster-estate.js';
import type { ControllerCommand, ControllerEvent, Counters, Memory, StartCommand } from './controller-process.js';
import { collect, GcPauses, loadNote, machine, mb, ms, n, type Pause, pausedWithin, percentile, withTimeout } from './figures.js';

const SCALE = Number(process.env.EXTLB_BENCH_SCALE ?? '1');
if (!(SCALE > 0 && SCALE <= 1)) throw new Error(`bench: EXTLB_BENCH_SCALE must be a number in (0, 1], got ${process.env.EXTLB_BENCH_SCALE}`);
const CPU_PROF = process.env.EXTLB_BENCH_CPU_PROF;
const FRESH = process.env.EXTLB_BENCH_FRESH === '1';
/** EXTLB_BENCH_START_ONLY=1: only the fleet-sync row (start to the first full snapshot), then stop. */
const START_ONLY = process.env.EXTLB_BENCH_START_ONLY === '1';
const VARIANT = process.env.EXTLB_BENCH_VARIANT ?? 'sotw';
if (VARIANT !== 'sotw' && VARIANT !== 'delta') throw new Error(`bench: EXTLB_BENCH_VARIANT must be sotw or delta, got ${VARIANT}`);
const scaled = (v: number, min: number) => Math.max(min, Math.round(v * SCALE));
/** Pools and Services are spread over 10 tenants: whole tens. */
const tens = (v: number) => scaled(v / 10, 1) * 10;
const SIZE: ClusterEstateSize = {
  routes: scaled(10_000, 10),
  pools: tens(1000),
  services: tens(1000),
  endpoints: scaled(50_000, 100),
  idleGateways: scaled(100, 1),
};
const CLIENTS = scaled(100, 1);
const IDLE_PER_GATEWAY = 10;
/**
 * Enough that the p99 is not simply the slowest change: a change's 100 clients are 100 samples
 * that move together, so with 20 changes the p99 was the worst one's.
 */
const ENDPOINT_CHANGES = 100;
/** Fewer: each is a full recompute, and another when the route's status is written. */
const ROUTE_CHANGES = 10;
const AIM = { endpointMs: 50, routeMs: 300, rss: 1.5 * 1024 ** 3 };
/** Issue 19's fleet-sync row: start to the first full snapshot at 100 clients, and the peak RSS by then (today's 797 MB). */
const FLEET_AIM = { ms: 2500, rss: 797 * 1024 ** 2 };
const GROUP = `${BENCH_NAMESPACE}/${GATEWAY}`;
/** Quiet time that counts as settled: longer than the controller's 100 ms debounce. */
const QUIET_MS = 300;

const now = () => performance.timeOrigin + performance.now();
const sec = (v: number) => `${(v / 1000).toFixed(1)} s`;

/** A bench child process: messages waited for by a predicate, failing when it exits. */
class Child<M extends { event: string }> {
  readonly process: ChildProcess;
  private readonly waiters = new Set<{ match: (m: M) => boolean; resolve: (m: M) => void; reject: (e: Error) => void }>();

  constructor(file: string, execArgv: string[], onMessage: (m: M) => void = () => {}) {
    this.process = fork(new URL(file, import.meta.url), { execArgv: [...execArgv, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.process.on('message', (m: M) => {
      for (const w of this.waiters) {
        if (!w.match(m)) continue;
        this.waiters.delete(w);
        w.resolve(m);
      }
      onMessage(m);
    });
    this.process.on('exit', (code) => {
      for (const w of this.waiters) w.reject(new Error(`bench: ${file} exited with ${code}`));
      this.waiters.clear();
    });
  }

  /** The next message matching; wait for it before sending what causes it. */
  next<T extends M>(match: (m: M) => boolean, what: string): Promise<T> {
    return withTimeout(new Promise<T>((resolve, reject) => this.waiters.add({ match, resolve: resolve as (m: M) => void, reject })), what);
  }

  send(message: object): void {
    this.process.send(message);
  }

  exited(): Promise<void> {
    return new Promise((resolve) => {
      if (this.process.exitCode !== null) resolve();
      else this.process.on('exit', () => resolve());
    });
  }
}

class ControllerChild extends Child<ControllerEvent> {
  private lastId = 0;
  /** The watched Gateway's snapshot changes, as they were set. */
  readonly snapshots: Extract<ControllerEvent, { event: 'snapshot' }>[] = [];
  /** When the informers had listed every kind. */
  listedAt = Number.NaN;

  constructor() {
    super('./controller-process.ts', ['--expose-gc'], (m) => {
      if (m.event === 'snapshot') this.snapshots.push(m);
      if (m.event === 'listed') this.listedAt = m.at;
    });
  }

  private profiled: string | undefined;

  /** With EXTLB_BENCH_CPU_PROF: writes the profile of the phase under way and profiles the `next` one. */
  async phase(next?: string): Promise<void> {
    if (!CPU_PROF) return;
    if (this.profiled) await this.request({ cmd: 'profile', file: join(CPU_PROF, `${this.profiled}.cpuprofile`) }, 'a CPU profile');
    if (next) await this.request({ cmd: 'profile' }, 'a CPU profile');
    this.profiled = next;
  }

  async request<T>(cmd: ControllerCommand, what: string): Promise<T> {
    const id = ++this.lastId;
    const reply = this.next<Extract<ControllerEvent, { event: 'reply' }>>((m) => m.event === 'reply' && m.id === id, what);
    this.send({ ...cmd, id });
    return (await reply).result as T;
  }
}

type Synced = Extract<ChildMessage, { event: 'synced' }>;

class ClientsChild extends Child<ChildMessage> {
  private lastExpect = 0;

  constructor(private readonly count: number) {
    super('./ads-clients.ts', ['--expose-gc'], (m) => {
      if (m.event === 'progress') console.log(`    (${m.synced} of ${count} clients synced)`);
    });
  }

  async connect(command: Omit<ConnectCommand, 'cmd'>): Promise<Synced> {
    const synced = this.next<Synced>((m) => m.event === 'synced', `${this.count} ADS clients syncing`);
    this.send({ cmd: 'connect', ...command } satisfies ConnectCommand);
    return synced;
  }

  /** Arms every client to time the next response of `typeUrl` carrying `name`; resolves with their times. */
  expect(typeUrl: string, name: string): Promise<number[]> {
    const id = ++this.lastExpect;
    const reached = this.next<Extract<ChildMessage, { event: 'reached' }>>(
      (m) => m.event === 'reached' && m.id === id,
      `every client getting ${name} (${typeUrl.slice(typeUrl.lastIndexOf('.') + 1)})`,
    );
    this.send({ cmd: 'expect', id, typeUrl, name } satisfies ExpectCommand);
    return reached.then((m) => m.at);
  }

  /** A full collection in the clients' process. */
  async collect(): Promise<void> {
    const done = this.next((m) => m.event === 'collected', "the clients' collection");
    this.send({ cmd: 'collect' });
    await done;
  }

  /** The garbage collector's pauses in the clients' process since the last call. */
  async gc(): Promise<Pause[]> {
    const reply = this.next<Extract<ChildMessage, { event: 'gc' }>>((m) => m.event === 'gc', "the clients' GC pauses");
    this.send({ cmd: 'gc' });
    return (await reply).pauses;
  }

  async close(): Promise<void> {
    const exited = this.exited();
    this.send({ cmd: 'close' });
    await exited;
  }
}

interface Sample {
  /** Just before the write (performance.timeOrigin + performance.now()). */
  start: number;
  /** Per client, from just before the write to its ACK. */
  perClient: number[];
  /** The API write's round trip. */
  write: number;
  /** From before the write to the snapshot carrying the change being set. */
  snapshot: number;
}

/**
 * One change through the API: arms the clients, writes, and waits until every client has ACKed a
 * response of `typeUrl` naming `name`; then until the controller has settled (its statuses too).
 */
async function timeChange(controller: ControllerChild, clients: ClientsChild, typeUrl: string, name: string, write: () => Promise<unknown>): Promise<Sample> {
  const reached = clients.expect(typeUrl, name);
  const before = controller.snapshots.length;
  const start = now();
  await write();
  const written = now();
  const at = await reached;
  const snapshot = controller.snapshots.slice(before).find((s) => s.changed.includes(typeUrl));
  await controller.request({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling after a change');
  return { start, perClient: at.map((t) => t - start), write: written - start, snapshot: snapshot ? snapshot.at - start : Number.NaN };
}

/** The garbage collectors' pauses in each of the three processes over a phase. */
interface PhasePauses {
  controller: Pause[];
  clients: Pause[];
  /** This process: the API server and the bench's own timing. */
  api: Pause[];
}

/**
 * Starts a timed phase: a full collection in each process, so that the garbage of the phases before
 * (the start's hundreds of MB) is not collected in the middle of this one, and the pauses so far
 * dropped.
 */
async function startTiming(): Promise<void> {
  collect();
  await Promise.all([controller.request({ cmd: 'collect' }, 'a collection in the controller'), clients.collect()]);
  await takePauses();
}

/** Takes the pauses since the last call from each process. */
async function takePauses(): Promise<PhasePauses> {
  const [controllerPauses, clientPauses] = await Promise.all([controller.request<Pause[]>({ cmd: 'gc' }, 'the controller GC pauses'), clients.gc()]);
  return { controller: controllerPauses, clients: clientPauses, api: benchPauses.take() };
}

/** The latencies of a phase of changes, and the controller's work for them (`before` and `after` it). */
function report(
  what: string,
  samples: Sample[],
  aimMs: number,
  work: { before: Counters; after: Counters; kind: string; note?: string; pauses: PhasePauses },
): void {
  const sorted = (f: (s: Sample) => number) => samples.map(f).sort((a, b) => a - b);
  const all = samples.flatMap((s) => s.perClient).sort((a, b) => a - b);
  const every = sorted((s) => Math.max(...s.perClient));
  const p99 = percentile(all, 99);
  console.log(`${what}, ${samples.length} times:${loadNote()}`);
  console.log(
    `  per client p50 ${ms(percentile(all, 50))} ms, p99 ${ms(p99)} ms (${(p99 / aimMs).toFixed(2)}x the ${aimMs} ms aim); every client reached: p50 ${ms(percentile(every, 50))} ms, max ${ms(every.at(-1) ?? Number.NaN)} ms`,
  );
  const pushes = samples.map((s) => Math.max(...s.perClient) - s.snapshot).sort((a, b) => a - b);
  const recompute = (c: Counters) => c.recomputes[work.kind] ?? { count: 0, seconds: 0 };
  const count = recompute(work.after).count - recompute(work.before).count;
  const seconds = recompute(work.after).seconds - recompute(work.before).seconds;
  console.log(
    `  where the time went (p50): API write ${ms(
      percentile(
        sorted((s) => s.write),
        50,
      ),
    )} ms; write to snapshot set ${ms(
      percentile(
        sorted((s) => s.snapshot),
        50,
      ),
    )} ms (watch event, debounce, ${count} ${work.kind} recomputes of ${ms((seconds * 1000) / Math.max(1, count))} ms on average${work.note ?? ''}); snapshot to the last client's ACK ${ms(percentile(pushes, 50))} ms`,
  );
  // The tail is a change or two: say where theirs went, split as above.
  const slowest = [...samples].sort((a, b) => Math.max(...b.perClient) - Math.max(...a.perClient)).slice(0, 3);
  const split = (s: Sample) => {
    const end = s.start + Math.max(...s.perClient);
    const paused = (pauses: Pause[]) => pausedWithin(pauses, s.start, end);
    const gc = `GC pauses: controller ${paused(work.pauses.controller)}, clients ${paused(work.pauses.clients)}, API server ${paused(work.pauses.api)}`;
    return `${ms(Math.max(...s.perClient))} (change ${samples.indexOf(s) + 1}: write ${ms(s.write)}, snapshot set at ${ms(s.snapshot)}; ${gc})`;
  };
  console.log(`  the slowest changes to their last client, ms: ${slowest.map(split).join('; ')}`);
  console.log(
    `  the controller's CPU time per change: ${ms((work.after.cpuMs - work.before.cpuMs) / samples.length)} ms (recomputes, pushes to ${CLIENTS} clients, their ACKs)`,
  );
}

/**
 * Issue 19's fleet-sync row, and where its time went: before the snapshot (the informers' lists,
 * then the first recompute and setSnapshot) and after it (the push), with the CPU each process
 * spent on it — the clients run in one process of their own, so their cost shows apart.
 */
function reportFleet(fleet: Synced, total: number, cpuBefore: number, after: Memory): void {
  const first = controller.snapshots[0];
  const set = (first?.at ?? Number.NaN) - started;
  const push = total - set;
  console.log(
    `start to the first full snapshot at all ${CLIENTS} clients: ${sec(total)} (${(total / FLEET_AIM.ms).toFixed(2)}x the ≤ ${sec(FLEET_AIM.ms)} aim: ${total <= FLEET_AIM.ms ? 'met' : 'not met'}); peak RSS so far ${mb(after.maxRss)} (${(after.maxRss / FLEET_AIM.rss).toFixed(2)}x the ≤ ${mb(FLEET_AIM.rss)} aim: ${after.maxRss <= FLEET_AIM.rss ? 'met' : 'not met'})${loadNote()}`,
  );
  console.log(
    `  before the snapshot, ${sec(set)}: informers listed at ${sec(controller.listedAt - started)}, then the first recompute and the snapshot's encoding until ${sec(set)}; the controller's CPU to there ${ms((first?.cpuMs ?? Number.NaN) - cpuBefore)} ms`,
  );
  console.log(
    `  the push, ${sec(push)} for ${mb(after.sentBytes / CLIENTS)} to each client: setSnapshot's own writes ${ms(first?.setMs ?? Number.NaN)} ms; the first client synced ${ms(fleet.firstAt - (first?.at ?? Number.NaN))} ms after the snapshot, the last ${ms(fleet.lastAt - (first?.at ?? Number.NaN))} ms; CPU during the push: the controller ${ms(after.cpuMs - (first?.cpuMs ?? Number.NaN))} ms, the ${CLIENTS} clients' process ${ms(fleet.cpuMs)} ms from connecting (${ms(fleet.decodeMs)} ms of it decoding responses)`,
  );
}

/**
 * What a previous leader would have left: each pool's shadow Service, and the statuses the
 * converter gives the stored objects (with their generations and uids).
 */
function seedAsLeftByLeader(api: KubeApiServer): void {
  const stored = WATCHED_KINDS.flatMap((k) => api.list(k.apiVersion, k.kind).map((o) => ({ ...o, apiVersion: k.apiVersion, kind: k.kind })));
  const { statuses, needs } = new Converter({ endpoints: 'eds', gatewayClassNames: ['extlb'] }).update({ objects: stored });
  for (const s of needs.shadowServices) api.put(s as KubeObject);
  for (const s of statuses) {
    const m = s.metadata as { name: string; namespace?: string };
    const o = api.get(String(s.apiVersion), String(s.kind), m.name, m.namespace);
    if (o) api.put({ ...o, status: s.status } as KubeObject);
  }
}

console.log(
  `extlb controller bench (${machine()}${SCALE < 1 ? `; EXTLB_BENCH_SCALE=${SCALE}` : ''}; ${VARIANT === 'sotw' ? 'state-of-the-world' : 'incremental'} ADS)`,
);
const estate = clusterEstate(SIZE);
const slices = estate.objects.filter((o) => o.kind === 'EndpointSlice').length;
const api = await startKubeApiServer();
const benchPauses = new GcPauses();
let t = performance.now();
for (const o of estate.objects) api.put(o as KubeObject);
console.log(
  `estate: ${n(SIZE.routes)} HTTPRoutes on one Gateway (10 listeners), ${n(SIZE.pools)} BackendPools with pickers, ${n(SIZE.services)} Services, ${n(estate.endpoints)} endpoints in ${n(slices)} EndpointSlices; ${n(SIZE.idleGateways)} small Gateways; ${n(estate.objects.length)} objects put in ${ms(performance.now() - t)} ms`,
);
if (!FRESH) {
  t = performance.now();
  seedAsLeftByLeader(api);
  console.log(`  with the statuses and shadow Services a previous leader left (seeded in ${ms(performance.now() - t)} ms)`);
}
const dir = mkdtempSync(join(tmpdir(), 'extlb-controller-bench-'));
const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
const writer = new KubeApi(api.kubeConfig());
const patch = (path: string, body: unknown) => writer.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });

const controller = new ControllerChild();
const clients = new ClientsChild(CLIENTS);
await Promise.all([
  controller.next((m) => m.event === 'ready', 'the controller process loading'),
  clients.next((m) => m.event === 'ready', 'the client process loading'),
]);

// Start to the first full snapshot at every client: clients connect as soon as the xDS server
// listens, and wait there for their Gateway's snapshot.
const cpuBeforeStart = await controller.request<number>({ cmd: 'cpu' }, 'the controller figures');
await controller.phase('start');
const listening = controller.next<Extract<ControllerEvent, { event: 'listening' }>>((m) => m.event === 'listening', 'the xDS server listening');
const started = now();
controller.send({ cmd: 'start', kubeconfig, leaseNamespace: BENCH_NAMESPACE, group: GROUP } satisfies StartCommand);
const { port } = await listening;
const clientSpecs = Array.from({ length: CLIENTS }, (_, i) => ({ id: `envoy-${i}`, cluster: GROUP }));
const fleet = await clients.connect({
  address: `127.0.0.1:${port}`,
  variant: VARIANT,
  clients: clientSpecs,
  ...(CPU_PROF ? { profile: join(CPU_PROF, 'clients-start.cpuprofile') } : {}),
});
const firstSync = now() - started;
const synced = await controller.request<Memory>({ cmd: 'memory' }, 'the controller figures');
reportFleet(fleet, firstSync, cpuBeforeStart, synced);
if (START_ONLY) {
  await shutDown();
  process.exit(0);
}

await controller.phase('settle');
const settled = await controller.request<Counters>({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling');
const statusWrites = api.requestsMatching({ subresource: 'status', verb: ['update', 'patch'] }).length;
const shadows = api.requestsMatching({ verb: 'create', resource: 'services' }).length;
const full = settled.recomputes.full ?? { count: 0, seconds: 0 };
console.log(
  `settled ${sec(now() - started)} after the start: ${n(statusWrites)} statuses and ${n(shadows)} shadow Services written, ${full.count} full recomputes of ${ms((full.seconds * 1000) / Math.max(1, full.count))} ms on average${loadNote()}`,
);
const memory = await controller.request<Memory>({ cmd: 'memory' }, 'the controller memory');

const generations = new Map<number, number>();
/** Change `c` of an EndpointSlice: a pool's first endpoint turns not ready (or ready again), so its shadow Service's slice changes. */
function endpointChange(c: number): Promise<Sample> {
  const p = ((c + SIZE.pools) * 37) % SIZE.pools;
  const generation = (generations.get(p) ?? 0) + 1;
  generations.set(p, generation);
  const shadow = shadowServiceName('BackendPool', poolName(p));
  const slice = endpointSlices(tenant(p), shadow, { name: 'tcp-8000', port: 8000 }, estate.poolAddresses[p] ?? [], generation)[0] as {
    metadata: { name: string };
    endpoints: unknown[];
  };
  // The converter names a pool's cluster, and its ClusterLoadAssignment, bpool/<namespace>/<pool>.
  return timeChange(controller, clients, TYPE_URL.endpoint, `bpool/${tenant(p)}/${poolName(p)}`, () =>
    patch(`/apis/discovery.k8s.io/v1/namespaces/${tenant(p)}/endpointslices/${slice.metadata.name}`, { endpoints: slice.endpoints }),
  );
}
/** Change `c` of an HTTPRoute: its path changes, so one RouteConfiguration (its listener's) does, nothing else. */
function routeChange(c: number): Promise<Sample> {
  const r = ((c + SIZE.routes) * 373 + 5) % SIZE.routes;
  const changed = httpRoute(r, SIZE.pools, SIZE.services, c + 2);
  // The converter names a listener's RouteConfiguration <namespace>/<gateway>/<port>.
  return timeChange(controller, clients, TYPE_URL.route, `${GROUP}/${8000 + (r % 10)}`, () =>
    patch(`/apis/gateway.networking.k8s.io/v1/namespaces/${tenant(r)}/httproutes/${routeName(r)}`, { spec: changed.spec }),
  );
}

await controller.phase('endpoints');
// Each phase starts with an untimed change (-1): the writer's first request opens its connection
// (a TLS handshake), and the controller runs the phase's path for the first time; neither is what
// a change costs a controller that has been serving.
await endpointChange(-1);
// Collected before the counters are read: the collection's CPU time is not the changes'.
await startTiming();
const beforeEndpoints = await controller.request<Counters>({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling');
const endpointSamples: Sample[] = [];
for (let c = 0; c < ENDPOINT_CHANGES; c++) endpointSamples.push(await endpointChange(c));
const afterEndpoints = await controller.request<Counters>({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling');
report('one EndpointSlice changed through the API, until every client ACKed the endpoint update', endpointSamples, AIM.endpointMs, {
  before: beforeEndpoints,
  after: afterEndpoints,
  kind: 'endpoints',
  pauses: await takePauses(),
});

await controller.phase('routes');
await routeChange(-1);
// Collected before the counters are read: the collection's CPU time is not the changes'.
await startTiming();
const beforeRoutes = await controller.request<Counters>({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling');
const routeSamples: Sample[] = [];
for (let c = 0; c < ROUTE_CHANGES; c++) routeSamples.push(await routeChange(c));
const afterRoutes = await controller.request<Counters>({ cmd: 'settle', quietMs: QUIET_MS }, 'the controller settling');
report('one HTTPRoute changed through the API, until every client ACKed the route update', routeSamples, AIM.routeMs, {
  before: beforeRoutes,
  after: afterRoutes,
  kind: 'full',
  note: ", the route's status write included",
  pauses: await takePauses(),
});

// The controller's own status writes come back through its watches: each one that started a full
// recompute of its own is work for nothing.
{
  const fulls = (c: Counters) => c.recomputes.full?.count ?? 0;
  const written = (c: Counters) => c.statusWrites.written ?? 0;
  const writes = written(afterRoutes) - written(beforeRoutes);
  const extra = fulls(afterRoutes) - fulls(beforeRoutes) - ROUTE_CHANGES;
  console.log(
    `  recomputes per status write: ${(extra / Math.max(1, writes)).toFixed(2)} (${extra} full recomputes beyond one per route change, for ${writes} status writes)`,
  );
}

// Idle streams: what 1,000 more proxies, synced and quiet, hold in the controller — measured as
// the difference between holding them and having closed them, so garbage of earlier phases that a
// collection has not returned yet does not count.
const idle = SIZE.idleGateways * IDLE_PER_GATEWAY;
const idleClients = new ClientsChild(idle);
await idleClients.next((m) => m.event === 'ready', 'the idle client process loading');
const idleSpecs = Array.from({ length: idle }, (_, i) => ({
  id: `idle-envoy-${i}`,
  cluster: `${BENCH_NAMESPACE}/idle-${Math.floor(i / IDLE_PER_GATEWAY)}`,
}));
await controller.phase('idle');
const idleSyncMs = (await idleClients.connect({ address: `127.0.0.1:${port}`, variant: VARIANT, clients: idleSpecs })).ms;
await new Promise((r) => setTimeout(r, 2000)); // the last ACKs land
const idleAfter = await controller.request<Memory>({ cmd: 'memory' }, 'the controller memory');
await idleClients.close();
let idleClosed = idleAfter;
while (idleClosed.streams > CLIENTS) {
  await new Promise((r) => setTimeout(r, 200));
  idleClosed = await controller.request<Memory>({ cmd: 'memory' }, 'the controller memory');
}
const peak = idleAfter.maxRss;

console.log(
  `the controller after settling (${CLIENTS} streams): RSS ${mb(memory.rss)} (${(memory.rss / AIM.rss).toFixed(2)}x the 1.5 GiB aim), heap ${mb(memory.heapUsed)} used of ${mb(memory.heapTotal)}, external ${mb(memory.external)}; peak RSS over the whole run ${mb(peak)} (${(peak / AIM.rss).toFixed(2)}x the aim)`,
);
const added = idleAfter.streams - idleClosed.streams;
const held = (m: Memory) => m.heapUsed + m.external;
console.log(
  `${n(added)} idle ADS streams (${SIZE.idleGateways} small Gateways x ${IDLE_PER_GATEWAY} proxies), synced in ${ms(idleSyncMs)} ms: they hold ${mb(held(idleAfter) - held(idleClosed))} of heap and external memory, ${((held(idleAfter) - held(idleClosed)) / Math.max(1, added) / 1024).toFixed(1)} KB per stream (RSS with them ${mb(idleAfter.rss)}; RSS keeps what earlier phases freed, so its difference says little)`,
);

await shutDown();
if (CPU_PROF) console.log(`the controller's CPU profiles, by phase: ${CPU_PROF}/{start,settle,endpoints,routes,idle}.cpuprofile`);

/** Ends the run: the controller's last phase profile, the clients, the controller, the API server. */
async function shutDown(): Promise<void> {
  await controller.phase();
  await clients.close();
  await controller.request({ cmd: 'stop' }, 'the controller stopping');
  await controller.exited();
  await api.close();
  rmSync(dir, { recursive: true, force: true });
}
