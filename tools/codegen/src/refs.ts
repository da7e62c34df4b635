// `$ref` handling. The authored schemas share definitions through `$ref`, which a CRD's
// openAPIV3Schema may not contain, so the CRD and JSON Schema generators inline every reference.
import { SchemaError, type Json, type JsonObject, type SchemaFile, type SchemaSet } from './source.js';

export interface Target {
  file: SchemaFile;
  /** The definition's name when the reference is `…#/$defs/Name`. */
  name: string;
  node: JsonObject;
}

export function isObject(v: Json | undefined): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function resolveRef(set: SchemaSet, from: SchemaFile, ref: string): Target {
  const hash = ref.indexOf('#');
  const fileName = hash <= 0 ? (hash === 0 ? from.name : ref) : ref.slice(0, hash);
  const pointer = hash < 0 ? '' : ref.slice(hash + 1);
  const file = set.files.get(fileName);
  if (!file) throw new SchemaError(`${from.path}: $ref "${ref}" names a file that is not in ${set.dir}`);
  const match = /^\/\$defs\/([A-Za-z0-9]+)$/.exec(pointer);
  if (!match) throw new SchemaError(`${from.path}: $ref "${ref}" must have the form [file.yaml]#/$defs/Name`);
  const name = match[1]!;
  const defs = file.json.$defs;
  const node = isObject(defs) ? defs[name] : undefined;
  if (!isObject(node)) throw new SchemaError(`${from.path}: $ref "${ref}" names no definition in ${file.name}`);
  return { file, name, node };
}

/** Keys that only the authored sources use; no generated artefact carries them. */
const AUTHORING_KEYS = new Set(['$id', '$defs', '$comment', 'title', 'x-extlb-crd']);

/**
 * Returns `node` with every `$ref` replaced by the definition it names. Keys written next to a
 * `$ref` refine the definition: they override it, except `x-kubernetes-validations`, whose rules
 * add to the definition's own.
 */
export function inlineRefs(set: SchemaSet, file: SchemaFile, node: Json, seen: string[] = []): Json {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(set, file, n, seen));
  if (!isObject(node)) return node;
  let out: JsonObject = {};
  const ref = node.$ref;
  if (typeof ref === 'string') {
    const target = resolveRef(set, file, ref);
    const key = `${target.file.name}#${target.name}`;
    if (seen.includes(key)) throw new SchemaError(`${file.path}: $ref cycle ${[...seen, key].join(' -> ')}`);
    const base = inlineRefs(set, target.file, target.node, [...seen, key]) as JsonObject;
    if (typeof node.description === 'string') out.description = node.description;
    out = { ...out, ...base };
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' || AUTHORING_KEYS.has(k)) continue;
    const value = inlineRefs(set, file, v, seen);
    const prior = out[k];
    out[k] = k === 'x-kubernetes-validations' && Array.isArray(prior) && Array.isArray(value) ? [...prior, ...value] : value;
  }
  return out;
}
