// The fast reader (src/fast-yaml.ts, cut into documents by src/yaml-stream.ts) against the full
// one (src/yaml-documents.ts, the yaml package's parser with kubectl's rules), on texts manifest
// shaped, in every style YAML allows, and the same broken at random:
// - a stream the full reader reads without a problem is read exactly as it reads it: the same
//   documents at the same indexes, with the same values, root positions and node positions;
// - any stream is read as the full reader reads each of its documents, cut at its `---` lines as
//   kubectl cuts them (a broken document cannot swallow the ones after it): the same documents and
//   the same problems at the same places;
// - and the fast reader takes the forms manifests are written in, rather than leaving them all to
//   the full reader.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readFast } from '../src/fast-yaml.js';
import { readDocumentsExactly, readYamlDocumentsExactly, type YamlDocument, type YamlProblem } from '../src/yaml-documents.js';
import { readYamlDocuments } from '../src/yaml-stream.js';

/** What a reader gives, as plain data (a fast document's positions are made here, on request). */
function plain(item: YamlDocument | YamlProblem): unknown {
  if (item.kind === 'problem') return { problem: item.message, line: item.line, col: item.col };
  return { index: item.index, value: item.value, root: item.root, positions: item.positions };
}

async function items(read: AsyncIterable<YamlDocument | YamlProblem>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of read) out.push(plain(item));
  return out;
}

/**
 * The full reader on each document of `text` in turn, a document being what lies between `---`
 * lines (comments before the first belong to the document it starts), read with the `---` that
 * ends it; from a document with a `...` or `%` line (or a byte order mark at the start), the full
 * reader on all the rest of the stream.
 */
async function perDocument(text: string): Promise<unknown[]> {
  const starts = [...text.matchAll(/^---(?=[ \t\r\n]|$)/gm)].map((m) => m.index).filter((i) => i > 0);
  if (starts.length > 0 && !/^[ \t\r]*[^ \t\r\n#]/m.test(text.slice(0, starts[0]))) starts.shift();
  const out: unknown[] = [];
  const problems: unknown[] = [];
  let at = { line: 1, index: 0 };
  const bounds = [0, ...starts, text.length];
  for (let d = 0; d + 1 < bounds.length; d++) {
    const piece = text.slice(bounds[d], bounds[d + 1]);
    if (text.startsWith('\ufeff') || /^(?:\.\.\.(?:[ \t\r\n]|$)|%)/m.test(piece)) {
      out.push(...[...readYamlDocumentsExactly(text.slice(bounds[d]), at)].map(plain));
      break;
    }
    const read = readDocumentsExactly(piece, at, d + 2 < bounds.length);
    out.push(...read.items.map(plain));
    problems.push(...read.streamProblems.map(plain));
    at = { line: at.line + (piece.match(/\n/g)?.length ?? 0), index: at.index + read.documents };
  }
  return [...out, ...problems];
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function assertSameAsFullReader(text: string, chunkSize?: number): Promise<void> {
  const read = await items(readYamlDocuments(chunkSize ? chunks(text, chunkSize) : [text]));
  const whole = [...readYamlDocumentsExactly(text)].map(plain);
  if (!whole.some((item) => (item as { problem?: string }).problem !== undefined)) assert.deepStrictEqual(read, whole, JSON.stringify(text));
  assert.deepStrictEqual(read, await perDocument(text), JSON.stringify(text));
}

// Scalars that mean something to YAML 1.1, YAML 1.2 or go-yaml, and some that merely look it.
const WORDS = [
  'model',
  'a b',
  'x:y',
  'http://example.com/a#b',
  'a#b',
  '-x',
  '?x',
  ':x',
  '=',
  '<<',
  'Grüße',
  '☃',
  '😀',
  'naïve',
  'yes',
  'no',
  'on',
  'Off',
  'y',
  'N',
  'true',
  'False',
  '~',
  'null',
  'Null',
  'NULL',
  'nUll',
  '0755',
  '0o17',
  '0x1F',
  '-0x1F',
  '0b101',
  '0b-101',
  '+12',
  '1_000',
  '-0',
  '08',
  '09.5',
  '1e3',
  '1E+3',
  '-2.5e-3',
  '5.',
  '.5',
  '.5_0',
  '99999999999999999999',
  '1e400',
  '.inf',
  '-.Inf',
  '.NaN',
  '+.nan',
  '2024-06-01',
  '2:13:20',
  '9223372036854775807',
  'a,b',
  'a]',
  'a}',
  'a[b',
  'x!',
  'x&y',
  'x*y',
  'x|y',
  'x>y',
  'x%',
  'x@y',
  'x`y',
  '---',
  '...',
  '-',
  'a -',
  '- a',
];
const KEYS = [
  'name',
  'kind',
  'spec',
  'port',
  'on',
  'y',
  '0755',
  '1e3',
  'app.kubernetes.io/name',
  'a b',
  '__proto__',
  'constructor',
  'x:y',
  '-k',
  'ключ',
  '<<',
  'true',
  '~',
];

const word = fc.constantFrom(...WORDS);
const quotedSingle = word.map((w) => `'${w.replaceAll("'", "''")}'`);
const quotedDouble = fc
  .tuple(word, fc.constantFrom('', '\\n', '\\t', '\\"', '\\\\', '\\/', '\\u00e9', '\\x41', '\\U0001F600', '\\ud83d\\ude00', '\\_', '\\q', '\\u12'))
  .map(([w, e]) => `"${w.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}${e}"`);
const scalar = fc.oneof({ weight: 6, arbitrary: word }, { weight: 1, arbitrary: quotedSingle }, { weight: 1, arbitrary: quotedDouble });
const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: scalar });

type Tree = { scalar: string } | { map: [string, Tree][]; flow: boolean } | { seq: Tree[]; flow: boolean };

const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar.map((s) => ({ scalar: s })),
    fc.record({ map: fc.array(fc.tuple(key, tie('node')), { maxLength: 4 }), flow: fc.boolean() }),
    fc.record({ seq: fc.array(tie('node'), { maxLength: 4 }), flow: fc.boolean() }),
  ),
})).node;

interface Style {
  indent: number;
  /** A sequence under a key starts at the key's column rather than past it. */
  compactSequences: boolean;
  comments: boolean;
  spaces: string;
}

function flow(node: Tree, style: Style): string {
  const sp = style.spaces;
  if ('scalar' in node) return node.scalar;
  if ('seq' in node) return `[${sp}${node.seq.map((n) => flow(n, style)).join(`,${sp || ' '}`)}${sp}]`;
  return `{${sp}${node.map.map(([k, v]) => `${k}:${'scalar' in v && v.scalar === '' ? '' : ' '}${flow(v, style)}`).join(`, ${sp}`)}${sp}}`;
}

const comment = (style: Style) => (style.comments ? ' # note' : '');

/** Block YAML for `node` at `col`; `lines` gets each line. */
function block(node: Tree, col: number, style: Style, lines: string[], lead: string): void {
  const pad = ' '.repeat(col);
  if ('scalar' in node || node.flow || ('map' in node ? node.map : node.seq).length === 0) {
    lines.push(`${lead}${'scalar' in node ? node.scalar : flow(node, style)}${comment(style)}`);
    return;
  }
  if ('seq' in node) {
    node.seq.forEach((item, i) => {
      const first = i === 0 ? lead : pad;
      if ('scalar' in item || item.flow) lines.push(`${first}- ${'scalar' in item ? item.scalar : flow(item, style)}${comment(style)}`);
      else if ('map' in item && item.map.length > 0) block(item, col + 2, style, lines, `${first}- `);
      else {
        lines.push(`${first}-${comment(style)}`);
        block(item, col + style.indent, style, lines, ' '.repeat(col + style.indent));
      }
    });
    return;
  }
  node.map.forEach(([k, v], i) => {
    const first = i === 0 ? lead : pad;
    if ('scalar' in v || v.flow || ('map' in v ? v.map : v.seq).length === 0) {
      lines.push(`${first}${k}: ${'scalar' in v ? v.scalar : flow(v, style)}${comment(style)}`);
    } else {
      lines.push(`${first}${k}:${comment(style)}`);
      if (style.comments) lines.push(`${pad}  # about ${k}`);
      const childCol = 'seq' in v && style.compactSequences ? col : col + style.indent;
      block(v, childCol, style, lines, ' '.repeat(childCol));
    }
  });
}

const style: fc.Arbitrary<Style> = fc.record({
  indent: fc.integer({ min: 1, max: 4 }),
  compactSequences: fc.boolean(),
  comments: fc.boolean(),
  spaces: fc.constantFrom('', ' ', '\n  '),
});

const document = fc.tuple(tree, style).map(([t, s]) => {
  const lines: string[] = [];
  block(t, 0, s, lines, '');
  return `${lines.join('\n')}\n`;
});

const separator = fc.constantFrom('---\n', '--- \n', '--- # next\n', '---\n\n', '# between\n---\n', '...\n---\n', '--- {}\n', '---\r\n');
const stream = fc
  .tuple(
    fc.constantFrom('', '# a stream\n', '---\n', '\n'),
    fc.array(fc.tuple(document, separator), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('', '---\n', '...\n'),
  )
  .map(([head, docs, tail]) => head + docs.map(([d, sep], i) => (i === 0 ? d : sep + d)).join('') + tail);

/** The same text with a few random edits: characters YAML cares about inserted, characters dropped. */
const broken = fc
  .tuple(
    stream,
    fc.array(
      fc.tuple(fc.nat(), fc.constantFrom(':', '-', '#', '[', ']', '{', '}', ',', "'", '"', '&', '*', '!', '|', '>', ' ', '  ', '\n', '\t', '?', '%', '')),
      { minLength: 1, maxLength: 3 },
    ),
  )
  .map(([text, edits]) => {
    let out = text;
    for (const [at, insert] of edits) {
      const i = at % (out.length + 1);
      out = insert === '' ? out.slice(0, i) + out.slice(i + 1) : out.slice(0, i) + insert + out.slice(i);
    }
    return out;
  });

describe('the fast reader against the full reader', () => {
  it('reads manifest-shaped streams in every style exactly as the full reader does', async () => {
    await fc.assert(
      fc.asyncProperty(stream, (text) => assertSameAsFullReader(text)),
      { numRuns: 400 },
    );
  });

  it('reads the same streams broken at random exactly as the full reader does', async () => {
    await fc.assert(
      fc.asyncProperty(broken, (text) => assertSameAsFullReader(text)),
      { numRuns: 600 },
    );
  });

  it('gives the same wherever the text is cut into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(stream, broken), fc.integer({ min: 1, max: 40 }), (text, size) => assertSameAsFullReader(text, size)),
      { numRuns: 200 },
    );
  });

  it('reads the cases that once differed, and the edges of the subset', async () => {
    for (const text of [
      'a: 1\n---\n',
      '# c\n---\na: 1\n',
      '---\n---\na: 1\n',
      '',
      '# only\n',
      'a: 1\n...\nb: 2\n',
      '%YAML 1.1\n---\na: 1\n',
      '\ufeffa: 1\n',
      'a: b\n  c\n',
      '{\n"a": 1\n}\n',
      'a: [\n  1\n]\n',
      'a:\n  [1,\n  2]\n',
      'a: {b: , c: 1}\n',
      '{a:1}\n',
      'a: x:y\n',
      '"a" : 1\n',
      'a : 1\n',
      'x:\n- a\ny: 2\n',
      '- a: 1\n   b: 2\n',
      'a: - 1\n',
      'a: b: c\n',
      'a: 1\na: 2\n',
      `${'k'.repeat(1100)}: v\n`,
      'a: "\\ud83d\\ude00"\n',
      'a: "\\U00110000"\n',
      "a: 'it''s'\n",
      'a: 1\r\nb: 2\r\n',
      'a:\tb\n',
      'a: &x 1\nb: *x\n',
      'a: |\n  text\n',
      '--- |\n  text\n',
      'a: "x\n  y"\n',
      '- - a\n',
      '? a\n: b\n',
      'a:\n  - 1\n  -\n  - 3\n',
      '  a: 1\n  b: 2\n',
      '- a\n-\n- b\n',
      'a: [x]y\n',
      'a: {b: c}#d\n',
      'a: "x"#c\n',
      'a: [a, b, ]\n',
      'a: [,]\n',
      'a: ~\n~: a\n',
    ]) {
      await assertSameAsFullReader(text);
    }
  });

  it('takes the forms manifests are written in', () => {
    for (const text of [
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc   # the name\n  labels: {app: web, "tier": front}\nspec:\n  ports:\n  - name: http\n    port: 80\n',
      'items:\n  - [a, "b", \'c\']\n  - {x: 1, y: [2, 3]}\n  -\n    z: ok\n',
      '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "data": {"a": "1", "b": "two"}\n}\n',
    ]) {
      assert.ok(readFast(text, 0, text.length), text);
    }
  });
});
