// `extlb picker`, `extlb conformance` and `extlb simulate`: the first as a real process (it runs
// until SIGTERM), the others through main() with in-memory streams.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'yaml';
import { main } from '../src/main.js';
import { endpointSlice, startFakeKubeApi } from '../../picker/test/fake-kube-api.js';
import { ask, closeClients, endpointOf, ending, exchange, extProcClient, headers } from '../../picker/test/helpers.js';

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

/** Starts `extlb picker` and resolves with its address once it says it is listening. */
function startPicker(...args: string[]): Promise<{ address: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [bin, 'picker', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  return new Promise((resolve, reject) => {
    // A guard against hanging, not a speed limit: a loaded machine may take long to load the Kubernetes client.
    const timer = setTimeout(() => reject(new Error(`picker did not start: ${text}`)), 120_000);
    const onData = (b: Buffer) => {
      text += b.toString();
      const m = /listening on (\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve({ address: m[1] as string, child, output: () => text });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`picker exited with ${code}: ${text}`));
    });
  });
}

/** Runs each case and checks its exit code and the message on stderr. */
async function expectRefusals(cases: Array<[string[], number, RegExp]>): Promise<void> {
  for (const [args, code, message] of cases) {
    const run = await cli(...args);
    assert.equal(run.code, code, args.join(' '));
    assert.match(run.stderr, message, args.join(' '));
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
  assert.match(picker.output(), /SIGTERM, shutting down/);
});

test('extlb picker survives a request header without a name: that stream ends with INVALID_ARGUMENT, the process keeps picking', async () => {
  const picker = await startPicker('--endpoints', '10.0.0.1:8000');
  const client = extProcClient(picker.address);
  const bad = await exchange(client, [{ request_headers: { headers: { headers: [{ raw_value: Buffer.from('x') }] } } }], 1);
  assert.deepEqual(ending(bad.last), ['INVALID_ARGUMENT', 'request_headers.headers.headers[0].key: the header has no name']);
  assert.equal(picker.child.exitCode, null, picker.output());
  assert.equal(endpointOf(await ask(client, headers())).metadata, '10.0.0.1:8000');
  assert.equal(await stop(picker.child), 0);
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
  assert.match(picker.output(), /\(1 endpoint\(s\), round-robin, up to 1 per answer\)/);
  const changed = new Promise<void>((resolve) => picker.child.stdout?.on('data', (b: Buffer) => /10\.0\.0\.2:8000/.test(b.toString()) && resolve()));
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
    assert.match(picker.output(), /\(2 endpoint\(s\)/);
    const run = await cli('conformance', '--picker', picker.address, '--timeout', '2000');
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /endpoints seen: 10\.2\.0\.1:8000, 10\.2\.0\.2:8000/);
    const changed = new Promise<void>((resolve) => picker.child.stdout?.on('data', (b: Buffer) => /10\.2\.0\.3:8000/.test(b.toString()) && resolve()));
    for (let i = 0; i < 200 && api.watchCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    api.send('ADDED', endpointSlice('llm-b', ['10.2.0.3'], '11'));
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
    [['picker', '--listen', '127.0.0.1:0', '--endpoints', '10.0.0.1:80,10.0.0.1'], 1, /entry 1 "10\.0\.0\.1": missing ":port"/],
    [['picker', '--listen', 'nowhere', '--endpoints', '10.0.0.1:80'], 1, /cannot listen on nowhere: "nowhere" is not HOST:PORT/],
    [['picker', '--listen', '127.0.0.1:0', '--endpoints-file', join(dir, 'missing.txt')], 1, /ENOENT/],
    [['conformance'], 2, /--picker HOST:PORT is required/],
    [['conformance', '--picker', 'localhost'], 2, /--picker must be HOST:PORT/],
    [['conformance', '--picker', '127.0.0.1:1', '--timeout', 'soon'], 2, /--timeout must be a whole number/],
  ]);
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
