// `extlb install`: everything a cluster needs for this version of extlb, for `kubectl apply -f -`
// (as `linkerd install` is used): the extlb CRDs, the namespace, the controller's RBAC, the
// controller, the GatewayClass and, with --webhook, the admission webhook with its cert-manager
// certificate. The manifests are examples/deploy's files word for word (src/generated/install-manifests.ts);
// the flags change only the namespace, the image and the controller's replicas.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { installYamlPath } from '@extlb/crds';
import type { Command } from '../command.js';
import { integerFlag, usageErrors } from '../flags.js';
import { INSTALL_MANIFESTS } from '../generated/install-manifests.js';
import { EXIT_OK, type Io, UsageError, write } from '../io.js';

export const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
/** What examples/deploy names: the namespace and the image the files are written with. */
export const DEFAULT_NAMESPACE = 'extlb-system';
export const DEFAULT_IMAGE = `extlb/extlb:${VERSION}`;
const DEFAULT_REPLICAS = 2;

const USAGE = 'extlb install [--namespace NAMESPACE] [--image IMAGE] [--replicas N] [--webhook]';

export interface InstallOptions {
  namespace?: string;
  image?: string;
  replicas?: number;
  webhook?: boolean;
}

/** A file's YAML documents, as kubectl cuts them (at lines that are `---`). */
function documents(text: string): string[] {
  return text.split(/^---[ \t]*\n/m);
}

/** The manifests, as one multi-document YAML stream. */
export async function installManifests(o: InstallOptions = {}): Promise<string> {
  const namespace = o.namespace ?? DEFAULT_NAMESPACE;
  const image = o.image ?? DEFAULT_IMAGE;
  const replicas = o.replicas ?? DEFAULT_REPLICAS;
  const parts: string[] = [`# extlb ${VERSION}: extlb install${o.webhook ? ' --webhook' : ''}\n${await readFile(installYamlPath, 'utf8')}`];
  for (const file of INSTALL_MANIFESTS) {
    if (file.part === 'webhook' && !o.webhook) continue;
    let docs = documents(file.text);
    // Without the webhook, the namespace file is the Namespace alone (its other objects are the webhook's).
    if (file.path === 'namespace.yaml' && !o.webhook) docs = docs.filter((d) => /^kind: Namespace$/m.test(d));
    if (file.path === 'controller/controller.yaml') {
      docs = docs
        .map((d) => (/^kind: Deployment$/m.test(d) ? d.replace(/^ {2}replicas: \d+$/m, `  replicas: ${replicas}`) : d))
        // One replica: a disruption budget of one would block every node drain.
        .filter((d) => replicas > 1 || !/^kind: PodDisruptionBudget$/m.test(d));
    }
    const text = docs
      .join('---\n')
      .replaceAll(DEFAULT_IMAGE, image)
      .replace(/\bextlb-system\b/g, namespace);
    parts.push(`# Source: examples/deploy/${file.path}\n${text}`);
  }
  return parts.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('---\n');
}

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({
      args,
      options: { namespace: { type: 'string' }, image: { type: 'string' }, replicas: { type: 'string' }, webhook: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    }),
  );
  if (values.namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(values.namespace))
    throw new UsageError(`--namespace must be a DNS label (lowercase letters, digits and "-", at most 63), not "${values.namespace}"`);
  if (values.image !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/.test(values.image))
    throw new UsageError(`--image must be an image reference such as registry.example.com/extlb/extlb:${VERSION}, not "${values.image}"`);
  const replicas = integerFlag('replicas', values.replicas, 1, 10);
  await write(
    io.stdout,
    await installManifests({
      ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
      ...(values.image !== undefined ? { image: values.image } : {}),
      ...(replicas !== undefined ? { replicas } : {}),
      webhook: values.webhook,
    }),
  );
  return EXIT_OK;
}

export const command: Command = {
  name: 'install',
  summary:
    'Print everything a cluster needs for this version (extlb CRDs, namespace, RBAC, controller, GatewayClass; --webhook adds the admission webhook and its cert-manager certificate), for kubectl apply -f -.',
  usage: USAGE,
  run,
};
