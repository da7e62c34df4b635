// `extlb picker-bench` at a tiny size, to prove it runs end to end: simulated model servers over
// HTTP, the pickers over real ext_proc gRPC, and a picker the user started at an address of theirs.
// The benchmark's real runs are `npm run bench` and `extlb picker-bench` itself.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { startPicker, staticEndpoints, type RunningPicker } from '@extlb/picker';
import { main } from '../src/main.js';

const running: RunningPicker[] = [];
after(async () => {
  await Promise.all(running.map((p) => p.close()));
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const code = await main(args, { stdin: new PassThrough(), stdout, stderr, cwd: process.cwd() });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

const TINY = ['--rates', '4', '--step-seconds', '1', '--warmup-seconds', '0', '--servers', '2', '--groups', '2'];
const SMALL_REQUESTS = ['--system-prompt-tokens', '64', '--question-tokens', '8', '--output-tokens', '2', '--scrape-interval-ms', '50'];

/** Two consecutive free ports (the kernel may hand them out again at once; a clash fails the test loudly, not wrongly). */
async function freePorts(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    if (port < 65000) return port;
  }
}

test('extlb picker-bench runs the reference pickers and one at a given address, and prints the table and the knees', async () => {
  const basePort = await freePorts();
  const own = await startPicker({ pool: staticEndpoints([`127.0.0.1:${basePort}`, `127.0.0.1:${basePort + 1}`]), strategy: 'random', seed: 1 });
  running.push(own);
  const run = await cli(
    'picker-bench',
    '--pickers',
    'round-robin,load-aware',
    '--picker',
    own.address,
    '--base-port',
    String(basePort),
    ...TINY,
    ...SMALL_REQUESTS,
  );
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.split('\n').filter((l) => /^\S+\s+4\s/.test(l));
  assert.deepEqual(
    rows.map((l) => l.split(/\s+/)[0]),
    ['round-robin', 'load-aware', own.address],
  );
  for (const row of rows) {
    const cells = row.split(/\s+/);
    assert.ok(Number(cells[2]) > 0, `${cells[0]} completed requests: ${row}`);
    assert.match(cells[9] ?? '', /^\d+\.\d%$/, 'a prefix hit rate');
    assert.equal(cells.at(-1), '0', 'no errors');
  }
  assert.match(run.stdout, /^knee \(highest rate with TTFT p90 within the SLO/m);
  assert.ok(own.picker.stats().picks.picked > 0, 'the given picker was asked');
  assert.match(run.stderr, /^round-robin: rate 4\/s: /m, 'progress goes to stderr');
});

test('extlb picker-bench refuses bad flags with exit 2', async () => {
  for (const [args, message] of [
    [['--pickers', 'fastest'], /--pickers takes round-robin, least-request, load-aware, load-aware x2, not "fastest"/],
    [['--rates', '10,abc'], /--rates takes request rates/],
    [['--picker', '127.0.0.1:9002'], /--picker needs --base-port/],
    [['--picker', 'nowhere'], /--picker must be HOST:PORT/],
  ] as const) {
    const run = await cli('picker-bench', ...args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
  }
});
