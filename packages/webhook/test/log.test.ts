import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { jsonLogger } from '../src/log.js';

describe('jsonLogger', () => {
  it('writes one JSON object per line, lines of one turn together, and honours the level', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const log = jsonLogger(out, 'info');
    log.log('info', 'plain');
    log.log('debug', 'hidden', { a: 1 });
    log.log('warn', 'with "fields"', { a: 1, nested: { b: [true, null] }, s: 'line\nbreak' });
    assert.equal(text, '', 'written on the next turn');
    await nextTurn();
    const lines = text.split('\n');
    assert.equal(lines.pop(), '');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      parsed.map(({ time, ...rest }) => {
        assert.match(String(time), /^\d{4}-\d\d-\d\dT/);
        return rest;
      }),
      [
        { level: 'info', msg: 'plain' },
        { level: 'warn', msg: 'with "fields"', a: 1, nested: { b: [true, null] }, s: 'line\nbreak' },
      ],
    );
  });

  it('drops lines for a destroyed stream instead of throwing', async () => {
    const out = new PassThrough();
    const log = jsonLogger(out);
    out.destroy();
    log.log('info', 'lost');
    await nextTurn();
  });
});
