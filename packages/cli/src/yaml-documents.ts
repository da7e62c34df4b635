// Reads YAML documents as kubectl would read them, and keeps for each document only its value and
// where each of its nodes starts: the full reader, with the yaml package's parser, which knows all
// of YAML (yaml-stream.ts cuts a stream into documents and reads most of them faster).
// A document that kubectl would refuse — a syntax error, an unknown or self-containing alias,
// aliases that blow it up, a number JSON cannot carry, a key that is not a string, number or
// boolean, a key written twice, a `<<` of something other than mappings — becomes a problem at its
// line and column, and the documents after it are still read. Every check is linear in the size
// of the document.
import { Composer, isAlias, isMap, isScalar, isSeq, Parser, Schema, type Alias, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';
import { KUBECTL_YAML, MISFIT_TAG_WARNING, setKey } from './kube-yaml.js';

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
  /** Where its content starts. */
  root: Position;
  /** Where each of its nodes starts; a reader may build this only when it is asked for. */
  readonly positions: PositionTree;
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
const ALIAS_EXPANSION_FLOOR = 1 << 20;

// One schema for every document: building it is a good part of the cost of a small document.
// Keys written twice are found by the walk below; the composer's own check compares every pair.
const COMPOSE_OPTIONS = { ...KUBECTL_YAML, schema: new Schema(KUBECTL_YAML), uniqueKeys: false, prettyErrors: false } as const;

/** Line starts of the text seen so far; those before the current document can be let go. */
class LineStarts {
  private starts: number[] = [];

  /** `dropped`: how many lines were let go (or come before the text). */
  constructor(private dropped = 0) {}

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

/** Where a node starts; a missing one (`? key` without a value) is placed at `near`. */
function startOf(node: Node | null | undefined, near = 0): number {
  return node?.range?.[0] ?? near;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/** `.inf`, `-.inf` and `.nan` as the text had them; JSON has none of them. */
function nonFiniteText(node: Scalar): string {
  return typeof node.source === 'string' ? node.source : String(node.value);
}

/** A node's weight with aliases expanded: one per node plus string lengths, and go-yaml's node count. */
interface Weight {
  value: number;
  nodes: number;
}

/**
 * The share of decoded nodes go-yaml (v2 and v3, which sigs.k8s.io/yaml uses for kubectl) lets come
 * from aliases: 99% up to 400,000 nodes, falling linearly to 10% at 4,000,000 and beyond.
 */
function allowedAliasRatio(decoded: number): number {
  if (decoded <= 400_000) return 0.99;
  if (decoded >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000);
}

/** A node's positions and its value as JSON sees it. */
interface Walked {
  at: PositionTree;
  value: unknown;
}

const MERGE_NEEDS_MAPPINGS = '`<<` merges a mapping or a sequence of mappings; kubectl refuses anything else';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One walk over a document's syntax tree: its value, the positions of its nodes, and the checks
 * kubectl's reading implies. The value is built here rather than by the yaml package's toJS, whose
 * alias resolution (like the composer's duplicate-key check) takes time quadratic in the size of a
 * document. An alias shares the value of the node it names and is counted by that node's weight,
 * so a billion-node alias bomb costs as much as its text.
 */
class DocumentWalk {
  readonly problems: (Position & { message: string })[] = [];
  private readonly anchors = new Map<string, Node>();
  /** Value, expanded weight and expanded node count of each anchored node, once walked. */
  private readonly anchored = new Map<Node, { value: unknown; weight: number; nodes: number }>();
  /** go-yaml's count of the nodes it decodes (the document node first), aliases expanded. */
  private decoded = 1;
  /** How many of them it decodes inside an alias. */
  private aliased = 0;
  /** Where go-yaml would stop with "excessive aliasing". */
  private excessive: { at: Position; allowed: number } | undefined;
  /** The nodes being walked: an alias to one of them would contain itself. */
  private readonly open = new Set<Node>();
  /** Weight of the nodes as written. */
  private ownWeight = 0;
  /** What aliases add to it, running total at each alias. */
  private readonly added: { at: Position; total: number }[] = [];

  constructor(private readonly lines: LineStarts) {}

  private problem(at: Position, message: string): void {
    this.problems.push({ line: at.line, col: at.col, message });
  }

  /**
   * go-yaml's check as it decodes `nodes` more nodes at `at`, `aliased` of them inside an alias: it
   * refuses a document once more than 100 nodes came from aliases and they are more than a share
   * of all it decoded, the share falling with the size. Within one alias's expansion the share
   * only grows, so checking once after it finds what checking after each node would.
   */
  private decode(at: Position, nodes: number, aliased: number): void {
    this.decoded += nodes;
    this.aliased += aliased;
    if (this.excessive || this.aliased <= 100 || this.decoded <= 1000) return;
    const allowed = allowedAliasRatio(this.decoded);
    if (this.aliased / this.decoded > allowed) this.excessive = { at: { line: at.line, col: at.col }, allowed };
  }

  /**
   * `weight` gets the node's weight with aliases expanded (`value`: one per node, plus string
   * lengths; `nodes`: the nodes go-yaml decodes). `counted`: false for what go-yaml does not
   * decode as a node (a `<<` key, the sequence around the mappings it merges).
   */
  walk(node: Node | null, weight: Weight, near: number, isKey = false, counted = true): Walked {
    const at: PositionTree = this.lines.position(startOf(node, near));
    this.ownWeight += 1;
    weight.value += 1;
    if (counted) {
      weight.nodes += 1;
      this.decode(at, 1, 0);
    }
    if (node === null) return { at, value: null };
    if (isAlias(node)) return { at, value: this.alias(node, at, weight) };
    if (node.anchor) this.anchors.set(node.anchor, node);
    this.open.add(node);
    const inner: Weight = { value: 0, nodes: 0 };
    let value: unknown;
    if (isScalar(node)) {
      value = node.value;
      if (typeof value === 'string') {
        inner.value += value.length;
        this.ownWeight += value.length;
      } else if (!isKey && typeof value === 'number' && !Number.isFinite(value)) {
        // As a key it is fine: kubectl turns it into the string ".inf".
        this.problem(
          at,
          `${nonFiniteText(node)} is not a number JSON can carry, so kubectl cannot send it (json: unsupported value); quote it to make it a string`,
        );
      }
    } else if (isMap(node)) {
      value = this.mapping(node, at, inner);
    } else if (isSeq(node)) {
      const items: unknown[] = [];
      at.items = [];
      for (const item of node.items) {
        const walked = this.walk(item as Node | null, inner, startOf(node));
        at.items.push(walked.at);
        items.push(walked.value);
      }
      value = items;
    }
    this.open.delete(node);
    if (node.anchor) this.anchored.set(node, { value, weight: inner.value + 1, nodes: inner.nodes + 1 });
    weight.value += inner.value;
    weight.nodes += inner.nodes;
    return { at, value };
  }

  /** The value of the node an alias names (shared, not copied), counted by that node's weight. */
  private alias(node: Alias, at: Position, weight: Weight): unknown {
    const target = this.anchors.get(node.source);
    if (target === undefined) {
      this.problem(at, `unknown alias *${node.source}: no anchor &${node.source} before it in this document`);
      return undefined;
    }
    if (this.open.has(target)) {
      this.problem(at, `alias *${node.source} is inside the node it names, so its value would contain itself`);
      return undefined;
    }
    const { value, weight: size, nodes } = this.anchored.get(target)!;
    weight.value += size;
    weight.nodes += nodes;
    this.decode(at, nodes, nodes);
    this.added.push({ at, total: (this.added.at(-1)?.total ?? 0) + size });
    return value;
  }

  /**
   * A mapping as go-yaml v2 reads it: keys become strings (a key written twice is a problem), and
   * `<<` sets the keys of the mapping, or of each mapping of a sequence (the first one winning),
   * in the order it comes, over keys set before it.
   */
  private mapping(node: YAMLMap, at: PositionTree, weight: Weight): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    const positions = new Map<string, PositionTree>();
    const written = new Set<string>();
    at.keys = positions;
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const merge = isMergeKey(keyNode);
      const key = this.walk(keyNode, weight, startOf(node), true, !merge);
      const valueNode = pair.value as Node | null;
      const value = this.walk(valueNode, weight, startOf(keyNode, startOf(node)), false, !(merge && isSeq(valueNode)));
      if (merge) {
        for (const source of this.mergeSources(valueNode, value)) {
          for (const [name, merged] of Object.entries(source)) {
            setKey(object, name, merged);
            positions.set(name, value.at);
          }
        }
        continue;
      }
      const name = this.keyName(key);
      if (name === undefined) continue;
      if (written.has(name)) this.problem(key.at, `mapping key ${JSON.stringify(name)} appears more than once`);
      written.add(name);
      setKey(object, name, value.value);
      positions.set(name, value.at);
    }
    return object;
  }

  /** What a `<<` value brings in, in the order to set it; a problem unless they are mappings. */
  private mergeSources(node: Node | null, { at, value }: Walked): Record<string, unknown>[] {
    if (isSeq(node) && Array.isArray(value)) {
      if (value.every(isPlainObject) && node.items.every((item) => !isAlias(item) || isMap(this.anchors.get(item.source)))) return value.toReversed();
    } else if (isPlainObject(value) && (isMap(node) || (isAlias(node) && isMap(this.anchors.get(node.source))))) {
      return [value];
    }
    if (value !== undefined) this.problem(at, MERGE_NEEDS_MAPPINGS);
    return [];
  }

  /** The string a key becomes in JSON, as sigs.k8s.io/yaml turns it; undefined (and a problem) when it cannot. */
  private keyName({ at, value }: Walked): string | undefined {
    if (value === undefined) return undefined; // an alias that names nothing, reported already
    if (value === null) {
      this.problem(at, 'a mapping key is null (empty, ~ or null); kubectl refuses it (unsupported map key)');
      return undefined;
    }
    if (typeof value === 'object') {
      this.problem(at, 'a mapping key is a mapping or a sequence; kubectl refuses it (invalid map key)');
      return undefined;
    }
    return String(value);
  }

  /** The document's value, or the problems that keep kubectl from reading it. */
  finish(root: Walked): { value: unknown } | undefined {
    const allowance = Math.max(ALIAS_EXPANSION_FLOOR, this.ownWeight);
    const over = this.added.find((a) => a.total > allowance);
    if (this.excessive) {
      const { at, allowed } = this.excessive;
      this.problems.push({
        ...at,
        message: `document contains excessive aliasing: kubectl refuses a document once more than ${Math.round(allowed * 100)}% of the nodes it has decoded (and more than 100) come from aliases; write the repeated part out or use fewer aliases`,
      });
    } else if (over) {
      this.problems.push({
        ...over.at,
        message: `aliases expand this document past ${allowance} characters (at most its own size, and at least ${ALIAS_EXPANSION_FLOOR}); write the repeated part out or use fewer aliases`,
      });
    }
    return this.problems.length === 0 ? { value: root.value } : undefined;
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
  const root = walk.walk(doc.contents, { value: 0, nodes: 0 }, doc.range[0]);
  const read = walk.finish(root);
  const misfits = doc.warnings.filter((w) => MISFIT_TAG_WARNING.test(w.message));
  const problems = [
    ...walk.problems.map((p): YamlProblem => ({ kind: 'problem', ...p })),
    ...misfits.map((w) => problem(w.pos[0], `the value does not fit its !!${MISFIT_TAG_WARNING.exec(w.message)![1]} tag; kubectl refuses it (cannot decode)`)),
  ];
  if (!read || problems.length > 0) return problems.sort((a, b) => a.line - b.line || a.col - b.col);
  if (read.value === null) return []; // an empty document between `---` lines
  return [{ kind: 'document', index, value: read.value, root: { line: root.at.line, col: root.at.col }, positions: root.at }];
}

/** Where a text starts in its stream: the line of its first character, the index of its first document. */
export interface StreamPlace {
  line: number;
  index: number;
}

/**
 * Every document of a YAML stream (or of its rest, from `from`), in order, as its value with
 * positions or as the problems that keep kubectl from reading it.
 */
export function* readYamlDocumentsExactly(text: string, from: StreamPlace = { line: 1, index: 0 }): Generator<YamlDocument | YamlProblem> {
  const lines = new LineStarts(from.line - 1);
  const parser = new Parser(lines.add);
  const composer = new Composer(COMPOSE_OPTIONS);
  let index = from.index;
  function* take(docs: Iterable<Document.Parsed>): Generator<YamlDocument | YamlProblem> {
    for (const doc of docs) {
      yield* readDocument(doc, index++, lines);
      lines.forgetBefore(doc.range[2]);
    }
  }
  // Whole, not in pieces: the yaml package's incremental lexer misreads some lines cut by a piece's end.
  for (const token of parser.parse(text)) yield* take(composer.next(token));
  yield* take(composer.end());
  yield* streamProblems(composer, lines);
}

/** Errors outside any document (a stray `...`, a bad directive before the first one). */
function* streamProblems(composer: Composer, lines: LineStarts): Generator<YamlProblem> {
  for (const e of composer.streamInfo().errors)
    yield { kind: 'problem', ...lines.position(e.pos[0]), message: `YAML syntax error: ${yamlErrorMessage(e.message)}` };
}

/** What readDocumentsExactly makes of one piece of a stream. */
export interface ExactRead {
  items: (YamlDocument | YamlProblem)[];
  /** How many documents the piece holds, empty ones included. */
  documents: number;
  /** Errors outside any document, which the whole stream's reader would report at its end. */
  streamProblems: YamlProblem[];
}

/**
 * The documents of `text`, a piece of a stream cut just before a `---` line (`followed`) or at the
 * stream's end, read as the stream's reader reads them there: the `---` that ends the piece in the
 * stream ends it here too, so every error is the one, and at the place, the stream gives.
 */
export function readDocumentsExactly(text: string, at: StreamPlace, followed: boolean): ExactRead {
  const lines = new LineStarts(at.line - 1);
  const parser = new Parser(lines.add);
  const composer = new Composer(COMPOSE_OPTIONS);
  const docs = [...parser.parse(followed ? `${text}---\n` : text)].flatMap((token) => [...composer.next(token)]);
  docs.push(...composer.end());
  // The document the added `---` starts is not this piece's.
  const own = followed ? docs.filter((doc) => doc.range[0] < text.length) : docs;
  return {
    items: own.flatMap((doc, i) => readDocument(doc, at.index + i, lines)),
    documents: own.length,
    streamProblems: [...streamProblems(composer, lines)],
  };
}
