// `extlb controller`: the control plane. Watches the cluster, serves each Gateway's Envoy
// configuration over xDS (ADS), and — as the elected leader — writes statuses and the pools' shadow
// Services. Runs until SIGTERM or SIGINT, then drains.
import { parseArgs } from 'node:util';
import { createLogger, type LogLevel } from '@extlb/telemetry';
import type { Command } from '../command.js';
import { durationFlag, oneOf, parseListen, usageErrors } from '../flags.js';
import { UsageError, shutdownSignal, type Io } from '../io.js';

const USAGE =
  'extlb controller [--kubeconfig FILE] [--context NAME] [--namespace NAMESPACE] [--lease-name NAME] [--id NAME] [--controller-name NAME] ' +
  '[--xds-listen HOST:PORT] [--trust-domain DOMAIN] [--xds-service NAME] [--xds-ca-secret NAME [--xds-ca-external]] [--xds-cert-lifetime DURATION] [--xds-ca-lifetime DURATION] ' +
  '[--xds-plaintext] [--http-listen HOST:PORT] [--debug-listen 127.0.0.1:PORT|off] ' +
  '[--lease-duration SECONDS] [--renew-deadline SECONDS] [--retry-period SECONDS] [--envoy 1.35|1.38|legacy] [--cluster-domain DOMAIN] [--no-provision] ' +
  '[--shutdown-timeout SECONDS] [--log-level debug|info|warn|error]';

/** `--debug-listen`: a loopback HOST:PORT, or `off`. */
function debugListen(value: string): { host: string; port: number } | undefined {
  if (value === 'off') return undefined;
  const listen = parseListen(value, '--debug-listen', '127.0.0.1:9091');
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(listen.host))
    throw new UsageError(`--debug-listen must be a loopback address (127.0.0.1, ::1): the debug endpoints are reached through port-forward, not "${value}"`);
  return listen;
}

function parseFlags(args: string[]) {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: {
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        namespace: { type: 'string' },
        'lease-name': { type: 'string', default: 'extlb-controller' },
        id: { type: 'string' },
        'controller-name': { type: 'string' },
        'xds-listen': { type: 'string', default: '0.0.0.0:18000' },
        // mTLS unless --xds-plaintext: see the controller README's "Trust between proxies and the controller".
        'trust-domain': { type: 'string', default: 'cluster.local' },
        'xds-service': { type: 'string', default: 'extlb-controller' },
        'xds-ca-secret': { type: 'string', default: 'extlb-xds-ca' },
        'xds-ca-external': { type: 'boolean', default: false },
        'xds-cert-lifetime': { type: 'string', default: '12h' },
        'xds-ca-lifetime': { type: 'string', default: '8760h' },
        'xds-plaintext': { type: 'boolean', default: false },
        'http-listen': { type: 'string', default: '0.0.0.0:9090' },
        // Loopback only: extlb proxy-status and config-dump reach it through port-forward.
        'debug-listen': { type: 'string', default: '127.0.0.1:9091' },
        envoy: { type: 'string' },
        'cluster-domain': { type: 'string' },
        // Every Gateway's team deploys its own Envoy (examples/deploy/gateway/edge.yaml): the
        // controller writes no Deployment, Service, ServiceAccount, ConfigMap, PDB or HPA.
        'no-provision': { type: 'boolean', default: false },
        'shutdown-timeout': { type: 'string', default: '20' },
        // controller-runtime's defaults: a 15 s lease, renewed within 10 s, tried every 2 s.
        'lease-duration': { type: 'string', default: '15' },
        'renew-deadline': { type: 'string', default: '10' },
        'retry-period': { type: 'string', default: '2' },
        'log-level': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }),
  );
  if (
    values['xds-plaintext'] &&
    (values['xds-ca-external'] || args.some((a) => /^--(xds-ca-secret|xds-cert-lifetime|xds-ca-lifetime|trust-domain)\b/.test(a)))
  ) {
    throw new UsageError(
      '--xds-plaintext turns the xDS identity off: it takes none of --trust-domain, --xds-ca-secret, --xds-ca-external, --xds-cert-lifetime, --xds-ca-lifetime',
    );
  }
  const leafLifetimeMs = durationFlag('--xds-cert-lifetime', values['xds-cert-lifetime']);
  const caLifetimeMs = durationFlag('--xds-ca-lifetime', values['xds-ca-lifetime']);
  if (leafLifetimeMs < 10 * 60_000)
    throw new UsageError('--xds-cert-lifetime must be at least 10m: a proxy must get its renewed certificate well before the old one expires');
  if (caLifetimeMs < 4 * leafLifetimeMs)
    throw new UsageError('--xds-ca-lifetime must be at least four times --xds-cert-lifetime, so a CA rotation overlaps every certificate the old CA signed');
  if (!/^[a-z0-9._-]{1,255}$/.test(values['trust-domain']))
    throw new UsageError(`--trust-domain must be lowercase letters, digits, ".", "-" and "_", not "${values['trust-domain']}"`);
  const seconds = (flag: string, value: string) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${flag} must be a number of seconds, not "${value}"`);
    return Math.round(n * 1000);
  };
  const lease = {
    durationMs: seconds('--lease-duration', values['lease-duration']),
    renewDeadlineMs: seconds('--renew-deadline', values['renew-deadline']),
    retryPeriodMs: seconds('--retry-period', values['retry-period']),
  };
  if (!(lease.retryPeriodMs > 0 && lease.retryPeriodMs < lease.renewDeadlineMs && lease.renewDeadlineMs < lease.durationMs)) {
    throw new UsageError('leader election needs 0 < --retry-period < --renew-deadline < --lease-duration');
  }
  return {
    kubeconfig: values.kubeconfig,
    context: values.context,
    // In a Pod the controller's namespace comes from the downward API (POD_NAMESPACE).
    namespace: values.namespace ?? process.env.POD_NAMESPACE ?? 'extlb-system',
    leaseName: values['lease-name'],
    id: values.id ?? process.env.POD_NAME,
    controllerName: values['controller-name'],
    xds: parseListen(values['xds-listen'], '--xds-listen', '0.0.0.0:18000'),
    http: parseListen(values['http-listen'], '--http-listen', '0.0.0.0:9090'),
    debug: debugListen(values['debug-listen']),
    plaintext: values['xds-plaintext'],
    identity: {
      trustDomain: values['trust-domain'],
      serviceName: values['xds-service'],
      caSecret: values['xds-ca-secret'],
      externalCa: values['xds-ca-external'],
      leafLifetimeMs,
      caLifetimeMs,
    },
    envoy: oneOf('--envoy', values.envoy, ['1.35', '1.38', 'legacy'] as const),
    clusterDomain: values['cluster-domain'],
    provision: !values['no-provision'],
    lease,
    graceMs: seconds('--shutdown-timeout', values['shutdown-timeout']),
    logLevel: oneOf<LogLevel>('--log-level', values['log-level'], ['debug', 'info', 'warn', 'error']) ?? 'info',
  };
}

async function run(args: string[], io: Io): Promise<number> {
  const flags = parseFlags(args);
  const logger = createLogger({ level: flags.logLevel, destination: io.stdout, base: { component: 'controller' } });
  // Loaded here: the Kubernetes and gRPC clients are heavy, and other commands need neither.
  const [{ Controller, startOpsServer, startDebugServer }, k8s] = await Promise.all([import('@extlb/controller'), import('@kubernetes/client-node')]);
  const kc = new k8s.KubeConfig();
  try {
    if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
    else kc.loadFromDefault();
    if (flags.context) kc.setCurrentContext(flags.context);
  } catch (err) {
    logger.error({ error: err instanceof Error ? err.message : String(err) }, 'cannot load the kubeconfig');
    return 1;
  }
  const controller = new Controller({
    kubeConfig: kc,
    leaseNamespace: flags.namespace,
    leaseName: flags.leaseName,
    lease: flags.lease,
    xds: { ...flags.xds, ...(flags.plaintext ? { plaintext: true } : { identity: flags.identity }) },
    logger,
    ...(flags.id ? { identity: flags.id } : {}),
    ...(flags.controllerName ? { controllerName: flags.controllerName } : {}),
    ...(flags.envoy ? { envoy: flags.envoy } : {}),
    ...(flags.clusterDomain ? { clusterDomain: flags.clusterDomain } : {}),
    ...(flags.provision ? {} : { provision: { enabled: false } }),
  });
  // Listening for the signal before saying "listening": a SIGTERM right after must still drain.
  const stopping = shutdownSignal();
  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  let debug: Awaited<ReturnType<typeof startDebugServer>> | undefined;
  try {
    ops = await startOpsServer({ ...flags.http, registry: controller.metrics.registry, notReady: () => controller.notReady() });
    // The debug endpoints are for operators; a port they cannot have must not keep the control plane down.
    if (flags.debug)
      debug = await startDebugServer({ ...flags.debug, source: controller.debugSource() }).catch((err: unknown) => {
        logger.error(
          { error: err instanceof Error ? err.message : String(err), listen: `${flags.debug?.host}:${flags.debug?.port}` },
          'debug endpoints not listening',
        );
        return undefined;
      });
    const { xdsPort } = await controller.start();
    logger.info({ xdsPort, httpPort: ops.port, debugPort: debug?.port, namespace: flags.namespace, provision: flags.provision }, 'controller running');
  } catch (err) {
    logger.error({ error: err instanceof Error ? err.message : String(err) }, 'cannot start the controller');
    await controller.stop(0).catch(() => {});
    return 1;
  }
  const signal = await stopping;
  logger.info({ signal }, 'signal received, shutting down');
  await controller.stop(flags.graceMs);
  await new Promise((resolve) => ops.server.close(resolve));
  if (debug) await new Promise((resolve) => debug.server.close(resolve));
  return 0;
}

export const command: Command = {
  name: 'controller',
  summary: 'Run the control plane: watch the cluster, serve each Gateway its Envoy configuration over xDS (ADS), write statuses as the elected leader.',
  usage: USAGE,
  run,
};
