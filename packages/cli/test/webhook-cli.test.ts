// `extlb webhook` as operators run it: a child process that logs JSON, serves HTTPS and, on
// SIGTERM, stops accepting, finishes what is in flight and exits 0.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get as httpsGet } from 'node:https';
import { PassThrough } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { parseListen } from '../src/flags.js';
import { main } from '../src/main.js';

const bin = join(import.meta.dirname, '../src/bin.ts');

async function runInProcess(args: string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (d: Buffer) => (text += d.toString()));
  const code = await main(args, { stdin: new PassThrough(), stdout: new PassThrough(), stderr, cwd: process.cwd() });
  return { code, stderr: text };
}

interface Child {
  proc: ChildProcess;
  lines: Record<string, unknown>[];
  /** Resolves with the first log line that `match` accepts. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  /** The signal that ended the process, or null when it exited by itself. */
  signalled: Promise<NodeJS.Signals | null>;
}

function start(args: string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', bin, 'webhook', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buffer = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((x) => x.match(line))) w.resolve(line);
    }
  });
  proc.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const signalled = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  return {
    proc,
    lines,
    exited,
    signalled,
    waitFor(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        exited.then((code) => reject(new Error(`exited with ${code} before the expected log line; logs: ${JSON.stringify(lines)}`)));
      });
    },
  };
}

describe('extlb webhook', { timeout: 60_000 }, () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let ca: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'extlb-webhook-cli-'));
    certFile = join(dir, 'tls.crt');
    keyFile = join(dir, 'tls.key');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=cli-test',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(certFile, 'utf8');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('parses --listen forms', () => {
    assert.deepEqual(parseListen('127.0.0.1:8443'), { host: '127.0.0.1', port: 8443 });
    assert.deepEqual(parseListen(':9443'), { host: '0.0.0.0', port: 9443 });
    assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    for (const bad of ['8443', 'host:', 'host:70000', 'a:b:1']) assert.throws(() => parseListen(bad), /--listen must be HOST:PORT/);
  });

  it('exits 2 on usage errors', async () => {
    for (const [args, message] of [
      [['webhook'], /--cert and --key are required/],
      [['webhook', '--cert', 'a', '--key', 'b', '--listen', 'nope'], /--listen must be HOST:PORT/],
      [['webhook', '--cert', 'a', '--key', 'b', '--shutdown-timeout', '0'], /--shutdown-timeout must be a positive number of seconds/],
      [['webhook', '--cert', 'a', '--key', 'b', '--shutdown-delay=-1'], /--shutdown-delay must be a non-negative number of seconds/],
      [['webhook', '--cert', 'a', '--key', 'b', '--log-level', 'loud'], /--log-level must be/],
      [['webhook', '--cert'], /Option '--cert <value>' argument missing/],
      [['webhook', 'extra'], /Unexpected argument 'extra'/],
      [['webhook', '--port', '1'], /Unknown option '--port'/],
    ] as const) {
      const { code, stderr } = await runInProcess([...args]);
      assert.equal(code, 2, args.join(' '));
      assert.match(stderr, message);
    }
  });

  it('exits 1 with a JSON log line when the certificate cannot be read', async () => {
    const child = start(['--listen', '127.0.0.1:0', '--cert', join(dir, 'missing.crt'), '--key', keyFile]);
    assert.equal(await child.exited, 1);
    assert.ok(child.lines.some((l) => l.level === 'error' && /missing\.crt/.test(String(l.error))));
  });

  it('serves, then on SIGTERM stops accepting, finishes the request in flight and exits 0', async () => {
    const child = start(['--listen', '127.0.0.1:0', '--cert', certFile, '--key', keyFile]);
    try {
      const { port } = (await child.waitFor((l) => l.msg === 'listening')) as { port: number };
      const review = JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'cli-uid',
          operation: 'CREATE',
          kind: { group: '', version: 'v1', kind: 'ConfigMap' },
          object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
        },
      });
      const half = Math.floor(review.length / 2);
      const socket = tlsConnect({ host: '127.0.0.1', port, ca });
      await new Promise((resolve) => socket.once('secureConnect', resolve));
      let reply = '';
      socket.on('data', (d: Buffer) => (reply += d.toString()));
      const socketClosed = new Promise((resolve) => socket.on('close', resolve));
      socket.write(`POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${review.length}\r\n\r\n${review.slice(0, half)}`);

      child.proc.kill('SIGTERM');
      await child.waitFor((l) => l.msg === 'draining');
      // The listener is closed: a new connection is refused while the old request is still open.
      await assert.rejects(
        new Promise((resolve, reject) => {
          const s = tlsConnect({ host: '127.0.0.1', port, ca }, () => resolve(s));
          s.on('error', reject);
        }),
        /ECONNREFUSED/,
      );
      socket.write(review.slice(half));
      await socketClosed;
      assert.match(reply, /^HTTP\/1\.1 200 /);
      assert.match(reply, /"uid":"cli-uid","allowed":true/);
      assert.equal(await child.exited, 0);
      const request = child.lines.find((l) => l.msg === 'request' && l.path === '/validate');
      assert.equal(request?.uid, 'cli-uid');
      assert.equal(request?.status, 200);
      assert.ok(child.lines.every((l) => typeof l.time === 'string' && typeof l.level === 'string'));
    } finally {
      if (child.proc.exitCode === null) child.proc.kill('SIGKILL');
    }
  });

  it('ends at once on a second signal during a drain', async () => {
    const child = start(['--listen', '127.0.0.1:0', '--cert', certFile, '--key', keyFile, '--shutdown-timeout', '600']);
    try {
      const { port } = (await child.waitFor((l) => l.msg === 'listening')) as { port: number };
      const socket = tlsConnect({ host: '127.0.0.1', port, ca });
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('secureConnect', resolve));
      // A request that never completes keeps the drain waiting for the full shutdown timeout.
      socket.write('POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{');
      // Wait until the server is handling it: in flight are that request and the metrics one.
      const inFlight = () =>
        new Promise<string>((resolve, reject) =>
          httpsGet({ host: '127.0.0.1', port, path: '/metrics', ca, agent: false }, (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve(/^extlb_webhook_requests_in_flight (\d+)$/m.exec(text)?.[1] ?? ''));
          }).on('error', reject),
        );
      while ((await inFlight()) !== '2');
      child.proc.kill('SIGTERM');
      await child.waitFor((l) => l.msg === 'draining');
      child.proc.kill('SIGTERM');
      assert.equal(await child.signalled, 'SIGTERM');
      socket.destroy();
    } finally {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
    }
  });
});
