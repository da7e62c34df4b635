// The prompt reader: block hashes of the prompt's prefix and the model, however the body is chunked,
// reading no more of the body than it needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PromptReader, type PromptOptions } from '../src/prompt.js';

const OPTIONS: PromptOptions = { blockBytes: 16, blocks: 4, model: true, maxBytes: 4096 };

function read(body: string | Buffer, options: Partial<PromptOptions> = {}, chunkSizes: number[] = [Number.MAX_SAFE_INTEGER]) {
  const reader = new PromptReader({ ...OPTIONS, ...options });
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  let at = 0;
  let i = 0;
  while (at < bytes.length && !reader.done()) {
    const n = Math.max(1, chunkSizes[i++ % chunkSizes.length] as number);
    reader.push(bytes.subarray(at, at + n));
    at += n;
  }
  return { ...reader.result(), done: reader.done() };
}

const long = (seed: string) => Array.from({ length: 40 }, (_, i) => `${seed}${i}`).join(' ');

test('requests sharing a prompt prefix share their leading block hashes, and differ after it', () => {
  const a = read(JSON.stringify({ model: 'm', prompt: `${long('shared')} tail one` }));
  const b = read(JSON.stringify({ model: 'm', prompt: `${long('shared')} tail two` }));
  const c = read(JSON.stringify({ model: 'm', prompt: long('other') }));
  assert.equal(a.blocks.length, 4);
  assert.deepEqual(a.blocks, b.blocks, 'the first 4 blocks are all shared text');
  assert.notEqual(a.blocks[0], c.blocks[0]);
  assert.equal(a.model, 'm');
});

test('a chat request hashes its messages; other members before the prompt change nothing', () => {
  const messages = [{ role: 'system', content: long('sys') }];
  const a = read(JSON.stringify({ model: 'm', messages }));
  const b = read(JSON.stringify({ temperature: 0.5, stream: true, stop: ['}', ']'], model: 'm', messages }));
  assert.deepEqual(a.blocks, b.blocks);
  assert.equal(b.model, 'm');
});

test('reads only what it needs: it stops after the blocks and the model, not at the end of a large body', () => {
  const body = JSON.stringify({ model: 'm', prompt: 'x'.repeat(1_000_000) });
  const r = read(body, {}, [4096]);
  assert.ok(r.done);
  assert.ok(r.bytesRead < 200, `read ${r.bytesRead} bytes`);
  assert.equal(r.blocks.length, 4);
});

test('bounded by maxBytes when the members it looks for never come', () => {
  const r = read(JSON.stringify({ padding: 'y'.repeat(100_000), model: 'late' }), { maxBytes: 1000 });
  assert.ok(r.done);
  assert.equal(r.bytesRead, 1000);
  assert.equal(r.model, undefined);
});

test('a model after the prompt is still found, within the bound', () => {
  const r = read(JSON.stringify({ prompt: long('p'), model: 'adapter-7' }));
  assert.equal(r.model, 'adapter-7');
  assert.equal(r.blocks.length, 4);
});

test('not a JSON object, or a short prompt: no blocks, and done', () => {
  assert.deepEqual(read('plain text body').blocks, []);
  assert.ok(read('plain text body').done);
  const short = read(JSON.stringify({ model: 'm', prompt: 'hi' }));
  assert.deepEqual(short.blocks, []);
  assert.ok(short.done, 'the end of the object ends the reading');
});

test('property: the hashes and model do not depend on how the body is chunked', () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 200 }),
      fc.string({ maxLength: 20 }),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }),
      (prompt, model, sizes) => {
        const body = JSON.stringify({ model, prompt: `${long('q')}${prompt}` });
        const whole = read(body);
        const chunked = read(body, {}, sizes);
        assert.deepEqual(chunked.blocks, whole.blocks);
        assert.equal(chunked.model, whole.model);
      },
    ),
  );
});
