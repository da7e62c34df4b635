// `extlb bootstrap`: the small Envoy bootstrap a Gateway's Envoy pods start with. It names the
// Gateway (node.cluster = NAMESPACE/NAME) and the xDS server; everything else comes over ADS.
import { adsBootstrap, parseHostPort } from '@extlb/envoy';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { Command } from '../command.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { EXIT_OK, UsageError, write, type Io } from '../io.js';

const USAGE = 'extlb bootstrap --gateway NAMESPACE/NAME --xds-server HOST:PORT [--node-id ID] [--admin-port PORT] [-o yaml|json]';

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: {
        gateway: { type: 'string' },
        'xds-server': { type: 'string' },
        'node-id': { type: 'string' },
        'admin-port': { type: 'string' },
        output: { type: 'string', short: 'o' },
      },
      strict: true,
      allowPositionals: false,
    }),
  );
  const gateway = values.gateway;
  const m = gateway === undefined ? null : /^([^/]+)\/([^/]+)$/.exec(gateway);
  if (!m) throw new UsageError(`--gateway NAMESPACE/NAME is required${gateway === undefined ? '' : `, not ${JSON.stringify(gateway)}`}`);
  const xdsServer = values['xds-server'];
  if (xdsServer === undefined || !parseHostPort(xdsServer))
    throw new UsageError(`--xds-server HOST:PORT is required${xdsServer === undefined ? '' : `, not ${JSON.stringify(xdsServer)}`}`);
  const adminPort = integerFlag('--admin-port', values['admin-port'], 1, 65535);
  const bootstrap = adsBootstrap(
    { kind: 'Gateway', namespace: m[1] as string, name: m[2] as string },
    { xdsServer, ...(values['node-id'] ? { nodeId: values['node-id'] } : {}), ...(adminPort !== undefined ? { adminPort } : {}) },
  );
  const output = oneOf('-o', values.output, ['yaml', 'json'] as const) ?? 'yaml';
  await write(io.stdout, output === 'json' ? `${JSON.stringify(bootstrap, null, 2)}\n` : stringify(bootstrap, { lineWidth: 0 }));
  return EXIT_OK;
}

export const command: Command = {
  name: 'bootstrap',
  summary: 'Print the bootstrap an Envoy pod starts with: it names its Gateway and the xDS server, and gets everything else over ADS.',
  usage: USAGE,
  run,
};
