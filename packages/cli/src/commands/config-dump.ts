// `extlb config-dump --gateway NS/NAME`: the snapshot the controller serves a Gateway's proxies,
// decoded from the bytes it sends, private keys and other secret values redacted by the
// controller before they leave its Pod. Read through port-forward from a replica's loopback debug endpoint.
import { parseArgs } from 'node:util';
import type { Command } from '../command.js';
import { controllerPods, DEBUG_OPTIONS, debugGet, loadKubeConfig, namespacedName } from '../controller-debug.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, type Io, write } from '../io.js';
import { toYaml } from '../yaml-out.js';

const TYPES = ['listeners', 'routes', 'clusters', 'endpoints', 'secrets'] as const;

const USAGE = `extlb config-dump --gateway NAMESPACE/NAME [--type ${TYPES.join('|')}] [--kubeconfig FILE] [--context NAME] [--namespace NAMESPACE] [--selector LABELS] [--debug-port PORT] [-o yaml|json]`;

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: { ...DEBUG_OPTIONS, gateway: { type: 'string' }, type: { type: 'string' }, output: { type: 'string', short: 'o' } },
      strict: true,
      allowPositionals: false,
    }),
  );
  const gateway = namespacedName('--gateway', values.gateway);
  const type = oneOf('--type', values.type, TYPES);
  const output = oneOf('-o', values.output, ['yaml', 'json'] as const) ?? 'yaml';
  const port = integerFlag('debug-port', values['debug-port'], 1, 65535) as number;
  const fail = async (message: string) => {
    await write(io.stderr, `extlb config-dump: ${message}\n`);
    return EXIT_INVALID;
  };
  try {
    const kc = await loadKubeConfig(values);
    const pods = await controllerPods(kc, values.namespace, values.selector);
    const pod = pods.find((p) => p.ready) ?? pods[0];
    if (!pod) return await fail(`no running controller Pod in ${values.namespace} (selector ${values.selector})`);
    const path = `/debug/config?gateway=${encodeURIComponent(gateway)}${type ? `&type=${type}` : ''}`;
    const { status, body } = await debugGet(kc, values.namespace, pod.name, port, path);
    if (status !== 200) return await fail((body as { error?: string }).error ?? `HTTP ${status}`);
    await write(io.stdout, output === 'json' ? `${JSON.stringify(body, null, 2)}\n` : toYaml(body));
    return EXIT_OK;
  } catch (err) {
    return await fail((err as Error).message);
  }
}

export const command: Command = {
  name: 'config-dump',
  summary:
    "Print the xDS snapshot the controller serves a Gateway (listeners, routes, clusters, endpoints, secrets), private keys redacted; read through port-forward from the controller's loopback debug endpoint.",
  usage: USAGE,
  run,
};
