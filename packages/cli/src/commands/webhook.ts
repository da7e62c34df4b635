import { createWebhookServer, jsonLogger, type LogLevel } from '@extlb/webhook';
import type { Command } from '../command.js';
import { UsageError, type Io } from '../io.js';

const USAGE =
  'extlb webhook --cert FILE --key FILE [--listen HOST:PORT] [--shutdown-delay SECONDS] [--shutdown-timeout SECONDS] [--cert-poll-interval SECONDS] [--log-level debug|info|warn|error]';

interface Flags {
  host: string;
  port: number;
  cert: string;
  key: string;
  graceMs: number;
  delayMs: number;
  pollMs: number;
  logLevel: LogLevel;
}

function seconds(flag: string, value: string, allowZero = false): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || (n === 0 && !allowZero)) {
    throw new UsageError(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} number of seconds, not "${value}"`);
  }
  return Math.round(n * 1000);
}

/** `HOST:PORT`, `:PORT` or `[v6]:PORT`. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--listen must be HOST:PORT (for example 0.0.0.0:8443), not "${value}"`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

function parseFlags(args: string[]): Flags {
  const values = new Map<string, string>();
  const known = new Set(['--listen', '--cert', '--key', '--shutdown-delay', '--shutdown-timeout', '--cert-poll-interval', '--log-level']);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.has(name)) throw new UsageError(`unknown flag or argument "${arg}"`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  const cert = values.get('--cert');
  const key = values.get('--key');
  if (!cert || !key) throw new UsageError('--cert and --key are required');
  const logLevel = values.get('--log-level') ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new UsageError(`--log-level must be debug, info, warn or error, not "${logLevel}"`);
  return {
    ...parseListen(values.get('--listen') ?? '0.0.0.0:8443'),
    cert,
    key,
    delayMs: seconds('--shutdown-delay', values.get('--shutdown-delay') ?? '0', true),
    graceMs: seconds('--shutdown-timeout', values.get('--shutdown-timeout') ?? '25'),
    pollMs: seconds('--cert-poll-interval', values.get('--cert-poll-interval') ?? '2'),
    logLevel: logLevel as LogLevel,
  };
}

async function run(args: string[], io: Io): Promise<number> {
  const flags = parseFlags(args);
  const logger = jsonLogger(io.stdout, flags.logLevel);
  let server;
  try {
    server = createWebhookServer({
      host: flags.host,
      port: flags.port,
      certFile: flags.cert,
      keyFile: flags.key,
      certPollIntervalMs: flags.pollMs,
      logger,
    });
    await server.listen();
  } catch (err) {
    logger.log('error', 'cannot start the webhook', { error: err instanceof Error ? err.message : String(err) });
    return 1;
  }
  // Both listeners go after the first signal, so that a second one ends a slow drain at once.
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (received: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(received);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  logger.log('info', 'signal received, shutting down', { signal });
  await server.close({ graceMs: flags.graceMs, delayMs: flags.delayMs });
  return 0;
}

export const command: Command = {
  name: 'webhook',
  summary: 'Run the extlb admission webhook (HTTPS, AdmissionReview v1: POST /validate, POST /mutate).',
  usage: USAGE,
  run,
};
