// Proto messages → TypeScript types of their proto3 JSON form, as the converter writes it: field
// names as in the protos (snake_case), every field optional unless protoc-gen-validate makes it
// required, a oneof as a union of its members (at most one set), enums as their names, the
// well-known types as proto3 JSON writes them (a Duration is "1.5s", a UInt32Value a bare number),
// and an Any as the union of the messages the output packs into one, told apart by "@type".
//
// Only the closure of the root messages is written, one module per proto package
// (`envoy/config/route/v3.ts`), each importing the packages it refers to as a namespace. Deprecated
// fields are left out: the validator refuses them, so using one is a compile error.
import { posix } from 'node:path';
import protobuf from 'protobufjs';

export const TYPE_URL_PREFIX = 'type.googleapis.com/';

const WELL_KNOWN = 'google.protobuf';
const WELL_KNOWN_FILE = 'google/protobuf.ts';

/** A TypeScript template literal type such as `${number}s`, written without a placeholder in a string. */
function templateType(placeholder: string, suffix = ''): string {
  return `\`$\{${placeholder}}${suffix}\``;
}

/** The well-known types' proto3 JSON forms, by name in google.protobuf. */
const WELL_KNOWN_TYPES: readonly (readonly [string, string, string])[] = [
  ['Duration', templateType('number', 's'), 'Seconds with 0 to 9 fractional digits and an "s": "1.5s", "0.000000001s", "-2s".'],
  ['Timestamp', 'string', 'RFC 3339 in UTC: "2026-01-01T00:00:00Z".'],
  ['FieldMask', 'string', 'Comma-separated lowerCamelCase paths: "a.bC,d".'],
  ['Struct', '{ [key: string]: Value }', 'A JSON object.'],
  ['Value', 'null | number | string | boolean | ListValue | Struct', 'Any JSON value.'],
  ['ListValue', 'Value[]', 'A JSON array.'],
  ['NullValue', 'null', 'JSON null.'],
  ['Empty', '{ [key: string]: never }', 'An empty object.'],
  ['DoubleValue', 'number', 'A bare number.'],
  ['FloatValue', 'number', 'A bare number.'],
  ['Int64Value', 'Int64', 'A bare 64-bit integer.'],
  ['UInt64Value', 'UInt64', 'A bare unsigned 64-bit integer.'],
  ['Int32Value', 'number', 'A bare integer.'],
  ['UInt32Value', 'number', 'A bare unsigned integer.'],
  ['BoolValue', 'boolean', 'A bare boolean.'],
  ['StringValue', 'string', 'A bare string.'],
  ['BytesValue', 'string', 'Bare base64 bytes.'],
];

const SCALARS: Readonly<Record<string, string>> = {
  double: 'number',
  float: 'number',
  int32: 'number',
  uint32: 'number',
  sint32: 'number',
  fixed32: 'number',
  sfixed32: 'number',
  int64: 'google_protobuf.Int64',
  uint64: 'google_protobuf.UInt64',
  sint64: 'google_protobuf.Int64',
  fixed64: 'google_protobuf.UInt64',
  sfixed64: 'google_protobuf.Int64',
  bool: 'boolean',
  string: 'string',
  bytes: 'string',
};

type Named = protobuf.Type | protobuf.Enum;

/** A message or enum's place: its proto package and its name in TypeScript (nested names joined by `_`). */
interface Place {
  pkg: string;
  name: string;
}

export interface Generated {
  /** Module path (relative to the output folder) → content. */
  files: Map<string, string>;
  /** Messages and enums written, well-known types aside. */
  types: number;
}

function fullName(o: protobuf.ReflectionObject): string {
  return o.fullName.replace(/^\./, '');
}

function place(t: Named): Place {
  const names = [t.name];
  let parent = t.parent;
  while (parent instanceof protobuf.Type) {
    names.unshift(parent.name);
    parent = parent.parent;
  }
  return { pkg: parent ? fullName(parent) : '', name: names.join('_') };
}

function fileOf(pkg: string): string {
  return pkg === WELL_KNOWN ? WELL_KNOWN_FILE : `${pkg.split('.').join('/')}.ts`;
}

function alias(pkg: string): string {
  return pkg.replaceAll('.', '_');
}

function importPath(from: string, to: string): string {
  const rel = posix.relative(posix.dirname(from), to).replace(/\.ts$/, '.js');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function live(t: protobuf.Type): protobuf.Field[] {
  return t.fieldsArray.filter((f) => !f.options?.deprecated);
}

function resolved(f: protobuf.Field): Named | undefined {
  f.resolve();
  const t = f.resolvedType;
  return t instanceof protobuf.Type || t instanceof protobuf.Enum ? t : undefined;
}

/** The oneof a field is a member of, when it has more than one live member (a proto3 `optional` has one). */
function oneofOf(f: protobuf.Field): protobuf.OneOf | undefined {
  const o = f.partOf;
  if (!o) return undefined;
  return o.fieldsArray.filter((m) => !m.options?.deprecated).length > 1 ? o : undefined;
}

/** Whether protoc-gen-validate refuses the message without this field (proto3: unset is the zero value). */
function required(f: protobuf.Field): boolean {
  if (f.partOf) return false;
  const o = (f.options ?? {}) as Record<string, unknown>;
  const rule = (k: string) => o[`(validate.rules).${k}`];
  if (f.map) return Number(rule('map.min_pairs') ?? 0) > 0;
  if (f.repeated) return Number(rule('repeated.min_items') ?? 0) > 0;
  const t = resolved(f);
  if (t instanceof protobuf.Type) return ['message', 'duration', 'any', 'timestamp'].some((k) => rule(`${k}.required`) === true);
  if (t instanceof protobuf.Enum) return false;
  if (f.type === 'string' || f.type === 'bytes') return Number(rule(`${f.type}.min_len`) ?? 0) > 0 && rule(`${f.type}.ignore_empty`) !== true;
  const gt = rule(`${f.type}.gt`);
  const gte = rule(`${f.type}.gte`);
  return (typeof gt === 'number' && gt >= 0) || (typeof gte === 'number' && gte > 0);
}

/** Every message and enum the roots reach through live fields, well-known types aside. */
function closure(roots: readonly protobuf.Type[]): Named[] {
  const seen = new Set<Named>();
  const queue: Named[] = [...roots];
  for (let t = queue.shift(); t; t = queue.shift()) {
    if (seen.has(t)) continue;
    const { pkg, name } = place(t);
    if (pkg === WELL_KNOWN) {
      if (name !== 'Any' && !WELL_KNOWN_TYPES.some(([n]) => n === name)) throw new Error(`no proto3 JSON form for ${fullName(t)}`);
      continue;
    }
    seen.add(t);
    if (t instanceof protobuf.Type) {
      for (const f of live(t)) {
        const r = resolved(f);
        if (r) queue.push(r);
      }
    }
  }
  return [...seen];
}

class Module {
  readonly imports = new Set<string>();
  readonly blocks: [string, string][] = [];

  constructor(
    readonly pkg: string,
    readonly file: string,
  ) {}

  ref(t: Named): string {
    const p = place(t);
    if (p.pkg === this.pkg) return p.name;
    this.imports.add(p.pkg);
    return `${alias(p.pkg)}.${p.name}`;
  }

  valueType(f: protobuf.Field): string {
    const t = resolved(f);
    if (t) return this.ref(t);
    const s = SCALARS[f.type];
    if (!s) throw new Error(`unknown scalar ${f.type} of ${fullName(f)}`);
    if (s.startsWith('google_protobuf.')) this.imports.add(WELL_KNOWN);
    return s;
  }

  fieldType(f: protobuf.Field): string {
    const v = this.valueType(f);
    if (f.map) return `{ [key: string]: ${v} }`;
    if (f.repeated) return /^[\w.]+$/.test(v) ? `${v}[]` : `(${v})[]`;
    return v;
  }

  member(f: protobuf.Field, optional: boolean): string {
    return `${f.name}${optional ? '?' : ''}: ${this.fieldType(f)}`;
  }

  message(t: protobuf.Type): string {
    const fields = live(t);
    const plain = fields.filter((f) => !oneofOf(f));
    const oneofs = [...new Set(fields.flatMap((f) => oneofOf(f) ?? []))];
    const parts: string[] = [];
    if (plain.length > 0 || oneofs.length === 0) {
      parts.push(plain.length === 0 ? '{ [key: string]: never }' : `{\n${plain.map((f) => `  ${this.member(f, !required(f))};\n`).join('')}}`);
    }
    for (const o of oneofs) {
      const members = o.fieldsArray.filter((m) => !m.options?.deprecated);
      const mustSet = o.options?.['(validate.required)'] === true;
      const variants = members.map((m) => {
        const others = members.filter((x) => x !== m).map((x) => `${x.name}?: never`);
        return `{ ${[this.member(m, !mustSet), ...others].join('; ')} }`;
      });
      parts.push(`(\n${variants.map((v) => `  | ${v}\n`).join('')})`);
    }
    return parts.join(' & ');
  }

  add(t: Named): void {
    const { name } = place(t);
    const body =
      t instanceof protobuf.Type
        ? this.message(t)
        : Object.keys(t.values)
            .map((v) => `'${v}'`)
            .join(' | ');
    this.blocks.push([name, `/** \`${fullName(t)}\` */\nexport type ${name} = ${body};\n`]);
  }

  render(banner: string): string {
    const imports = [...this.imports]
      .sort()
      .map((p) => `import type * as ${alias(p)} from '${importPath(this.file, fileOf(p))}';\n`)
      .join('');
    const blocks = this.blocks.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, b]) => b);
    return `// ${banner}\n// Proto package ${this.pkg}, in proto3 JSON form.\n${imports ? `\n${imports}` : ''}\n${blocks.join('\n')}`;
  }
}

/** google.protobuf's well-known types in their JSON forms, and Any as the union of the roots by "@type". */
function wellKnownModule(roots: readonly protobuf.Type[], banner: string): string {
  const m = new Module(WELL_KNOWN, WELL_KNOWN_FILE);
  const members = [...roots]
    .map((t) => [fullName(t), t] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, t]) => {
      const tag = `{ '@type': '${TYPE_URL_PREFIX}${name}' }`;
      // An empty message adds nothing to its "@type"; its own type refuses every key, "@type" too.
      return live(t).length === 0 ? tag : `(${tag} & ${m.ref(t)})`;
    });
  const types = WELL_KNOWN_TYPES.map(([name, body, doc]) => `/** \`google.protobuf.${name}\`: ${doc} */\nexport type ${name} = ${body};\n`);
  const any = `/** \`google.protobuf.Any\`: one of the messages the output packs into an Any, with its type URL as "@type". */\nexport type Any =\n${members.map((x) => `  | ${x}`).join('\n')};\n`;
  const scalars = [
    `/** A 64-bit integer: proto3 JSON writes it as a decimal string, and reads a number too. */\nexport type Int64 = number | ${templateType('bigint')};\n`,
    `/** An unsigned 64-bit integer, as proto3 JSON writes it. */\nexport type UInt64 = number | ${templateType('bigint')};\n`,
  ];
  m.imports.delete(WELL_KNOWN);
  const imports = [...m.imports]
    .sort()
    .map((p) => `import type * as ${alias(p)} from '${importPath(WELL_KNOWN_FILE, fileOf(p))}';\n`)
    .join('');
  return `// ${banner}\n// The well-known types of google.protobuf in their proto3 JSON forms.\n\n${imports}\n${[any, ...types, ...scalars].join('\n')}`;
}

/** `index.ts`: every package as a namespace, and the Any union. */
function indexModule(pkgs: string[], banner: string): string {
  const lines = pkgs.map((p) => `export type * as ${alias(p)} from './${fileOf(p).replace(/\.ts$/, '.js')}';\n`);
  const wellKnown = `./${WELL_KNOWN_FILE.replace(/\.ts$/, '.js')}`;
  return `// ${banner}\n// Every proto package of the types, as a namespace.\n\nexport type { Any } from '${wellKnown}';\nexport type * as google_protobuf from '${wellKnown}';\n${lines.join('')}`;
}

/** The types of `roots` (full message names) and everything they reach, from the messages of `root`. */
export function generateTypes(root: protobuf.Root, roots: readonly string[], banner: string): Generated {
  const rootTypes = roots.map((r) => root.lookupType(r));
  const named = closure(rootTypes);
  const modules = new Map<string, Module>();
  const names = new Map<string, string>();
  for (const t of named) {
    const p = place(t);
    const key = `${p.pkg}:${p.name}`;
    const other = names.get(key);
    if (other !== undefined) throw new Error(`${fullName(t)} and ${other} would both be ${p.pkg}.${p.name}`);
    names.set(key, fullName(t));
    let m = modules.get(p.pkg);
    if (!m) {
      m = new Module(p.pkg, fileOf(p.pkg));
      modules.set(p.pkg, m);
    }
    m.add(t);
  }
  const files = new Map<string, string>();
  const pkgs = [...modules.keys()].sort();
  for (const pkg of pkgs) {
    const m = modules.get(pkg) as Module;
    files.set(m.file, m.render(banner));
  }
  files.set(WELL_KNOWN_FILE, wellKnownModule(rootTypes, banner));
  files.set('index.ts', indexModule(pkgs, banner));
  return { files: new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), types: named.length };
}
