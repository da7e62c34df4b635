import { createLogger, type LogLevel } from '@extlb/telemetry';
import { createWebhookServer } from '@extlb/webhook';
import { parseArgs } from 'node:util';
import type { Command } from '../command.js';
import { oneOf, parseListen, usageErrors } from '../flags.js';
import { UsageError, shutdownSignal, type Io } from '../io.js';

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

function parseFlags(args: string[]): Flags {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: {
        listen: { type: 'string', default: '0.0.0.0:8443' },
        cert: { type: 'string' },
        key: { type: 'string' },
        'shutdown-delay': { type: 'string', default: '0' },
        'shutdown-timeout': { type: 'string', default: '25' },
        'cert-poll-interval': { type: 'string', default: '2' },
        'log-level': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }),
  );
  if (!values.cert || !values.key) throw new UsageError('--cert and --key are required');
  return {
    ...parseListen(values.listen),
    cert: values.cert,
    key: values.key,
    delayMs: seconds('--shutdown-delay', values['shutdown-delay'], true),
    graceMs: seconds('--shutdown-timeout', values['shutdown-timeout']),
    pollMs: seconds('--cert-poll-interval', values['cert-poll-interval']),
    logLevel: oneOf<LogLevel>('--log-level', values['log-level'], ['debug', 'info', 'warn', 'error']) ?? 'info',
  };
}

async function run(args: string[], io: Io): Promise<number> {
  const flags = parseFlags(args);
  const logger = createLogger({ level: flags.logLevel, destination: io.stdout });
  // Listening for the signal before saying "listening": a SIGTERM right after must still drain.
  const stopping = shutdownSignal();
  let server: ReturnType<typeof createWebhookServer>;
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
    logger.error({ error: err instanceof Error ? err.message : String(err) }, 'cannot start the webhook');
    return 1;
  }
  const signal = await stopping;
  logger.info({ signal }, 'signal received, shutting down');
  await server.close({ graceMs: flags.graceMs, delayMs: flags.delayMs });
  return 0;
}

export const command: Command = {
  name: 'webhook',
  summary: 'Run the extlb admission webhook (HTTPS, AdmissionReview v1: POST /validate, POST /mutate).',
  usage: USAGE,
  run,
};
