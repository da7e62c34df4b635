// xDS server benchmarks, printed as figures and ratios to the aims (never asserted):
//  - a synthetic estate for one Gateway (10k routes, 1k EDS clusters, 50k endpoints by default):
//    what setting its snapshot costs, and that setting it again unchanged costs little and sends nothing;
//  - 100 ADS clients of that Gateway (its proxy replicas), state of the world and then incremental:
//    the time from one changed endpoint assignment, and from one changed route, until every client
//    has ACKed it (aims: p99 under 100 ms and under 1 s);
//  - 1,000 idle ADS streams (100 Gateways with 10 proxies each): the server's RSS per stream.
// The server runs in this process, the clients in a child process (see ads-clients.ts), so each side
// has a core of the 2-core machine. The 100 clients are one Gateway's proxy replicas: every change
// reaches all of them. Latency is the server's own push latency: from setSnapshot to
// the ACK of the new version arriving back.
// Run with `npm run bench -- --filter=@extlb/controller` from the repository root; options such as
// `-- --clients 20 --routes 2000` size it (see OPTIONS).
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { type AckInfo, SnapshotCache, type SnapshotResources, TYPE_URL, type TypeUrl, XdsServer } from '../src/index.js';
import type { ChildMessage, ConnectCommand } from './ads-clients.js';
import type { StormCommand, StormEvent } from './storm-clients.js';
import { assignment, type EstateSize, routeConfig, subscribedNames, syntheticEstate } from './estate.js';
import { loadNote, machine, mb, ms, n, percentile, withTimeout } from './figures.js';

const OPTIONS = {
  clients: { type: 'string', default: '100' },
  idle: { type: 'string', default: '1000' },
  routes: { type: 'string', default: '10000' },
  'route-configs': { type: 'string', default: '10' },
  clusters: { type: 'string', default: '1000' },
  endpoints: { type: 'string', default: '50000' },
  changes: { type: 'string', default: '20' },
  /** The storm rows (issue 21): NACKing streams, churning connections, and the estate they run on. */
  'storm-nacks': { type: 'string', default: '400' },
  'storm-churn': { type: 'string', default: '2000' },
  'storm-routes': { type: 'string', default: '2000' },
  /** Which storm rows run, beside the quiet one (`--storms churn` to profile one of them). */
  storms: { type: 'string', default: 'ack,nack,churn' },
  /** Streams a connection may have refused by its own rate before the gate closes it (`1e9`: the gate never closes one, to see the per-stream refusal alone). */
  'refused-per-connection': { type: 'string', default: '10' },
  only: { type: 'string', default: '' },
} as const;
const { values } = parseArgs({ options: OPTIONS, strict: true });
const int = (name: keyof typeof OPTIONS) => Number.parseInt(values[name], 10);
const ESTATE: EstateSize = { routes: int('routes'), routeConfigs: int('route-configs'), clusters: int('clusters'), endpoints: int('endpoints') };
const CLIENTS = int('clients');
const IDLE = int('idle');
const CHANGES = int('changes');
const IDLE_PER_GATEWAY = 10;
const IDLE_ESTATE: EstateSize = { routes: 20, routeConfigs: 2, clusters: 5, endpoints: 50 };
const GW = 'bench/gateway';

const gc = () => (globalThis as { gc?: () => void }).gc?.();

function typeBytes(cache: SnapshotCache, group: string, typeUrl: TypeUrl): number {
  let total = 0;
  for (const r of cache.getSnapshot(group)?.types.get(typeUrl)?.resources.values() ?? []) total += r.entry.length;
  return total;
}

/** Collects the ACKs of one type's version from every client. */
class AckWatch {
  private target: { typeUrl: string; version: string; latencies: number[]; done: () => void } | undefined;

  onAck = (ack: AckInfo) => {
    const t = this.target;
    if (!t || ack.typeUrl !== t.typeUrl || ack.version !== t.version) return;
    t.latencies.push(ack.latencyMs);
    if (t.latencies.length === CLIENTS) t.done();
  };

  /** Server CPU (ms) from each setSnapshot's return to the last ACK: pushing and reading ACKs. */
  readonly cpuMs: number[] = [];

  /** Sets a snapshot and resolves with every client's latency for the new version of `typeUrl`. */
  async change(cache: SnapshotCache, snapshot: SnapshotResources, typeUrl: TypeUrl): Promise<number[]> {
    const latencies: number[] = [];
    const all = new Promise<void>((resolve) => {
      this.target = { typeUrl, version: '', latencies, done: resolve };
    });
    const update = cache.setSnapshot(GW, snapshot);
    if (!update.changed.includes(typeUrl)) throw new Error(`bench: the change did not change ${typeUrl}`);
    const target = this.target;
    if (target) target.version = cache.getSnapshot(GW)?.types.get(typeUrl)?.version ?? '';
    const cpu = process.cpuUsage();
    await withTimeout(all, `a change reaching ${CLIENTS} clients`);
    const used = process.cpuUsage(cpu);
    this.cpuMs.push((used.user + used.system) / 1000);
    this.target = undefined;
    return latencies;
  }
}

function startClients(command: ConnectCommand): Promise<{ child: ChildProcess; ms: number }> {
  const child = fork(new URL('./ads-clients.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const synced = new Promise<{ child: ChildProcess; ms: number }>((resolve, reject) => {
    child.on('message', (m: ChildMessage) => {
      if (m.event === 'synced') resolve({ child, ms: m.ms });
      else if (m.event === 'progress') console.log(`    (${m.synced} of ${command.clients.length} clients synced)`);
    });
    child.on('exit', (code) => reject(new Error(`bench: the client process exited with ${code}`)));
  });
  child.send(command);
  return withTimeout(synced, `${command.clients.length} clients syncing`);
}

function stopClients(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.send({ cmd: 'close' });
  });
}

function estateBench(): { cache: SnapshotCache; estate: SnapshotResources } {
  console.log(
    `one Gateway's synthetic estate: ${n(ESTATE.routes)} routes in ${ESTATE.routeConfigs} route configurations, ${n(ESTATE.clusters)} EDS clusters, ${n(ESTATE.endpoints)} endpoints`,
  );
  const estate = syntheticEstate(GW, ESTATE);
  const cache = new SnapshotCache();
  cache.setSnapshot('warm/up', syntheticEstate('warm/up', { routes: 10, routeConfigs: 1, clusters: 2, endpoints: 2 })); // loads the protos
  cache.clearSnapshot('warm/up');
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let t = performance.now();
  cache.setSnapshot(GW, estate);
  const first = performance.now() - t;
  gc();
  const heap = process.memoryUsage().heapUsed - heapBefore;
  t = performance.now();
  const again = cache.setSnapshot(GW, syntheticEstate(GW, ESTATE));
  const same = performance.now() - t;
  const perCluster = Math.round(ESTATE.endpoints / ESTATE.clusters);
  const moved = { ...estate, endpoints: estate.endpoints?.map((e, i) => (i === 0 ? assignment(GW, 0, perCluster, 1) : e)) };
  t = performance.now();
  cache.setSnapshot(GW, moved);
  const one = performance.now() - t;
  cache.setSnapshot(GW, estate);
  const sizes = [TYPE_URL.listener, TYPE_URL.route, TYPE_URL.cluster, TYPE_URL.endpoint].map(
    (u) => `${u.slice(u.lastIndexOf('.') + 1)} ${mb(typeBytes(cache, GW, u))}`,
  );
  console.log(`  encoded: ${sizes.join(', ')}; heap held ${mb(heap)}`);
  console.log(
    `  setSnapshot: first ${ms(first)} ms, same input again ${ms(same)} ms (${again.changed.length} types changed, nothing sent), one endpoint assignment changed ${ms(one)} ms`,
  );
  return { cache, estate };
}

async function clientsBench(variant: 'sotw' | 'delta', cache: SnapshotCache, estate: SnapshotResources): Promise<void> {
  const watch = new AckWatch();
  const server = new XdsServer({ cache, callbacks: { onAck: (_s, a) => watch.onAck(a) } });
  const { port } = await server.start();
  const names = subscribedNames(estate);
  const clients = Array.from({ length: CLIENTS }, (_, i) => ({ id: `envoy-${i}`, cluster: GW, ...names }));
  const { child, ms: syncMs } = await startClients({ cmd: 'connect', address: `127.0.0.1:${port}`, variant, clients });
  const stats = server.stats();
  console.log(`${CLIENTS} ${variant === 'sotw' ? 'state-of-the-world' : 'incremental (delta)'} ADS clients of that Gateway, each on its own connection:`);
  console.log(`  all synced in ${ms(syncMs)} ms (${n(stats.responses)} responses, ${mb(stats.responseBytes)} sent)`);

  const perCluster = Math.round(ESTATE.endpoints / ESTATE.clusters);
  const perConfig = Math.ceil(ESTATE.routes / ESTATE.routeConfigs);
  let current = estate;
  const report = (what: string, samples: number[][], aimMs: number) => {
    const cpu = watch.cpuMs.splice(0).sort((a, b) => a - b);
    const all = samples.flat().sort((a, b) => a - b);
    const everyClient = samples.map((s) => Math.max(...s)).sort((a, b) => a - b);
    const p99 = percentile(all, 99);
    console.log(
      `  ${what}, ${samples.length} times: per client p50 ${ms(percentile(all, 50))} ms, p99 ${ms(p99)} ms; every client reached in p50 ${ms(percentile(everyClient, 50))} ms, max ${ms(everyClient.at(-1) ?? Number.NaN)} ms (p99 is ${(p99 / aimMs).toFixed(2)}x the ${aimMs} ms aim); server CPU for the push and the ACKs p50 ${ms(percentile(cpu, 50))} ms`,
    );
  };

  const eds: number[][] = [];
  for (let c = 0; c < CHANGES; c++) {
    const i = (c * 37) % ESTATE.clusters;
    current = { ...current, endpoints: current.endpoints?.map((e, k) => (k === i ? assignment(GW, i, perCluster, c + 1) : e)) };
    eds.push(await watch.change(cache, current, TYPE_URL.endpoint));
  }
  report(`one endpoint assignment changed (${perCluster} endpoints)`, eds, 100);

  const rds: number[][] = [];
  for (let c = 0; c < Math.max(1, Math.ceil(CHANGES / 2)); c++) {
    const config = c % ESTATE.routeConfigs;
    // A route moves to another cluster: its route configuration changes, nothing else does.
    const changed = routeConfig(GW, config, perConfig, ESTATE.clusters, c + 1);
    current = { ...current, routes: current.routes?.map((r, k) => (k === config ? changed : r)) };
    rds.push(await watch.change(cache, current, TYPE_URL.route));
  }
  const routeBytes = typeBytes(cache, GW, TYPE_URL.route) / ESTATE.routeConfigs;
  report(`one route changed (its RouteConfiguration of ${n(perConfig)} routes, ${mb(routeBytes)}, sent whole)`, rds, 1000);
  await stopClients(child);
  await server.stop({ graceMs: 1000 });
  cache.setSnapshot(GW, estate);
}

async function idleBench(): Promise<void> {
  const gateways = Math.ceil(IDLE / IDLE_PER_GATEWAY);
  const cache = new SnapshotCache();
  const clients: ConnectCommand['clients'] = [];
  for (let g = 0; g < gateways; g++) {
    const gw = `bench/gw-${g}`;
    const estate = syntheticEstate(gw, IDLE_ESTATE);
    cache.setSnapshot(gw, estate);
    for (let r = 0; r < IDLE_PER_GATEWAY && clients.length < IDLE; r++) clients.push({ id: `${gw}-envoy-${r}`, cluster: gw, ...subscribedNames(estate) });
  }
  const server = new XdsServer({ cache });
  const { port } = await server.start();
  gc();
  const before = process.memoryUsage();
  const { child, ms: syncMs } = await startClients({ cmd: 'connect', address: `127.0.0.1:${port}`, variant: 'sotw', clients });
  await new Promise((r) => setTimeout(r, 2000)); // let the last ACKs land
  gc();
  const after = process.memoryUsage();
  const streams = server.stats().streamsOpen;
  console.log(
    `${n(streams)} idle state-of-the-world ADS streams (${gateways} Gateways x ${IDLE_PER_GATEWAY} proxies; each Gateway ${IDLE_ESTATE.routes} routes, ${IDLE_ESTATE.clusters} clusters, ${IDLE_ESTATE.endpoints} endpoints), synced in ${ms(syncMs)} ms:`,
  );
  console.log(
    `  server RSS ${mb(before.rss)} -> ${mb(after.rss)}: +${mb(after.rss - before.rss)}, ${((after.rss - before.rss) / streams / 1024).toFixed(1)} KB per stream (heap +${mb(after.heapUsed - before.heapUsed)})`,
  );
  await stopClients(child);
  await server.stop({ graceMs: 1000 });
}

/** Server CPU (ms) and the event loop's delay (p99, max, ms) over `run`. */
async function served<T>(run: () => Promise<T>): Promise<{ result: T; cpuMs: number; loopP99: number; loopMax: number }> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu = process.cpuUsage();
  const result = await run();
  const used = process.cpuUsage(cpu);
  loop.disable();
  return { result, cpuMs: (used.user + used.system) / 1000, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}

/**
 * Issue 21's rows: one healthy proxy's endpoint-update latency (change to its ACK, 20 changes) on a
 * 2,000-route Gateway: quiet; beside 400 streams of the same Gateway ACKing every update (the
 * baseline of that many streams); while those 400 NACK every update; and while connections open
 * and reset 2,000 streams at a time (16 per connection, the server's bound, over 125 connections).
 * The hostile clients run in a process of their own. With 400 answering streams each change waits
 * for their answers of its version (up to a bound) before the next one, so every stream answers
 * every change as the row says, however far behind a loaded machine puts the storm process.
 */
async function stormBench(): Promise<void> {
  const routes = int('storm-routes');
  const size: EstateSize = {
    routes,
    routeConfigs: Math.max(1, Math.round(routes / 1000)),
    clusters: Math.max(1, Math.round(routes / 10)),
    endpoints: routes * 5,
  };
  const group = 'bench/storm';
  const estate = syntheticEstate(group, size);
  const cache = new SnapshotCache();
  cache.setSnapshot(group, estate);
  let target: { version: string; done: (ms: number) => void } | undefined;
  /** The storm's answers to the current change: its version's ACKs or NACKs from streams other than the healthy one. */
  let answers: { version: string; want: number; got: number; done: () => void } | undefined;
  const answered = (node: string, typeUrl: string, version: string) => {
    const a = answers;
    if (!a || node === 'healthy' || typeUrl !== TYPE_URL.endpoint || version !== a.version) return;
    if (++a.got === a.want) a.done();
  };
  const server = new XdsServer({
    cache,
    limits: { maxRefusedStreamsPerConnection: Number(values['refused-per-connection']) },
    callbacks: {
      onAck: (s, a) => {
        if (s.node.id === 'healthy' && a.typeUrl === TYPE_URL.endpoint && target && a.version === target.version) target.done(a.latencyMs);
        answered(s.node.id, a.typeUrl, a.version);
      },
      onNack: (s, a) => answered(s.node.id, a.typeUrl, a.version),
    },
  });
  const { port } = await server.start();
  const address = `127.0.0.1:${port}`;
  const names = subscribedNames(estate);
  const healthy = await startClients({ cmd: 'connect', address, variant: 'sotw', clients: [{ id: 'healthy', cluster: group, ...names }] });
  const perCluster = Math.round(size.endpoints / size.clusters);
  let current = estate;
  let step = 0;
  /** The healthy proxy's latencies, and how many answers of the changed versions came from `stormStreams` other streams. */
  const measure = async (stormStreams = 0): Promise<{ latencies: number[]; answers: number }> => {
    const out: number[] = [];
    let got = 0;
    for (let c = 0; c < CHANGES; c++) {
      step++;
      const i = (step * 37) % size.clusters;
      current = { ...current, endpoints: current.endpoints?.map((e, k) => (k === i ? assignment(group, i, perCluster, step) : e)) };
      const acked = new Promise<number>((resolve) => {
        target = { version: '', done: resolve };
      });
      const storm = new Promise<void>((resolve) => {
        answers = { version: '', want: stormStreams, got: 0, done: resolve };
      });
      cache.setSnapshot(group, current);
      const version = cache.getSnapshot(group)?.types.get(TYPE_URL.endpoint)?.version ?? '';
      if (target) target.version = version;
      if (answers) answers.version = version;
      out.push(await withTimeout(acked, 'the healthy proxy ACKing an endpoint update'));
      if (stormStreams > 0) await Promise.race([storm, new Promise((r) => setTimeout(r, STORM_ANSWER_WAIT_MS))]);
      got += answers?.got ?? 0;
      answers = undefined;
      // Changes a little apart, as an estate's endpoints move, so a storm runs between them.
      await new Promise((r) => setTimeout(r, 20));
    }
    return { latencies: out.sort((a, b) => a - b), answers: got };
  };
  const storm = async (command: StormCommand, settleMs: number, stormStreams = 0) => {
    const child = fork(new URL('./storm-clients.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const next = () => new Promise<StormEvent>((resolve) => child.once('message', (m: StormEvent) => resolve(m)));
    const ready = next();
    child.send(command);
    await withTimeout(ready, 'the storm clients starting');
    await new Promise((r) => setTimeout(r, settleMs));
    const before = server.stats();
    const run = await served(() => measure(stormStreams));
    const after = server.stats();
    const stopped = next();
    child.send({ cmd: 'stop' } satisfies StormCommand);
    const end = (await withTimeout(stopped, 'the storm clients stopping')) as Extract<StormEvent, { event: 'stopped' }>;
    return { ...run, latencies: run.result.latencies, answers: run.result.answers, before, after, end };
  };

  console.log(
    `storms on one Gateway of ${n(routes)} routes, ${n(size.clusters)} clusters, ${n(size.endpoints)} endpoints; one healthy proxy's endpoint update, ${CHANGES} changes each (aim: p99 ≤ 2x quiet):`,
  );
  const row = (what: string, r: { latencies: number[]; cpuMs: number; loopP99: number; loopMax: number }, q99: number, extra: string) => {
    const p99 = percentile(r.latencies, 99);
    const ratio = Number.isNaN(q99) ? '' : ` (${(p99 / q99).toFixed(2)}x quiet)`;
    console.log(
      `  ${what}: p50 ${ms(percentile(r.latencies, 50))} ms, p99 ${ms(p99)} ms${ratio}; server CPU ${ms(r.cpuMs)} ms, event loop delay p99 ${ms(r.loopP99)} ms, max ${ms(r.loopMax)} ms${extra}${loadNote()}`,
    );
  };
  const quiet = await served(() => measure());
  const q99 = percentile(quiet.result.latencies, 99);
  row('quiet', { ...quiet, latencies: quiet.result.latencies }, Number.NaN, '');
  const stormStreams = int('storm-nacks');
  const expected = stormStreams * CHANGES;
  const base = { address, group, streams: stormStreams, perConnection: 10, endpoints: names.endpoints ?? [] };
  const rows = new Set(values.storms.split(','));
  /** p99 beside the ACKing streams: NACKs should cost what ACKs do (issue 21, item 8). */
  let ack99 = Number.NaN;
  if (rows.has('ack')) {
    const ack = await storm({ cmd: 'ack', ...base }, 1000, stormStreams);
    ack99 = percentile(ack.latencies, 99);
    row(`beside ${n(stormStreams)} streams ACKing every update (baseline)`, ack, q99, `; ${n(ack.answers)} of their ${n(expected)} ACKs`);
  }
  if (rows.has('nack')) {
    const nack = await storm({ cmd: 'nack', ...base }, 1000, stormStreams);
    row(
      `while ${n(stormStreams)} streams NACK every update`,
      nack,
      q99,
      `; ${n(nack.answers)} of their ${n(expected)} NACKs (${n(nack.after.nacks - nack.before.nacks)} counted by the server)${Number.isNaN(ack99) ? '' : `; p99 ${(percentile(nack.latencies, 99) / ack99).toFixed(2)}x the ACKing baseline's`}`,
    );
  }
  if (rows.has('churn')) {
    const churnStreams = int('storm-churn');
    const connections = Math.ceil(churnStreams / 16);
    const churn = await storm({ cmd: 'churn', address, group, connections, concurrency: 16 }, 1000);
    const during = (k: 'streamsRateLimited' | 'streamsOpened' | 'connectionsClosed' | 'connectionsHeld') => n((churn.after[k] ?? 0) - (churn.before[k] ?? 0));
    row(
      `while ${n(churnStreams)} streams churn (${connections} connections x 16, open then reset)`,
      churn,
      q99,
      `; ${n(churn.end.cycles)} open/reset cycles in all; during the changes ${during('streamsRateLimited')} refused by the stream rate, ${during('streamsOpened')} admitted, ${during('connectionsClosed')} connections closed by the gate, ${during('connectionsHeld')} held back; in all ${n(churn.after.connectionsClosed ?? 0)} closed, ${n(churn.after.connectionsHeld ?? 0)} held`,
    );
  }
  await stopClients(healthy.child);
  await server.stop({ graceMs: 1000 });
}

/** How long a change waits for the storm's answers of its version before the next change. */
const STORM_ANSWER_WAIT_MS = 10_000;

console.log(`(${machine()}: other work on the machine shows in these figures)`);
// Idle streams first, while this process holds nothing else that RSS would mix in.
// `--only storm` runs the storm rows alone.
if (values.only === 'storm') {
  await stormBench();
} else {
  await idleBench();
  const { cache, estate } = estateBench();
  await clientsBench('sotw', cache, estate);
  await clientsBench('delta', cache, estate);
  await stormBench();
}
