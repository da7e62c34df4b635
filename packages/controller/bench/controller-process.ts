// Bench child process: one extlb Controller, as `extlb controller` runs it (default debounce and
// options), against the bench's API server, so its memory is its own. Driven over IPC by
// controller.bench.ts: requests `{id, cmd}` are answered `{id, result}`; besides, it reports when
// its xDS server listens and each time the watched Gateway's snapshot changes.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '@extlb/telemetry';
import { Controller } from '../src/index.js';
import { collect, GcPauses, type Pause } from './figures.js';

export interface StartCommand {
  cmd: 'start';
  kubeconfig: string;
  leaseNamespace: string;
  /** The Gateway (`namespace/name`) whose snapshot changes are reported. */
  group: string;
}

export type ControllerCommand =
  | { cmd: 'settle'; quietMs: number }
  | { cmd: 'memory' }
  /** The process's CPU time so far, in ms; answered before the start too. */
  | { cmd: 'cpu' }
  /** CPU profiling of one phase: started, then written to `file` (a .cpuprofile Chrome DevTools opens). */
  | { cmd: 'profile'; file?: string }
  /** The garbage collector's pauses since the last time they were asked for (a `Pause[]`). */
  | { cmd: 'gc' }
  /** A full collection now, so a phase does not pay for the garbage of the ones before it. */
  | { cmd: 'collect' }
  | { cmd: 'stop' };
export type ControllerRequest = { id: number } & ControllerCommand;

export interface Counters {
  /** Recomputes so far and the seconds they took, by kind (full, endpoints). */
  recomputes: Record<string, { count: number; seconds: number }>;
  informerEvents: number;
  statusWrites: Record<string, number>;
  /** The process's CPU time so far. */
  cpuMs: number;
}

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** The largest RSS so far, in bytes. */
  maxRss: number;
  streams: number;
  /** xDS response bytes sent so far. */
  sentBytes: number;
  /** The process's CPU time so far. */
  cpuMs: number;
}

export type ControllerEvent =
  | { event: 'ready' }
  | { event: 'listening'; port: number }
  /** The informers have listed every kind (the Controller's start resolved). */
  | { event: 'listed'; at: number }
  /**
   * `at`: when the cache had the new snapshot (before the xDS server wrote it to any stream);
   * `setMs`: all of setSnapshot, the synchronous writes to the streams included.
   */
  | { event: 'snapshot'; changed: string[]; at: number; setMs: number; cpuMs: number }
  | { event: 'reply'; id: number; result: unknown };

const send = (m: ControllerEvent) => process.send?.(m);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let controller: Controller | undefined;
const gcPauses = new GcPauses();
let profiler: Session | undefined;

async function profile(file: string | undefined): Promise<void> {
  if (!profiler) {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
  }
  if (file) writeFileSync(file, JSON.stringify((await profiler.post('Profiler.stop')).profile));
  else await profiler.post('Profiler.start');
}

async function counters(c: Controller): Promise<Counters> {
  const recomputes: Counters['recomputes'] = {};
  for (const v of (await c.metrics.recomputeSeconds.get()).values) {
    const kind = String(v.labels.kind);
    const entry = recomputes[kind] ?? { count: 0, seconds: 0 };
    recomputes[kind] = entry;
    if (v.metricName?.endsWith('_count')) entry.count = v.value;
    if (v.metricName?.endsWith('_sum')) entry.seconds = v.value;
  }
  const informerEvents = (await c.metrics.informerEvents.get()).values.reduce((n, v) => n + v.value, 0);
  const statusWrites = Object.fromEntries((await c.metrics.statusWrites.get()).values.map((v) => [String(v.labels.result), v.value]));
  return { recomputes, informerEvents, statusWrites, cpuMs: cpuMs() };
}

function cpuMs(): number {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
}

/** Waits until nothing is pending and no object changed for `quietMs` (statuses written, shadow Services made). */
async function settle(c: Controller, quietMs: number): Promise<Counters> {
  let before = '';
  for (;;) {
    await c.idle();
    const now = await counters(c);
    const key = JSON.stringify([now.informerEvents, now.recomputes]); // not the CPU time, which always moves
    if (key === before) return now;
    before = key;
    await sleep(quietMs);
  }
}

function memory(c: Controller): Memory {
  collect();
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    maxRss: process.resourceUsage().maxRSS * 1024,
    streams: c.xds.stats().streamsOpen,
    sentBytes: c.xds.stats().responseBytes,
    cpuMs: cpuMs(),
  };
}

async function start(m: StartCommand): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(m.kubeconfig);
  const c = new Controller({
    kubeConfig,
    leaseNamespace: m.leaseNamespace,
    xds: { host: '127.0.0.1', port: 0, plaintext: true },
    logger: createLogger({ level: 'warn', destination: 2 }),
    // The ADS clients are the Gateways' own proxies: a fleet of xDS clients is what is measured.
    provision: { enabled: false },
  });
  controller = c;
  // Subscribed before the xDS server's own listener (it subscribes when it starts), so `at` falls
  // between the cache's work and the server's writes to the streams.
  const changes: { changed: string[]; at: number; cpuMs: number }[] = [];
  c.cache.onChange((snapshot, changed) => {
    if (snapshot.group === m.group) changes.push({ changed: [...changed], at: now(), cpuMs: cpuMs() });
  });
  const setSnapshot = c.cache.setSnapshot.bind(c.cache);
  c.cache.setSnapshot = (...args) => {
    const start = now();
    const result = setSnapshot(...args);
    for (const change of changes.splice(0)) send({ event: 'snapshot', ...change, setMs: now() - start });
    return result;
  };
  const started = c.start();
  // The port is known once the xDS server listens, before the informers have listed.
  while (c.xds.port === 0) await sleep(2);
  send({ event: 'listening', port: c.xds.port });
  await started;
  send({ event: 'listed', at: now() });
}

async function answer(r: ControllerRequest): Promise<unknown> {
  if (r.cmd === 'profile') return profile(r.file);
  if (r.cmd === 'cpu') return cpuMs();
  if (r.cmd === 'gc') return gcPauses.take() satisfies Pause[];
  if (r.cmd === 'collect') return collect();
  const c = controller;
  if (!c) throw new Error('bench: the controller was not started');
  switch (r.cmd) {
    case 'settle':
      return settle(c, r.quietMs);
    case 'memory':
      return memory(c);
    case 'stop':
      await c.stop(100);
      setImmediate(() => process.exit(0));
      return undefined;
  }
}

process.on('message', (m: StartCommand | ControllerRequest) => {
  if (m.cmd === 'start') {
    start(m).catch((err: unknown) => {
      console.error('bench: the controller did not start:', err);
      process.exit(1);
    });
    return;
  }
  answer(m).then(
    (result) => send({ event: 'reply', id: m.id, result }),
    (err: unknown) => {
      console.error(`bench: ${m.cmd} failed:`, err);
      process.exit(1);
    },
  );
});
send({ event: 'ready' });
