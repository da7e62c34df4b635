// The reference picker's metrics (prom-client through @extlb/telemetry, scraped over real HTTP)
// and its JSON logs (pino through @extlb/telemetry, into a real stream).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, createRegistry } from '@extlb/telemetry';
import { fileEndpoints, staticEndpoints, type PoolMembers } from '../src/pool-members.js';
import { startPicker, type PickerServerOptions, type RunningPicker } from '../src/server.js';
import { ManualPool, ask, closeClients, endpointOf, exchange, extProcClient, headers } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'extlb-picker-telemetry-'));
const running: RunningPicker[] = [];
after(async () => {
  closeClients();
  await Promise.all(running.map((p) => p.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A stream collecting the logger's lines, each parsed as JSON. */
function logLines(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

async function start(options: Partial<PickerServerOptions> & { pool: PoolMembers }): Promise<RunningPicker & { lines: Record<string, unknown>[] }> {
  const { stream, lines } = logLines();
  const p = await startPicker({ metricsListen: '127.0.0.1:0', logger: createLogger({ level: 'debug', destination: stream }), ...options });
  running.push(p);
  return Object.assign(p, { lines });
}

function http(address: string, path: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  const [, host, port] = /^(.*):(\d+)$/.exec(address) ?? [];
  return new Promise((resolve, reject) => {
    const req = request({ host, port: Number(port), path, method, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every sample of the exposition, as `name{labels}` → value. */
async function scrape(p: RunningPicker): Promise<Map<string, number>> {
  const { status, type, body } = await http(p.metricsAddress as string, '/metrics');
  assert.equal(status, 200);
  assert.match(type, /^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const SERVED = (served: string) => ({
  response_headers: {},
  metadata_context: { filter_metadata: { 'envoy.lb': { fields: { 'x-gateway-destination-endpoint-served': { stringValue: served } } } } },
});

test('/metrics carries every outcome of a decision, the stream errors, served counts and the process metrics', async () => {
  const p = await start({ pool: staticEndpoints('10.0.0.1:8000,10.0.0.2:8000'), maxInFlight: 1 });
  const client = extProcClient(p.address);
  const held = await exchange(client, [headers({}, false)], 1);
  assert.ok(endpointOf(held.answers[0] ?? {}).metadata);
  assert.equal((await ask(client, headers())).immediate_response?.status?.code, 429);
  const during = await scrape(p);
  assert.equal(during.get('extlb_picker_requests_in_flight'), 1);
  held.session.send(SERVED('10.0.0.1:8000'));
  await held.session.next();
  held.session.finish();
  await held.session.next();
  for (let i = 0; i < 50 && p.picker.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await ask(client, headers({}, true, []))).immediate_response?.status?.code, 503);
  const stranger = await exchange(client, [headers({}, false), SERVED('192.0.2.9:1')], 2);
  stranger.session.finish();
  await stranger.session.next();
  await exchange(client, [{}], 1);

  const m = await scrape(p);
  assert.equal(m.get('extlb_picker_picks_total{result="picked"}'), 2);
  assert.equal(m.get('extlb_picker_picks_total{result="no_endpoint"}'), 1);
  assert.equal(m.get('extlb_picker_picks_total{result="shedding"}'), 1);
  assert.equal(m.get('extlb_picker_served_total{endpoint="10.0.0.1:8000"}'), 1);
  assert.equal(m.get('extlb_picker_served_ignored_total'), 1);
  assert.equal(m.get('extlb_picker_stream_errors_total{reason="invalid_message"}'), 1);
  assert.equal(m.get('extlb_picker_stream_errors_total{reason="internal_error"}'), 0);
  assert.equal(m.get('extlb_picker_requests_in_flight'), 0);
  assert.equal(m.get('extlb_picker_pool_endpoints'), 2);
  // prom-client's default process and Node.js metrics come with the registry.
  for (const name of ['process_cpu_user_seconds_total', 'process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    assert.ok(m.has(name), `${name} is exposed`);
  }
  // The series and stats() are one count, read two ways.
  const stats = p.picker.stats();
  assert.deepEqual(stats.picks, { picked: 2, noEndpoint: 1, shedding: 1 });
  assert.equal(stats.invalidMessages, 1);
});

test('served counts follow the pool: an endpoint that leaves takes its series with it', async () => {
  const pool = new ManualPool();
  pool.load('10.0.0.1:80,10.0.0.2:80');
  const p = await start({ pool });
  const client = extProcClient(p.address);
  for (const served of ['10.0.0.1:80', '10.0.0.2:80']) {
    const r = await exchange(client, [headers({}, false), SERVED(served)], 2);
    r.session.finish();
    await r.session.next();
  }
  const before = await scrape(p);
  assert.equal(before.get('extlb_picker_served_total{endpoint="10.0.0.2:80"}'), 1);
  pool.load('10.0.0.1:80');
  const r = await exchange(client, [headers({}, false), SERVED('10.0.0.1:80')], 2);
  r.session.finish();
  await r.session.next();
  const now = await scrape(p);
  assert.equal(now.get('extlb_picker_served_total{endpoint="10.0.0.1:80"}'), 2);
  assert.equal(now.has('extlb_picker_served_total{endpoint="10.0.0.2:80"}'), false);
  assert.equal(now.get('extlb_picker_pool_endpoints'), 1);
});

test('a picker failing on a message counts an internal error and logs it; the process keeps picking', async () => {
  class BrokenPool extends ManualPool {
    fail = false;
    override endpoints() {
      if (this.fail) throw new Error('the pool is unreadable');
      return super.endpoints();
    }
  }
  const broken = new BrokenPool();
  broken.load('10.0.0.1:80');
  const p = await start({ pool: broken });
  const client = extProcClient(p.address);
  broken.fail = true;
  const failed = await exchange(client, [headers()], 1);
  assert.equal(failed.last.kind === 'end' && failed.last.details, 'the picker failed on this message: the pool is unreadable');
  broken.fail = false;
  assert.equal(endpointOf(await ask(client, headers())).metadata, '10.0.0.1:80');
  assert.equal((await scrape(p)).get('extlb_picker_stream_errors_total{reason="internal_error"}'), 1);
  const line = p.lines.find((l) => l.msg === 'ext_proc stream ended: the picker failed');
  assert.equal(line?.level, 'error');
  assert.equal(line?.details, 'the picker failed on this message: the pool is unreadable');
});

test('JSON logs: listening, pool changes (long lists clipped, with the count), reload failures, invalid messages, stopped', async () => {
  const file = join(dir, 'endpoints.txt');
  writeFileSync(file, '10.0.0.1:8000\n');
  const pool = fileEndpoints(file);
  try {
    const p = await start({ pool, strategy: 'least-request', maxEndpoints: 2 });
    const listening = p.lines.find((l) => l.msg === 'listening');
    assert.deepEqual(
      { ...listening, time: undefined },
      {
        level: 'info',
        time: undefined,
        address: p.address,
        metricsAddress: p.metricsAddress,
        transport: 'node-http2',
        strategy: 'least-request',
        maxEndpoints: 2,
        count: 1,
        endpoints: ['10.0.0.1:8000'],
        msg: 'listening',
      },
    );
    assert.match(String(listening?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const changed = () => p.lines.filter((l) => l.msg === 'pool endpoints changed');
    // A guard against hanging, not a speed limit: file events may come late on a loaded machine.
    const waitFor = async (seen: () => boolean): Promise<void> => {
      for (let i = 0; i < 6000 && !seen(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(seen(), `the expected log line never came: ${JSON.stringify(p.lines)}`);
    };
    writeFileSync(file, Array.from({ length: 70 }, (_, i) => `10.1.0.${i + 1}:8000`).join('\n'));
    await waitFor(() => changed().some((l) => l.count === 70));
    const long = changed().find((l) => l.count === 70);
    assert.equal((long?.endpoints as string[] | undefined)?.length, 64);
    assert.equal(long?.omitted, 6);
    writeFileSync(file, '10.0.0.1:8000,nonsense\n');
    await waitFor(() => p.lines.some((l) => l.msg === 'endpoint reload failed, keeping the previous endpoints'));
    const failed = p.lines.find((l) => l.msg === 'endpoint reload failed, keeping the previous endpoints');
    assert.equal(failed?.level, 'warn');
    assert.match(String(failed?.error), /endpoints\.txt: .*nonsense/);

    await exchange(extProcClient(p.address), [{}], 1);
    const invalid = p.lines.find((l) => l.msg === 'ext_proc stream ended: invalid message');
    assert.equal(invalid?.level, 'warn');
    assert.equal(invalid?.details, 'ProcessingRequest: carries none of the request/response phases');

    await p.close();
    running.splice(running.indexOf(p), 1);
    assert.equal(p.lines.at(-1)?.msg, 'stopped');
    assert.ok(p.lines.every((l) => typeof l.time === 'string' && typeof l.level === 'string' && !('pid' in l)));
  } finally {
    await pool.close();
  }
});

test('the metrics listener answers /metrics only, GET and HEAD only; a registry passed in gets the series', async () => {
  const registry = createRegistry({ defaultMetrics: false });
  const p = await start({ pool: staticEndpoints('10.0.0.1:8000'), registry });
  assert.equal(p.registry, registry);
  assert.match(await registry.metrics(), /^extlb_picker_pool_endpoints 1$/m);
  assert.doesNotMatch(await registry.metrics(), /process_cpu/);
  const address = p.metricsAddress as string;
  assert.equal((await http(address, '/')).status, 404);
  assert.equal((await http(address, '/metrics?x=1')).status, 200);
  const post = await http(address, '/metrics', 'POST');
  assert.equal(post.status, 405);
  const head = await http(address, '/metrics', 'HEAD');
  assert.deepEqual([head.status, head.body], [200, '']);
});

test('without metricsListen nothing listens for HTTP; a metrics port in use fails the start and frees the gRPC port', async () => {
  const quiet = await startPicker({ pool: staticEndpoints('10.0.0.1:8000') });
  running.push(quiet);
  assert.equal(quiet.metricsAddress, undefined);
  assert.match(await quiet.registry.metrics(), /^extlb_picker_picks_total\{result="picked"\} 0$/m);

  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const grpcPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const free = (probe.address() as { port: number }).port;
        probe.close(() => resolve(free));
      });
    });
    await assert.rejects(
      startPicker({ pool: staticEndpoints('10.0.0.1:8000'), listen: `127.0.0.1:${grpcPort}`, metricsListen: `127.0.0.1:${port}` }),
      new RegExp(`cannot serve metrics on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`),
    );
    // The gRPC listener of the failed start is gone: the same port can be bound again.
    const again = await startPicker({ pool: staticEndpoints('10.0.0.1:8000'), listen: `127.0.0.1:${grpcPort}` });
    running.push(again);
    assert.equal(again.port, grpcPort);
    await assert.rejects(startPicker({ pool: staticEndpoints('10.0.0.1:8000'), metricsListen: 'nowhere' }), /"nowhere" is not HOST:PORT/);
  } finally {
    taken.close();
  }
});
