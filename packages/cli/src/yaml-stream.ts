// Reads a stream of YAML documents fast, with every problem where the full reader puts it. The
// stream is cut into documents at its `---` lines, as the YAML lexer cuts it; each document is read
// by the fast reader (fast-yaml.ts) when it can be, which keeps no positions: they are made by the
// full reader (yaml-documents.ts) only for a document that something points into, the first time
// they are asked for. A document the fast reader gives up on is read by the full reader, with the
// `---` that ends it, so its problems are the ones the whole stream would give. A stream with
// what only the full reader can cut right (a `...` line, a `%` directive, a byte order mark) is
// read by it from that document on, whole. Memory otherwise follows the largest document.
import { StringDecoder } from 'node:string_decoder';
import { readFast, UNHANDLED_CHARACTER } from './fast-yaml.js';
import {
  type Position,
  type PositionTree,
  readDocumentsExactly,
  readYamlDocumentsExactly,
  type StreamPlace,
  type YamlDocument,
  type YamlProblem,
} from './yaml-documents.js';

/** Text from a stream of bytes or strings, multi-byte characters kept whole across chunks. */
export async function* textOf(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of chunks) yield typeof chunk === 'string' ? chunk : decoder.write(chunk);
  const rest = decoder.end();
  if (rest) yield rest;
}

/** A document the fast reader read: its positions come from the full reader when first asked for. */
class FastDocument implements YamlDocument {
  readonly kind = 'document';
  private tree: PositionTree | undefined;

  constructor(
    readonly index: number,
    readonly value: unknown,
    readonly root: Position,
    private readonly text: string,
    private readonly line: number,
    private readonly followed: boolean,
  ) {}

  get positions(): PositionTree {
    if (!this.tree) {
      const read = readDocumentsExactly(this.text, { line: this.line, index: this.index }, this.followed);
      const document = read.items.find((item): item is YamlDocument => item.kind === 'document');
      this.tree = document?.positions ?? { ...this.root };
    }
    return this.tree;
  }
}

function countLines(text: string, end = text.length): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** 1-based line and column of `offset` in `text`, whose first line is `line`. */
function positionIn(text: string, offset: number, line: number): Position {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return { line: line + countLines(text, offset), col: offset - lineStart + 1 };
}

/** `---` at `at`, a line start, followed by a space, a line break or the end. */
function isMarker(text: string, at: number): boolean {
  if (!text.startsWith('---', at)) return false;
  const c = text[at + 3];
  return c === undefined || c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/** A line start the full reader must cut the stream at itself: `...`, a directive. */
const NEEDS_FULL_READER = /^(?:\.\.\.(?:[ \t\r\n]|$)|%)/m;
/** Text with something on a line other than spaces and comments. */
const HAS_CONTENT = /^[ \t\r]*[^ \t\r\n#]/m;

/** Reads the documents cut out of a stream, one at a time, in order. */
class DocumentReader {
  private place: StreamPlace = { line: 1, index: 0 };
  /** Errors outside documents, which the stream's full reader gives at the end. */
  readonly streamProblems: YamlProblem[] = [];

  /** Where the next document starts. */
  get at(): StreamPlace {
    return this.place;
  }

  /** The document `text`, followed in the stream by a `---` line or not. */
  read(text: string, followed: boolean): (YamlDocument | YamlProblem)[] {
    const { line, index } = this.place;
    const fast = UNHANDLED_CHARACTER.test(text) ? undefined : readFast(text, 0, text.length);
    let items: (YamlDocument | YamlProblem)[];
    let documents = 1;
    if (fast) {
      items = fast.value === null ? [] : [new FastDocument(index, fast.value, positionIn(text, fast.rootOffset, line), text, line, followed)];
    } else {
      const read = readDocumentsExactly(text, this.place, followed);
      items = read.items;
      documents = read.documents;
      this.streamProblems.push(...read.streamProblems);
    }
    this.place = { line: line + countLines(text), index: index + documents };
    return items;
  }
}

/**
 * Every document of a YAML stream, in order, as its value with positions or as the problems
 * that keep kubectl from reading it.
 */
export async function* readYamlDocuments(text: AsyncIterable<string> | Iterable<string>): AsyncGenerator<YamlDocument | YamlProblem> {
  const chunks = (Symbol.asyncIterator in text ? text[Symbol.asyncIterator]() : text[Symbol.iterator]()) as AsyncIterator<string> | Iterator<string>;
  const reader = new DocumentReader();
  let buffer = '';
  /** Where to look for the next `---` line. */
  let scan = 0;
  /** No document has been cut yet: comments before the first `---` belong to the document it starts. */
  let first = true;
  let ended = false;
  for (;;) {
    const next = await chunks.next();
    if (next.done) ended = true;
    else buffer += next.value;
    if (first && buffer.startsWith('\ufeff')) break;
    let start = 0;
    let fullReader = false;
    for (;;) {
      let marker = buffer.indexOf('\n---', scan);
      if (marker < 0 || (marker + 4 >= buffer.length && !ended)) {
        scan = Math.max(start, buffer.length - 4);
        break;
      }
      marker++;
      scan = marker;
      if (!isMarker(buffer, marker)) continue;
      const text = buffer.slice(start, marker);
      if (NEEDS_FULL_READER.test(text)) {
        fullReader = true;
        break;
      }
      if (first && !HAS_CONTENT.test(text)) {
        first = false;
        continue; // the prelude belongs to the document this `---` starts
      }
      first = false;
      yield* reader.read(text, true);
      start = marker;
    }
    buffer = buffer.slice(start);
    scan -= start;
    if (fullReader) break;
    if (ended) {
      if (NEEDS_FULL_READER.test(buffer)) break;
      yield* reader.read(buffer, false);
      yield* reader.streamProblems;
      return;
    }
  }
  // The full reader reads the rest of the stream, from the document that needs it, all at once.
  if (!ended) for (let next = await chunks.next(); !next.done; next = await chunks.next()) buffer += next.value;
  yield* readYamlDocumentsExactly(buffer, reader.at);
  yield* reader.streamProblems;
}
