// Webhook throughput and latency at 64 concurrent keep-alive connections on loopback, side by side
// with a bare node:https server that answers a fixed AdmissionReview (the ceiling: TLS, HTTP and
// JSON with no validation), and cold start from spawn to a ready /readyz.
//
// Servers run in child processes and the load generator in this one, so on a 2-core machine each
// side has a core. When the bare server outruns the load generator (client CPU near 100%), the
// throughput ratio understates the webhook; the server's CPU time per request compares the two
// servers' own work whatever else the machine is doing.
// Run with `npm run bench -- --filter=@extlb/webhook` from the repository root (builds first).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { makeCert, tempDir } from '../test/helpers.js';

const CONNECTIONS = 64;
const WARMUP_MS = 1000;
const DURATION_MS = 4000;
const ROUNDS = 3;
const COLD_STARTS = 5;

const root = join(import.meta.dirname, '../../..');
const cliBin = join(root, 'packages/cli/dist/bin.js');
const tmp = tempDir();
const { certFile, keyFile, cert: ca } = makeCert(tmp.dir, 'bench');

function review(object: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: 'extlb.dev', version: 'v1alpha1', kind: 'BackendPool' },
      resource: { group: 'extlb.dev', version: 'v1alpha1', resource: 'backendpools' },
      name: 'model-pool',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'admin', groups: ['system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
    },
  });
}

const pool = (spec: Record<string, unknown>) => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'BackendPool',
  metadata: { name: 'model-pool', namespace: 'default', labels: { app: 'model' } },
  spec: {
    selector: { matchLabels: { app: 'model' } },
    targetPorts: [{ number: 8000 }],
    loadBalancer: {
      type: 'External',
      external: {
        refs: [
          { name: 'epp', port: { number: 9002 } },
          { name: 'epp-backup', port: { number: 9002 } },
        ],
        maxEndpoints: 3,
      },
    },
    ...spec,
  },
});
const VALID = review(pool({}));
const INVALID = review(pool({ targetPorts: [{ number: 8000 }, { number: 8000 }], appProtocol: 'grpc' }));

// The ceiling: the same TLS and HTTP stack, reading the body and answering a fixed review.
const BARE_SERVER = `
import { createServer } from 'node:https';
import { closeSync, openSync, readFileSync } from 'node:fs';
const answer = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true } });
const server = createServer({ cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY), minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 95000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
`;

interface Started {
  proc: ChildProcess;
  port: number;
  /** The `startupMs` of the server's `listening` log line, when it has one. */
  startupMs: number | undefined;
}

let logFiles = 0;

/**
 * Spawns a server that logs a JSON `listening` line with its port. Its stdout goes to a file, as a
 * container runtime takes it: a pipe read by this busy process would stall the server's writes.
 */
async function startServer(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Started> {
  const logFile = join(tmp.dir, `server-${++logFiles}.log`);
  const fd = openSync(logFile, 'w');
  const proc = spawn(process.execPath, args, { stdio: ['ignore', fd, 'inherit'], env });
  closeSync(fd);
  let exited = false;
  proc.on('exit', () => (exited = true));
  for (;;) {
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('"listening"'));
    if (line) {
      const l = JSON.parse(line) as { port: number; startupMs?: number };
      return { proc, port: l.port, startupMs: l.startupMs };
    }
    if (exited) throw new Error(`server exited before listening: ${args.join(' ')}`);
    await delay(2);
  }
}

function stop(s: Started): Promise<void> {
  return new Promise((resolve) => {
    s.proc.once('exit', () => resolve());
    s.proc.kill('SIGTERM');
  });
}

function once(port: number, path: string, body: string | undefined, agent: Agent | false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: body === undefined ? 'GET' : 'POST', ca, agent, headers: { 'Content-Type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface LoadResult {
  connections: number;
  /** Share of one core the server process and this load generator used while measuring. */
  serverCpu: number;
  clientCpu: number;
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** `connections` workers on keep-alive connections, each sending one request after another. */
async function load(server: Started, path: string, body: string, connections = CONNECTIONS): Promise<LoadResult> {
  const { port } = server;
  const agent = new Agent({ keepAlive: true, maxSockets: connections, ca });
  let serverCpu0 = 0;
  let clientCpu0 = process.cpuUsage();
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  const start = performance.now();
  const warmEnd = start + WARMUP_MS;
  const end = warmEnd + DURATION_MS;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const status = await once(port, path, body, agent);
        if (status !== 200) errors++;
      } catch {
        errors++;
      }
      const t1 = performance.now();
      if (!measuring && t1 >= warmEnd) {
        measuring = true;
        serverCpu0 = cpuSeconds(server.proc.pid);
        clientCpu0 = process.cpuUsage();
      }
      if (measuring && t1 <= end) latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const client = process.cpuUsage(clientCpu0);
  const serverCpu = (cpuSeconds(server.proc.pid) - serverCpu0) / (DURATION_MS / 1000);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const clientCpu = (client.user + client.system) / 1e6 / (DURATION_MS / 1000);
  return { connections, serverCpu, clientCpu, requests: latencies.length, errors, rps: latencies.length / (DURATION_MS / 1000), p50: at(0.5), p99: at(0.99) };
}

const webhookArgs = [cliBin, 'webhook', '--listen', '127.0.0.1:0', '--cert', certFile, '--key', keyFile];

/**
 * Milliseconds from spawning `extlb webhook` to its first 200 from /readyz, and from the process's
 * own start to listening (its `startupMs` log field, which leaves out exec and the probe).
 */
async function coldStart(): Promise<{ ready: number; listening: number }> {
  const t0 = performance.now();
  const server = await startServer(webhookArgs);
  // Probe /readyz as the kubelet would, until it answers 200.
  for (let i = 0; i < 1000; i++) {
    try {
      if ((await once(server.port, '/readyz', undefined, false)) === 200) break;
    } catch {
      // not accepting yet
    }
  }
  const ready = performance.now() - t0;
  await stop(server);
  return { ready, listening: server.startupMs ?? NaN };
}

const fmt = (r: LoadResult) =>
  `${Math.round(r.rps).toString().padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   ${String(r.connections).padStart(2)} conn   CPU server ${(100 * r.serverCpu).toFixed(0)}% client ${(100 * r.clientCpu).toFixed(0)}%   server ${((1e6 * r.serverCpu) / r.rps).toFixed(0)} µs CPU/request   (${r.requests} requests, ${r.errors} errors)`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The run with the median throughput, so its latencies belong to one real run. */
function medianRun(results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)]!;
}

try {
  console.log(
    `node ${process.version}, ${CONNECTIONS} keep-alive connections, ${WARMUP_MS} ms warm-up, ${DURATION_MS} ms measured, loopback TLS 1.3; ` +
      `bare and webhook alternate for ${ROUNDS} rounds (median shown) so that load from elsewhere on the machine falls on both`,
  );
  const bare = await startServer(['--input-type=module', '-e', BARE_SERVER], { ...process.env, CERT: certFile, KEY: keyFile });
  const webhook = await startServer(webhookArgs);
  const bareRuns: LoadResult[] = [];
  const validRuns: LoadResult[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    bareRuns.push(await load(bare, '/validate', VALID));
    validRuns.push(await load(webhook, '/validate', VALID));
  }
  await stop(bare);
  const bareResult = medianRun(bareRuns);
  const valid = medianRun(validRuns);
  const ratio = median(validRuns.map((r, i) => r.rps / bareRuns[i]!.rps));
  console.log(`bare https server (fixed review)       ${fmt(bareResult)}`);
  console.log(`webhook /validate, valid BackendPool   ${fmt(valid)}   ${(100 * ratio).toFixed(0)}% of bare (median of per-round ratios)`);
  for (const [name, path, body, connections] of [
    ['webhook /validate, invalid BackendPool', '/validate', INVALID, CONNECTIONS],
    ['webhook /mutate, valid BackendPool    ', '/mutate', VALID, CONNECTIONS],
    // One connection: the latency of one request when nothing queues behind it.
    ['webhook /validate, valid, 1 connection', '/validate', VALID, 1],
  ] as const) {
    console.log(`${name}  ${fmt(await load(webhook, path, body, connections))}`);
  }
  await stop(webhook);

  const runs: { ready: number; listening: number }[] = [];
  for (let i = 0; i < COLD_STARTS; i++) runs.push(await coldStart());
  const colds = runs.map((r) => r.ready).sort((a, b) => a - b);
  console.log(
    `cold start, spawn to /readyz 200: median ${median(colds).toFixed(0)} ms (min ${colds[0]!.toFixed(0)}, max ${colds[colds.length - 1]!.toFixed(0)}, ${COLD_STARTS} runs); ` +
      `process start to listening: median ${median(runs.map((r) => r.listening)).toFixed(0)} ms`,
  );
  console.log(
    `targets: throughput >= 60% of bare: ${(100 * ratio).toFixed(0)}%; p99 < 10 ms at ${CONNECTIONS} connections: ${valid.p99.toFixed(2)} ms; cold start < 300 ms: ${median(colds).toFixed(0)} ms`,
  );
  console.log(`machine: ${cpus().length} CPUs, 1-minute load average ${loadavg()[0]!.toFixed(2)} at the end (above ~1, other work shared the CPUs)`);
} finally {
  tmp.remove();
}
