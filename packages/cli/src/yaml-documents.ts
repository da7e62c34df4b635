// Reads a YAML stream one document at a time, as kubectl would read it, and keeps for each
// document only its value and where each of its nodes starts. Memory follows the largest document,
// not the stream: text is parsed as it arrives and each document's syntax tree is dropped once read.
// A document that kubectl would refuse — a syntax error, an unknown or self-containing alias,
// aliases that blow it up, a number JSON cannot carry, a key that is not a string, number or
// boolean — becomes a problem at its line and column, and the documents after it are still read.
import { StringDecoder } from 'node:string_decoder';
import { Composer, isAlias, isMap, isScalar, isSeq, Parser, Schema, type Document, type Node, type Scalar } from 'yaml';
import { KUBECTL_YAML, MISFIT_TAG_WARNING } from './kube-yaml.js';

/** 1-based line and column. */
export interface Position {
  line: number;
  col: number;
}

/** Where a node starts, and where each of its children starts, by key or by index. */
export interface PositionTree extends Position {
  keys?: Map<string, PositionTree>;
  items?: PositionTree[];
}

export interface YamlDocument {
  kind: 'document';
  /** 0-based index of the document in its stream, counting empty ones. */
  index: number;
  value: unknown;
  positions: PositionTree;
}

export interface YamlProblem extends Position {
  kind: 'problem';
  message: string;
}

/**
 * How much aliases may add to a document, in characters of scalars plus one per node: as much as
 * the document itself, and at least this. A bomb of nested aliases or a large scalar repeated by
 * aliases stops here, long before it could exhaust memory or the length of a string.
 */
export const ALIAS_EXPANSION_FLOOR = 1 << 20;
/** At most this many aliases in one document (resolving each one scans the document's anchors). */
export const MAX_ALIASES = 10_000;

// One schema for every document: building it is a good part of the cost of a small document.
const COMPOSE_OPTIONS = { ...KUBECTL_YAML, schema: new Schema(KUBECTL_YAML), uniqueKeys: true, prettyErrors: false } as const;

/** Line starts of the text seen so far; those before the current document can be let go. */
class LineStarts {
  private starts: number[] = [];
  /** How many lines were let go. */
  private dropped = 0;

  /** The parser's onNewLine; it reports offset 0 again on each chunk until it has consumed one. */
  readonly add = (offset: number): void => {
    const last = this.starts.at(-1);
    if (last === undefined || offset > last) this.starts.push(offset);
  };

  position(offset: number): Position {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: this.dropped + lo + 1, col: offset - (starts[lo] ?? 0) + 1 };
  }

  /** Lets go of the lines that end before `offset`. */
  forgetBefore(offset: number): void {
    let keep = 0;
    while (keep + 1 < this.starts.length && this.starts[keep + 1]! <= offset) keep++;
    if (keep === 0) return;
    this.starts = this.starts.slice(keep);
    this.dropped += keep;
  }
}

function startOf(node: Node | null | undefined): number {
  return node?.range?.[0] ?? 0;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/** `.inf`, `-.inf` and `.nan` as the text had them; JSON has none of them. */
function nonFiniteText(node: Scalar): string {
  return typeof node.source === 'string' ? node.source : String(node.value);
}

/**
 * One walk over a document's syntax tree: positions of every node, and the checks kubectl's
 * reading implies. Aliases are followed by weight only (each anchored node's weight is known once
 * it has been walked), so a billion-node alias bomb costs as much as its text.
 */
class DocumentWalk {
  readonly problems: { offset: number; message: string }[] = [];
  private readonly anchors = new Map<string, Node>();
  /** Expanded weight of each anchored node, once walked. */
  private readonly weights = new Map<Node, number>();
  /** The nodes being walked: an alias to one of them would contain itself. */
  private readonly open = new Set<Node>();
  private aliasCount = 0;
  /** Weight of the nodes as written, and what aliases add to it; with the first alias to add. */
  ownWeight = 0;
  private added: { offset: number; total: number }[] = [];

  constructor(private readonly lines: LineStarts) {}

  private problem(node: Node | null | undefined, message: string): void {
    this.problems.push({ offset: startOf(node), message });
  }

  /** The positions under `node`; `weight` gets the node's weight with aliases expanded. */
  walk(node: Node | null, weight: { value: number }, isKey = false): PositionTree {
    const at: PositionTree = this.lines.position(startOf(node));
    if (node === null) {
      weight.value += 1;
      this.ownWeight += 1;
      return at;
    }
    if (isAlias(node)) {
      this.alias(node, weight);
      return at;
    }
    if (node.anchor) this.anchors.set(node.anchor, node);
    this.open.add(node);
    const inner = { value: 1 };
    this.ownWeight += 1;
    if (isScalar(node)) {
      const size = typeof node.value === 'string' ? node.value.length : 0;
      inner.value += size;
      this.ownWeight += size;
      // As a key it is fine: kubectl turns it into the string ".inf".
      if (!isKey && typeof node.value === 'number' && !Number.isFinite(node.value)) {
        this.problem(
          node,
          `${nonFiniteText(node)} is not a number JSON can carry, so kubectl cannot send it (json: unsupported value); quote it to make it a string`,
        );
      }
    } else if (isMap(node)) {
      at.keys = new Map();
      const merged: Node[] = [];
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        this.checkKey(key);
        this.walk(key, inner, true);
        const value = this.walk(pair.value as Node | null, inner);
        if (isMergeKey(key)) merged.push(pair.value as Node);
        else at.keys.set(isScalar(key) ? String(key.value) : String(key), value);
      }
      // Keys that `<<` brings in point at the alias or mapping that brought them.
      for (const source of merged) this.addMergedKeys(at.keys, source);
    } else if (isSeq(node)) {
      at.items = node.items.map((item) => this.walk(item as Node | null, inner));
    }
    this.open.delete(node);
    if (node.anchor) this.weights.set(node, inner.value);
    weight.value += inner.value;
    return at;
  }

  private alias(node: Node & { source: string }, weight: { value: number }): void {
    this.ownWeight += 1;
    weight.value += 1;
    this.aliasCount++;
    if (this.aliasCount === MAX_ALIASES + 1) this.problem(node, `more than ${MAX_ALIASES} aliases in one document`);
    const target = this.anchors.get(node.source);
    if (target === undefined) {
      this.problem(node, `unknown alias *${node.source}: no anchor &${node.source} before it in this document`);
      return;
    }
    if (this.open.has(target)) {
      this.problem(node, `alias *${node.source} is inside the node it names, so its value would contain itself`);
      return;
    }
    const size = this.weights.get(target) ?? 1;
    weight.value += size;
    const total = (this.added.at(-1)?.total ?? 0) + size;
    this.added.push({ offset: startOf(node), total });
  }

  private checkKey(key: Node | null): void {
    if (isScalar(key) ? key.value === null : key === null) {
      this.problem(key, 'a mapping key is null (empty, ~ or null); kubectl refuses it (unsupported map key)');
    } else if (!isScalar(key) && !isAlias(key)) {
      this.problem(key, 'a mapping key is a mapping or a sequence; kubectl refuses it (invalid map key)');
    }
  }

  private addMergedKeys(keys: Map<string, PositionTree>, source: Node): void {
    const at = this.lines.position(startOf(source));
    const sources = isSeq(source) ? source.items : [source];
    for (const item of sources) {
      const target = isAlias(item) ? this.anchors.get(item.source) : item;
      if (!isMap(target)) continue;
      for (const pair of target.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (!keys.has(name)) keys.set(name, at);
      }
    }
  }

  /** The first alias at which what aliases add passes the document's allowance, if any. */
  checkExpansion(): void {
    const allowance = Math.max(ALIAS_EXPANSION_FLOOR, this.ownWeight);
    const over = this.added.find((a) => a.total > allowance);
    if (over) {
      this.problems.push({
        offset: over.offset,
        message: `aliases expand this document past ${allowance} characters (at most its own size, and at least ${ALIAS_EXPANSION_FLOOR}); write the repeated part out or use fewer aliases`,
      });
    }
  }
}

function yamlErrorMessage(message: string): string {
  return message.split('\n')[0]!;
}

/** Reads one composed document: its problems, or its value and positions. */
function readDocument(doc: Document.Parsed, index: number, lines: LineStarts): (YamlDocument | YamlProblem)[] {
  const problem = (offset: number, message: string): YamlProblem => ({ kind: 'problem', ...lines.position(offset), message });
  if (doc.errors.length > 0) return doc.errors.map((e) => problem(e.pos[0], `YAML syntax error: ${yamlErrorMessage(e.message)}`));
  const walk = new DocumentWalk(lines);
  const positions = walk.walk(doc.contents, { value: 0 });
  walk.checkExpansion();
  const misfits = doc.warnings.filter((w) => MISFIT_TAG_WARNING.test(w.message));
  const problems = [
    ...walk.problems.map((p) => problem(p.offset, p.message)),
    ...misfits.map((w) => problem(w.pos[0], `the value does not fit its !!${MISFIT_TAG_WARNING.exec(w.message)![1]} tag; kubectl refuses it (cannot decode)`)),
  ];
  if (problems.length > 0) return problems.sort((a, b) => a.line - b.line || a.col - b.col);
  // Every alias was checked above, so the yaml package's own count (which refuses an anchored
  // mapping of 20 nodes used 6 times) is not needed.
  const value = doc.toJS({ maxAliasCount: -1 });
  if (value === null || value === undefined) return []; // an empty document between `---` lines
  return [{ kind: 'document', index, value, positions }];
}

/** Text from a stream of bytes or strings, multi-byte characters kept whole across chunks. */
export async function* textOf(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of chunks) yield typeof chunk === 'string' ? chunk : decoder.write(chunk);
  const rest = decoder.end();
  if (rest) yield rest;
}

/**
 * Every document of a YAML stream, in order, as its value with positions or as the problems
 * that keep kubectl from reading it.
 */
export async function* readYamlDocuments(text: AsyncIterable<string> | Iterable<string>): AsyncGenerator<YamlDocument | YamlProblem> {
  const lines = new LineStarts();
  const parser = new Parser(lines.add);
  const composer = new Composer(COMPOSE_OPTIONS);
  let index = 0;
  function* take(docs: Iterable<Document.Parsed>): Generator<YamlDocument | YamlProblem> {
    for (const doc of docs) {
      yield* readDocument(doc, index++, lines);
      lines.forgetBefore(doc.range[2]);
    }
  }
  for await (const chunk of text) for (const token of parser.parse(chunk, true)) yield* take(composer.next(token));
  for (const token of parser.parse('', false)) yield* take(composer.next(token));
  yield* take(composer.end());
  // Errors outside any document (a stray `...`, a bad directive before the first one).
  for (const e of composer.streamInfo().errors)
    yield { kind: 'problem', ...lines.position(e.pos[0]), message: `YAML syntax error: ${yamlErrorMessage(e.message)}` };
}
