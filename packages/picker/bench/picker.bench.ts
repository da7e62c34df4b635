// Reference-picker decisions over real gRPC on loopback (64 concurrent ext_proc streams, one stream
// per request as Envoy opens them), the picker's memory under a flood of distinct served values,
// codec and simulator throughput. Prints figures; asserts nothing. The picker runs in its own
// process (the built dist/, as it ships) so that it and the load generator do not share one event
// loop. The load generator plays Envoy as cheaply as it can (its own minimal HTTP/2 client, h2-load.ts,
// writing each request from one template and reading only the answer's kind), so that on a small
// machine it leaves the CPU to the picker; its own CPU per decision is printed apart, and which of
// the two bounds the rate. The same picker is measured on both gRPC
// server implementations (the project's node:http2 one and @grpc/grpc-js), beside a bare node:http2
// server that answers fixed bytes (no gRPC, no picker: the floor of any server on node:http2),
// their rounds interleaved so a shared machine's busy spells fall on all alike; then one profiled
// round of each shows where a decision's CPU goes (PICKER_PROFILE_DIR=dir keeps those profiles). `npm run bench` also runs the model-server
// benchmark (picker-bench).
import * as grpc from '@grpc/grpc-js';
import type { ClientHttp2Session } from 'node:http2';
import { connect as connectH2, createServer as createH2Server } from 'node:http2';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatEndpointList, parseEndpointList } from '../src/codec.js';
import { responseHeaders } from '../src/conformance/answers.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { loadProtos } from '../src/protos.js';
import type { GrpcTransport } from '../src/server.js';
import { PARTS, SelfProfiler, type Part } from './cpu-profile.js';
import { RawH2Client } from './h2-load.js';
import { protocolSources, simulateOverrideHost } from '../src/simulator.js';

const CONCURRENCY = 64;
/** As in the report that found the leak: 600 distinct 1 MiB values. */
const FLOOD = 600;
const FLOOD_VALUE_BYTES = 2 ** 20;
const WARMUP = 3_000;
const DECISIONS = 30_000;
/** Rounds of the decision run: the machine is shared, so the spread is part of the figure. */
const ROUNDS = 3;

const REQUEST: ProcessingRequest = {
  request_headers: {
    headers: {
      headers: [
        { key: ':method', raw_value: Buffer.from('POST') },
        { key: ':path', raw_value: Buffer.from('/v1/completions') },
        { key: ':authority', raw_value: Buffer.from('bench') },
        { key: 'content-type', raw_value: Buffer.from('application/json') },
      ],
    },
    end_of_stream: true,
  },
};

/**
 * What a server process runs: the picker on one of its gRPC transports, the bare node:http2 floor,
 * or (PICKER_BASELINE_DIST=another build's dist/) an earlier build of the picker on node:http2, for
 * before/after figures from the same run. PICKER_KINDS=a,b picks some of them.
 */
type ServerKind = GrpcTransport | 'bare-http2' | 'baseline';
const BASELINE_DIST = process.env.PICKER_BASELINE_DIST;
const KINDS: readonly ServerKind[] =
  (process.env.PICKER_KINDS?.split(',') as ServerKind[] | undefined) ??
  (BASELINE_DIST ? ['node-http2', 'baseline', 'grpc-js', 'bare-http2'] : ['node-http2', 'grpc-js', 'bare-http2']);
const LABEL: Record<ServerKind, string> = {
  'node-http2': 'picker on node:http2 (default)',
  baseline: `picker on node:http2, baseline build (${BASELINE_DIST})`,
  'grpc-js': 'picker on @grpc/grpc-js',
  'bare-http2': 'bare node:http2 (fixed bytes)',
};

/** A node:http2 server that answers every stream with one fixed gRPC message and an OK status: what any server on node:http2 costs at least. */
async function serveBare(): Promise<{ address: string; close(): Promise<void> }> {
  const answer = Buffer.alloc(5 + 180);
  answer.writeUInt32BE(180, 1);
  answer[5] = REQUEST_HEADERS_TAG;
  const server = createH2Server();
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    let answered = false;
    stream.on('data', () => {
      if (answered) return;
      answered = true;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.write(answer);
    });
    stream.on('end', () => stream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { address: `127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function serve(kind: ServerKind): Promise<void> {
  let running: { address: string; close(): Promise<void> };
  if (kind === 'bare-http2') running = await serveBare();
  else {
    // The built package, as it ships (tsx would wrap every closure the picker makes in a naming helper).
    const dist = kind === 'baseline' ? pathToFileURL(`${BASELINE_DIST}/`).href : new URL('../dist/', import.meta.url).href;
    const { startPicker } = (await import(`${dist}server.js`)) as typeof import('../dist/server.js');
    const { staticEndpoints } = (await import(`${dist}pool-members.js`)) as typeof import('../dist/pool-members.js');
    const endpoints = Array.from({ length: 32 }, (_, i) => `10.0.${i >> 4}.${(i & 15) + 1}:8000`).join(',');
    const transport = kind === 'baseline' ? 'node-http2' : kind;
    running = await startPicker({ pool: staticEndpoints(endpoints), strategy: 'least-request', maxEndpoints: 3, transport });
  }
  process.stdout.write(`${running.address}\n`);
  // The load generator resets the CPU clock once warm-up is over, so the CPU figure is the server's own cost.
  let base = process.cpuUsage();
  let profiler: SelfProfiler | undefined;
  const commands = createInterface({ input: process.stdin });
  commands.on('line', async (command) => {
    if (command === 'measure') base = process.cpuUsage();
    if (command === 'cpu') {
      const used = process.cpuUsage(base);
      process.stdout.write(`${used.user + used.system}\n`);
    }
    if (command === 'profile') {
      profiler = new SelfProfiler();
      await profiler.start();
      base = process.cpuUsage();
      process.stdout.write('profiling\n');
    }
    if (command === 'profile-stop') {
      const used = process.cpuUsage(base);
      const keep = process.env.PICKER_PROFILE_DIR;
      const parts = await (profiler as SelfProfiler).stop(keep ? `${keep}/${kind}.cpuprofile` : undefined);
      process.stdout.write(`${used.user + used.system} ${PARTS.map((p) => parts[p]).join(' ')}\n`);
    }
    if (command === 'memory') {
      globalThis.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.stdout.write(`${heapUsed} ${rss}\n`);
    }
  });
  commands.once('close', () => void running.close().then(() => process.exit(0)));
}

/** Asks the picker process one command and reads its one-line reply. */
async function ask(server: ChildProcessByStdio<Writable, Readable, null>, command: string): Promise<number[]> {
  const reply = once(server.stdout, 'data');
  server.stdin.write(`${command}\n`);
  return ((await reply) as [Buffer])[0].toString().trim().split(' ').map(Number);
}

type Open = () => grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;

const PROCESS_PATH = '/envoy.service.ext_proc.v3.ExternalProcessor/Process';
/** `ProcessingResponse.request_headers` (field 1, length-delimited): the tag an answer naming endpoints starts with. */
const REQUEST_HEADERS_TAG = 0x0a;

/** The request as one gRPC message frame: a zero compression flag, the length, the protobuf bytes. */
function grpcFrame(message: ProcessingRequest): Buffer {
  const Process = loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>;
  const bytes = Process.requestSerialize(message);
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  bytes.copy(frame, 5);
  return frame;
}

/** One decision: resolves with its latency in ms once the answer naming endpoints is in. */
type Decide = () => Promise<number>;

/**
 * How the load generator plays Envoy: `raw` (default) is its own minimal HTTP/2 client
 * (`h2-load.ts`), `node-http2` node's client; PICKER_LOAD=node-http2 measures with that one.
 */
type LoadClient = 'raw' | 'node-http2';
const LOAD: LoadClient = process.env.PICKER_LOAD === 'node-http2' ? 'node-http2' : 'raw';

function unexpected(data: Buffer | undefined): Error {
  return new Error(`unexpected answer ${data?.subarray(0, 8).toString('hex')}`);
}

/** One request as Envoy makes it, on node's client: open a stream, send the headers message, wait for the answer, half-close. */
function decideOnSession(session: ClientHttp2Session, frame: Buffer): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': PROCESS_PATH, 'content-type': 'application/grpc', te: 'trailers' });
    let answered = false;
    stream.on('data', (chunk: Buffer) => {
      if (answered) return;
      answered = true;
      if (chunk[5] !== REQUEST_HEADERS_TAG) reject(unexpected(chunk));
      resolve(performance.now() - start);
      stream.end();
    });
    stream.on('error', (e) => (answered ? undefined : reject(e)));
    stream.write(frame);
  });
}

/** The same on the raw client, which writes the request from a template and half-closes on the answer. */
function decideRaw(client: RawH2Client): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) =>
    client.request((err, data) => {
      if (err) reject(err);
      else if (data?.[5] !== REQUEST_HEADERS_TAG) reject(unexpected(data));
      else resolve(performance.now() - start);
    }),
  );
}

async function runDecisions(decide: Decide, total: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let issued = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (issued < total) {
        issued++;
        latencies.push(await decide());
      }
    }),
  );
  return { seconds: (performance.now() - start) / 1000, latencies };
}

/** One request whose response reports `served` as the endpoint that served it. */
function reportServed(open: Open, served: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const call = open();
    let answers = 0;
    call.on('data', () => {
      answers++;
      if (answers === 1) call.write(responseHeaders({ served }));
      if (answers === 2) call.end();
    });
    call.on('status', () => (answers === 2 ? resolve() : reject(new Error(`served report answered ${answers} times`))));
    call.on('error', () => undefined);
    call.write(REQUEST);
  });
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

function perSecond(label: string, fn: () => void): void {
  for (let i = 0; i < 20_000; i++) fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < 1000) {
    for (let i = 0; i < 1000; i++) fn();
    n += 1000;
  }
  console.log(`  ${label}: ${Math.round(n / ((performance.now() - start) / 1000)).toLocaleString('en')} /s`);
}

interface Server {
  kind: ServerKind;
  process: ChildProcessByStdio<Writable, Readable, null>;
  address: string;
  decide: Decide;
  close(): void;
}

async function spawnServer(kind: ServerKind, frame: Buffer): Promise<Server> {
  const flags = (process.env.PICKER_SERVER_FLAGS ?? '').split(' ').filter((f) => f !== '');
  const child = spawn(process.execPath, [...flags, '--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--serve', kind], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  const address = first.toString().trim();
  if (LOAD === 'node-http2') {
    const session = connectH2(`http://${address}`);
    return { kind, process: child, address, decide: () => decideOnSession(session, frame), close: () => session.close() };
  }
  const client = await RawH2Client.connect(address, PROCESS_PATH, frame);
  return { kind, process: child, address, decide: () => decideRaw(client), close: () => client.close() };
}

interface Round {
  rate: number;
  p50: number;
  p99: number;
  /** Server and load generator CPU per decision, µs. */
  cpu: number;
  load: number;
}

/** One measured round against one server: warm-up, then DECISIONS decisions with both processes' CPU clocks reset. */
async function measure(server: Server, start = 'measure'): Promise<Round & { parts?: number[] }> {
  await runDecisions(server.decide, WARMUP);
  if (start === 'profile') await ask(server.process, 'profile');
  else server.process.stdin.write('measure\n');
  const loadBase = process.cpuUsage();
  const { seconds, latencies } = await runDecisions(server.decide, DECISIONS);
  const load = process.cpuUsage(loadBase);
  const [microseconds = NaN, ...parts] = await ask(server.process, start === 'profile' ? 'profile-stop' : 'cpu');
  latencies.sort((a, b) => a - b);
  return {
    rate: DECISIONS / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpu: microseconds / DECISIONS,
    load: (load.user + load.system) / DECISIONS,
    parts,
  };
}

const aim = (met: boolean): string => (met ? 'met' : 'not met');
const loads = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function formatRound(r: Round): string {
  return (
    `${Math.round(r.rate).toLocaleString('en')} decisions/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ` +
    `server CPU ${r.cpu.toFixed(1)} µs per decision, load generator CPU ${r.load.toFixed(1)} µs per decision`
  );
}

/**
 * Which side bounds the rate: the picker and the load generator share the machine's cores, so at
 * best they make cores / (their CPU per decision together) decisions a second, and the one that
 * spends more per decision is the one to make cheaper.
 */
function bound(r: Round): string {
  const cores = availableParallelism();
  const ceiling = (cores * 1e6) / (r.cpu + r.load);
  const side = r.load > r.cpu ? 'the load generator' : 'the server';
  return (
    `${side} is the bound (server ${r.cpu.toFixed(1)} µs, load generator ${r.load.toFixed(1)} µs per decision); ` +
    `on ${cores} cores with nothing else running the two make at most ${Math.round(ceiling).toLocaleString('en')} decisions/s`
  );
}

/** Best of the rounds, each figure on its own (the machine is shared: the least disturbed round is the closest to the cost). */
function best(rounds: Round[]): Round {
  return {
    rate: Math.max(...rounds.map((r) => r.rate)),
    p50: Math.min(...rounds.map((r) => r.p50)),
    p99: Math.min(...rounds.map((r) => r.p99)),
    cpu: Math.min(...rounds.map((r) => r.cpu)),
    load: Math.min(...rounds.map((r) => r.load)),
  };
}

async function main(): Promise<void> {
  const frame = grpcFrame(REQUEST);
  const servers = await Promise.all(KINDS.map((kind) => spawnServer(kind, frame)));
  const server = servers[0] as Server;
  const client = new (loadProtos().ExtProcClient)(server.address, grpc.credentials.createInsecure(), { 'grpc.enable_channelz': 0 });
  const open = (client as unknown as { Process: Open }).Process.bind(client);

  console.log(`picker decisions over gRPC on loopback, ${CONCURRENCY} concurrent streams, least-request, 3 endpoints per answer (aims from issue 19):`);
  console.log(
    `  load average at start ${loads()} (${ROUNDS} rounds of ${DECISIONS.toLocaleString('en')} decisions per server, interleaved; load generator: ${LOAD === 'raw' ? 'its own HTTP/2 client (h2-load.ts)' : "node:http2's client"})`,
  );
  const rounds = new Map<ServerKind, Round[]>(KINDS.map((k) => [k, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of servers) {
      const r = await measure(s);
      rounds.get(s.kind)?.push(r);
      console.log(`  round ${round}, ${LABEL[s.kind]}: ${formatRound(r)}`);
    }
  }
  console.log(`  load average at end ${loads()}; best of ${ROUNDS}:`);
  const grpcJs = best(rounds.get('grpc-js') ?? []);
  for (const kind of KINDS) {
    const b = best(rounds.get(kind) ?? []);
    const aims =
      kind === 'bare-http2'
        ? ''
        : ` — aims: >= 20,000/s ${aim(b.rate >= 20_000)} (${(b.rate / 20_000).toFixed(2)}x), p99 < 5 ms ${aim(b.p99 < 5)}, <= 25 µs ${aim(b.cpu <= 25)}`;
    const ratio = kind === 'grpc-js' || !rounds.has('grpc-js') ? '' : ` (${(grpcJs.cpu / b.cpu).toFixed(2)}x less CPU than on grpc-js)`;
    console.log(`    ${LABEL[kind]}: ${formatRound(b)}${ratio}${aims}`);
  }
  for (const kind of KINDS) console.log(`  ${LABEL[kind]}: ${bound(best(rounds.get(kind) ?? []))}`);
  console.log('  where the server CPU of a decision goes (one profiled round each, V8 self time; a native call counts for its JavaScript caller):');
  for (const s of servers) {
    const r = await measure(s, 'profile');
    const parts = r.parts ?? [];
    const total = parts.reduce((a, b) => a + b, 0);
    const shares = PARTS.map((p, i) => [p, (parts[i] ?? 0) / total] as [Part, number])
      .filter(([, share]) => share >= 0.005)
      .map(([p, share]) => `${p} ${((share * r.cpu) | 0).toString()} µs (${Math.round(share * 100)}%)`);
    console.log(`    ${LABEL[s.kind]}, ${r.cpu.toFixed(1)} µs per decision while profiled: ${shares.join(', ')}`);
  }
  for (const s of servers.slice(1)) {
    s.close();
    s.process.stdin.end();
  }
  server.close();

  const [heapBefore = NaN, rssBefore = NaN] = await ask(server.process, 'memory');
  for (let i = 0; i < FLOOD; i++) await reportServed(open, `${i}:${'9'.repeat(FLOOD_VALUE_BYTES)}`);
  const [heapAfter = NaN, rssAfter = NaN] = await ask(server.process, 'memory');
  const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
  console.log(`served flood (${LABEL[server.kind]}): ${FLOOD} requests reporting distinct ${mb(FLOOD_VALUE_BYTES)} MiB served values that are no pool member:`);
  console.log(`  picker heap ${mb(heapBefore)} -> ${mb(heapAfter)} MiB, RSS ${mb(rssBefore)} -> ${mb(rssAfter)} MiB`);
  client.close();
  server.process.stdin.end();
  await once(server.process, 'exit');

  const typical = '10.0.0.1:8000, 10.0.0.2:8000,[2001:db8::1]:8000';
  const long = Array.from({ length: 64 }, (_, i) => `10.1.${i >> 8}.${i & 255}:8000`).join(',');
  console.log('codec:');
  perSecond('parseEndpointList, 3 entries (IPv4 + IPv6)', () => parseEndpointList(typical));
  perSecond('parseEndpointList, 64 entries', () => parseEndpointList(long));
  perSecond('formatEndpointList, 3 entries', () => formatEndpointList(['10.0.0.1:8000', '10.0.0.2:8000', '[2001:db8::1]:8000']));
  console.log('simulator:');
  const sources = protocolSources(['metadata', 'header']);
  const hosts = long.split(',');
  perSecond('simulateOverrideHost, 64 hosts, 3 attempts', () =>
    simulateOverrideHost({ sources, fallback: 'RoundRobin', hosts, metadata: { 'envoy.lb': { 'x-gateway-destination-endpoint': typical } }, attempts: 3 }),
  );
}

const serving = process.argv.indexOf('--serve');
await (serving >= 0 ? serve(process.argv[serving + 1] as ServerKind) : main());
