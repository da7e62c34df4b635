import { parseArgs } from 'node:util';
import { createLogger, type LogLevel } from '@extlb/telemetry';
import {
  clusterEndpoints,
  fileEndpoints,
  isStrategyName,
  splitHostPort,
  startPicker,
  staticEndpoints,
  STRATEGIES,
  type AnswerWith,
  type BodyMode,
  type PoolMembers,
  type PickerServerOptions,
} from '@extlb/picker';
import type { Command } from '../command.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { UsageError, shutdownSignal, type Io } from '../io.js';

const USAGE =
  'extlb picker --listen HOST:PORT (--endpoints IP:PORT,... | --endpoints-file FILE | --from-cluster --selector LABELS [--namespace NS] [--port PORT|NAME] [--kubeconfig FILE])\n' +
  `       [--strategy ${STRATEGIES.join('|')}] [--hash-header NAME] [--max-endpoints N] [--max-in-flight N]\n` +
  '       [--answer-with both|metadata|header] [--body-mode full-duplex|buffered] [--seed N] [--metrics-listen HOST:PORT] [--log-level debug|info|warn|error]';

const OPTIONS = {
  listen: { type: 'string' },
  endpoints: { type: 'string' },
  'endpoints-file': { type: 'string' },
  'from-cluster': { type: 'boolean' },
  selector: { type: 'string' },
  namespace: { type: 'string' },
  port: { type: 'string' },
  kubeconfig: { type: 'string' },
  strategy: { type: 'string' },
  'hash-header': { type: 'string' },
  'max-endpoints': { type: 'string' },
  'max-in-flight': { type: 'string' },
  'answer-with': { type: 'string' },
  'body-mode': { type: 'string' },
  seed: { type: 'string' },
  'metrics-listen': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

function parseFlags(args: string[]) {
  return usageErrors(() => parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false })).values;
}

async function openPool(flags: ReturnType<typeof parseFlags>): Promise<PoolMembers> {
  const chosen = [flags.endpoints !== undefined, flags['endpoints-file'] !== undefined, flags['from-cluster'] === true].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('give exactly one of --endpoints, --endpoints-file or --from-cluster');
  if (flags.endpoints !== undefined) return staticEndpoints(flags.endpoints);
  if (flags['endpoints-file'] !== undefined) return fileEndpoints(flags['endpoints-file']);
  if (!flags.selector) throw new UsageError('--from-cluster needs --selector, e.g. --selector kubernetes.io/service-name=model-server');
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
  else kc.loadFromDefault();
  const namespace = flags.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const port = flags.port === undefined ? undefined : /^\d+$/.test(flags.port) ? integerFlag('port', flags.port, 1, 65535) : flags.port;
  return clusterEndpoints({ namespace, selector: flags.selector, kubeConfig: kc, ...(port !== undefined ? { port } : {}) });
}

async function run(args: string[], io: Io): Promise<number> {
  const flags = parseFlags(args);
  if (!flags.listen) throw new UsageError('--listen HOST:PORT is required');
  const strategy = flags.strategy ?? 'round-robin';
  if (!isStrategyName(strategy)) throw new UsageError(`--strategy must be one of ${STRATEGIES.join(', ')}, not "${strategy}"`);
  const options: Omit<PickerServerOptions, 'pool'> = { listen: flags.listen, strategy };
  const maxEndpoints = integerFlag('max-endpoints', flags['max-endpoints'], 1, 64);
  const maxInFlight = integerFlag('max-in-flight', flags['max-in-flight'], 1, 1_000_000);
  const seed = integerFlag('seed', flags.seed, 0, 2 ** 32 - 1);
  const answerWith = oneOf<AnswerWith>('--answer-with', flags['answer-with'], ['both', 'metadata', 'header']);
  const bodyMode = oneOf<BodyMode>('--body-mode', flags['body-mode'], ['full-duplex', 'buffered']);
  if (maxEndpoints !== undefined) options.maxEndpoints = maxEndpoints;
  if (maxInFlight !== undefined) options.maxInFlight = maxInFlight;
  if (seed !== undefined) options.seed = seed;
  if (answerWith) options.answerWith = answerWith;
  if (bodyMode) options.bodyMode = bodyMode;
  if (flags['hash-header']) options.hashHeader = flags['hash-header'];
  if (strategy === 'consistent-hash' && !flags['hash-header']) throw new UsageError('--strategy consistent-hash needs --hash-header NAME');
  const metricsListen = flags['metrics-listen'];
  if (metricsListen !== undefined) {
    try {
      splitHostPort(metricsListen);
    } catch {
      throw new UsageError(`--metrics-listen must be HOST:PORT (for example 0.0.0.0:9090), not "${metricsListen}"`);
    }
    options.metricsListen = metricsListen;
  }
  const level = oneOf<LogLevel>('--log-level', flags['log-level'], ['debug', 'info', 'warn', 'error']) ?? 'info';
  const logger = createLogger({ level, destination: io.stdout, base: { component: 'picker' } });

  let pool: PoolMembers;
  try {
    pool = await openPool(flags);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    logger.error({ error: err instanceof Error ? err.message : String(err) }, 'cannot load the endpoints');
    return 1;
  }
  // Listening for the signal before saying "listening": a SIGTERM right after must still drain.
  const stopping = shutdownSignal();
  let picker: Awaited<ReturnType<typeof startPicker>>;
  try {
    picker = await startPicker({ ...options, pool, logger });
  } catch (err) {
    await pool.close();
    logger.error({ listen: flags.listen, error: err instanceof Error ? err.message : String(err) }, 'cannot start the picker');
    return 1;
  }
  const signal = await stopping;
  logger.info({ signal }, 'signal received, shutting down');
  await picker.close();
  await pool.close();
  return 0;
}

export const command: Command = {
  name: 'picker',
  summary: 'Run the reference endpoint picker (an Envoy ext_proc gRPC server speaking the Endpoint Picker Protocol).',
  usage: USAGE,
  run,
};
