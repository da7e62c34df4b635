// Manifests read as kubectl reads them. kubectl converts YAML to JSON with sigs.k8s.io/yaml, which
// decodes with go-yaml v2 into untyped values; each row is a scalar as written in a manifest file
// and the JSON value kubectl sends for it (go-yaml v2.4.2 resolve.go and decode.go).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { Io } from '../src/io.js';
import { main } from '../src/main.js';
import { loadManifests } from '../src/manifests.js';

const dir = mkdtempSync(join(tmpdir(), 'extlb-kube-yaml-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function io(): Io {
  return { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), cwd: dir };
}

const SCALARS: [written: string, kubectl: unknown][] = [
  // Booleans: YAML 1.1's words, and go-yaml's single letters.
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'].map((w): [string, unknown] => [w, true]),
  ...['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'].map((w): [string, unknown] => [w, false]),
  ['yEs', 'yEs'],
  ['oN', 'oN'],
  // Null.
  ['', null],
  ['~', null],
  ['null', null],
  ['Null', null],
  ['NULL', null],
  ['nUll', 'nUll'],
  // Integers: Go's ParseInt with base 0 once underscores are gone.
  ['0755', 493],
  ['-0755', -493],
  ['0o17', 15],
  ['0x1F', 31],
  ['-0x1F', -31],
  ['0b101', 5],
  ['-0b101', -5],
  ['0b-101', -5],
  ['+12', 12],
  ['1_000', 1000],
  ['0x_1F', 31],
  ['-0', 0],
  // int64 and uint64 limits: the JSON number kubectl sends, as close as a JS number gets.
  ['9223372036854775807', Number(9223372036854775807n)],
  ['18446744073709551615', Number(18446744073709551615n)],
  ['0xFFFFFFFFFFFFFFFFF', '0xFFFFFFFFFFFFFFFFF'],
  ['-0x8000000000000001', '-0x8000000000000001'],
  ['0x', '0x'],
  // Floats: go-yaml's pattern, after underscores are gone.
  ['08', 8],
  ['09.5', 9.5],
  ['1e3', 1000],
  ['1E+3', 1000],
  ['-2.5e-3', -0.0025],
  ['5.', 5],
  ['.5', 0.5],
  ['1_0.5', 10.5],
  ['.5_0', '.5_0'],
  ['99999999999999999999', 1e20],
  ['1e400', '1e400'],
  ['+.nan', '+.nan'],
  ['.NAn', '.NAn'],
  ['+inf', '+inf'],
  // Timestamps stay text, and there are no sexagesimal numbers.
  ['2024-06-01', '2024-06-01'],
  ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
  ['2001-12-14 21:59:43.10', '2001-12-14 21:59:43.10'],
  ['2:13:20', '2:13:20'],
  ['-1:30', '-1:30'],
  ['190:20:30.15', '190:20:30.15'],
  // Quoted and explicitly tagged scalars.
  ['"0755"', '0755'],
  ["'yes'", 'yes'],
  ['!!str 0755', '0755'],
  ['!!str yes', 'yes'],
  ['!!int "12"', 12],
  ['!!float 1', 1],
  ['!!float 0x10', 16],
  ['!!bool "on"', true],
  ['!!null ""', null],
  ['!!binary aGVsbG8=', 'hello'],
  ['!!timestamp 2024-06-01', '2024-06-01'],
  ['!local text', 'text'],
  // Words YAML 1.1 gives meaning to that go-yaml does not.
  ['=', '='],
  ['<<', '<<'],
];

async function readValue(written: string): Promise<unknown> {
  writeFileSync(join(dir, 'scalar.yaml'), `apiVersion: v1\nkind: Probe\nv: ${written}\n`);
  const { manifests, problems } = await loadManifests(['scalar.yaml'], io());
  assert.deepEqual(problems, [], written);
  return (manifests[0]!.object as { v: unknown }).v;
}

describe('scalars as kubectl reads them', () => {
  for (const [written, kubectl] of SCALARS) {
    it(`${JSON.stringify(written)} is ${JSON.stringify(kubectl)}`, async () => {
      assert.deepStrictEqual(await readValue(written), kubectl);
    });
  }

  it('reads .inf and .nan, and reports them: kubectl cannot turn them into JSON', async () => {
    for (const [written, col] of [
      ['.inf', 4],
      ['-.Inf', 4],
      ['+.INF', 4],
      ['.NaN', 4],
    ] as const) {
      writeFileSync(join(dir, 'inf.yaml'), `apiVersion: v1\nkind: Probe\nv: ${written}\n`);
      const { manifests, problems } = await loadManifests(['inf.yaml'], io());
      assert.deepEqual(manifests, []);
      assert.equal(problems.length, 1);
      assert.deepEqual({ ...problems[0], message: undefined }, { file: 'inf.yaml', line: 3, col, message: undefined });
      assert.match(problems[0]!.message, new RegExp(`^${written.replace('.', '\\.').replace('+', '\\+')} is not a number JSON can carry`));
    }
  });

  it('turns keys into strings as kubectl does, and merges `<<` keys', async () => {
    writeFileSync(join(dir, 'keys.yaml'), 'apiVersion: v1\nkind: Probe\non: a\n0755: c\n1e3: d\nbase: &base {x: 1, y: 2}\nmerged:\n  <<: *base\n  x: 3\n');
    const { manifests } = await loadManifests(['keys.yaml'], io());
    assert.deepStrictEqual(manifests[0]!.object, {
      apiVersion: 'v1',
      kind: 'Probe',
      true: 'a',
      '493': 'c',
      '1000': 'd',
      base: { x: 1, true: 2 },
      merged: { x: 3, true: 2 },
    });
  });

  it('merges `<<` as go-yaml v2 does: in order, over the keys set before it, the first mapping of a list winning', async () => {
    writeFileSync(join(dir, 'merge.yaml'), 'apiVersion: v1\nkind: Probe\np: &p {a: 1}\nq: &q {a: 2, c: 3}\nm: {a: 0, <<: *q, c: 4}\nlist: {<<: [*p, *q]}\n');
    const { manifests, problems } = await loadManifests(['merge.yaml'], io());
    assert.deepEqual(problems, []);
    const object = manifests[0]!.object as Record<string, unknown>;
    assert.deepStrictEqual(object.m, { a: 2, c: 4 });
    assert.deepStrictEqual(object.list, { a: 1, c: 3 });
  });

  it('reports a mapping key kubectl cannot turn into a string', async () => {
    writeFileSync(join(dir, 'bad-keys.yaml'), 'apiVersion: v1\nkind: Probe\nnull: a\n---\napiVersion: v1\nkind: Probe\n? [a, b]\n: c\n');
    const { manifests, problems } = await loadManifests(['bad-keys.yaml'], io());
    assert.deepEqual(manifests, []);
    assert.deepEqual(
      problems.map((p) => [p.line, p.col, p.message.split(';')[0]]),
      [
        [3, 1, 'a mapping key is null (empty, ~ or null)'],
        [7, 3, 'a mapping key is a mapping or a sequence'],
      ],
    );
  });
});

describe('extlb validate with kubectl scalars', () => {
  it('accepts a label value written as a date: kubectl sends it as a string', async () => {
    writeFileSync(
      join(dir, 'pool.yaml'),
      `apiVersion: extlb.dev/v1alpha1
kind: BackendPool
metadata:
  name: pool
spec:
  selector: {matchLabels: {app: model, since: 2024-06-01}}
  targetPorts: [{number: 0x1F40}]
  loadBalancer: {type: RoundRobin}
`,
    );
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (b: Buffer) => {
      text += b.toString();
    });
    const code = await main(['validate', 'pool.yaml'], { ...io(), stdout });
    assert.equal(text, '1 document, 1 valid, 0 invalid\n');
    assert.equal(code, 0);
  });
});

describe('documents kubectl refuses as a whole', () => {
  async function run(command: 'validate' | 'convert', name: string) {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const code = await main([command, name], {
      ...io(),
      stdout: new PassThrough().on('data', (b: Buffer) => out.push(b)),
      stderr: new PassThrough().on('data', (b: Buffer) => err.push(b)),
    });
    return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
  }

  it('reports a document with no kind, no apiVersion or no mapping at its position, and reads the others', async () => {
    const pool =
      'apiVersion: extlb.dev/v1alpha1\nkind: BackendPool\nmetadata: {name: p, namespace: apps}\nspec: {selector: {matchLabels: {app: m}}, targetPorts: [{number: 80}], loadBalancer: {type: RoundRobin}}\n';
    writeFileSync(
      join(dir, 'kinds.yaml'),
      `${pool}---\n# no kind\napiVersion: v1\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n---\n{}\n---\n- a list\n---\n${pool}`,
    );
    const lines = [
      "kinds.yaml:7:1: Object 'Kind' is missing: a manifest needs a kind, and kubectl cannot decode one without it",
      'kinds.yaml:10:1: no matches for kind "ConfigMap" in version "": a manifest needs an apiVersion, and kubectl cannot find the resource without it',
      "kinds.yaml:13:1: Object 'Kind' is missing: a manifest needs a kind, and kubectl cannot decode one without it",
      'kinds.yaml:15:1: a manifest is a mapping with apiVersion and kind, not a sequence; kubectl cannot decode it',
    ];
    const validated = await run('validate', 'kinds.yaml');
    assert.equal(validated.stdout, `${lines.join('\n')}\n2 documents, 2 valid, 0 invalid, 4 YAML problems\n`);
    assert.equal(validated.code, 1);
    const converted = await run('convert', 'kinds.yaml');
    assert.equal(converted.code, 1);
    for (const line of lines) assert.ok(converted.stderr.includes(line.replace(': ', ': error: ')), converted.stderr);
  });

  /** A mapping of 60 keys (121 nodes to go-yaml) and `copies` aliases to it, one per line. */
  const aliasing = (copies: number) =>
    `apiVersion: v1\nkind: ConfigMap\nbase: &b {${Array.from({ length: 60 }, (_, i) => `k${i}: v`).join(', ')}}\nlist:\n${'- *b\n'.repeat(copies)}`;

  it('refuses a document whose aliases go past go-yaml’s share, as kubectl does, at the alias that passes it', async () => {
    // go-yaml counts 130 nodes before the list (the document, the mapping, its keys and values),
    // then 122 per alias, 121 of them from the alias: after the 586th, 70,906 of 71,622 nodes
    // (99.000...%) come from aliases, which passes the 99% it allows a document of that size. The
    // expansion is some 200,000 characters, well under extlb's own allowance of 1 MiB.
    writeFileSync(join(dir, 'aliasing.yaml'), aliasing(600));
    const { manifests, problems } = await loadManifests(['aliasing.yaml'], io());
    assert.deepEqual(manifests, []);
    assert.deepEqual(
      problems.map((p) => [p.line, p.col, p.message.split(':')[0]]),
      [[5 + 585, 3, 'document contains excessive aliasing']],
    );
    // One alias fewer than the one that passes it, and kubectl reads the document.
    writeFileSync(join(dir, 'aliasing.yaml'), aliasing(585));
    const fewer = await loadManifests(['aliasing.yaml'], io());
    assert.deepEqual(fewer.problems, []);
    assert.equal((fewer.manifests[0]!.object as { list: unknown[] }).list.length, 585);
  });
});
