import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, type LogLevel } from '@extlb/telemetry';
import {
  ConfigError,
  clusterEndpoints,
  defaultConfig,
  fileEndpoints,
  isProfileName,
  parsePickerConfig,
  PROFILES,
  SERVER_METRICS,
  splitHostPort,
  startPicker,
  staticEndpoints,
  type PickerConfig,
  type ServerKind,
  type AnswerWith,
  type BodyMode,
  type PoolMembers,
  type PickerServerOptions,
  type GrpcTransport,
} from '@extlb/picker';
import type { Command } from '../command.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { EXIT_INVALID, UsageError, shutdownSignal, write, type Io } from '../io.js';

/** `--transport`: the gRPC server under the picker, by its short name. */
const TRANSPORTS: Record<string, GrpcTransport> = { h2: 'node-http2', 'grpc-js': 'grpc-js' };

const USAGE =
  'extlb picker --listen HOST:PORT (--endpoints IP:PORT,... | --endpoints-file FILE | --from-cluster --selector LABELS [--namespace NS] [--port PORT|NAME] [--kubeconfig FILE])\n' +
  `       [--profile ${PROFILES.join('|')}] [--config FILE] [--hash-header NAME] [--max-endpoints N] [--max-in-flight N]\n` +
  `       [--metrics-port PORT] [--metrics-path PATH] [--metrics-server ${Object.keys(SERVER_METRICS).join('|')}]\n` +
  '       [--answer-with both|metadata|header] [--body-mode full-duplex|buffered] [--seed N] [--metrics-listen HOST:PORT] [--log-level debug|info|warn|error]\n' +
  `       [--transport ${Object.keys(TRANSPORTS).join('|')}]`;

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
  profile: { type: 'string' },
  config: { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-path': { type: 'string' },
  'metrics-server': { type: 'string' },
  'hash-header': { type: 'string' },
  'max-endpoints': { type: 'string' },
  'max-in-flight': { type: 'string' },
  'answer-with': { type: 'string' },
  'body-mode': { type: 'string' },
  seed: { type: 'string' },
  'metrics-listen': { type: 'string' },
  'log-level': { type: 'string' },
  transport: { type: 'string' },
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

/** The profile from `--config` (or the defaults), with `--profile`/`--strategy` and the metrics flags applied over it. */
function readConfig(flags: ReturnType<typeof parseFlags>, io: Io): PickerConfig {
  if (flags.profile !== undefined && flags.strategy !== undefined && flags.profile !== flags.strategy) {
    throw new UsageError('--strategy is the old name of --profile: give one of them');
  }
  const named = flags.profile ?? flags.strategy;
  const flag = flags.profile === undefined ? '--strategy' : '--profile';
  if (named !== undefined && !isProfileName(named)) throw new UsageError(`${flag} must be one of ${PROFILES.join(', ')}, not "${named}"`);
  let config = defaultConfig(named ?? 'round-robin');
  if (flags.config !== undefined) {
    const path = resolve(io.cwd, flags.config);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new UsageError(`--config ${flags.config}: ${err instanceof Error ? err.message : String(err)}`);
    }
    config = parsePickerConfig(text, flags.config);
    if (named !== undefined && named !== config.profile) {
      throw new UsageError(`--profile ${named} differs from the profile "${config.profile}" in ${flags.config}: give one`);
    }
  }
  const port = integerFlag('metrics-port', flags['metrics-port'], 1, 65535);
  if (port !== undefined) config.scrape.port = port;
  const path = flags['metrics-path'];
  if (path !== undefined) {
    if (!path.startsWith('/')) throw new UsageError(`--metrics-path must start with "/", not "${path}"`);
    config.scrape.path = path;
  }
  const server = oneOf<ServerKind>('--metrics-server', flags['metrics-server'], Object.keys(SERVER_METRICS) as ServerKind[]);
  if (server) config.scrape.names = { ...SERVER_METRICS[server] };
  const scraping = port !== undefined || path !== undefined || server !== undefined;
  if (scraping && config.profile !== 'load-aware')
    throw new UsageError('--metrics-port, --metrics-path and --metrics-server apply to --profile load-aware only');
  return config;
}

async function run(args: string[], io: Io): Promise<number> {
  const flags = parseFlags(args);
  if (!flags.listen) throw new UsageError('--listen HOST:PORT is required');
  let config: PickerConfig;
  try {
    config = readConfig(flags, io);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    await write(io.stderr, `${err.message}\n`);
    return EXIT_INVALID;
  }
  const strategy = config.profile;
  const options: Omit<PickerServerOptions, 'pool'> = { listen: flags.listen, strategy, loadAware: config.loadAware, scrape: config.scrape };
  const maxEndpoints = integerFlag('max-endpoints', flags['max-endpoints'], 1, 64) ?? config.maxEndpoints;
  const maxInFlight = integerFlag('max-in-flight', flags['max-in-flight'], 1, 1_000_000);
  const seed = integerFlag('seed', flags.seed, 0, 2 ** 32 - 1);
  const answerWith = oneOf<AnswerWith>('--answer-with', flags['answer-with'], ['both', 'metadata', 'header']);
  const bodyMode = oneOf<BodyMode>('--body-mode', flags['body-mode'], ['full-duplex', 'buffered']);
  if (maxEndpoints !== undefined) options.maxEndpoints = maxEndpoints;
  if (maxInFlight !== undefined) options.maxInFlight = maxInFlight;
  if (seed !== undefined) options.seed = seed;
  if (answerWith) options.answerWith = answerWith;
  if (bodyMode) options.bodyMode = bodyMode;
  const transport = oneOf('--transport', flags.transport, Object.keys(TRANSPORTS));
  if (transport) options.transport = TRANSPORTS[transport] as GrpcTransport;
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
