// Checks that a generated CRD schema is one the API server accepts as structural, and that every
// CEL rule in it parses and only names fields that exist. The API server would refuse the CRD (or
// fail the rule on every object) otherwise, which no unit test of the generator would notice.
import { parse } from '@marcbachmann/cel-js';
import { Ajv } from 'ajv';
import { isObject } from './refs.js';
import type { Json, JsonObject } from './source.js';

export interface StructuralProblem {
  path: string;
  reason: string;
}

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
/** Keywords a structural schema may carry (apiextensions v1 JSONSchemaProps, minus $ref and friends). */
const ALLOWED = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

interface CelNode {
  op: string;
  args: unknown;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/**
 * Walks a parsed CEL expression and reports every field selection on a schema object that names
 * no property. `scope` maps variables (self, oldSelf, macro variables) to their schema nodes.
 */
function checkFields(node: unknown, scope: Map<string, JsonObject | undefined>, problems: string[]): JsonObject | undefined {
  if (!node || typeof node !== 'object' || !('op' in node)) return undefined;
  const { op, args } = node as CelNode;
  if (op === 'id') return scope.get(args as string);
  if (op === '.' || op === '.?') {
    const [target, field] = args as [unknown, string];
    const schema = checkFields(target, scope, problems);
    if (!schema) return undefined;
    if (isObject(schema.properties)) {
      const child = schema.properties[field];
      if (!isObject(child)) {
        problems.push(`names field "${field}", which does not exist (fields: ${Object.keys(schema.properties).join(', ')})`);
        return undefined;
      }
      return child;
    }
    return isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  }
  if (op === 'rcall') {
    const [name, receiver, callArgs] = args as [string, unknown, unknown[]];
    const schema = checkFields(receiver, scope, problems);
    if (MACROS.has(name) && callArgs.length >= 2) {
      const variable = (callArgs[0] as CelNode).args as string;
      const element = schema?.type === 'array' && isObject(schema.items) ? schema.items : schema?.type === 'object' ? { type: 'string' } : undefined;
      const inner = new Map(scope).set(variable, element);
      for (const a of callArgs.slice(1)) checkFields(a, inner, problems);
      return undefined;
    }
    for (const a of callArgs) checkFields(a, scope, problems);
    return undefined;
  }
  if (op === 'call') {
    const [, callArgs] = args as [string, unknown[]];
    for (const a of callArgs) checkFields(a, scope, problems);
    return undefined;
  }
  if (op === '[]' || op === '[?]') {
    const [target, index] = args as [unknown, unknown];
    const schema = checkFields(target, scope, problems);
    checkFields(index, scope, problems);
    if (schema?.type === 'array' && isObject(schema.items)) return schema.items;
    return isObject(schema?.additionalProperties) ? (schema.additionalProperties as JsonObject) : undefined;
  }
  if (Array.isArray(args)) for (const a of args) checkFields(a, scope, problems);
  return undefined;
}

/** Problems with one CEL rule at a schema node: a parse error, or fields that do not exist. */
export function checkCelRule(rule: string, self: JsonObject): string[] {
  let ast: unknown;
  try {
    ast = parse(rule).ast;
  } catch (err) {
    return [`does not parse: ${(err as Error).message.split('\n')[0]}`];
  }
  const problems: string[] = [];
  checkFields(
    ast,
    new Map([
      ['self', self],
      ['oldSelf', self],
    ]),
    problems,
  );
  return problems;
}

export function checkStructural(schema: JsonObject): StructuralProblem[] {
  const problems: StructuralProblem[] = [];
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const visit = (node: Json, path: string, isMetadata: boolean) => {
    if (!isObject(node)) {
      problems.push({ path, reason: 'schema node is not an object' });
      return;
    }
    const add = (reason: string) => problems.push({ path: path || '(root)', reason });
    for (const key of Object.keys(node)) if (!ALLOWED.has(key)) add(`keyword "${key}" is not allowed in a CRD schema`);
    const intOrString = node['x-kubernetes-int-or-string'] === true;
    const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
    if (!intOrString && !(preserve && node.type === undefined) && !TYPES.has(String(node.type))) add('node has no type');
    if (intOrString) {
      const anyOf = node.anyOf;
      const ok = node.type === undefined && (anyOf === undefined || JSON.stringify(anyOf) === JSON.stringify([{ type: 'integer' }, { type: 'string' }]));
      if (!ok) add('x-kubernetes-int-or-string needs no type and, if any, anyOf [{type: integer}, {type: string}]');
    }
    if (isObject(node.properties) && node.additionalProperties !== undefined) {
      add('properties and additionalProperties are mutually exclusive');
    }
    if (isMetadata) {
      const extra = Object.keys(node).filter((k) => k !== 'type' && k !== 'description');
      if (extra.length > 0) add(`metadata may only say type: object (found ${extra.join(', ')})`);
    }
    if (node.default !== undefined) {
      const { default: value, ...own } = node;
      const valid = ajv.validate(stripKubernetes(own) as object, value);
      if (!valid) add(`default ${JSON.stringify(value)} is not valid against its own schema: ${ajv.errorsText()}`);
    }
    if (node['x-kubernetes-list-type'] === 'map') {
      const keys = node['x-kubernetes-list-map-keys'];
      const item = isObject(node.items) ? node.items : {};
      const required = new Set(Array.isArray(item.required) ? (item.required as string[]) : []);
      if (!Array.isArray(keys) || keys.length === 0) add('list type map needs x-kubernetes-list-map-keys');
      else {
        for (const key of keys as string[]) {
          const prop = isObject(item.properties) ? item.properties[key] : undefined;
          if (!isObject(prop)) add(`list-map key "${key}" is not a property of the items`);
          else if (!required.has(key) && prop.default === undefined) add(`list-map key "${key}" must be required or defaulted`);
        }
      }
    }
    const rules = node['x-kubernetes-validations'];
    if (Array.isArray(rules)) {
      rules.forEach((r, i) => {
        const rule = isObject(r) ? r.rule : undefined;
        if (typeof rule !== 'string') {
          add(`x-kubernetes-validations[${i}] has no rule`);
          return;
        }
        if (!isObject(r) || typeof r.message !== 'string' || r.message.length === 0) add(`x-kubernetes-validations[${i}] has no message`);
        for (const p of checkCelRule(rule, node)) add(`x-kubernetes-validations[${i}] ${p}`);
      });
    }
    if (isObject(node.properties)) {
      for (const [name, child] of Object.entries(node.properties)) {
        visit(child, path ? `${path}.${name}` : name, path === '' && name === 'metadata');
      }
    }
    if (node.items !== undefined) visit(node.items, `${path}[*]`, false);
    if (isObject(node.additionalProperties)) visit(node.additionalProperties, `${path}[*]`, false);
  };
  visit(schema, '', false);
  return problems;
}

/** ajv knows nothing of x-kubernetes-* keywords; drop them to check a default against plain JSON Schema. */
function stripKubernetes(node: Json): Json {
  if (Array.isArray(node)) return node.map(stripKubernetes);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) if (!k.startsWith('x-kubernetes-') && k !== 'nullable') out[k] = stripKubernetes(v);
  return out;
}
