// Reads Kubernetes manifests from files, folders and stdin, one YAML document at a time, with
// where each node of a document starts (made when first asked for) so that a problem found later
// (by a validator or the converter) can be reported at file:line:col.
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import type { Io } from './io.js';
import type { Position, PositionTree } from './yaml-documents.js';
import { readYamlDocuments, textOf } from './yaml-stream.js';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;
/** Bytes read from a file at a time. */
const READ_CHUNK = 1 << 20;

export interface Manifest {
  /** The path as the user should see it (relative to the working directory), or `-` for stdin. */
  file: string;
  /** 0-based index of the document within its file. */
  index: number;
  object: unknown;
  /** Where the document's content starts. */
  root: Position;
  /** Where each node starts; made when first asked for. */
  readonly positions: PositionTree;
}

/** A file that could not be read (line 0), or a YAML document kubectl would not read. */
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

function cannotRead(file: string, err: unknown): LoadProblem {
  return { file, line: 0, col: 0, message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a sequence' : `a ${typeof value}`;
}

/**
 * Why kubectl cannot take a document as an object, in its words, or undefined when it can: it
 * decodes only a mapping with a kind, and finds the resource only with an apiVersion.
 */
function notAnObject(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `a manifest is a mapping with apiVersion and kind, not ${typeName(value)}; kubectl cannot decode it`;
  }
  const { apiVersion, kind } = value as { apiVersion?: unknown; kind?: unknown };
  if (typeof kind !== 'string' || kind === '') return "Object 'Kind' is missing: a manifest needs a kind, and kubectl cannot decode one without it";
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    return `no matches for kind ${JSON.stringify(kind)} in version "": a manifest needs an apiVersion, and kubectl cannot find the resource without it`;
  }
  return undefined;
}

/** The documents of one stream of text, as manifests or problems, in order. */
async function* readStream(text: AsyncIterable<string> | Iterable<string>, file: string): AsyncGenerator<Manifest | LoadProblem> {
  for await (const item of readYamlDocuments(text)) {
    const refused = item.kind === 'document' ? notAnObject(item.value) : undefined;
    if (item.kind === 'problem') yield { file, line: item.line, col: item.col, message: item.message };
    else if (refused) yield { file, line: item.root.line, col: item.root.col, message: refused };
    else
      yield {
        file,
        index: item.index,
        object: item.value,
        root: item.root,
        get positions() {
          return item.positions;
        },
      };
  }
}

export function isManifest(item: Manifest | LoadProblem): item is Manifest {
  return 'object' in item;
}

/**
 * Manifests from files, folders (recursively: *.yaml, *.yml, *.json) and `-` (stdin), one
 * document at a time, with the problems in between; nothing is held beyond the current document.
 */
export async function* streamManifests(paths: string[], io: Io): AsyncGenerator<Manifest | LoadProblem> {
  for (const path of paths) {
    if (path === '-') {
      yield* readStream(textOf(io.stdin), '-');
      continue;
    }
    const abs = isAbsolute(path) ? path : resolve(io.cwd, path);
    let files: string[];
    try {
      files = await expand(abs);
    } catch (err) {
      yield cannotRead(path, err);
      continue;
    }
    for (const file of files) {
      const shown = relative(io.cwd, file) || file;
      const name = shown.startsWith('..') ? file : shown;
      try {
        yield* readStream(textOf(createReadStream(file, { highWaterMark: READ_CHUNK })), name);
      } catch (err) {
        yield cannotRead(name, err);
      }
    }
  }
}

async function collect(items: AsyncIterable<Manifest | LoadProblem>): Promise<LoadResult> {
  const result: LoadResult = { manifests: [], problems: [] };
  for await (const item of items) {
    if (isManifest(item)) result.manifests.push(item);
    else result.problems.push(item);
  }
  return result;
}

/** Loads every manifest under `paths`, for commands that need them all at once. */
export function loadManifests(paths: string[], io: Io): Promise<LoadResult> {
  return collect(streamManifests(paths, io));
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

/**
 * Line and column (1-based) of the node at `fieldPath`, or of its nearest existing ancestor when
 * the field is missing (a required field points at the object that lacks it).
 */
export function positionOf(m: Manifest, fieldPath: string): { line: number; col: number } {
  if (fieldPath === '') return m.root;
  let at = m.positions;
  for (const key of splitFieldPath(fieldPath)) {
    const next = typeof key === 'number' && at.items ? at.items[key] : at.keys?.get(String(key));
    if (!next) break;
    at = next;
  }
  return { line: at.line, col: at.col };
}

/** `Kind namespace/name` (or `Kind name` without a namespace), as messages name an object. */
export function describeObject(object: unknown): string {
  const o = (object ?? {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const kind = typeof o.kind === 'string' ? o.kind : '<no kind>';
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '<no name>';
  const ns = typeof o.metadata?.namespace === 'string' ? `${o.metadata.namespace}/` : '';
  return `${kind} ${ns}${name}`;
}
