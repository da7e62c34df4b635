// `extlb validate PATH...`: checks manifests the way the API server would, before `kubectl apply`,
// and reports each problem on one line at the offending node: file:line:col: Kind ns/name: message.
import { parseArgs } from 'node:util';
import { isValidatedKind, validate, type FieldError, type Warning } from '@extlb/validate';
import type { Command } from '../command.js';
import { usageErrors } from '../flags.js';
import { DiagnosticWriter, note } from '../diagnostic-lines.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, write, type Io } from '../io.js';
import { describeObject, isManifest, positionOf, splitFieldPath, streamManifests, type LoadProblem, type Manifest } from '../manifests.js';

const USAGE = 'extlb validate [--strict] [-o text|json] PATH... (files, folders, or - for stdin)';

interface Located {
  field: string;
  message: string;
  line: number;
  col: number;
}

interface DocumentReport {
  file: string;
  index: number;
  line: number;
  col: number;
  object: string;
  kind: string | undefined;
  valid: boolean;
  skipped: boolean;
  errors: (Located & Pick<FieldError, 'type' | 'detail'>)[];
  warnings: Located[];
}

type Summary = { documents: number; valid: number; invalid: number; skipped: number; syntaxErrors: number; unreadable: number };

/**
 * Rewrites the API server's path so the manifest loader can find the node: kube-openapi joins map
 * keys with "." (`matchLabels.app.kubernetes.io/name`), which is ambiguous when a key has dots.
 * Walking the object tells which dotted runs are one key; those become `[key]`.
 */
export function bracketMapKeys(object: unknown, field: string): string {
  const parts = splitFieldPath(field);
  let at: unknown = object;
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (typeof part === 'number' || Array.isArray(at)) {
      out += `[${part}]`;
      at = Array.isArray(at) ? at[Number(part)] : undefined;
      continue;
    }
    const record = typeof at === 'object' && at !== null ? (at as Record<string, unknown>) : undefined;
    // The shortest run of parts that names an existing key; a single part when none does.
    let key = part;
    for (let j = i; j < parts.length && typeof parts[j] === 'string'; j++) {
      const candidate = parts.slice(i, j + 1).join('.');
      if (record && Object.hasOwn(record, candidate)) {
        key = candidate;
        i = j;
        break;
      }
    }
    out += key.includes('.') || key.includes('[') ? `[${key}]` : out ? `.${key}` : key;
    at = record && Object.hasOwn(record, key) ? record[key] : undefined;
  }
  return out;
}

function locate(m: Manifest, field: string): { line: number; col: number } {
  return positionOf(m, bracketMapKeys(m.object, field));
}

function checkDocument(m: Manifest, strict: boolean): DocumentReport {
  const o = m.object as { apiVersion?: unknown; kind?: unknown } | null;
  const root = positionOf(m, '');
  const base = { file: m.file, index: m.index, line: root.line, col: root.col, object: describeObject(m.object) };
  const isObject = typeof o === 'object' && o !== null && !Array.isArray(o);
  if (isObject && !isValidatedKind(o.apiVersion, o.kind)) {
    const errors = strict
      ? [
          {
            field: '',
            type: 'Unsupported value',
            detail: '',
            line: root.line,
            col: root.col,
            message: `apiVersion ${JSON.stringify(o.apiVersion ?? '')}, kind ${JSON.stringify(o.kind ?? '')} is not a kind extlb validates (BackendPool, LoadBalancerPolicy, InferencePool, GatewayParameters)`,
          },
        ]
      : [];
    return { ...base, kind: undefined, valid: !strict, skipped: true, errors, warnings: [] };
  }
  const result = validate(m.object);
  const at = (e: { field: string; message: string }) => ({ field: e.field, message: e.message, ...locate(m, e.field) });
  return {
    ...base,
    kind: result.kind,
    valid: result.valid,
    skipped: false,
    errors: result.errors.map((e) => ({ ...at(e), type: e.type, detail: e.detail })),
    warnings: result.warnings.map((w: Warning) => at(w)),
  };
}

/** Where each document's result goes as it is checked: text lines, or a JSON report. */
interface ReportSink {
  document(d: DocumentReport): Promise<void>;
  problem(p: LoadProblem): Promise<void>;
  end(summary: Summary): Promise<void>;
}

/** One line per problem, error or warning, in file order, then one summary line. */
function textSink(io: Io, label: string): ReportSink {
  const out = new DiagnosticWriter(io.stdout);
  return {
    async problem(p) {
      await out.line(note(p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file, p.message));
    },
    async document(d) {
      for (const e of d.errors) await out.line({ where: `${d.file}:${e.line}:${e.col}`, text: `${d.object}: ${e.message}`, message: e.message });
      for (const w of d.warnings)
        await out.line({ where: `${d.file}:${w.line}:${w.col}`, text: `${d.object}: warning: ${w.message}`, message: `warning: ${w.message}` });
    },
    async end(summary) {
      await out.end();
      await write(io.stdout, `${label}${summaryLine(summary)}`);
    },
  };
}

/**
 * `{documents, problems, summary}` as JSON.stringify(report, null, 2) would write it, with the
 * documents written as they come (problems are kept until the end, after the documents).
 */
function jsonSink(io: Io): ReportSink {
  const problems: LoadProblem[] = [];
  let documents = 0;
  const indented = (value: unknown) => JSON.stringify(value, null, 2).replace(/\n/g, '\n    ');
  return {
    async problem(p) {
      problems.push(p);
    },
    async document(d) {
      await write(io.stdout, `${documents++ === 0 ? '{\n  "documents": [\n' : ',\n'}    ${indented(d)}`);
    },
    async end(summary) {
      const head = documents === 0 ? '{\n  "documents": [],\n' : '\n  ],\n';
      const tail = JSON.stringify({ problems, summary }, null, 2).slice(2);
      await write(io.stdout, `${head}${tail}\n`);
    },
  };
}

/** Validates every manifest under `paths` one document at a time, reporting each to `sink`. */
async function validatePaths(paths: string[], io: Io, strict: boolean, sink: ReportSink): Promise<Summary> {
  const summary: Summary = { documents: 0, valid: 0, invalid: 0, skipped: 0, syntaxErrors: 0, unreadable: 0 };
  for await (const item of streamManifests(paths, io)) {
    if (!isManifest(item)) {
      if (item.line > 0) summary.syntaxErrors++;
      else summary.unreadable++;
      await sink.problem(item);
      continue;
    }
    const d = checkDocument(item, strict);
    summary.documents++;
    if (d.skipped) summary.skipped++;
    else if (d.valid) summary.valid++;
    if (!d.valid) summary.invalid++;
    await sink.document(d);
  }
  await sink.end(summary);
  return summary;
}

function summaryLine(s: Summary): string {
  const parts = [`${s.documents} ${s.documents === 1 ? 'document' : 'documents'}`, `${s.valid} valid`, `${s.invalid} invalid`];
  if (s.skipped) parts.push(`${s.skipped} skipped (not an extlb kind)`);
  if (s.syntaxErrors) parts.push(`${s.syntaxErrors} YAML ${s.syntaxErrors === 1 ? 'problem' : 'problems'}`);
  if (s.unreadable) parts.push(`${s.unreadable} unreadable`);
  return `${parts.join(', ')}\n`;
}

function exitCode(summary: Summary): number {
  if (summary.unreadable > 0) return EXIT_USAGE;
  return summary.invalid > 0 || summary.syntaxErrors > 0 ? EXIT_INVALID : EXIT_OK;
}

/**
 * For `npm start`: validates `paths` (e.g. examples/), prints any problem and one summary line
 * prefixed with `label`, and returns the exit code `extlb validate` would.
 */
export async function printValidationSummary(paths: string[], io: Io, label = 'validate'): Promise<number> {
  return exitCode(await validatePaths(paths, io, false, textSink(io, `${label}: `)));
}

function parseFlags(args: string[]) {
  return usageErrors(() =>
    parseArgs({ args, options: { strict: { type: 'boolean' }, output: { type: 'string', short: 'o' } }, strict: true, allowPositionals: true }),
  );
}

export const command: Command = {
  name: 'validate',
  summary: 'Check extlb manifests (BackendPool, LoadBalancerPolicy, InferencePool, GatewayParameters) as the API server would: schema, defaults, CEL rules.',
  usage: USAGE,
  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals } = parseFlags(args);
    const output = values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`-o must be text or json, not "${output}"`);
    if (positionals.length === 0) throw new UsageError('name at least one file, folder, or - for stdin');
    const sink = output === 'json' ? jsonSink(io) : textSink(io, '');
    return exitCode(await validatePaths(positionals, io, values.strict === true, sink));
  },
};
