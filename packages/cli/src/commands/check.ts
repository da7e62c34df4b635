// `extlb check [--pre]`: is it working? One line per check, as `linkerd check` answers it, with a
// hint under each failure; exit 1 when any check fails (warnings are for optional parts).
import { parseArgs } from 'node:util';
import { type Check, type CheckContext, type CheckResult, CHECKS, PRE_CHECKS } from '../checks.js';
import type { Command } from '../command.js';
import { DEBUG_OPTIONS, loadKubeConfig } from '../controller-debug.js';
import { integerFlag, usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, type Io, write } from '../io.js';

const USAGE =
  'extlb check [--pre] [--kubeconfig FILE] [--context NAME] [--namespace NAMESPACE] [--selector LABELS] [--debug-port PORT] [--controller-name NAME] [--lease-name NAME]';

const MARK: Record<CheckResult['state'], string> = { ok: '[ok]  ', fail: '[FAIL]', warn: '[warn]' };

export function line(check: Check, r: CheckResult): string {
  const head = `${MARK[r.state]} ${check.name}${r.detail ? `: ${r.detail}` : ''}`;
  return r.hint && r.state !== 'ok' ? `${head}\n       hint: ${r.hint}` : head;
}

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: {
        ...DEBUG_OPTIONS,
        pre: { type: 'boolean', default: false },
        'controller-name': { type: 'string', default: 'extlb.dev/gateway-controller' },
        'lease-name': { type: 'string', default: 'extlb-controller' },
      },
      strict: true,
      allowPositionals: false,
    }),
  );
  const debugPort = integerFlag('debug-port', values['debug-port'], 1, 65535) as number;
  let kc: CheckContext['kc'];
  try {
    kc = await loadKubeConfig(values);
  } catch (err) {
    await write(io.stdout, `${MARK.fail} the kubeconfig loads: ${(err as Error).message}\n       hint: set --kubeconfig or KUBECONFIG\n`);
    return EXIT_INVALID;
  }
  const ctx: CheckContext = {
    kc,
    namespace: values.namespace,
    selector: values.selector,
    debugPort,
    controllerName: values['controller-name'],
    leaseName: values['lease-name'],
  };
  let failed = 0;
  const checks = values.pre ? PRE_CHECKS : CHECKS;
  for (const [i, check] of checks.entries()) {
    let result: CheckResult;
    try {
      result = await check.run(ctx);
    } catch (err) {
      result = { state: 'fail', detail: (err as Error).message, hint: 'the API server refused or failed the request' };
    }
    await write(io.stdout, `${line(check, result)}\n`);
    if (result.state === 'fail') {
      failed++;
      // Nothing after an unreachable API server can be asked.
      if (i === 0) break;
    }
  }
  await write(
    io.stdout,
    failed === 0 ? `\nextlb check${values.pre ? ' --pre' : ''}: every check passed\n` : `\nextlb check${values.pre ? ' --pre' : ''}: ${failed} failed\n`,
  );
  return failed === 0 ? EXIT_OK : EXIT_INVALID;
}

export const command: Command = {
  name: 'check',
  summary:
    "Check that extlb works (--pre: that the cluster is ready for it): the API server, the Gateway API CRDs, extlb's CRDs, the controller's readiness, leader and xDS certificate, the webhook, every Gateway and its proxies; one line each, exit 1 on a failure.",
  usage: USAGE,
  run,
};
