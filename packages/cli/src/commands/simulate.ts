import { parseArgs } from 'node:util';
import { OverrideHostConfigError, protocolSources, simulateOverrideHost, EPP, type SimulationInput } from '@extlb/picker';
import type { Command } from '../command.js';
import { UsageError, write, type Io } from '../io.js';
import { integerFlag, usageErrors } from '../flags.js';

const USAGE =
  'extlb simulate --hosts IP:PORT,... [--header VALUE] [--metadata VALUE] [--sources metadata,header] [--fallback RoundRobin|LeastRequest|Random] [--attempts N]';

const OPTIONS = {
  hosts: { type: 'string' },
  header: { type: 'string' },
  metadata: { type: 'string' },
  sources: { type: 'string' },
  fallback: { type: 'string' },
  attempts: { type: 'string' },
} as const;

async function run(args: string[], io: Io): Promise<number> {
  const flags = usageErrors(() => parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false })).values;
  if (flags.hosts === undefined) throw new UsageError('--hosts IP:PORT,... is required');
  const sources = (flags.sources ?? 'metadata,header').split(',').map((s) => s.trim());
  for (const s of sources) if (s !== 'metadata' && s !== 'header') throw new UsageError(`--sources takes metadata and/or header, not "${s}"`);
  if (new Set(sources).size !== sources.length) throw new UsageError('--sources names a source twice');
  const fallback = flags.fallback ?? 'RoundRobin';
  if (!['RoundRobin', 'LeastRequest', 'Random'].includes(fallback))
    throw new UsageError(`--fallback must be RoundRobin, LeastRequest or Random, not "${fallback}"`);
  const input: SimulationInput = {
    sources: protocolSources(sources as Array<'metadata' | 'header'>),
    fallback,
    hosts: flags.hosts.split(',').filter((h) => h.trim() !== ''),
    attempts: integerFlag('attempts', flags.attempts, 1, 1000) ?? 1,
    headers: flags.header === undefined ? {} : { [EPP.header]: flags.header },
    metadata: flags.metadata === undefined ? {} : { [EPP.namespace]: { [EPP.endpointKey]: flags.metadata } },
  };
  let result: ReturnType<typeof simulateOverrideHost>;
  try {
    result = simulateOverrideHost(input);
  } catch (err) {
    if (!(err instanceof OverrideHostConfigError)) throw err;
    await write(io.stderr, err.errors.map((e) => `extlb simulate: ${e}\n`).join(''));
    return 1;
  }
  const lines: string[] = [];
  for (const a of result.attempts) {
    for (const s of a.skipped) lines.push(`  skipped entry ${s.entry} "${s.value}": ${s.reason}`);
    const entry = a.entry === undefined ? undefined : result.overrideList[a.entry];
    const from = entry ? ` from ${sources[entry.source]}` : '';
    lines.push(`attempt ${a.attempt}: ${a.host ?? 'no host (503)'}  ${a.reason}${from}`);
  }
  await write(io.stdout, `${lines.join('\n')}\n`);
  return 0;
}

export const command: Command = {
  name: 'simulate',
  summary: "Show which host Envoy's override_host load balancer picks on each attempt, and why.",
  usage: USAGE,
  run,
};
