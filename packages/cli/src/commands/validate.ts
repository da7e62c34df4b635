// `extlb validate PATH...`: checks manifests the way the API server would, before `kubectl apply`,
// and reports each problem on one line at the offending node: file:line:col: Kind ns/name: message.
import { parseArgs } from 'node:util';
import { isValidatedKind, validate, type FieldError, type Warning } from '@extlb/validate';
import type { Command } from '../command.js';
import { usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, write, type Io } from '../io.js';
import { describeObject, loadManifests, positionOf, splitFieldPath, type LoadProblem, type Manifest } from '../manifests.js';

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

export interface ValidationReport {
  documents: DocumentReport[];
  problems: LoadProblem[];
  summary: { documents: number; valid: number; invalid: number; skipped: number; syntaxErrors: number; unreadable: number };
}

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
            message: `apiVersion ${JSON.stringify(o.apiVersion ?? '')}, kind ${JSON.stringify(o.kind ?? '')} is not a kind extlb validates (BackendPool, LoadBalancerPolicy, InferencePool)`,
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

/** Loads and validates every manifest under `paths`. */
export async function validatePaths(paths: string[], io: Io, strict = false): Promise<ValidationReport> {
  const { manifests, problems } = await loadManifests(paths, io);
  const documents = manifests.map((m) => checkDocument(m, strict));
  const summary = {
    documents: documents.length,
    valid: documents.filter((d) => !d.skipped && d.valid).length,
    invalid: documents.filter((d) => !d.valid).length,
    skipped: documents.filter((d) => d.skipped).length,
    syntaxErrors: problems.filter((p) => p.line > 0).length,
    unreadable: problems.filter((p) => p.line === 0).length,
  };
  return { documents, problems, summary };
}

/** One line per problem, error or warning, in file order. */
export function formatReport(report: ValidationReport): string {
  const lines: string[] = [];
  for (const p of report.problems) lines.push(p.line > 0 ? `${p.file}:${p.line}:${p.col}: ${p.message}` : `${p.file}: ${p.message}`);
  for (const d of report.documents) {
    for (const e of d.errors) lines.push(`${d.file}:${e.line}:${e.col}: ${d.object}: ${e.message}`);
    for (const w of d.warnings) lines.push(`${d.file}:${w.line}:${w.col}: ${d.object}: warning: ${w.message}`);
  }
  return lines.map((l) => `${l}\n`).join('');
}

export function summaryLine(report: ValidationReport): string {
  const s = report.summary;
  const parts = [`${s.documents} ${s.documents === 1 ? 'document' : 'documents'}`, `${s.valid} valid`, `${s.invalid} invalid`];
  if (s.skipped) parts.push(`${s.skipped} skipped (not an extlb kind)`);
  if (s.syntaxErrors) parts.push(`${s.syntaxErrors} YAML syntax ${s.syntaxErrors === 1 ? 'error' : 'errors'}`);
  if (s.unreadable) parts.push(`${s.unreadable} unreadable`);
  return `${parts.join(', ')}\n`;
}

function exitCode(report: ValidationReport): number {
  if (report.summary.unreadable > 0) return EXIT_USAGE;
  return report.summary.invalid > 0 || report.summary.syntaxErrors > 0 ? EXIT_INVALID : EXIT_OK;
}

/**
 * For `npm start`: validates `paths` (e.g. examples/), prints any problem and one summary line
 * prefixed with `label`, and returns the exit code `extlb validate` would.
 */
export async function printValidationSummary(paths: string[], io: Io, label = 'validate'): Promise<number> {
  const report = await validatePaths(paths, io);
  await write(io.stdout, `${formatReport(report)}${label}: ${summaryLine(report)}`);
  return exitCode(report);
}

function parseFlags(args: string[]) {
  return usageErrors(() =>
    parseArgs({ args, options: { strict: { type: 'boolean' }, output: { type: 'string', short: 'o' } }, strict: true, allowPositionals: true }),
  );
}

export const command: Command = {
  name: 'validate',
  summary: 'Check extlb manifests (BackendPool, LoadBalancerPolicy, InferencePool) as the API server would: schema, defaults, CEL rules.',
  usage: USAGE,
  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals } = parseFlags(args);
    const output = values.output ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`-o must be text or json, not "${output}"`);
    if (positionals.length === 0) throw new UsageError('name at least one file, folder, or - for stdin');
    const report = await validatePaths(positionals, io, values.strict === true);
    if (output === 'json') await write(io.stdout, `${JSON.stringify(report, null, 2)}\n`);
    else await write(io.stdout, `${formatReport(report)}${summaryLine(report)}`);
    return exitCode(report);
  },
};
