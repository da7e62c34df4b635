// The build-time half of @extlb/validate: per kind, an ajv standalone validator (so the package
// never compiles a schema or calls `new Function` at run time) and the structural facts the
// runtime needs for pruning, defaulting and CEL (types, defaults, list types, rules).
import { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { openApiSchema } from './crds.js';
import { capErrors } from './error-cap.js';
import { isObject } from './refs.js';
import type { Json, JsonObject, Kind, SchemaSet } from './source.js';

const standaloneCode = standaloneModule.default;

export const VALIDATE_GENERATED_DIR = 'packages/validate/src/generated';

/** Annotation keywords ajv must accept (strict mode stays on, so typos still fail the build). */
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  // Structural schemas spell int-or-string out as anyOf [integer, string], which ajv checks itself.
  'x-kubernetes-int-or-string',
];

/**
 * RFC 3339 as kube-openapi's strfmt date-time accepts it. A RegExp format is inlined into the
 * standalone code, so the output needs no format module at run time.
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Keys of the structural projection the runtime walks; everything else stays with ajv. */
const STRUCTURAL_KEYS: Record<string, string> = {
  type: 'type',
  default: 'default',
  nullable: 'nullable',
  'x-kubernetes-validations': 'rules',
  'x-kubernetes-list-type': 'listType',
  'x-kubernetes-list-map-keys': 'listMapKeys',
  'x-kubernetes-map-type': 'mapType',
  'x-kubernetes-preserve-unknown-fields': 'preserveUnknownFields',
  'x-kubernetes-int-or-string': 'intOrString',
  // kube-openapi validates nothing inside an object with more properties than this.
  maxProperties: 'maxProperties',
};

/** Strips descriptions and validation keywords, keeping what pruning, defaulting, CEL and the size checks read. */
export function structuralProjection(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, name] of Object.entries(STRUCTURAL_KEYS)) {
    if (node[key] !== undefined) out[name] = node[key]!;
  }
  if (isObject(node.properties)) {
    const props: JsonObject = {};
    for (const [k, v] of Object.entries(node.properties)) if (isObject(v)) props[k] = structuralProjection(v);
    out.properties = props;
  }
  if (isObject(node.additionalProperties)) out.additionalProperties = structuralProjection(node.additionalProperties);
  if (isObject(node.items)) out.items = structuralProjection(node.items);
  return out;
}

function newAjv(): Ajv {
  // inlineRefs: false makes each `$defs` entry a function of its own (see splitIntoDefs).
  const ajv = new Ajv({ code: { source: true, esm: true, lines: false }, allErrors: true, verbose: true, strict: true, inlineRefs: false });
  ajv.addVocabulary(KUBERNETES_KEYWORDS);
  ajv.addFormat('int32', true);
  ajv.addFormat('int64', true);
  ajv.addFormat('date-time', DATE_TIME);
  return ajv;
}

/**
 * ajv's "ESM" output still `require()`s its runtime helpers (ajv issues #1976, #2209); rewrite each
 * into an import so the module loads under plain Node ESM.
 */
export function esmOnly(code: string): string {
  const imports: string[] = [];
  const body = code.replace(/require\("([^"]+)"\)\.default/g, (_m, mod: string) => {
    const name = `__${mod.split('/').pop()!.replace(/\W/g, '_')}`;
    if (!imports.some((i) => i.includes(` ${name} `))) imports.push(`import ${name} from '${mod}.js';`);
    return `${name}.default`;
  });
  if (/\brequire\(/.test(body)) throw new Error('ajv standalone output still contains require()');
  return `${imports.join('\n')}\n${body.replace(/^"use strict";/, '')}`;
}

export function validatorFileName(kind: Kind): string {
  return `${kind.crd.kind.toLowerCase()}.validator.ts`;
}

/** Whether a schema checks more than its own value: an object's fields, a list's items or a map's values. */
function hasStructure(node: JsonObject): boolean {
  return isObject(node.properties) || isObject(node.items) || isObject(node.additionalProperties);
}

/**
 * How much checking a schema inlines, in characters of its JSON without descriptions: ajv's code
 * for a schema grows with it, at about 7 bytes of bytecode a character.
 */
function inlineWeight(node: JsonObject): number {
  return JSON.stringify(node, (k, v) => (k === 'description' ? undefined : v)).length;
}

/** The most schema JSON one generated function checks inline (its capped copy: about 12 KiB of bytecode). */
export const MAX_INLINE_WEIGHT = 1_000;

/**
 * `schema` with nested schemas moved to `$defs` and referred to, bottom up, largest first, until
 * no schema inlines more than `maxWeight` of its nested schemas. ajv compiles each referred
 * definition to a function of its own, so every function stays far below the bytecode size V8
 * still optimizes (about 60 KiB) however large a kind grows, while small objects such as a list's
 * items stay inline, where a call per item would cost more than their check. A call adds its
 * errors where the inlined checks would have, in the same order; only the errors' schemaPath and
 * parentSchema, which nothing reads but its type and format, name the definition.
 */
export function splitIntoDefs(schema: JsonObject, maxWeight = MAX_INLINE_WEIGHT): JsonObject {
  const defs: JsonObject = {};
  const visit = (node: JsonObject): JsonObject => {
    const out: JsonObject = { ...node };
    /** Where each nested schema sits in `out`, so that it can be replaced by a reference. */
    const slots: { weight: number; set: (v: JsonObject) => void; value: JsonObject }[] = [];
    const nest = (value: JsonObject, set: (v: JsonObject) => void) => {
      const inner = visit(value);
      set(inner);
      if (hasStructure(inner)) slots.push({ weight: inlineWeight(inner), set, value: inner });
    };
    if (isObject(node.properties)) {
      const props: JsonObject = { ...node.properties };
      out.properties = props;
      for (const [k, v] of Object.entries(props)) if (isObject(v)) nest(v, (x) => (props[k] = x));
    }
    if (isObject(node.items)) nest(node.items, (x) => (out.items = x));
    if (isObject(node.additionalProperties)) nest(node.additionalProperties, (x) => (out.additionalProperties = x));
    slots.sort((a, b) => b.weight - a.weight);
    for (const slot of slots) {
      if (inlineWeight(out) <= maxWeight) break;
      const name = `s${Object.keys(defs).length}`;
      defs[name] = slot.value;
      slot.set({ $ref: `#/$defs/${name}` });
    }
    return out;
  };
  const top = visit(schema);
  return Object.keys(defs).length === 0 ? top : { ...top, $defs: defs };
}

function validatorModule(set: SchemaSet, kind: Kind, banner: string): string {
  const ajv = newAjv();
  const code = capErrors(esmOnly(standaloneCode(ajv, ajv.compile(splitIntoDefs(openApiSchema(set, kind))))));
  return [
    `// ${banner}`,
    `// ajv standalone validator for ${kind.crd.kind} (${kind.crd.group}/${kind.crd.version}).`,
    '// @ts-nocheck',
    '/* eslint-disable */',
    code,
    '',
  ].join('\n');
}

function structuresModule(set: SchemaSet, banner: string): string {
  const lines = [
    `// ${banner}`,
    '// Structural schema of each kind: types, defaults, list and map types, CEL rules.',
    "import type { StructuralSchema } from '../structural.js';",
    '',
  ];
  const entries: string[] = [];
  for (const kind of set.kinds) {
    const name = kind.crd.kind;
    const json: Json = structuralProjection(openApiSchema(set, kind));
    lines.push(`export const ${name[0]!.toLowerCase()}${name.slice(1)}: StructuralSchema = ${JSON.stringify(json, null, 2)};`, '');
    entries.push(`  '${kind.crd.group}/${kind.crd.version}/${name}': { kind: '${name}', structure: ${name[0]!.toLowerCase()}${name.slice(1)} },`);
  }
  lines.push('/** Keyed by `apiVersion/kind`. */');
  lines.push(`export const KINDS = {\n${entries.join('\n')}\n} as const;`, '');
  return lines.join('\n');
}

function indexModule(set: SchemaSet, banner: string): string {
  const lines = [`// ${banner}`, '// Every generated validator, keyed by kind.'];
  const entries: string[] = [];
  const capped: string[] = [];
  for (const kind of set.kinds) {
    const id = `${kind.crd.kind[0]!.toLowerCase()}${kind.crd.kind.slice(1)}Validator`;
    lines.push(`import { validate as ${id}, validateCapped as ${id}Capped } from './${validatorFileName(kind).replace(/\.ts$/, '.js')}';`);
    entries.push(`  ${kind.crd.kind}: ${id} as SchemaValidator,`);
    capped.push(`  ${kind.crd.kind}: ${id}Capped as CappedValidator,`);
  }
  lines.push("import type { CappedValidator, SchemaValidator } from '../schema-errors.js';", '');
  lines.push(`export const VALIDATORS = {\n${entries.join('\n')}\n};`, '');
  lines.push('/** The same validators, building at most a given number of error objects. */');
  lines.push(`export const CAPPED_VALIDATORS = {\n${capped.join('\n')}\n};`, '');
  return lines.join('\n');
}

/** Every file under packages/validate/src/generated, keyed by repository-relative path. */
export function generateValidators(set: SchemaSet, banner: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const kind of set.kinds) {
    out.set(`${VALIDATE_GENERATED_DIR}/${validatorFileName(kind)}`, validatorModule(set, kind, banner));
  }
  out.set(`${VALIDATE_GENERATED_DIR}/structures.ts`, structuresModule(set, banner));
  out.set(`${VALIDATE_GENERATED_DIR}/validators.ts`, indexModule(set, banner));
  return out;
}
