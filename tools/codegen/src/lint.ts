// Schema lint: the API review rules every field must meet before it reaches a CRD. Each finding
// names the file position of the offending node so that it can be fixed at once.
import { isObject, resolveRef } from './refs.js';
import { positionOf, type JsonObject, type SchemaFile, type SchemaSet } from './source.js';

export interface LintFinding {
  at: string;
  path: string;
  reason: string;
}

/** A node's own keys, with those of the definition its `$ref` names beneath them. */
function effective(set: SchemaSet, file: SchemaFile, node: JsonObject): JsonObject {
  if (typeof node.$ref !== 'string') return node;
  const target = resolveRef(set, file, node.$ref);
  return { ...effective(set, target.file, target.node), ...node };
}

export function lintSchemas(set: SchemaSet): LintFinding[] {
  const findings: LintFinding[] = [];
  const visit = (file: SchemaFile, node: JsonObject, path: (string | number)[], isProperty: boolean) => {
    const eff = effective(set, file, node);
    const report = (reason: string) => findings.push({ at: positionOf(file, path), path: path.join('.'), reason });
    if (isProperty && typeof eff.description !== 'string') report('property has no description');
    if (eff.type === 'array' && eff.maxItems === undefined) report('list has no maxItems');
    if (eff.type === 'string' && eff.maxLength === undefined && eff.enum === undefined && eff.pattern === undefined) {
      report('string has no maxLength, enum or pattern');
    }
    if (eff.type === 'object' && isObject(eff.additionalProperties) && eff.maxProperties === undefined) {
      report('map has no maxProperties');
    }
    if (isObject(node.properties)) {
      for (const [name, child] of Object.entries(node.properties)) {
        if (isObject(child)) visit(file, child, [...path, 'properties', name], true);
      }
    }
    if (isObject(node.items)) visit(file, node.items, [...path, 'items'], false);
    if (isObject(node.additionalProperties)) visit(file, node.additionalProperties, [...path, 'additionalProperties'], false);
  };
  for (const file of set.files.values()) {
    if (file.json['x-extlb-crd'] !== undefined) visit(file, file.json, [], false);
    const defs = file.json.$defs;
    if (isObject(defs)) {
      for (const [name, def] of Object.entries(defs)) if (isObject(def)) visit(file, def, ['$defs', name], false);
    }
  }
  return findings;
}

export function formatFindings(findings: LintFinding[]): string {
  return findings.map((f) => `${f.at}: ${f.path}: ${f.reason}`).join('\n');
}
