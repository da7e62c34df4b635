// The manifest reader gets its text in chunks (1 MiB from a file, whatever a pipe delivers on
// stdin). Wherever a chunk ends — inside indentation, a key, a scalar, a comment, a `---` line or
// a multi-byte character — the documents read must be exactly those of the whole text read at
// once: values, positions and problems alike.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { Io } from '../src/io.js';
import { main } from '../src/main.js';
import { readYamlDocuments, textOf } from '../src/yaml-stream.js';

/** Every kind of token a manifest has, block and flow style, with characters of 2, 3 and 4 bytes in UTF-8. */
const MANIFEST = `# a file of several documents
apiVersion: extlb.dev/v1alpha1
kind: BackendPool
metadata:
  name: pool   # a comment after a value
  namespace: apps
  annotations:
    note: "Grüße — ☃ and 😀"
    quoted: 'it''s here'
    empty: ""
spec:
  selector:
    matchLabels: {app: model, tier: "front end"}
  targetPorts:
  - number: 8000
  - number: 0x1F41
  loadBalancer:
    type: External
    external:
      refs:
        - name: picker
          port: {number: 9002}
---
# the second document
apiVersion: v1
kind: ConfigMap
metadata: {name: "naïve", namespace: apps}
data:
  list: "[1, 2, 3]"
  enabled: "yes"
  description: ünïcödé text, a colon:inside and a #hash
  url: http://example.com/a#b
---
apiVersion: v1
kind: Service
metadata:
  name: svc
spec:
  ports:
  -
    name: http
    port: 80
...
`;

/** The same read as plain data: `positions` is compared in full. */
interface Read {
  kind: string;
  [key: string]: unknown;
}

async function read(chunks: Iterable<Buffer>): Promise<Read[]> {
  const out: Read[] = [];
  for await (const item of readYamlDocuments(
    textOf(
      (async function* () {
        yield* chunks;
      })(),
    ),
  )) {
    out.push(item.kind === 'document' ? { kind: item.kind, index: item.index, value: item.value, positions: item.positions } : { ...item });
  }
  return out;
}

function chunked(bytes: Buffer, size: number, offset = 0): Buffer[] {
  const out: Buffer[] = [];
  if (offset > 0) out.push(bytes.subarray(0, offset));
  for (let i = offset; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('reading across chunk boundaries', () => {
  const bytes = Buffer.from(MANIFEST);

  it('reads the manifest at once without a problem', async () => {
    const whole = await read([bytes]);
    assert.deepEqual(
      whole.map((r) => r.kind),
      ['document', 'document', 'document'],
    );
  });

  it('gives what one chunk gives, wherever a single boundary falls', async () => {
    const whole = await read([bytes]);
    for (let at = 1; at < bytes.length; at++) {
      assert.deepStrictEqual(
        await read([bytes.subarray(0, at), bytes.subarray(at)]),
        whole,
        `split at byte ${at}: ${JSON.stringify(bytes.subarray(Math.max(0, at - 12), at).toString())}|`,
      );
    }
  });

  it('gives what one chunk gives at several chunk sizes and offsets', async () => {
    const whole = await read([bytes]);
    for (const size of [1, 2, 3, 5, 7, 16, 61, 256]) {
      for (const offset of [0, 1, 2, 3]) assert.deepStrictEqual(await read(chunked(bytes, size, offset)), whole, `chunks of ${size} bytes after ${offset}`);
    }
  });
});

describe('a file larger than the read chunk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-boundaries-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function validate(text: string) {
    writeFileSync(join(dir, 'big.yaml'), text);
    const out: Buffer[] = [];
    const io: Io = { stdin: new PassThrough(), stdout: new PassThrough().on('data', (b: Buffer) => out.push(b)), stderr: new PassThrough(), cwd: dir };
    const code = await main(['validate', 'big.yaml'], io);
    return { code, stdout: Buffer.concat(out).toString() };
  }

  const mark = 1 << 20;
  const filler = (i: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f${String(i).padStart(6, '0')}\n---\n`;
  // The document that meets the mark, and the byte of it that each case puts there.
  // Every line is followed by one at its own indentation: a misread indentation shows as a nested
  // mapping there.
  const target = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\n  namespace: apps # a comment\n  uid: u\ndata:\n  k: "☃😀"\n  j: x\n---\n';
  const at = (text: string, extra = 0) => Buffer.byteLength(target.slice(0, target.indexOf(text))) + extra;
  const CASES: [string, number][] = [
    ['a line whose indentation starts 1 byte before the mark', at('  name') + 1],
    ['a key', at('name: target') + 2],
    ['a scalar', at('target') + 3],
    ['a comment', at('# a comment') + 4],
    ['a `---` line', at('---') + 1],
    ['the second byte of a 3-byte character', at('☃') + 1],
    ['the third byte of a 4-byte character', at('😀') + 2],
  ];
  for (const [name, offset] of CASES) {
    it(`reads a valid file whose byte at the 1 MiB mark is inside ${name}`, async () => {
      const before = mark - offset;
      const fillers = Math.floor((before - 2) / Buffer.byteLength(filler(0)));
      let text = Array.from({ length: fillers }, (_, i) => filler(i)).join('');
      text = `${'#'.repeat(before - Buffer.byteLength(text) - 1)}\n${text}${target}${filler(fillers)}`;
      assert.equal(Buffer.byteLength(text.slice(0, text.indexOf(target))), before);
      const documents = fillers + 2;
      const r = await validate(text);
      assert.equal(r.stdout, `${documents} documents, 0 valid, 0 invalid, ${documents} skipped (not an extlb kind)\n`);
      assert.equal(r.code, 0);
    });
  }
});
