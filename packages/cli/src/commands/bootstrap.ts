// `extlb bootstrap`: the small Envoy bootstrap a Gateway's Envoy pods start with. It names the
// Gateway (node.cluster = NAMESPACE/NAME) and the xDS server; everything else comes over ADS.
// xDS is mutual TLS: the Gateway's identity (its client certificate and the controller's CA, which
// the bootstrap pins) comes from the identity Secret mounted at --xds-tls-dir, over file-based SDS.
import { adsBootstrap, parseHostPort, XDS_IDENTITY } from '@extlb/envoy';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { Command } from '../command.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { EXIT_OK, UsageError, write, type Io } from '../io.js';

const USAGE =
  'extlb bootstrap --gateway NAMESPACE/NAME --xds-server HOST:PORT [--xds-tls-dir DIR] [--xds-server-name NAME] [--xds-plaintext] [--node-id ID] [--admin-port PORT] [-o yaml|json]';

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: {
        gateway: { type: 'string' },
        'xds-server': { type: 'string' },
        'node-id': { type: 'string' },
        'admin-port': { type: 'string' },
        // Where the Gateway's xDS identity Secret is mounted (its SDS files name the files there).
        'xds-tls-dir': { type: 'string', default: XDS_IDENTITY.dir },
        // The name the xDS server's certificate must hold; default the host of --xds-server.
        'xds-server-name': { type: 'string' },
        'xds-plaintext': { type: 'boolean', default: false },
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
  const dir = values['xds-tls-dir'];
  if (!/^\/[A-Za-z0-9._/-]*$/.test(dir) || dir.split('/').includes('..'))
    throw new UsageError(`--xds-tls-dir must be an absolute directory, not ${JSON.stringify(dir)}`);
  if (values['xds-plaintext'] && (values['xds-server-name'] !== undefined || args.some((a) => a.startsWith('--xds-tls-dir')))) {
    throw new UsageError('--xds-plaintext takes neither --xds-tls-dir nor --xds-server-name: it turns TLS to the xDS server off');
  }
  const serverName = values['xds-server-name'] ?? (parseHostPort(xdsServer)?.host as string);
  const xdsTls = values['xds-plaintext'] ? undefined : { dir: dir.replace(/\/+$/, '') || '/', serverName };
  const bootstrap = adsBootstrap(
    { kind: 'Gateway', namespace: m[1] as string, name: m[2] as string },
    {
      xdsServer,
      ...(xdsTls ? { xdsTls } : {}),
      ...(values['node-id'] ? { nodeId: values['node-id'] } : {}),
      ...(adminPort !== undefined ? { adminPort } : {}),
    },
  );
  const output = oneOf('-o', values.output, ['yaml', 'json'] as const) ?? 'yaml';
  await write(io.stdout, output === 'json' ? `${JSON.stringify(bootstrap, null, 2)}\n` : stringify(bootstrap, { lineWidth: 0 }));
  return EXIT_OK;
}

export const command: Command = {
  name: 'bootstrap',
  summary:
    "Print the bootstrap an Envoy pod starts with: it names its Gateway and the xDS server (mutual TLS with the Gateway's identity Secret mounted at --xds-tls-dir), and gets everything else over ADS.",
  usage: USAGE,
  run,
};
