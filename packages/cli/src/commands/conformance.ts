import { parseArgs } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { formatReportText, formatReportYaml, runConformance, splitHostPort, type ConformanceOptions } from '@extlb/picker';
import type { Command } from '../command.js';
import { UsageError, write, type Io } from '../io.js';
import { integerFlag, usageErrors } from '../flags.js';

const USAGE = 'extlb conformance --picker HOST:PORT [--report FILE] [--endpoints IP:PORT,...] [--timeout MS]';

const OPTIONS = {
  picker: { type: 'string' },
  report: { type: 'string' },
  endpoints: { type: 'string' },
  timeout: { type: 'string' },
} as const;

async function run(args: string[], io: Io): Promise<number> {
  const flags = usageErrors(() => parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false })).values;
  if (!flags.picker) throw new UsageError('--picker HOST:PORT is required');
  try {
    splitHostPort(flags.picker);
  } catch {
    throw new UsageError(`--picker must be HOST:PORT, not "${flags.picker}"`);
  }
  const options: ConformanceOptions = { target: flags.picker };
  const timeout = integerFlag('timeout', flags.timeout, 10, 600_000);
  if (timeout !== undefined) options.timeoutMs = timeout;
  if (flags.endpoints !== undefined) options.endpoints = flags.endpoints.split(',');
  const report = await runConformance(options);
  await write(io.stdout, formatReportText(report));
  if (flags.report) {
    const path = resolve(io.cwd, flags.report);
    try {
      await writeFile(path, formatReportYaml(report));
    } catch (err) {
      await write(io.stderr, `extlb conformance: cannot write the report to ${path}: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  }
  return report.summary.failed === 0 ? 0 : 1;
}

export const command: Command = {
  name: 'conformance',
  summary: 'Check an endpoint picker against every MUST of the Endpoint Picker Protocol over ext_proc gRPC.',
  usage: USAGE,
  run,
};
