// Writes every artefact generated from schemas/ into a tree (the repository, or a temporary
// folder for the drift check). Generated folders are cleared first, so a file whose source is gone
// does not linger.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { generate } from './generate.js';
import { loadSchemas } from './source.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
/** Folders that hold nothing but generated files. */
export const GENERATED_DIRS = ['packages/crds/generated', 'packages/crds/src/generated', 'packages/types/src/generated', 'packages/validate/src/generated'];

export async function generateInto(outRoot: string, schemaDir = join(REPO_ROOT, 'schemas')): Promise<string[]> {
  const crdsPkg = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/crds/package.json'), 'utf8')) as { version: string };
  const files = await generate(loadSchemas(schemaDir), { bundleVersion: `v${crdsPkg.version}` });
  for (const dir of GENERATED_DIRS) rmSync(join(outRoot, dir), { recursive: true, force: true });
  for (const [path, content] of files) {
    mkdirSync(dirname(join(outRoot, path)), { recursive: true });
    writeFileSync(join(outRoot, path), content);
  }
  return [...files.keys()].sort();
}
