import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { Counter, createLogger, createRegistry, metricsHandler } from '../src/index.js';

function capture(): { stream: PassThrough; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes one JSON object per line: level by name, ISO time, msg and the fields', () => {
    const out = capture();
    const log = createLogger({ level: 'info', destination: out.stream, base: { component: 'test' } });
    log.info('plain');
    log.debug({ a: 1 }, 'hidden below the level');
    log.warn({ a: 1, nested: { b: [true, null] }, s: 'line\nbreak' }, 'with "fields"');
    const lines = out.lines();
    for (const l of lines) assert.match(String(l.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      lines.map(({ time, ...rest }) => rest),
      [
        { level: 'info', component: 'test', msg: 'plain' },
        { level: 'warn', component: 'test', a: 1, nested: { b: [true, null] }, s: 'line\nbreak', msg: 'with "fields"' },
      ],
    );
  });

  it('drops lines for a destroyed stream instead of throwing', () => {
    const out = new PassThrough();
    const log = createLogger({ destination: out });
    out.destroy();
    log.info('lost');
  });

  it('writes to a file asynchronously', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'extlb-telemetry-'));
    try {
      const file = join(dir, 'log.jsonl');
      const log = createLogger({ destination: file });
      for (let i = 0; i < 3; i++) log.info({ i }, 'line');
      assert.equal(existsSync(file) ? readFileSync(file, 'utf8') : '', '', 'nothing is written before the next turn');
      let text = '';
      for (let tries = 0; tries < 500 && text.split('\n').length < 4; tries++) {
        await setTimeout(10);
        text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      }
      const lines = text.trim().split('\n');
      assert.deepEqual(
        lines.map((l) => (JSON.parse(l) as { i: number }).i),
        [0, 1, 2],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes nothing when silent', () => {
    const out = capture();
    createLogger({ level: 'silent', destination: out.stream }).error('nothing');
    assert.deepEqual(out.lines(), []);
  });
});

describe('createRegistry', () => {
  it("collects Node's default process metrics", async () => {
    const text = await createRegistry().metrics();
    for (const name of ['process_cpu_seconds_total', 'process_start_time_seconds', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
  });

  it('holds only its own metrics without them, with the default labels', async () => {
    const registry = createRegistry({ defaultMetrics: false, labels: { component: 'test' } });
    new Counter({ name: 'x_total', help: 'X.', labelNames: ['a'], registers: [registry] }).inc({ a: 'quote " and \\' });
    assert.equal(await registry.metrics(), '# HELP x_total X.\n# TYPE x_total counter\nx_total{a="quote \\" and \\\\",component="test"} 1\n');
  });
});

describe('metricsHandler', () => {
  it('serves the registry in the Prometheus text format over HTTP', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    new Counter({ name: 'served_total', help: 'Served.', registers: [registry] }).inc(3);
    const handler = metricsHandler(registry);
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const reply = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
        }).on('error', reject);
      });
      assert.deepEqual(reply, {
        status: 200,
        type: 'text/plain; version=0.0.4; charset=utf-8',
        body: '# HELP served_total Served.\n# TYPE served_total counter\nserved_total 3\n',
      });
    } finally {
      server.close();
    }
  });
});
