// Reads the authored API in schemas/: one YAML file per kind plus common.yaml, kept as parsed YAML
// documents so that lint and generator errors can point at file:line:col.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The CRD facts a kind file carries under `x-extlb-crd`; the generators read nothing else. */
export interface CrdInfo {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
  labels?: Record<string, string>;
  /** false for kinds extlb reads but whose CRD another project publishes (GIE's InferencePool). */
  publish: boolean;
  printerColumns: { name: string; type: string; jsonPath: string; description?: string }[];
}

export interface SchemaFile {
  /** File name relative to the schema folder, e.g. `backendpool.yaml`; also what `$ref`s name. */
  name: string;
  path: string;
  doc: Document;
  lines: LineCounter;
  json: JsonObject;
}

export interface Kind {
  file: SchemaFile;
  crd: CrdInfo;
}

export interface SchemaSet {
  dir: string;
  files: Map<string, SchemaFile>;
  /** Kind files in a stable order (by kind name), so generated output never depends on readdir order. */
  kinds: Kind[];
}

export class SchemaError extends Error {}

export function loadSchemas(dir: string): SchemaSet {
  const files = new Map<string, SchemaFile>();
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const path = join(dir, name);
    const lines = new LineCounter();
    const doc = parseDocument(readFileSync(path, 'utf8'), { lineCounter: lines, prettyErrors: true });
    if (doc.errors.length > 0) {
      throw new SchemaError(doc.errors.map((e) => `${path}: ${e.message}`).join('\n'));
    }
    const json = doc.toJS() as Json;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      throw new SchemaError(`${path}:1:1: a schema file must be a YAML mapping`);
    }
    files.set(name, { name, path, doc, lines, json });
  }
  const kinds: Kind[] = [];
  for (const file of files.values()) {
    const info = file.json['x-extlb-crd'];
    if (info === undefined) continue;
    kinds.push({ file, crd: info as unknown as CrdInfo });
  }
  kinds.sort((a, b) => a.crd.kind.localeCompare(b.crd.kind));
  return { dir, files, kinds };
}

/** `file:line:col` of the node at `path` in a schema file, or of the file itself when absent. */
export function positionOf(file: SchemaFile, path: (string | number)[]): string {
  // Walk down as far as the path exists, so a missing key points at its parent.
  for (let n = path.length; n >= 0; n--) {
    const node = file.doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) {
      const { line, col } = file.lines.linePos(node.range[0]);
      return `${file.path}:${line}:${col}`;
    }
  }
  return `${file.path}:1:1`;
}
