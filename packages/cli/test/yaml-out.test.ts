// The YAML writer: what it writes for the strings YAML readers disagree on, and, on generated
// JSON-shaped data, that the real `yaml` parser reads the same value back under YAML 1.1, YAML 1.2
// and kubectl's reading (go-yaml v2's scalars).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse, parseAllDocuments } from 'yaml';
import { KUBECTL_YAML } from '../src/kube-yaml.js';
import { toYaml, toYamlDocuments } from '../src/yaml-out.js';

const READERS = { 'YAML 1.1': { version: '1.1' }, 'YAML 1.2': { version: '1.2' }, kubectl: KUBECTL_YAML } as const;

/** JSON has one zero: -0 is written as 0, as JSON.stringify writes it. */
function oneZero(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(oneZero);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, oneZero(v)]));
  return value;
}

function assertRoundTrip(value: unknown): void {
  const text = toYaml(value);
  for (const [reader, options] of Object.entries(READERS)) assert.deepStrictEqual(parse(text, options), oneZero(value), `${reader} reads back:\n${text}`);
}

/** Strings that some YAML reader turns into something else when they are written plain. */
const TRICKY = [
  'on',
  'On',
  'OFF',
  'yes',
  'Y',
  'n',
  'no',
  'true',
  'False',
  'null',
  'Null',
  '~',
  '',
  '0755',
  '0o17',
  '0x1F',
  '0b101',
  '1e3',
  '1E+3',
  '1_000',
  '+12',
  '-1',
  '.5',
  '5.',
  '.inf',
  '-.Inf',
  '.NaN',
  '2024-06-01',
  '2001-12-14t21:59:43.10-05:00',
  '2:13:20',
  '190:20:30.15',
  '1.35',
  '=',
  '<<',
  ':',
  'a:',
  'a: b',
  '#',
  'a #b',
  '- a',
  '-',
  '?',
  '? a',
  '---',
  '...',
  '@type',
  '`x`',
  '%TAG',
  '!tag',
  '&anchor',
  '*alias',
  '|',
  '>',
  "'quoted'",
  '"quoted"',
  '[a]',
  '{a: 1}',
  ' leading',
  'trailing ',
  ' ',
  '\t',
  'tab\tinside',
  'multi\nline',
  'multi\nline\n',
  'keep\n\n\n',
  '\nleading newline',
  '  indented\nsecond',
  'a\n  b\n',
  'a\r\nb',
  'nel\u0085line',
  'ls\u2028ps\u2029',
  '\u0000\u0007\u001b\u007f\u009f',
  '\ufeffbom',
  'lone \ud800 surrogate',
  'astral 😀',
  'é',
  'x'.repeat(1100),
];

describe('toYaml', () => {
  it('writes readable block YAML, keys in insertion order, the same bytes every time', () => {
    const value = {
      name: 'listener_0',
      address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
      filters: [{ '@type': 'type.googleapis.com/x', enabled: true, weight: 1.5, extra: null }, []],
      empty: {},
      script: 'line one\nline two\n',
    };
    const text = toYaml(value);
    assert.equal(
      text,
      [
        'name: listener_0',
        'address:',
        '  socket_address:',
        '    address: "0.0.0.0"',
        '    port_value: 8080',
        'filters:',
        '  - "@type": type.googleapis.com/x',
        '    enabled: true',
        '    weight: 1.5',
        '    extra: null',
        '  - []',
        'empty: {}',
        'script: |',
        '  line one',
        '  line two',
        '',
      ].join('\n'),
    );
    assert.equal(toYaml(structuredClone(value)), text);
    assertRoundTrip(value);
  });

  it('quotes every string a YAML 1.1 or 1.2 reader would take for another type or cut short', () => {
    for (const s of TRICKY) {
      assertRoundTrip(s);
      assertRoundTrip({ [s]: s, list: [s, { [s]: [s] }] });
    }
    assert.equal(toYaml({ on: 'on', v: '0755', d: '2024-06-01', e: '1e3' }), '"on": "on"\nv: "0755"\nd: "2024-06-01"\ne: "1e3"\n');
  });

  it('writes numbers every reader reads as the same number', () => {
    for (const n of [0, -0, 1, -17, 1.5, 1e21, -2.5e-7, 5e-324, Number.MAX_VALUE, 2 ** 53 + 2, 0.1 + 0.2]) assertRoundTrip({ n, list: [n] });
    assert.equal(toYaml([1e21, -0]), '- 1.0e+21\n- 0\n');
    assert.equal(toYaml([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]), '- .nan\n- .inf\n- -.inf\n');
  });

  it('leaves out what JSON leaves out and applies toJSON', () => {
    const when = new Date('2026-01-01T00:00:00Z');
    const text = toYaml({ a: undefined, f: () => 1, s: Symbol('x'), list: [undefined, () => 1], when, only: { gone: undefined } });
    assert.deepEqual(parse(text), JSON.parse(JSON.stringify({ list: [undefined, () => 1], when, only: {} })));
  });

  it('refuses a circular structure, as JSON.stringify does', () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = { back: loop };
    assert.throws(() => toYaml(loop), /circular/);
  });

  it('writes a stream of documents kubectl can apply', () => {
    const docs = [{ kind: 'A', metadata: { name: 'a' } }, { kind: 'B' }];
    assert.deepEqual(
      parseAllDocuments(toYamlDocuments(docs)).map((d) => d.toJS()),
      docs,
    );
  });

  it('round-trips generated JSON-shaped data under YAML 1.1, YAML 1.2 and kubectl', () => {
    const text = fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
      { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
      { weight: 1, arbitrary: fc.stringMatching(/^[ a-z0-9:#\n.\-+_]{0,10}$/) },
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(text, tie('node'), { maxKeys: 4, noNullPrototype: true }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        assertRoundTrip(v);
      }),
      { numRuns: 500 },
    );
  });
});
