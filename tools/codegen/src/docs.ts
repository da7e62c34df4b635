// docs/api.md: the API reference, one section per kind and per shared type, in the manner of
// Gateway API's spec page. Types are linked rather than inlined so each is described once.
import { isObject, resolveRef } from './refs.js';
import type { Json, JsonObject, SchemaFile, SchemaSet } from './source.js';

interface Rule {
  rule: string;
  message?: string;
}

function rulesOf(node: JsonObject): Rule[] {
  const v = node['x-kubernetes-validations'];
  return Array.isArray(v) ? (v as unknown as Rule[]) : [];
}

const anchor = (name: string) => name.toLowerCase();
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const cell = (s: string) => oneLine(s).replace(/\|/g, '\\|');
const code = (s: string) => `\`${s.replace(/`/g, 'ˋ')}\``;

/** The type column: a link for a named type, otherwise the JSON type with its element type. */
function typeOf(set: SchemaSet, file: SchemaFile, node: JsonObject): string {
  if (typeof node.$ref === 'string') {
    const name = resolveRef(set, file, node.$ref).name;
    return `[${name}](#${anchor(name)})`;
  }
  if (node.type === 'array' && isObject(node.items)) return `[]${typeOf(set, file, node.items)}`;
  if (node.type === 'object' && isObject(node.additionalProperties)) {
    return `map[string]${typeOf(set, file, node.additionalProperties)}`;
  }
  if (Array.isArray(node.enum)) return `enum`;
  return String(node.type ?? 'any');
}

/** Limits as one readable list: bounds, lengths, patterns, enums and list semantics. */
function limitsOf(node: JsonObject): string[] {
  const out: string[] = [];
  const pair = (lo: string, hi: string, what: string) => {
    if (node[lo] !== undefined && node[hi] !== undefined) out.push(`${what} ${node[lo]}–${node[hi]}`);
    else if (node[lo] !== undefined) out.push(`${what} ≥ ${node[lo]}`);
    else if (node[hi] !== undefined) out.push(`${what} ≤ ${node[hi]}`);
  };
  pair('minimum', 'maximum', 'value');
  pair('minLength', 'maxLength', 'length');
  pair('minItems', 'maxItems', 'items');
  pair('minProperties', 'maxProperties', 'entries');
  if (typeof node.pattern === 'string') out.push(`pattern ${code(node.pattern)}`);
  if (Array.isArray(node.enum)) out.push(`one of ${node.enum.map((e) => code(String(e))).join(', ')}`);
  if (typeof node.format === 'string') out.push(`format ${node.format}`);
  const listType = node['x-kubernetes-list-type'];
  if (typeof listType === 'string') out.push(`list type ${listType}`);
  return out;
}

function fieldTable(set: SchemaSet, file: SchemaFile, node: JsonObject): string[] {
  const props = isObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
  const lines = ['| Field | Type | Required | Default | Limits | Description |', '| --- | --- | --- | --- | --- | --- |'];
  for (const [name, raw] of Object.entries(props)) {
    const prop = raw as JsonObject;
    const def = prop.default === undefined ? '' : code(JSON.stringify(prop.default));
    const rules = rulesOf(prop).map((r) => `CEL: ${r.message ?? r.rule}`);
    const limits = [...limitsOf(prop), ...rules].map(cell).join('; ');
    // A field without its own words inherits those of the type it names.
    const target = typeof prop.$ref === 'string' ? resolveRef(set, file, prop.$ref).node : {};
    const description = String(prop.description ?? target.description ?? '');
    lines.push(`| ${code(name)} | ${typeOf(set, file, prop)} | ${required.has(name) ? 'yes' : 'no'} | ${def} | ${limits} | ${cell(description)} |`);
  }
  return lines;
}

function section(set: SchemaSet, file: SchemaFile, name: string, node: JsonObject, level: string): string[] {
  const out = [`${level} ${name}`, ''];
  if (typeof node.description === 'string') out.push(oneLine(node.description), '');
  if (node.type === 'object' && isObject(node.properties)) {
    out.push(...fieldTable(set, file, node), '');
  } else {
    const limits = limitsOf(node);
    out.push(`Type: ${typeOf(set, file, node)}${limits.length ? `; ${limits.join('; ')}` : ''}.`, '');
    if (node.default !== undefined) out.push(`Default: ${code(JSON.stringify(node.default))}.`, '');
  }
  const rules = rulesOf(node);
  if (rules.length > 0) {
    out.push('Validation rules (CEL):', '');
    for (const r of rules) out.push(`- ${r.message ?? '(no message)'}: ${code(oneLine(r.rule))}`);
    out.push('');
  }
  return out;
}

export function apiReference(set: SchemaSet, banner: string): string {
  const out = [banner, '', '# extlb API reference', ''];
  out.push(
    'Generated from `schemas/`. Kinds first, then every type they use, in alphabetical order. Limits and CEL rules are enforced by the API server (through the CRDs), by `@extlb/validate` and by the admission webhook alike.',
    '',
  );
  out.push('## Kinds', '');
  for (const { file, crd } of set.kinds) {
    out.push(...section(set, file, crd.kind, file.json, '###'));
    const published = crd.publish
      ? `CRD \`${crd.plural}.${crd.group}\`, published in \`@extlb/crds\``
      : 'read and validated by extlb; its CRD is published by its own project';
    out.push(`API version \`${crd.group}/${crd.version}\`; short names ${crd.shortNames.map(code).join(', ')}; ${published}.`, '');
  }
  out.push('## Types', '');
  const defs: [string, SchemaFile, JsonObject][] = [];
  for (const file of set.files.values()) {
    const own = file.json.$defs;
    if (isObject(own)) for (const [name, node] of Object.entries(own)) defs.push([name, file, node as JsonObject]);
  }
  defs.sort((a, b) => a[0].localeCompare(b[0]));
  for (const [name, file, node] of defs) out.push(...section(set, file, name, node as Json as JsonObject, '###'));
  return `${out.join('\n').trimEnd()}\n`;
}
