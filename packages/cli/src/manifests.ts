// Reads Kubernetes manifests from files, folders and stdin, keeping every document's YAML nodes so
// that a problem found later (by a validator or the converter) can be reported at file:line:col.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import type { Io } from './io.js';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

export interface Manifest {
  /** The path as the user should see it (relative to the working directory), or `-` for stdin. */
  file: string;
  /** 0-based index of the document within its file. */
  index: number;
  object: unknown;
  doc: Document.Parsed;
  lines: LineCounter;
}

/** A file that could not be read, or a YAML document that does not parse. */
export interface LoadProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

export interface LoadResult {
  manifests: Manifest[];
  problems: LoadProblem[];
}

async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Files a path stands for: itself, or every manifest file under a folder, sorted for stable output. */
async function expand(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await expand(child)));
    else if (MANIFEST_FILE.test(entry.name)) out.push(child);
  }
  return out;
}

/**
 * Parses every document of `text`. A document with a syntax error becomes a problem at its own
 * position; the documents around it are still returned.
 */
export function parseManifests(text: string, file: string): LoadResult {
  const lines = new LineCounter();
  // YAML 1.1, as kubectl reads manifests: `on`, `yes` and `0755` mean what they mean there.
  const docs = parseAllDocuments(text, { lineCounter: lines, version: '1.1', uniqueKeys: true, prettyErrors: false });
  const manifests: Manifest[] = [];
  const problems: LoadProblem[] = [];
  // parseAllDocuments returns an EmptyStream, not an array, for text without documents.
  if (!Array.isArray(docs)) return { manifests, problems };
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        const { line, col } = lines.linePos(err.pos[0]);
        problems.push({ file, line, col, message: `YAML syntax error: ${err.message.split('\n')[0]}` });
      }
      return;
    }
    const object = doc.toJS({ maxAliasCount: 100 });
    if (object === null || object === undefined) return; // an empty document between `---` lines
    manifests.push({ file, index, object, doc, lines });
  });
  return { manifests, problems };
}

/** Loads manifests from files, folders (recursively: *.yaml, *.yml, *.json) and `-` (stdin). */
export async function loadManifests(paths: string[], io: Io): Promise<LoadResult> {
  const result: LoadResult = { manifests: [], problems: [] };
  const add = (r: LoadResult) => {
    result.manifests.push(...r.manifests);
    result.problems.push(...r.problems);
  };
  for (const path of paths) {
    if (path === '-') {
      add(parseManifests(await readStdin(io), '-'));
      continue;
    }
    const abs = isAbsolute(path) ? path : resolve(io.cwd, path);
    let files: string[];
    try {
      files = await expand(abs);
    } catch (err) {
      result.problems.push({ file: path, line: 0, col: 0, message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
      continue;
    }
    for (const file of files) {
      const shown = relative(io.cwd, file) || file;
      try {
        add(parseManifests(await readFile(file, 'utf8'), shown.startsWith('..') ? file : shown));
      } catch (err) {
        result.problems.push({ file: shown, line: 0, col: 0, message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
      }
    }
  }
  return result;
}

/**
 * Splits an API-server field path (`spec.targetPorts[0].number`, `metadata.labels[app/x]`) into
 * keys and indexes.
 */
export function splitFieldPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') {
      i++;
      continue;
    }
    if (path[i] === '[') {
      const end = path.indexOf(']', i);
      const inner = path.slice(i + 1, end < 0 ? path.length : end);
      out.push(/^\d+$/.test(inner) ? Number(inner) : inner);
      i = end < 0 ? path.length : end + 1;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

function child(node: Node | null | undefined, key: string | number): Node | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = isScalar(pair.key) ? pair.key.value : pair.key;
      if (String(k) === String(key)) return (pair.value as Node | null) ?? (pair.key as Node);
    }
    return undefined;
  }
  if (isSeq(node) && typeof key === 'number') return (node.items[key] as Node | undefined) ?? undefined;
  return undefined;
}

/**
 * Line and column (1-based) of the node at `fieldPath`, or of its nearest existing ancestor when
 * the field is missing (a required field points at the object that lacks it).
 */
export function positionOf(m: Manifest, fieldPath: string): { line: number; col: number } {
  let node = m.doc.contents as Node | null;
  let at = node;
  for (const key of splitFieldPath(fieldPath)) {
    const next = child(node, key);
    if (!next) break;
    node = next;
    at = next;
  }
  const offset = at?.range?.[0] ?? 0;
  return m.lines.linePos(offset);
}

/** `file:line:col` of a field in a manifest. */
export function locate(m: Manifest, fieldPath: string): string {
  const { line, col } = positionOf(m, fieldPath);
  return `${m.file}:${line}:${col}`;
}

/** `Kind namespace/name` (or `Kind name` without a namespace), as messages name an object. */
export function describeObject(object: unknown): string {
  const o = (object ?? {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const kind = typeof o.kind === 'string' ? o.kind : '<no kind>';
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '<no name>';
  const ns = typeof o.metadata?.namespace === 'string' ? `${o.metadata.namespace}/` : '';
  return `${kind} ${ns}${name}`;
}
