import { fileURLToPath } from 'node:url';
import { customResourceDefinitions, kinds } from './generated/crds.js';

export { customResourceDefinitions, kinds };

export type KnownKind = (typeof kinds)[number]['kind'];

const generated = new URL('../generated/', import.meta.url);

/** Path of install.yaml, every extlb CRD in one file for `kubectl apply -f`. */
export const installYamlPath: string = fileURLToPath(new URL('install.yaml', generated));

function entry(kind: KnownKind) {
  const found = kinds.find((k) => k.kind === kind);
  if (!found) throw new Error(`unknown kind ${kind}`);
  return found;
}

/** Path of a kind's CRD YAML, or undefined for a kind whose CRD another project publishes. */
export function crdPath(kind: KnownKind): string | undefined {
  const { crdFile } = entry(kind);
  return crdFile === null ? undefined : fileURLToPath(new URL(crdFile, generated));
}

/** Path of a kind's standalone JSON Schema, as editors and kubeconform read it. */
export function jsonSchemaPath(kind: KnownKind): string {
  return fileURLToPath(new URL(entry(kind).jsonSchemaFile, generated));
}
