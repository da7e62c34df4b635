import { parseArgs } from 'node:util';
import { DEFAULT_BENCH, REFERENCE_PICKERS, formatBenchReport, runPickerBench, SERVER_METRICS, type PickerUnderTest, type ServerKind } from '@extlb/picker';
import type { Command } from '../command.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { UsageError, write, type Io } from '../io.js';

const REFERENCE = REFERENCE_PICKERS.map((p) => p.name);

const USAGE =
  'extlb picker-bench [--pickers NAME,...] [--picker HOST:PORT]... [--rates N,N,...] [--step-seconds N] [--warmup-seconds N] [--servers N]\n' +
  `       [--server-kind ${Object.keys(SERVER_METRICS).join('|')}] [--base-port PORT] [--groups N] [--system-prompt-tokens N] [--question-tokens N]\n` +
  '       [--output-tokens N] [--max-endpoints N] [--ttft-slo-ms N] [--scrape-interval-ms N] [--seed N]\n' +
  `       NAME is one of ${REFERENCE.join(', ')}; --picker adds a picker already running (give it --base-port's endpoints)`;

const OPTIONS = {
  pickers: { type: 'string' },
  picker: { type: 'string', multiple: true },
  rates: { type: 'string' },
  'step-seconds': { type: 'string' },
  'warmup-seconds': { type: 'string' },
  servers: { type: 'string' },
  'server-kind': { type: 'string' },
  'base-port': { type: 'string' },
  groups: { type: 'string' },
  'system-prompt-tokens': { type: 'string' },
  'question-tokens': { type: 'string' },
  'output-tokens': { type: 'string' },
  'max-endpoints': { type: 'string' },
  'ttft-slo-ms': { type: 'string' },
  'scrape-interval-ms': { type: 'string' },
  seed: { type: 'string' },
} as const;

async function run(args: string[], io: Io): Promise<number> {
  const flags = usageErrors(() => parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false })).values;
  const names = flags.pickers === undefined ? (flags.picker ? [] : REFERENCE) : flags.pickers.split(',').map((n) => n.trim());
  const pickers: PickerUnderTest[] = names.map((name) => {
    const p = REFERENCE_PICKERS.find((r) => r.name === name);
    if (!p) throw new UsageError(`--pickers takes ${REFERENCE.join(', ')}, not "${name}"`);
    return p;
  });
  for (const address of flags.picker ?? []) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^:]+):\d{1,5}$/.test(address)) throw new UsageError(`--picker must be HOST:PORT, not "${address}"`);
    pickers.push({ name: address, address });
  }
  if (pickers.length === 0) throw new UsageError('no picker to run: give --pickers or --picker');
  const rates = flags.rates === undefined ? DEFAULT_BENCH.rates : flags.rates.split(',').map((r) => Number(r.trim()));
  if (rates.some((r) => !(r > 0 && r <= 10_000))) throw new UsageError(`--rates takes request rates per second in 0..10000, not "${flags.rates}"`);
  const basePort = integerFlag('base-port', flags['base-port'], 1024, 65000) ?? DEFAULT_BENCH.basePort;
  if (flags.picker && basePort === 0)
    throw new UsageError("--picker needs --base-port, so that the picker can be given the simulated servers' addresses beforehand");
  const servers = integerFlag('servers', flags.servers, 1, 64) ?? DEFAULT_BENCH.servers;
  const w = DEFAULT_BENCH.workload;
  const report = await runPickerBench({
    ...DEFAULT_BENCH,
    pickers,
    rates,
    servers,
    basePort,
    serverKind: oneOf<ServerKind>('--server-kind', flags['server-kind'], Object.keys(SERVER_METRICS) as ServerKind[]) ?? DEFAULT_BENCH.serverKind,
    stepSeconds: integerFlag('step-seconds', flags['step-seconds'], 1, 3600) ?? DEFAULT_BENCH.stepSeconds,
    warmupSeconds: integerFlag('warmup-seconds', flags['warmup-seconds'], 0, 3600) ?? DEFAULT_BENCH.warmupSeconds,
    maxEndpoints: integerFlag('max-endpoints', flags['max-endpoints'], 1, 64) ?? DEFAULT_BENCH.maxEndpoints,
    ttftSloMs: integerFlag('ttft-slo-ms', flags['ttft-slo-ms'], 1, 600_000) ?? DEFAULT_BENCH.ttftSloMs,
    scrapeIntervalMs: integerFlag('scrape-interval-ms', flags['scrape-interval-ms'], 10, 60_000) ?? DEFAULT_BENCH.scrapeIntervalMs,
    workload: {
      groups: integerFlag('groups', flags.groups, 1, 10_000) ?? w.groups,
      systemPromptTokens: integerFlag('system-prompt-tokens', flags['system-prompt-tokens'], 0, 100_000) ?? w.systemPromptTokens,
      questionTokens: integerFlag('question-tokens', flags['question-tokens'], 1, 100_000) ?? w.questionTokens,
      outputTokens: integerFlag('output-tokens', flags['output-tokens'], 1, 100_000) ?? w.outputTokens,
      seed: integerFlag('seed', flags.seed, 0, 2 ** 32 - 1) ?? w.seed,
    },
    onProgress: (line) => {
      io.stderr.write(`${line}\n`);
    },
  });
  await write(io.stdout, formatBenchReport(report));
  return 0;
}

export const command: Command = {
  name: 'picker-bench',
  summary: 'Benchmark endpoint pickers over ext_proc against simulated model servers (shared-prefix workload, request-rate sweep).',
  usage: USAGE,
  run,
};
