// `extlb picker`, `extlb conformance` and `extlb simulate`: the first as a real process (it runs
// until SIGTERM and logs JSON lines), the others through main() with in-memory streams.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get } from 'node:http';
import { PassThrough } from 'node:stream';
import { parse } from 'yaml';
import { startKubeApiServer } from '@extlb/kube-api-server';
import { main } from '../src/main.js';
import { endpointSlice, startFakeKubeApi } from '../../picker/test/fake-kube-api.js';
import { ask, closeClients, endpointOf, ending, exchange, extProcClient, headers } from '../../picker/test/helpers.js';
import { MetricsServer } from '../../picker/test/metrics-server.js';

const bin = join(import.meta.dirname, '..', 'dist', 'bin.js');
const dir = mkdtempSync(join(tmpdir(), 'extlb-picker-cli-'));
const children: ChildProcess[] = [];
after(() => {
  closeClients();
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const code = await main(args, { stdin: new PassThrough(), stdout, stderr, cwd: dir });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

type LogLine = Record<string, unknown>;

interface RunningPicker {
  address: string;
  child: ChildProcess;
  /** The 'listening' log line. */
  listening: LogLine;
  /** Every log line so far, each parsed as JSON (a line that is not JSON fails the test). */
  lines: LogLine[];
  /** Resolves with the first log line `match` accepts. */
  waitFor(match: (line: LogLine) => boolean): Promise<LogLine>;
}

/** Starts `extlb picker` and resolves once it logs that it is listening. */
function startPicker(...args: string[]): Promise<RunningPicker> {
  const child = spawn(process.execPath, [bin, 'picker', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: LogLine[] = [];
  const waiters: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  let buffer = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => {
    buffer += b.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, nl)) as LogLine;
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((x) => x.match(line))) w.resolve(line);
    }
  });
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const waitFor = (match: (line: LogLine) => boolean): Promise<LogLine> => {
    const seen = lines.find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ match, resolve }));
  };
  return new Promise((resolve, reject) => {
    // A guard against hanging, not a speed limit: a loaded machine may take long to load the Kubernetes client.
    const timer = setTimeout(() => reject(new Error(`picker did not start: ${JSON.stringify(lines)} ${stderr}`)), 120_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`picker exited with ${code}: ${JSON.stringify(lines)} ${stderr}`));
    });
    void waitFor((l) => l.msg === 'listening').then((listening) => {
      clearTimeout(timer);
      resolve({ address: String(listening.address), child, listening, lines, waitFor });
    });
  });
}

const endpointsChanged = (address: string) => (l: LogLine) => l.msg === 'pool endpoints changed' && (l.endpoints as string[]).includes(address);

function httpGet(address: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(`http://${address}${path}`, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/**
 * Runs each case and checks its exit code and the message: usage errors (2) on stderr; the picker's
 * other failures (1) in its JSON error log line on stdout.
 */
async function expectRefusals(cases: Array<[string[], number, RegExp]>): Promise<void> {
  for (const [args, code, message] of cases) {
    const run = await cli(...args);
    assert.equal(run.code, code, args.join(' '));
    if (code === 1 && args[0] === 'picker') {
      const line = JSON.parse(run.stdout) as LogLine;
      assert.deepEqual([line.level, line.component], ['error', 'picker'], args.join(' '));
      assert.match(String(line.error), message, args.join(' '));
    } else {
      assert.match(run.stderr, message, args.join(' '));
    }
  }
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

test('extlb picker + extlb conformance: the reference picker passes, the YAML report is written, SIGTERM stops it cleanly', async () => {
  const picker = await startPicker('--endpoints', '10.0.0.1:8000,10.0.0.2:8000,[2001:db8::1]:8000', '--max-endpoints', '2', '--strategy', 'least-request');
  const run = await cli('conformance', '--picker', picker.address, '--report', 'report.yaml', '--timeout', '2000');
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /17 passed, 0 failed, 0 skipped/);
  const report = parse(readFileSync(join(dir, 'report.yaml'), 'utf8')) as { summary: { failed: number }; rules: unknown[] };
  assert.equal(report.summary.failed, 0);
  assert.equal(report.rules.length, 17);
  assert.equal(await stop(picker.child), 0);
  assert.equal(picker.lines.find((l) => l.msg === 'signal received, shutting down')?.signal, 'SIGTERM');
  assert.equal(picker.lines.at(-1)?.msg, 'stopped');
});

test('extlb picker --transport grpc-js serves on @grpc/grpc-js and passes conformance; the default is the node:http2 server', async () => {
  const byDefault = await startPicker('--endpoints', '10.0.0.1:8000');
  assert.equal(byDefault.listening.transport, 'node-http2');
  assert.equal(await stop(byDefault.child), 0);
  for (const [flag, transport] of [
    ['grpc-js', 'grpc-js'],
    ['h2', 'node-http2'],
  ]) {
    const picker = await startPicker('--endpoints', '10.0.0.1:8000,10.0.0.2:8000', '--max-endpoints', '2', '--transport', flag as string);
    assert.equal(picker.listening.transport, transport);
    const run = await cli('conformance', '--picker', picker.address, '--timeout', '2000');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /17 passed, 0 failed, 0 skipped/);
    assert.equal(await stop(picker.child), 0);
  }
});

test('extlb picker survives a request header without a name: that stream ends with INVALID_ARGUMENT, the process keeps picking', async () => {
  const picker = await startPicker('--endpoints', '10.0.0.1:8000');
  const client = extProcClient(picker.address);
  const bad = await exchange(client, [{ request_headers: { headers: { headers: [{ raw_value: Buffer.from('x') }] } } }], 1);
  assert.deepEqual(ending(bad.last), ['INVALID_ARGUMENT', 'request_headers.headers.headers[0].key: the header has no name']);
  assert.equal(picker.child.exitCode, null, JSON.stringify(picker.lines));
  assert.equal(endpointOf(await ask(client, headers())).metadata, '10.0.0.1:8000');
  assert.equal(await stop(picker.child), 0);
});

test('extlb picker --metrics-listen serves the picker series and the process metrics; every line it logs is JSON', async () => {
  const picker = await startPicker('--endpoints', '10.0.0.1:8000,10.0.0.2:8000', '--metrics-listen', '127.0.0.1:0');
  const client = extProcClient(picker.address);
  assert.equal(endpointOf(await ask(client, headers())).metadata, '10.0.0.1:8000');
  await exchange(client, [{}], 1);
  const metrics = await httpGet(String(picker.listening.metricsAddress), '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.body, /^extlb_picker_picks_total\{result="picked"\} 1$/m);
  assert.match(metrics.body, /^extlb_picker_stream_errors_total\{reason="invalid_message"\} 1$/m);
  assert.match(metrics.body, /^extlb_picker_pool_endpoints 2$/m);
  assert.match(metrics.body, /^process_resident_memory_bytes \d+$/m);
  await picker.waitFor((l) => l.msg === 'ext_proc stream ended: invalid message');
  // A second picker cannot take the same metrics port: it says so and exits 1.
  const taken = await cli('picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:8000', '--metrics-listen', String(picker.listening.metricsAddress));
  assert.equal(taken.code, 1);
  assert.match(String((JSON.parse(taken.stdout) as LogLine).error), /^cannot serve metrics on 127\.0\.0\.1:\d+: listen EADDRINUSE/);
  assert.equal(await stop(picker.child), 0);
  assert.ok(picker.lines.every((l) => l.component === 'picker' && typeof l.time === 'string' && typeof l.level === 'string'));
});

test('extlb conformance exits 1 when a rule fails (here: nothing listens at the address any more)', async () => {
  const picker = await startPicker('--endpoints', '10.0.0.1:8000');
  const address = picker.address;
  await stop(picker.child);
  const run = await cli('conformance', '--picker', address, '--timeout', '300');
  assert.equal(run.code, 1);
  assert.match(run.stdout, /FAIL {2}ext-proc\.answers/);
});

test('extlb picker reads an endpoints file and picks up edits without a restart', async () => {
  const file = join(dir, 'endpoints.txt');
  writeFileSync(file, '10.0.0.1:8000\n');
  const picker = await startPicker('--endpoints-file', file);
  assert.deepEqual([picker.listening.count, picker.listening.strategy, picker.listening.maxEndpoints], [1, 'round-robin', 1]);
  const changed = picker.waitFor(endpointsChanged('10.0.0.2:8000'));
  writeFileSync(file, '10.0.0.1:8000\n10.0.0.2:8000\n');
  await changed;
  const run = await cli('conformance', '--picker', picker.address, '--timeout', '2000');
  assert.match(run.stdout, /endpoints seen: 10\.0\.0\.1:8000, 10\.0\.0\.2:8000/);
  await stop(picker.child);
});

test("extlb picker --from-cluster follows EndpointSlices from the kubeconfig context's namespace", async () => {
  const api = await startFakeKubeApi([endpointSlice('llm-a', ['10.2.0.1', '10.2.0.2'], '9')]);
  try {
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, api.kubeconfig());
    const picker = await startPicker(
      '--from-cluster',
      '--selector',
      'kubernetes.io/service-name=llm',
      '--port',
      'http',
      '--kubeconfig',
      kubeconfig,
      '--max-endpoints',
      '2',
    );
    assert.equal(picker.listening.count, 2);
    const run = await cli('conformance', '--picker', picker.address, '--timeout', '2000');
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /endpoints seen: 10\.2\.0\.1:8000, 10\.2\.0\.2:8000/);
    const changed = picker.waitFor(endpointsChanged('10.2.0.3:8000'));
    for (let i = 0; i < 200 && api.watchCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    api.send('ADDED', endpointSlice('llm-b', ['10.2.0.3'], '11'));
    await changed;
    assert.equal(await stop(picker.child), 0);
  } finally {
    await api.close();
  }
});

test('extlb picker --from-cluster over plain HTTP (kubectl proxy): the http:// kubeconfig as written', async () => {
  const api = await startKubeApiServer({ tls: false, objects: [endpointSlice('llm-a', ['10.2.0.1'], '9')] });
  try {
    const kubeconfig = join(dir, 'plain-kubeconfig.yaml');
    writeFileSync(kubeconfig, api.kubeconfig({ namespace: 'models' }));
    const picker = await startPicker('--from-cluster', '--selector', 'kubernetes.io/service-name=llm', '--kubeconfig', kubeconfig);
    assert.equal(picker.listening.count, 1);
    const changed = picker.waitFor(endpointsChanged('10.2.0.2:8000'));
    await api.waitForWatches(1);
    api.put(endpointSlice('llm-b', ['10.2.0.2'], '10'));
    await changed;
    assert.equal(await stop(picker.child), 0);
  } finally {
    await api.close();
  }
});

test('extlb picker refuses bad flags with exit 2 and bad endpoints with exit 1', async () => {
  await expectRefusals([
    [['picker'], 2, /--listen HOST:PORT is required/],
    [['picker', '--listen', '127.0.0.1:0'], 2, /exactly one of --endpoints, --endpoints-file or --from-cluster/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--strategy', 'fastest'], 2, /--strategy must be one of round-robin/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--max-endpoints', '0'], 2, /--max-endpoints must be a whole number in 1\.\.64/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--strategy', 'consistent-hash'], 2, /needs --hash-header/],
    [['picker', '--listen', '127.0.0.1:0', '--from-cluster'], 2, /--from-cluster needs --selector/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--nope'], 2, /Unknown option '--nope'/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--transport', 'quic'], 2, /--transport must be one of h2, grpc-js, not "quic"/],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--metrics-listen', '9090'],
      2,
      /--metrics-listen must be HOST:PORT \(for example 0\.0\.0\.0:9090\), not "9090"/,
    ],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--log-level', 'loud'],
      2,
      /--log-level must be one of debug, info, warn, error, not "loud"/,
    ],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80,10.0.0.1'], 1, /entry 1 "10\.0\.0\.1": missing ":port"/],
    [['picker', '--listen', 'nowhere', '--endpoints', '10.0.0.1:80'], 1, /^"nowhere" is not HOST:PORT$/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints-file', join(dir, 'missing.txt')], 1, /ENOENT/],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--profile', 'fastest'],
      2,
      /--profile must be one of round-robin, least-request, consistent-hash, random, load-aware, not "fastest"/,
    ],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--profile', 'random', '--strategy', 'load-aware'],
      2,
      /--strategy is the old name of --profile/,
    ],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--metrics-port', '9090'], 2, /apply to --profile load-aware only/],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--profile', 'load-aware', '--metrics-port', '0'],
      2,
      /--metrics-port must be a whole number in 1\.\.65535/,
    ],
    [
      ['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--profile', 'load-aware', '--metrics-path', 'metrics'],
      2,
      /--metrics-path must start with "\/"/,
    ],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--config', join(dir, 'nowhere.yaml')], 2, /--config .*nowhere\.yaml: ENOENT/],
    [['conformance'], 2, /--picker HOST:PORT is required/],
    [['conformance', '--picker', 'localhost'], 2, /--picker must be HOST:PORT/],
    [['conformance', '--picker', '127.0.0.1:1', '--timeout', 'soon'], 2, /--timeout must be a whole number/],
  ]);
});

test('extlb picker --config reports every mistake at file:line:col and exits 1', async () => {
  writeFileSync(join(dir, 'bad-profile.yaml'), 'profile: load-aware\nscorers:\n  - type: queue\n    weight: heavy\nshedding: {mode: drop}\n');
  const run = await cli('picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80', '--config', 'bad-profile.yaml');
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    [
      'bad-profile.yaml:4:13: scorers[0].weight: expected a number in 0..1000, got "heavy"',
      'bad-profile.yaml:5:18: shedding.mode: expected one of none, reject, queue, got "drop"',
      '',
    ].join('\n'),
  );
});

test('extlb picker --profile load-aware scrapes each endpoint (--metrics-path), answers in score order and passes conformance', async () => {
  const servers = await Promise.all([0, 1, 2].map(async () => new MetricsServer().start()));
  try {
    servers[0]?.vllm({ waiting: 4 });
    servers[1]?.vllm({ waiting: 0 });
    servers[2]?.vllm({ waiting: 2 });
    const endpoints = servers.map((s) => s.address);
    writeFileSync(join(dir, 'profile.yaml'), 'profile: load-aware\nmetrics: {intervalMs: 50}\n');
    const picker = await startPicker('--endpoints', endpoints.join(','), '--config', join(dir, 'profile.yaml'), '--metrics-path', '/m', '--max-endpoints', '3');
    assert.equal(picker.listening.strategy, 'load-aware');
    assert.deepEqual(picker.listening.scrape, {
      port: "each endpoint's own",
      path: '/m',
      names: {
        waiting: 'vllm:num_requests_waiting',
        running: 'vllm:num_requests_running',
        kvCache: 'vllm:kv_cache_usage_perc',
        lora: 'vllm:lora_requests_info',
      },
    });
    for (let i = 0; i < 2000 && servers.some((s) => s.scrapes < 2); i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      servers.map((s) => s.paths[0]),
      ['/m', '/m', '/m'],
    );
    const answer = endpointOf(await ask(extProcClient(picker.address), headers()));
    assert.equal(answer.metadata, [endpoints[1], endpoints[2], endpoints[0]].join(','));
    const run = await cli('conformance', '--picker', picker.address, '--timeout', '2000');
    assert.equal(run.code, 0, run.stdout);
    assert.equal(await stop(picker.child), 0);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});

test('extlb simulate prints one line per attempt with the reason', async () => {
  const run = await cli(
    'simulate',
    '--hosts',
    '10.0.0.1:80,10.0.0.2:80,[2001:db8::1]:80',
    '--metadata',
    '10.0.0.2:80,10.0.0.9:80,[2001:db8:0::1]:80',
    '--header',
    '10.0.0.1:80',
    '--sources',
    'metadata,header',
    '--fallback',
    'RoundRobin',
    '--attempts',
    '4',
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    run.stdout,
    [
      'attempt 1: 10.0.0.2:80  override entry 0 from metadata',
      '  skipped entry 1 "10.0.0.9:80": not in the cluster\'s host set; skipped',
      '  skipped entry 2 "[2001:db8:0::1]:80": spelt differently from the host [2001:db8::1]:80; Envoy compares exact strings, so it is skipped',
      'attempt 2: 10.0.0.1:80  override entry 3 from header',
      'attempt 3: 10.0.0.1:80  fallback RoundRobin: override list exhausted by earlier attempts',
      'attempt 4: 10.0.0.2:80  fallback RoundRobin: override list exhausted by earlier attempts',
      '',
    ].join('\n'),
  );
  const headerFirst = await cli(
    'simulate',
    '--hosts',
    '10.0.0.1:80,10.0.0.2:80',
    '--metadata',
    '10.0.0.2:80',
    '--header',
    '10.0.0.1:80',
    '--sources',
    'header',
  );
  assert.equal(headerFirst.stdout, 'attempt 1: 10.0.0.1:80  override entry 0 from header\n');
  const empty = await cli('simulate', '--hosts', '');
  assert.equal(empty.stdout, 'attempt 1: no host (503)  fallback RoundRobin found no host (the cluster is empty): no override source present\n');
});

test('extlb simulate refuses bad input', async () => {
  await expectRefusals([
    [['simulate'], 2, /--hosts IP:PORT,\.\.\. is required/],
    [['simulate', '--hosts', '10.0.0.1:80', '--sources', 'cookie'], 2, /--sources takes metadata and\/or header, not "cookie"/],
    [['simulate', '--hosts', '10.0.0.1:80', '--sources', 'header,header'], 2, /names a source twice/],
    [['simulate', '--hosts', '10.0.0.1:80', '--fallback', 'Maglev'], 2, /--fallback must be RoundRobin, LeastRequest or Random/],
    [['simulate', '--hosts', '10.0.0.1:80', '--attempts', '0'], 2, /--attempts must be a whole number in 1\.\.1000/],
    [['simulate', '--hosts', '10.0.0.1:80,bad'], 1, /hosts\[1\]: missing ":port"/],
  ]);
});
