// An Envoy-stage case: a hand-written IR of one Gateway (with the endpoints and certificates the
// stage looks up, and its options) read from `ir.yaml`. The YAML is type-checked against the IR's
// own TypeScript types by the compiler, so a fixture cannot drift from the IR: a misspelt or
// missing field fails the case at its `file:line:col`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { LineCounter, isMap, isNode, isScalar, parseDocument } from 'yaml';
import type { EnvoyStageCase } from './fixture.js';

export type { EnvoyStageCase } from './fixture.js';

/** The PEMs every case may name, by `namespace/name`. */
export interface CertificateFile {
  keyPairs: Record<string, { certificateChain: string; privateKey: string }>;
  caBundles: Record<string, string>;
}

interface Parsed {
  file: string;
  value: unknown;
  /** `file:line:col` of the node at a path of keys. */
  where(path: (string | number)[]): string;
}

function parse(file: string): Parsed {
  const lines = new LineCounter();
  const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines });
  if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
  return {
    file,
    value: doc.toJS(),
    where(path) {
      const at = (offset: number) => {
        const { line, col } = lines.linePos(offset);
        return `${file}:${line}:${col}`;
      };
      for (let n = path.length; n > 0; n--) {
        // The key of the innermost mapping entry on the path: a misspelt field is its key.
        const parent = doc.getIn(path.slice(0, n - 1), true);
        const pair = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && p.key.value === path[n - 1]) : undefined;
        if (pair && isScalar(pair.key) && pair.key.range) return at(pair.key.range[0]);
        const node = doc.getIn(path.slice(0, n), true);
        if (isNode(node) && node.range) return at(node.range[0]);
      }
      return file;
    },
  };
}

/** The keys from the object literal `root` down to the innermost property containing `pos`. */
function pathAt(root: ts.Node, pos: number): (string | number)[] {
  const path: (string | number)[] = [];
  let node: ts.Node = root;
  for (;;) {
    let next: ts.Node | undefined;
    if (ts.isObjectLiteralExpression(node)) {
      const p = node.properties.find((x) => x.getStart() <= pos && pos < x.getEnd());
      if (p && ts.isPropertyAssignment(p)) {
        path.push(ts.isStringLiteral(p.name) ? p.name.text : p.name.getText());
        next = p.initializer;
      }
    } else if (ts.isArrayLiteralExpression(node)) {
      const i = node.elements.findIndex((x) => x.getStart() <= pos && pos < x.getEnd());
      if (i >= 0) {
        path.push(i);
        next = node.elements[i];
      }
    }
    if (!next) return path;
    node = next;
  }
}

/**
 * Reads every case and type-checks them all in one program: each fixture becomes
 * `({...}) satisfies EnvoyStageCase` beside this module. Throws naming `file:line:col` of each error.
 */
export function loadCases(root: string, names: string[]): Map<string, EnvoyStageCase> {
  const parsed = new Map(names.map((n) => [n, parse(join(root, n, 'ir.yaml'))]));
  const here = import.meta.dirname;
  const virtual = new Map<string, [string, Parsed]>();
  for (const [name, p] of parsed) {
    const file = join(here, `${name}.case-check.ts`);
    virtual.set(file, [
      `import type { EnvoyStageCase } from './fixture.js';\nexport default (${JSON.stringify(p.value, null, 1)}) satisfies EnvoyStageCase;\n`,
      p,
    ]);
  }
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    lib: ['lib.es2023.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  const source = host.getSourceFile.bind(host);
  host.readFile = (f) => virtual.get(f)?.[0] ?? read(f);
  host.fileExists = (f) => virtual.has(f) || exists(f);
  host.getSourceFile = (f, lang) => {
    const v = virtual.get(f);
    return v ? ts.createSourceFile(f, v[0], lang, true) : source(f, lang);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  const errors: string[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const v = d.file ? virtual.get(d.file.fileName) : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
    if (!v || !d.file || d.start === undefined) {
      errors.push(`${d.file?.fileName ?? ''}: ${text}`);
      continue;
    }
    const statement = d.file.statements.find((s) => ts.isExportAssignment(s)) as ts.ExportAssignment | undefined;
    const literal = statement && ts.isSatisfiesExpression(statement.expression) ? statement.expression.expression : undefined;
    const inner = literal && ts.isParenthesizedExpression(literal) ? literal.expression : literal;
    errors.push(`${v[1].where(inner ? pathAt(inner, d.start) : [])}: ${text}`);
  }
  if (errors.length > 0) throw new Error(`an ir.yaml does not match the IR's types:\n${errors.join('\n')}`);
  return new Map([...parsed].map(([n, p]) => [n, p.value as EnvoyStageCase]));
}

export function loadCertificates(file: string): CertificateFile {
  return parse(file).value as CertificateFile;
}
