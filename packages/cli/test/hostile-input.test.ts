// `extlb validate` and `extlb convert` on input built to hurt: unresolved and self-containing
// aliases, alias bombs, huge scalars repeated by aliases, streams of more documents than a
// function call can take arguments, a document whose every list item is wrong, and names that
// carry terminal escape sequences. Each bad document is reported at file:line:col, the others are
// still checked, the exit code is 1, and output stays proportional to the distinct problems.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { Io } from '../src/io.js';
import { main } from '../src/main.js';
import { MAX_LINE_LENGTH, MAX_REPEATS } from '../src/diagnostic-lines.js';
import { streamManifests } from '../src/manifests.js';
// The converter's own estate for its linear-growth test, so both packages test the same input.
import { pickerEstate } from '../../envoy/test/picker-estate.js';

const dir = mkdtempSync(join(tmpdir(), 'extlb-hostile-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

async function extlb(args: string[], stdinText = '') {
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const io: Io = {
    stdin,
    stdout: new PassThrough().on('data', (b: Buffer) => out.push(b)),
    stderr: new PassThrough().on('data', (b: Buffer) => err.push(b)),
    cwd: dir,
  };
  const code = await main(args, io);
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

const pool = (name: string) => `apiVersion: extlb.dev/v1alpha1
kind: BackendPool
metadata:
  name: ${name}
  namespace: apps
spec:
  selector:
    matchLabels: {app: model}
  targetPorts: [{number: 8000}]
  loadBalancer: {type: RoundRobin}
`;

/** Nine levels of nine aliases each: 9^9 scalars once expanded, 600 bytes as text. */
function aliasBomb(): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++)
    lines.push(
      `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

// Each case: the bad document is the second of three; it is reported where `at` says.
const BAD_DOCUMENTS: { name: string; text: string; at: string; message: RegExp }[] = [
  { name: 'an unresolved alias', text: 'kind: Thing\nvalue: *nowhere\n', at: '13:8', message: /unknown alias \*nowhere/ },
  { name: 'an alias inside the node it names', text: 'loop: &loop\n  again: *loop\n', at: '13:10', message: /would contain itself/ },
  // go-yaml's count: by the 4th alias of a3, 4,630 of the 4,671 nodes decoded came from aliases (over 99%).
  { name: 'an alias bomb', text: aliasBomb(), at: '15:25', message: /document contains excessive aliasing: kubectl refuses/ },
  { name: 'a number JSON cannot carry', text: 'kind: Thing\nvalue: .inf\n', at: '13:8', message: /\.inf is not a number JSON can carry/ },
  { name: 'a null mapping key', text: 'kind: Thing\n~: x\n', at: '13:1', message: /mapping key is null/ },
  { name: 'a value that does not fit its tag', text: 'kind: Thing\nport: !!int eighty\n', at: '13:7', message: /does not fit its !!int tag/ },
  { name: 'a key written twice', text: 'kind: Thing\nkind: Other\n', at: '13:1', message: /mapping key "kind" appears more than once/ },
  {
    name: 'a merge of something other than mappings',
    text: 'kind: Thing\nspec: {<<: [1]}\n',
    at: '13:12',
    message: /`<<` merges a mapping or a sequence of mappings/,
  },
];

describe('bad YAML documents', () => {
  for (const bad of BAD_DOCUMENTS) {
    it(`reports ${bad.name} at file:line:col and checks the documents around it`, async () => {
      const text = `${pool('first')}---\n${bad.text}---\n${pool('third')}`;
      const name = file('bad.yaml', text);
      for (const [args, stdin, shown] of [
        [[name], '', name],
        [['-'], text, '-'],
      ] as const) {
        const r = await extlb(['validate', ...args], stdin);
        assert.equal(r.code, 1, r.stdout + r.stderr);
        const lines = r.stdout.trim().split('\n');
        assert.equal(lines.length, 2, r.stdout);
        assert.ok(lines[0]!.startsWith(`${shown}:${bad.at}`), lines[0]);
        assert.match(lines[0]!, bad.message);
        assert.equal(lines[1], '2 documents, 2 valid, 0 invalid, 1 YAML problem');
      }
    });
  }

  it('refuses 99 aliases to a 5 MB scalar, and prints a few lines, not gigabytes', async () => {
    const text = `kind: Thing\nbig: &big ${'x'.repeat(5_000_000)}\ncopies: [${Array(99).fill('*big').join(', ')}]\n---\n${pool('after')}`;
    for (const [args, stdin] of [
      [[file('big.yaml', text)], ''],
      [['-'], text],
    ] as const) {
      for (const output of ['text', 'json']) {
        const r = await extlb(['validate', '-o', output, ...args], stdin);
        assert.equal(r.code, 1);
        assert.ok(r.stdout.length < 10_000, `${r.stdout.length} bytes of output`);
        assert.match(r.stdout, /aliases expand this document past 5000\d+ characters/);
      }
    }
    const converted = await extlb(['convert', 'big.yaml']);
    assert.equal(converted.code, 1);
    assert.match(converted.stderr, /big\.yaml:3:16: error: aliases expand this document/);
  });

  it('reads a mapping of 50,000 keys and a document of 10,000 aliases in time linear in their size', async () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: v${i}\n`).join('');
    const aliases =
      Array.from({ length: 10_000 }, (_, i) => `a${i}: &a${i} v${i}\n`).join('') + Array.from({ length: 10_000 }, (_, i) => `b${i}: *a${i}\n`).join('');
    const io: Io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), cwd: dir };
    file('wide-map.yaml', `apiVersion: v1\nkind: Thing\n${keys}---\napiVersion: v1\nkind: Thing\n${aliases}`);
    const read: Record<string, string>[] = [];
    for await (const item of streamManifests(['wide-map.yaml'], io)) read.push((item as { object: Record<string, string> }).object);
    assert.equal(read.length, 2);
    assert.equal(Object.keys(read[0]!).length, 50_002);
    assert.equal(read[0]!.k49999, 'v49999');
    assert.equal(read[1]!.b9999, 'v9999');
  });

  it('reads more documents than a call can take arguments, from a file and from stdin', async () => {
    const text = '---\n{apiVersion: v1, kind: ConfigMap}\n'.repeat(130_000);
    const r = await extlb(['validate', file('many.yaml', text), '-'], text);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.stdout, '260000 documents, 0 valid, 0 invalid, 260000 skipped (not an extlb kind)\n');
  });

  it('prints a converter message shared by many objects a few times, then how many more there were', async () => {
    const text = Array.from({ length: 2000 }, (_, i) => `apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t${i}}\n`).join('---\n');
    const r = await extlb(['convert', '-v', file('things.yaml', text)]);
    assert.equal(r.code, 0, r.stderr);
    // Apart from the warning that there was no Gateway to convert.
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.filter((l) => /no Gateway is converted/.test(l)).length, 1, r.stderr);
    assert.equal(lines.length, MAX_REPEATS + 2, r.stderr);
    assert.match(lines.at(-1)!, new RegExp(`^\\.\\.\\. ${2000 - MAX_REPEATS} more like "info: .*" not shown$`));
  });
});

describe('a stream of documents', () => {
  it('hands over each document before the stream has ended', async () => {
    const stdin = new PassThrough();
    const io: Io = { stdin, stdout: new PassThrough(), stderr: new PassThrough(), cwd: dir };
    const items = streamManifests(['-'], io);
    const name = async () => ((await items.next()).value as { object: { metadata: { name: string } } }).object.metadata.name;
    // A document is handed over once the one after it has been read (a trailing `...` or comment
    // would still belong to it), so the stream is one document ahead of its reader.
    stdin.write(`${pool('first')}---\n${pool('second')}---\n${pool('third').slice(0, 20)}`);
    assert.equal(await name(), 'first');
    stdin.end(pool('third').slice(20));
    assert.equal(await name(), 'second');
    assert.equal(await name(), 'third');
    assert.equal((await items.next()).done, true);
  });
});

describe('output bounds', () => {
  it('prints a message shared by many list items a few times, then how many more there were', async () => {
    const ports = Array(20_000).fill('x').join(',');
    const name = file('wide.yaml', pool('wide').replace('targetPorts: [{number: 8000}]', `targetPorts: [${ports}]`));
    const r = await extlb(['validate', name]);
    assert.equal(r.code, 1);
    const lines = r.stdout.trim().split('\n');
    const typeErrors = lines.filter((l) => /targetPorts\[\d+\]: Invalid value: "string"/.test(l));
    assert.equal(typeErrors.length, MAX_REPEATS);
    assert.ok(
      lines.includes(
        `... ${20_000 - MAX_REPEATS} more like "spec.targetPorts[*]: Invalid value: "string": spec.targetPorts[*] in body must be of type object: "string"" not shown`,
      ),
      r.stdout,
    );
    assert.ok(r.stdout.length < 5_000, `${r.stdout.length} bytes`);
  });

  it('shortens a line that quotes a huge value, keeping its start and end', async () => {
    const name = file('long.yaml', pool('long').replace('type: RoundRobin', `type: ${'y'.repeat(100_000)}`));
    const r = await extlb(['validate', name]);
    assert.equal(r.code, 1);
    const line = r.stdout.split('\n').find((l) => l.includes('spec.loadBalancer.type: Unsupported value'))!;
    assert.ok(line.startsWith('long.yaml:10:24: BackendPool apps/long: spec.loadBalancer.type: Unsupported value: "yyy'), line.slice(0, 120));
    assert.ok(line.length < MAX_LINE_LENGTH + 100, `${line.length} characters`);
    assert.match(line, /characters left out\)… .*"RoundRobin"/);
  });
});

describe('names with control characters', () => {
  const ESC = '\u001b';
  it('are escaped in validate output', async () => {
    const name = file('evil.yaml', pool('x').replace('name: x', 'name: "evil\\e[2J\\e]0;owned\\a\\u202e"'));
    const r = await extlb(['validate', name]);
    assert.equal(r.code, 1);
    assert.ok(!r.stdout.includes(ESC) && !r.stdout.includes('\u0007') && !r.stdout.includes('\u202e'), JSON.stringify(r.stdout));
    assert.match(r.stdout, /BackendPool apps\/evil\\x1b\[2J\\x1b\]0;owned\\x07\\u202e: metadata\.name: Invalid value/);
  });

  it('are escaped in convert diagnostics', async () => {
    const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: "r\\e[31mred", namespace: default}
spec:
  parentRefs: [{name: "gw\\r\\nforged: line"}]
  rules: [{backendRefs: [{name: missing, port: 80}]}]
`;
    const r = await extlb(['convert', file('evil-route.yaml', route)]);
    assert.ok(!r.stderr.includes(ESC) && !r.stderr.includes('\r'), JSON.stringify(r.stderr));
    assert.match(r.stderr, /HTTPRoute default\/r\\x1b\[31mred/);
    assert.doesNotMatch(r.stderr, /^forged: line/m);
  });
});

describe('output size', () => {
  /**
   * Three routes of 16 rules × 64 matches × 16 External pools, all within Gateway API's limits:
   * 3,072 Envoy routes of 16 weighted clusters, about 37 MB of configuration.
   */
  const estate = () =>
    pickerEstate({ routes: 3, rules: 16, matches: 64, pools: 16 })
      .map((d) => JSON.stringify(d))
      .join('\n---\n');

  it('refuses a Gateway whose configuration passes the size limit with a clear error and exit 1, writing none of it', async () => {
    const input = file('huge.yaml', estate());
    for (const args of [
      ['convert', input],
      ['convert', input, '--gateway', 'default/gw', '-o', 'json'],
    ]) {
      const r = await extlb(args);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        /huge\.yaml:1:1: error: Gateway default\/gw: its Envoy configuration would be more than 33554432 bytes \(the limit, maxOutputBytes\)/,
      );
      assert.equal(r.stderr.match(/: error: /g)?.length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });
});
