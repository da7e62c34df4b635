// TypeScript interfaces for every kind, through json-schema-to-typescript. Every `$defs` entry
// becomes a named interface or alias, so users import `LoadBalancer` rather than a path-derived name.
import { compile } from 'json-schema-to-typescript';
import { format } from 'prettier';
import { isObject, resolveRef } from './refs.js';
import { SchemaError, type Json, type JsonObject, type SchemaFile, type SchemaSet } from './source.js';

/**
 * The Kubernetes pre-pass json-schema-to-typescript needs: it would type a bare
 * int-or-string as an object and a preserve-unknown-fields object as `{}`, and it knows nothing
 * of `x-kubernetes-*`. Refs are rewritten to point into the one merged `$defs` table.
 */
function prepare(set: SchemaSet, file: SchemaFile, node: Json): Json {
  if (Array.isArray(node)) return node.map((n) => prepare(set, file, n));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    // Name the definition directly: a $ref with sibling keys would make json-schema-to-typescript
    // declare a fresh copy (Group1, Group2, …) for every use.
    const ref: JsonObject = { tsType: resolveRef(set, file, node.$ref).name };
    if (typeof node.description === 'string') ref.description = node.description;
    return ref;
  }
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('x-') || k === '$id' || k === '$defs') continue;
    out[k] = prepare(set, file, v);
  }
  if (node['x-kubernetes-int-or-string'] === true) {
    delete out.anyOf;
    out.tsType = 'number | string';
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === true && !isObject(node.properties)) {
    out.additionalProperties = true;
  }
  return out;
}

export async function generateTypes(set: SchemaSet, banner: string): Promise<string> {
  const defs: JsonObject = {};
  const owner = new Map<string, string>();
  const add = (name: string, file: SchemaFile, schema: JsonObject) => {
    const prior = owner.get(name);
    if (prior) throw new SchemaError(`${file.path}: definition "${name}" is also defined in ${prior}; names must be unique across schemas/`);
    owner.set(name, file.path);
    defs[name] = { ...(prepare(set, file, schema) as JsonObject), title: name };
  };
  for (const file of set.files.values()) {
    const own = file.json.$defs;
    if (isObject(own)) for (const [name, schema] of Object.entries(own)) add(name, file, schema as JsonObject);
  }
  for (const { file, crd } of set.kinds) {
    const root = structuredClone(file.json);
    const props = root.properties as JsonObject;
    // Objects read from manifests always carry apiVersion and kind, and only one value of each.
    props.apiVersion = { ...(props.apiVersion as JsonObject), tsType: JSON.stringify(`${crd.group}/${crd.version}`) };
    props.kind = { ...(props.kind as JsonObject), tsType: JSON.stringify(crd.kind) };
    props.metadata = { ...(props.metadata as JsonObject), tsType: 'ObjectMeta' };
    root.required = ['apiVersion', 'kind', 'metadata', ...((root.required as string[]) ?? [])];
    add(crd.kind, file, root);
  }
  const parts = [banner, "import type { ObjectMeta } from '../object-meta.js';"];
  parts.push(
    `/** ExtlbObject is any object of a kind extlb reads and validates. */\nexport type ExtlbObject = ${set.kinds.map((k) => k.crd.kind).join(' | ')};`,
  );
  // One compile per definition: references are already type names, so each stands alone and the
  // output order is simply alphabetical.
  for (const name of Object.keys(defs).sort()) {
    parts.push(
      await compile(defs[name] as never, name, {
        bannerComment: '',
        additionalProperties: false,
        unknownAny: true,
        strictIndexSignatures: false,
        declareExternallyReferenced: false,
        maxItems: -1,
        format: false,
        $refOptions: { resolve: { http: false, file: false } } as never,
      }),
    );
  }
  return format(parts.join('\n\n'), { parser: 'typescript', singleQuote: true, printWidth: 110 });
}
