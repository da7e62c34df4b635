// Reference-picker decisions over real gRPC on loopback (64 concurrent ext_proc streams, one stream
// per request as Envoy opens them), the picker's memory under a flood of distinct served values,
// codec and simulator throughput. Prints figures; asserts nothing. The picker runs in its own
// process so that it and the load generator do not share one event loop. The load generator plays
// Envoy as cheaply as it can (node:http2 with the request frame encoded once, reading only the
// answer's kind), so that on a small machine it leaves the CPU to the picker; its own CPU per
// decision is printed apart. `npm run bench` also runs the model-server benchmark (picker-bench).
import * as grpc from '@grpc/grpc-js';
import { connect, type ClientHttp2Session } from 'node:http2';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { formatEndpointList, parseEndpointList } from '../src/codec.js';
import { responseHeaders } from '../src/conformance/answers.js';
import { staticEndpoints } from '../src/pool-members.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { loadProtos } from '../src/protos.js';
import { startPicker } from '../src/server.js';
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

async function serve(): Promise<void> {
  const endpoints = Array.from({ length: 32 }, (_, i) => `10.0.${i >> 4}.${(i & 15) + 1}:8000`).join(',');
  const picker = await startPicker({ pool: staticEndpoints(endpoints), strategy: 'least-request', maxEndpoints: 3 });
  process.stdout.write(`${picker.address}\n`);
  // The load generator resets the CPU clock once warm-up is over, so the CPU figure is the picker's own cost.
  let base = process.cpuUsage();
  const commands = createInterface({ input: process.stdin });
  commands.on('line', (command) => {
    if (command === 'measure') base = process.cpuUsage();
    if (command === 'cpu') {
      const used = process.cpuUsage(base);
      process.stdout.write(`${used.user + used.system}\n`);
    }
    if (command === 'memory') {
      globalThis.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.stdout.write(`${heapUsed} ${rss}\n`);
    }
  });
  commands.once('close', () => void picker.close().then(() => process.exit(0)));
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

/** One request as Envoy makes it: open a stream, send the headers message, wait for the answer, half-close. Resolves with the latency in ms. */
function decide(session: ClientHttp2Session, frame: Buffer): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': PROCESS_PATH, 'content-type': 'application/grpc', te: 'trailers' });
    let answered = false;
    stream.on('data', (chunk: Buffer) => {
      if (answered) return;
      answered = true;
      if (chunk[5] !== REQUEST_HEADERS_TAG) reject(new Error(`unexpected answer ${chunk.subarray(0, 8).toString('hex')}`));
      resolve(performance.now() - start);
      stream.end();
    });
    stream.on('error', (e) => (answered ? undefined : reject(e)));
    stream.write(frame);
  });
}

async function runDecisions(session: ClientHttp2Session, frame: Buffer, total: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let issued = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (issued < total) {
        issued++;
        latencies.push(await decide(session, frame));
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

async function main(): Promise<void> {
  const server = spawn(
    process.execPath,
    [
      ...(process.env.PICKER_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/sprof'] : []),
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--serve',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [first] = (await once(server.stdout, 'data')) as [Buffer];
  const client = new (loadProtos().ExtProcClient)(first.toString().trim(), grpc.credentials.createInsecure(), { 'grpc.enable_channelz': 0 });
  const open = (client as unknown as { Process: Open }).Process.bind(client);

  const session = connect(`http://${first.toString().trim()}`);
  const frame = grpcFrame(REQUEST);
  console.log(`picker decisions over gRPC on loopback, ${CONCURRENCY} concurrent streams, least-request, 3 endpoints per answer (aims from issue 19):`);
  for (let round = 1; round <= ROUNDS; round++) {
    await runDecisions(session, frame, WARMUP);
    server.stdin.write('measure\n');
    const loadBase = process.cpuUsage();
    const { seconds, latencies } = await runDecisions(session, frame, DECISIONS);
    const load = process.cpuUsage(loadBase);
    const [microseconds = NaN] = await ask(server, 'cpu');
    latencies.sort((a, b) => a - b);
    const rate = DECISIONS / seconds;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const perDecision = microseconds / DECISIONS;
    const loadPerDecision = (load.user + load.system) / DECISIONS;
    console.log(
      `  round ${round}: ${Math.round(rate).toLocaleString('en')} decisions/s (aim >= 20,000: ${(rate / 20_000).toFixed(2)}x); ` +
        `p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (aim < 5 ms); ` +
        `picker CPU ${perDecision.toFixed(1)} µs per decision (aim <= 25 µs); load generator CPU ${loadPerDecision.toFixed(1)} µs per decision`,
    );
  }
  session.close();

  const [heapBefore = NaN, rssBefore = NaN] = await ask(server, 'memory');
  for (let i = 0; i < FLOOD; i++) await reportServed(open, `${i}:${'9'.repeat(FLOOD_VALUE_BYTES)}`);
  const [heapAfter = NaN, rssAfter = NaN] = await ask(server, 'memory');
  const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
  console.log(`served flood: ${FLOOD} requests reporting distinct ${mb(FLOOD_VALUE_BYTES)} MiB served values that are no pool member:`);
  console.log(`  picker heap ${mb(heapBefore)} -> ${mb(heapAfter)} MiB, RSS ${mb(rssBefore)} -> ${mb(rssAfter)} MiB`);
  client.close();
  server.stdin.end();
  await once(server, 'exit');

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

await (process.argv.includes('--serve') ? serve() : main());
