/**
 * The picker benchmark (`extlb picker-bench`), in `benchmark/` rather than `bench/` because it is
 * part of the published package (the repository's `bench/` folders are not): simulated model servers (`model-server.ts`), a
 * shared-prefix workload swept over request rates (`workload.ts`), and a data plane that drives
 * each picker over real ext_proc gRPC as Envoy does in FULL_DUPLEX_STREAMED mode — request headers,
 * then the body in chunks without waiting, the picker's answer, the request forwarded over HTTP to
 * the first endpoint named, the served endpoint reported on the response headers. The response
 * body is not passed through the picker (it would only add a round trip per token for every picker
 * alike). Figures per picker and rate: throughput, time to first token and end-to-end latency
 * percentiles, prefix-cache hit rate (tokens the servers found cached), how evenly the servers were
 * loaded, and the shed rate; then the knee of each picker: the highest rate whose TTFT p90 stays
 * within the SLO with at most 1% shed.
 */
import { Agent, request as httpRequest } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';
import { parseEndpointList } from '../codec.js';
import { analyse, endpointValue } from '../conformance/answers.js';
import { ExtProcSession } from '../conformance/session.js';
import type { ProcessingRequest } from '../messages.js';
import type { ProfileName } from '../picker.js';
import { staticEndpoints } from '../pool-members.js';
import { loadProtos } from '../protos.js';
import type { LoadAwareConfig } from '../scoring.js';
import { startPicker, type RunningPicker } from '../server.js';
import type { ServerKind } from '../signals.js';
import { DEFAULT_COST_MODEL, SimulatedModelServer, type CostModel } from './model-server.js';
import { DEFAULT_WORKLOAD, SharedPrefixWorkload, type WorkloadOptions } from './workload.js';

/** A picker under test: a reference profile the benchmark starts (`replicas` of it), or one already running at `address`. */
export type PickerUnderTest = { name: string; profile: ProfileName; replicas?: number; loadAware?: LoadAwareConfig } | { name: string; address: string };

export interface BenchOptions {
  servers: number;
  serverKind: ServerKind;
  model: CostModel;
  workload: WorkloadOptions;
  /** Offered request rates, per second, in order. */
  rates: number[];
  stepSeconds: number;
  /** Seconds at the first rate before the sweep, not measured: the caches fill as in a server that has been up a while. */
  warmupSeconds: number;
  pickers: PickerUnderTest[];
  /** Port of the first simulated server (the others follow), so a picker started by hand can name them; 0: any free ports. */
  basePort: number;
  maxEndpoints: number;
  /** The TTFT p90 a rate must keep to count as below the knee. */
  ttftSloMs: number;
  /** How often the reference load-aware picker scrapes the servers. */
  scrapeIntervalMs: number;
  /** Longest wait for one request, from the picker's answer to the last token. */
  requestTimeoutMs: number;
  onProgress?: (line: string) => void;
}

export const DEFAULT_BENCH: Omit<BenchOptions, 'pickers'> = {
  servers: 4,
  serverKind: 'vllm',
  model: DEFAULT_COST_MODEL,
  workload: DEFAULT_WORKLOAD,
  rates: [10, 20, 30, 40, 50, 60],
  stepSeconds: 8,
  warmupSeconds: 5,
  basePort: 0,
  maxEndpoints: 3,
  ttftSloMs: 1000,
  scrapeIntervalMs: 100,
  requestTimeoutMs: 60_000,
};

export const REFERENCE_PICKERS: PickerUnderTest[] = [
  { name: 'round-robin', profile: 'round-robin' },
  { name: 'least-request', profile: 'least-request' },
  { name: 'load-aware', profile: 'load-aware' },
  // Active-active: two replicas sharing nothing, the requests alternating between them.
  { name: 'load-aware x2', profile: 'load-aware', replicas: 2 },
];

/** The margin the benchmark holds replicas to: prefix hit rate within 5% of one replica's. */
export const REPLICA_HIT_MARGIN = 0.05;

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

export interface RateRow {
  rate: number;
  sent: number;
  completed: number;
  shed: number;
  errors: number;
  /** Completed requests per second of the step. */
  throughput: number;
  ttftMs: Percentiles;
  e2eMs: Percentiles;
  /** Prompt tokens the servers found in their prefix caches, over all prompt tokens. */
  hitRate: number;
  /** Coefficient of variation of the requests each server admitted (0: perfectly even). */
  imbalance: number;
  /** Why requests failed, first few. */
  failures: string[];
}

export interface PickerResult {
  name: string;
  rows: RateRow[];
  knee: RateRow | undefined;
}

export interface BenchReport {
  options: Omit<BenchOptions, 'onProgress'>;
  results: PickerResult[];
}

const percentiles = (values: number[]): Percentiles => {
  const sorted = values.slice().sort((a, b) => a - b);
  const at = (p: number): number => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number));
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
};

type Outcome = { kind: 'done'; ttftMs: number; e2eMs: number } | { kind: 'shed' } | { kind: 'error'; reason: string };

const CHUNK = 4096;

function requestHeaders(length: number): ProcessingRequest {
  const headers: Record<string, string> = {
    ':method': 'POST',
    ':path': '/v1/completions',
    ':authority': 'picker-bench',
    ':scheme': 'http',
    'content-type': 'application/json',
    'content-length': String(length),
  };
  return { request_headers: { headers: { headers: Object.entries(headers).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) }, end_of_stream: false } };
}

/** One request through a picker and a model server, as Envoy would carry it. */
async function oneRequest(client: grpc.Client, body: Buffer, agent: Agent, timeoutMs: number): Promise<Outcome> {
  const start = performance.now();
  const session = new ExtProcSession(client, timeoutMs);
  try {
    session.send(requestHeaders(body.length));
    for (let at = 0; at < body.length; at += CHUNK) {
      session.send({ request_body: { body: body.subarray(at, at + CHUNK), end_of_stream: at + CHUNK >= body.length } });
    }
    const answer = await session.next();
    if (answer.kind !== 'message') return { kind: 'error', reason: answer.kind === 'end' ? `stream ended: ${answer.details}` : 'no answer from the picker' };
    const m = answer.message;
    if (m.immediate_response) {
      const code = m.immediate_response.status?.code;
      return code === EPP.status.shedding ? { kind: 'shed' } : { kind: 'error', reason: `ImmediateResponse ${code}` };
    }
    const value = endpointValue(analyse(answer));
    const first = value === undefined ? undefined : parseEndpointList(value).endpoints[0];
    if (!first) return { kind: 'error', reason: `no endpoint in the answer (${m.response})` };
    const outcome = await forward(first.ip, first.port, body, agent, start, timeoutMs);
    session.send({
      response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: true },
      metadata_context: { filter_metadata: { [EPP.namespace]: { fields: { [EPP.servedKey]: { stringValue: first.address } } } } },
    });
    session.finish();
    return outcome;
  } finally {
    // The picker's remaining answers (the body passed back) are not needed; the stream ends here.
    setTimeout(() => session.cancel(), 1000).unref();
  }
}

function forward(host: string, port: number, body: Buffer, agent: Agent, start: number, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let ttft = NaN;
    const req = httpRequest(
      { host, port, path: '/v1/completions', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        res.on('data', () => {
          if (Number.isNaN(ttft)) ttft = performance.now() - start;
        });
        res.on('end', () =>
          resolve(
            res.statusCode === 200 ? { kind: 'done', ttftMs: ttft, e2eMs: performance.now() - start } : { kind: 'error', reason: `HTTP ${res.statusCode}` },
          ),
        );
        res.on('error', (e) => resolve({ kind: 'error', reason: e.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ kind: 'error', reason: e.message }));
    req.end(body);
  });
}

/** The servers' counters, to take differences over a step. */
function snapshot(servers: SimulatedModelServer[]): Array<{ requests: number; promptTokens: number; cachedTokens: number }> {
  return servers.map((s) => ({ ...s.counters }));
}

async function runRate(
  rate: number,
  seconds: number,
  options: BenchOptions,
  clients: grpc.Client[],
  servers: SimulatedModelServer[],
  workload: SharedPrefixWorkload,
  agent: Agent,
): Promise<RateRow> {
  const before = snapshot(servers);
  const outcomes: Array<Promise<Outcome>> = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let next = start;
  let i = 0;
  while (next < end) {
    const wait = next - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const { body } = workload.next();
    outcomes.push(oneRequest(clients[i++ % clients.length] as grpc.Client, body, agent, options.requestTimeoutMs));
    next += workload.gap(rate) * 1000;
  }
  const results = await Promise.all(outcomes);
  const elapsed = (performance.now() - start) / 1000;
  const after = snapshot(servers);
  const admitted = after.map((a, k) => a.requests - (before[k]?.requests ?? 0));
  const prompt = after.reduce((t, a, k) => t + a.promptTokens - (before[k]?.promptTokens ?? 0), 0);
  const cached = after.reduce((t, a, k) => t + a.cachedTokens - (before[k]?.cachedTokens ?? 0), 0);
  const mean = admitted.reduce((t, x) => t + x, 0) / admitted.length;
  const sd = Math.sqrt(admitted.reduce((t, x) => t + (x - mean) ** 2, 0) / admitted.length);
  const done = results.filter((r): r is Extract<Outcome, { kind: 'done' }> => r.kind === 'done');
  const errors = results.filter((r): r is Extract<Outcome, { kind: 'error' }> => r.kind === 'error');
  return {
    rate,
    sent: results.length,
    completed: done.length,
    shed: results.filter((r) => r.kind === 'shed').length,
    errors: errors.length,
    throughput: done.length / elapsed,
    ttftMs: percentiles(done.map((d) => d.ttftMs)),
    e2eMs: percentiles(done.map((d) => d.e2eMs)),
    hitRate: prompt === 0 ? 0 : cached / prompt,
    imbalance: mean === 0 ? 0 : sd / mean,
    failures: [...new Set(errors.map((e) => e.reason))].slice(0, 3),
  };
}

function kneeOf(rows: RateRow[], sloMs: number): RateRow | undefined {
  let knee: RateRow | undefined;
  for (const row of rows) {
    if (row.ttftMs.p90 > sloMs || row.shed > row.sent * 0.01 || row.errors > 0) break;
    knee = row;
  }
  return knee;
}

/** One picker under test with its own servers (fresh, so cold caches), clients and workload. */
interface Setup {
  picker: PickerUnderTest;
  servers: SimulatedModelServer[];
  started: RunningPicker[];
  clients: grpc.Client[];
  workload: SharedPrefixWorkload;
  agent: Agent;
  rows: RateRow[];
}

async function setUp(picker: PickerUnderTest, options: BenchOptions, setups: Setup[]): Promise<Setup> {
  // Only a picker started by hand needs the servers at known ports; the others take any free ones.
  const base = 'address' in picker ? options.basePort : 0;
  const servers = Array.from({ length: options.servers }, () => new SimulatedModelServer(options.model, options.serverKind));
  const setup: Setup = {
    picker,
    servers,
    started: [],
    clients: [],
    workload: new SharedPrefixWorkload(options.workload),
    agent: new Agent({ keepAlive: true, maxSockets: 256 }),
    rows: [],
  };
  setups.push(setup);
  await Promise.all(servers.map((s, i) => s.listen('127.0.0.1', base === 0 ? 0 : base + i)));
  let addresses: string[];
  if ('address' in picker) addresses = [picker.address];
  else {
    const pool = staticEndpoints(servers.map((s) => s.address));
    for (let r = 0; r < (picker.replicas ?? 1); r++) {
      setup.started.push(
        await startPicker({
          pool,
          strategy: picker.profile,
          maxEndpoints: options.maxEndpoints,
          ...(picker.loadAware ? { loadAware: picker.loadAware } : {}),
          scrape: { intervalMs: options.scrapeIntervalMs, staleAfterMs: Math.max(1000, options.scrapeIntervalMs * 10) },
        }),
      );
    }
    addresses = setup.started.map((p) => p.address);
  }
  const protos = loadProtos();
  setup.clients = addresses.map((a) => new protos.ExtProcClient(a, grpc.credentials.createInsecure()));
  return setup;
}

async function tearDown(setup: Setup): Promise<void> {
  for (const c of setup.clients) c.close();
  setup.agent.destroy();
  await Promise.all(setup.started.map((p) => p.close()));
  await Promise.all(setup.servers.map((s) => s.close()));
}

/**
 * Runs the benchmark. Every picker gets its own fresh servers (cold caches), a warm-up, then the
 * rate sweep; the pickers take turns at each rate, so that a busy spell of a shared machine falls
 * on all of them alike rather than on whichever ran then.
 */
export async function runPickerBench(options: BenchOptions): Promise<BenchReport> {
  const setups: Setup[] = [];
  try {
    for (const picker of options.pickers) await setUp(picker, options, setups);
    if (options.warmupSeconds > 0) {
      for (const s of setups) await runRate(options.rates[0] ?? 1, options.warmupSeconds, options, s.clients, s.servers, s.workload, s.agent);
    }
    for (const rate of options.rates) {
      for (const s of setups) {
        const row = await runRate(rate, options.stepSeconds, options, s.clients, s.servers, s.workload, s.agent);
        s.rows.push(row);
        options.onProgress?.(`${s.picker.name}: ${formatRow(row)}`);
      }
    }
  } finally {
    await Promise.all(setups.map(tearDown));
  }
  const results = setups.map((s) => ({ name: s.picker.name, rows: s.rows, knee: kneeOf(s.rows, options.ttftSloMs) }));
  const { onProgress: _, ...rest } = options;
  return { options: rest, results };
}

const ms = (v: number): string => (Number.isNaN(v) ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;

function formatRow(r: RateRow): string {
  return (
    `rate ${r.rate}/s: ${r.throughput.toFixed(1)} done/s, TTFT p50/p90/p99 ${ms(r.ttftMs.p50)}/${ms(r.ttftMs.p90)}/${ms(r.ttftMs.p99)} ms, ` +
    `E2E p50/p90/p99 ${ms(r.e2eMs.p50)}/${ms(r.e2eMs.p90)}/${ms(r.e2eMs.p99)} ms, prefix hits ${pct(r.hitRate)}, imbalance ${r.imbalance.toFixed(2)}, ` +
    `shed ${pct(r.sent === 0 ? 0 : r.shed / r.sent)}${r.errors > 0 ? `, ${r.errors} errors (${r.failures.join('; ')})` : ''}`
  );
}

/** Each multi-replica picker beside the one-replica picker of the same profile, rate by rate. */
function activeActive(report: BenchReport): string[] {
  const lines: string[] = [];
  for (const picker of report.options.pickers) {
    if ('address' in picker || (picker.replicas ?? 1) < 2) continue;
    const single = report.options.pickers.find((p) => !('address' in p) && p.profile === picker.profile && (p.replicas ?? 1) === 1);
    const many = report.results.find((r) => r.name === picker.name);
    const one = single && report.results.find((r) => r.name === single.name);
    if (!many || !one) continue;
    lines.push(
      `active-active: ${picker.name} (${picker.replicas} replicas, no shared state) against ${one.name} (aim: prefix hit rate within ${REPLICA_HIT_MARGIN * 100}%):`,
    );
    many.rows.forEach((row, i) => {
      const base = one.rows[i];
      if (!base) return;
      const diff = base.hitRate === 0 ? 0 : (row.hitRate - base.hitRate) / base.hitRate;
      const within = Math.abs(diff) <= REPLICA_HIT_MARGIN ? 'within' : 'outside';
      lines.push(
        `  rate ${row.rate}/s: prefix hits ${pct(row.hitRate)} vs ${pct(base.hitRate)} (${diff >= 0 ? '+' : ''}${(diff * 100).toFixed(1)}%, ${within} the margin), ` +
          `imbalance ${row.imbalance.toFixed(2)} vs ${base.imbalance.toFixed(2)}, TTFT p90 ${ms(row.ttftMs.p90)} vs ${ms(base.ttftMs.p90)} ms`,
      );
    });
  }
  return lines;
}

/** The report as a table: one row per picker and rate, then each picker's knee. */
export function formatBenchReport(report: BenchReport): string {
  const o = report.options;
  const lines = [
    `picker-bench: ${o.servers} simulated ${o.serverKind} servers (${o.model.maxRunning} decode slots, ${o.model.kvBlocks * o.model.blockTokens} KV tokens each), ` +
      `${o.workload.groups} prompt groups × ${o.workload.systemPromptTokens} shared + ${o.workload.questionTokens} own tokens, ${o.workload.outputTokens} output tokens; ` +
      `${o.warmupSeconds} s warm-up, ${o.stepSeconds} s per rate, TTFT SLO (p90) ${o.ttftSloMs} ms`,
  ];
  const header = ['picker', 'rate/s', 'done/s', 'TTFT p50', 'p90', 'p99', 'E2E p50', 'p90', 'p99', 'prefix hits', 'imbalance', 'shed', 'errors'];
  const table: string[][] = [header];
  for (const res of report.results) {
    for (const r of res.rows) {
      table.push([
        res.name,
        String(r.rate),
        r.throughput.toFixed(1),
        ms(r.ttftMs.p50),
        ms(r.ttftMs.p90),
        ms(r.ttftMs.p99),
        ms(r.e2eMs.p50),
        ms(r.e2eMs.p90),
        ms(r.e2eMs.p99),
        pct(r.hitRate),
        r.imbalance.toFixed(2),
        pct(r.sent === 0 ? 0 : r.shed / r.sent),
        String(r.errors),
      ]);
    }
  }
  const widths = header.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length)));
  for (const row of table) lines.push(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '));
  lines.push(...activeActive(report));
  lines.push('knee (highest rate with TTFT p90 within the SLO, shed <= 1%, no errors):');
  for (const res of report.results) {
    const k = res.knee;
    lines.push(
      k
        ? `  ${res.name}: ${k.rate}/s offered, ${k.throughput.toFixed(1)} done/s, TTFT p90 ${ms(k.ttftMs.p90)} ms, prefix hits ${pct(k.hitRate)}`
        : `  ${res.name}: none (the lowest rate already misses the SLO)`,
    );
  }
  return `${lines.join('\n')}\n`;
}
