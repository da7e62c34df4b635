import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { crdPath, installYamlPath, jsonSchemaPath, kinds, type KnownKind } from '@extlb/crds';
import type { Command } from '../command.js';
import { oneOf, usageErrors } from '../flags.js';
import { UsageError, write, type Io } from '../io.js';

const KIND_NAMES = kinds.map((k) => k.kind);

const USAGE = `extlb crds [--kind ${KIND_NAMES.join('|')}] [--json-schema]`;

async function run(args: string[], io: Io): Promise<number> {
  const { values } = usageErrors(() =>
    parseArgs({ args, options: { kind: { type: 'string' }, 'json-schema': { type: 'boolean' } }, strict: true, allowPositionals: false }),
  );
  const kind = oneOf<KnownKind>('--kind', values.kind, KIND_NAMES);
  let path: string | undefined;
  if (values['json-schema']) {
    if (!kind) throw new UsageError('--json-schema needs --kind');
    path = jsonSchemaPath(kind);
  } else if (kind) {
    path = crdPath(kind);
    if (!path) throw new UsageError(`extlb does not publish the ${kind} CRD; install it from its own project (use --json-schema for its schema)`);
  } else {
    path = installYamlPath;
  }
  await write(io.stdout, await readFile(path, 'utf8'));
  return 0;
}

export const command: Command = {
  name: 'crds',
  summary: "Print the extlb CRDs (for kubectl apply -f -), one of them, or a kind's JSON Schema for editors and kubeconform.",
  usage: USAGE,
  run,
};
