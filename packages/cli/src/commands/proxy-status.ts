// `extlb proxy-status`: per Gateway, the proxies connected to each controller replica and, per xDS
// type, the version served, sent, ACKed or NACKed (with Envoy's error), as `istioctl proxy-status`
// shows it. Read from each replica's loopback debug endpoint through the API's port-forward.
import { parseArgs } from 'node:util';
import type { ProxiesReport, ProxyTypeStatus } from '@extlb/controller';
import type { Command } from '../command.js';
import { controllerPods, DEBUG_OPTIONS, debugGet, loadKubeConfig } from '../controller-debug.js';
import { integerFlag, oneOf, usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, type Io, write } from '../io.js';
import { toYaml } from '../yaml-out.js';

const USAGE =
  'extlb proxy-status [--gateway NAMESPACE/NAME] [--kubeconfig FILE] [--context NAME] [--namespace NAMESPACE] [--selector LABELS] [--debug-port PORT] [-o table|yaml|json]';

const COLUMNS: [ProxyTypeStatus['type'], string][] = [
  ['clusters', 'CDS'],
  ['endpoints', 'EDS'],
  ['listeners', 'LDS'],
  ['routes', 'RDS'],
  ['secrets', 'SDS'],
];

/** One type's cell, as istioctl words it: SYNCED, NACKED, STALE (sent, not yet ACKed), NOT SENT. */
export function cell(t: ProxyTypeStatus | undefined): string {
  if (!t) return 'NOT SENT';
  if (t.nacked) return `NACKED (${t.nacked.version.slice(0, 8)})`;
  if (t.inSync) return `SYNCED (${(t.acked ?? '').slice(0, 8)})`;
  if (t.sent === undefined) return 'NOT SENT';
  return 'STALE';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

export interface ReplicaReport extends ProxiesReport {
  pod: string;
}

export function render(reports: ReplicaReport[], unreachable: { pod: string; error: string }[]): string {
  const rows = [['GATEWAY', 'PROXY', 'REPLICA', ...COLUMNS.map(([, h]) => h)]];
  const nacks: string[] = [];
  for (const r of reports) {
    for (const p of r.proxies) {
      const byType = new Map(p.types.map((t) => [t.type, t]));
      rows.push([p.gateway, p.node, r.pod, ...COLUMNS.map(([kind]) => cell(byType.get(kind)))]);
      for (const [kind, head] of COLUMNS) {
        const n = byType.get(kind)?.nacked;
        if (n) nacks.push(`${p.gateway} ${p.node} (${r.pod}) ${head} rejected version ${n.version}: ${n.message}`);
      }
    }
  }
  const lines = [rows.length === 1 ? 'No proxies are connected.' : table(rows)];
  if (nacks.length > 0) lines.push('', 'NACKs (the proxy runs its last accepted version):', ...nacks.map((n) => `  ${n}`));
  for (const u of unreachable) lines.push('', `replica ${u.pod}: not reachable: ${u.error}`);
  return `${lines.join('\n')}\n`;
}

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: { ...DEBUG_OPTIONS, gateway: { type: 'string' }, output: { type: 'string', short: 'o' } },
      strict: true,
      allowPositionals: false,
    }),
  );
  const output = oneOf('-o', values.output, ['table', 'yaml', 'json'] as const) ?? 'table';
  const port = integerFlag('debug-port', values['debug-port'], 1, 65535) as number;
  let kc: Awaited<ReturnType<typeof loadKubeConfig>>;
  try {
    kc = await loadKubeConfig(values);
  } catch (err) {
    await write(io.stderr, `extlb proxy-status: ${(err as Error).message}\n`);
    return EXIT_INVALID;
  }
  let pods: Awaited<ReturnType<typeof controllerPods>>;
  try {
    pods = await controllerPods(kc, values.namespace, values.selector);
  } catch (err) {
    await write(io.stderr, `extlb proxy-status: cannot list the controller's Pods in ${values.namespace}: ${(err as Error).message}\n`);
    return EXIT_INVALID;
  }
  if (pods.length === 0) {
    await write(io.stderr, `extlb proxy-status: no running controller Pod in ${values.namespace} (selector ${values.selector})\n`);
    return EXIT_INVALID;
  }
  const reports: ReplicaReport[] = [];
  const unreachable: { pod: string; error: string }[] = [];
  for (const pod of pods) {
    try {
      const { status, body } = await debugGet(kc, values.namespace, pod.name, port, '/debug/proxies');
      if (status !== 200) throw new Error(`HTTP ${status}: ${JSON.stringify(body)}`);
      const report = body as ProxiesReport;
      reports.push({ ...report, pod: pod.name, proxies: report.proxies.filter((p) => values.gateway === undefined || p.gateway === values.gateway) });
    } catch (err) {
      unreachable.push({ pod: pod.name, error: (err as Error).message });
    }
  }
  if (output === 'table') await write(io.stdout, render(reports, unreachable));
  else {
    const doc = { replicas: reports, ...(unreachable.length > 0 ? { unreachable } : {}) };
    await write(io.stdout, output === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : toYaml(doc));
  }
  return unreachable.length > 0 ? EXIT_INVALID : EXIT_OK;
}

export const command: Command = {
  name: 'proxy-status',
  summary:
    "List, per Gateway, the proxies connected to each controller replica and, per xDS type, the version SYNCED, NACKED (with Envoy's error), STALE or NOT SENT; read through port-forward from the controller's loopback debug endpoint.",
  usage: USAGE,
  run,
};
