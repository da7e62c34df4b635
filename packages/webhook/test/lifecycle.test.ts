import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWebhookServer, type WebhookServer } from '../src/server.js';
import type { AdmissionReview } from '../src/types.js';
import { admissionReview, backendPool, call, capturingLogger, makeCert, metricValue, tempDir } from './helpers.js';

/** Polls `check` every 50 ms until it returns true, for at most `tries` rounds. */
async function eventually(check: () => Promise<boolean>, tries = 200): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

describe('certificate reload', { timeout: 30_000 }, () => {
  const tmp = tempDir();
  let server: WebhookServer | undefined;
  after(async () => {
    await server?.close({ graceMs: 1000 });
    tmp.remove();
  });

  it('serves a rotated certificate on new connections without a restart', async () => {
    const first = makeCert(tmp.dir, 'first');
    server = createWebhookServer({ certFile: first.certFile, keyFile: first.keyFile, host: '127.0.0.1', port: 0, certPollIntervalMs: 100 });
    const { port } = await server.listen();
    const nextDir = join(tmp.dir, 'next');
    mkdirSync(nextDir);
    const second = makeCert(nextDir, 'second');
    const cas = [first.cert, second.cert];
    assert.equal((await call(port, cas, '/healthz')).peerCN, 'first');

    // A key that does not match the certificate is refused and the old pair stays in use.
    writeFileSync(first.keyFile, readFileSync(second.keyFile));
    assert.equal(server.reloadCertificate(), false);
    assert.equal((await call(port, cas, '/healthz')).peerCN, 'first');
    assert.ok((await metricValue(server.registry, 'extlb_webhook_certificate_reloads_total', { result: 'failure' })) >= 1);

    // Rotate as kubelet does: new files renamed into place.
    copyFileSync(second.certFile, `${first.certFile}.new`);
    renameSync(`${first.certFile}.new`, first.certFile);
    copyFileSync(second.keyFile, `${first.keyFile}.new`);
    renameSync(`${first.keyFile}.new`, first.keyFile);
    const rotated = await eventually(async () => (await call(port, cas, '/healthz')).peerCN === 'second');
    assert.ok(rotated, 'a new connection sees the new certificate');
    assert.ok((await metricValue(server.registry, 'extlb_webhook_certificate_reloads_total', { result: 'success' })) >= 1);
  });

  it('follows a Secret volume update, which swaps a symlinked folder', async () => {
    // The layout kubelet writes: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/.
    const mount = join(tmp.dir, 'secret');
    mkdirSync(mount);
    const version = (folder: string, commonName: string) => {
      mkdirSync(join(mount, folder));
      return makeCert(join(mount, folder), commonName);
    };
    const v1 = version('..v1', 'volume-one');
    const v2 = version('..v2', 'volume-two');
    symlinkSync('..v1', join(mount, '..data'));
    symlinkSync('..data/tls.crt', join(mount, 'tls.crt'));
    symlinkSync('..data/tls.key', join(mount, 'tls.key'));
    const volumeServer = createWebhookServer({
      certFile: join(mount, 'tls.crt'),
      keyFile: join(mount, 'tls.key'),
      host: '127.0.0.1',
      port: 0,
      certPollIntervalMs: 100,
    });
    try {
      const { port } = await volumeServer.listen();
      const cas = [v1.cert, v2.cert];
      assert.equal((await call(port, cas, '/healthz')).peerCN, 'volume-one');
      symlinkSync('..v2', join(mount, '..data_tmp'));
      renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
      assert.ok(await eventually(async () => (await call(port, cas, '/healthz')).peerCN === 'volume-two'));
    } finally {
      await volumeServer.close({ graceMs: 100 });
    }
  });

  it('refuses to start without a usable key pair', () => {
    const c = makeCert(tmp.dir, 'x', 'other');
    assert.throws(() => createWebhookServer({ certFile: c.certFile, keyFile: join(tmp.dir, 'missing.key') }), /ENOENT/);
  });
});

describe('graceful close', { timeout: 30_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('stops accepting, finishes the request in flight, then closes', async () => {
    const certs = makeCert(tmp.dir, 'drain');
    const server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
    const { port } = await server.listen();
    const body = JSON.stringify(admissionReview(backendPool()));
    const half = Math.floor(body.length / 2);

    // Headers and half the body now; the rest after close() has begun.
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.cert });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write(
      `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
    );
    let reply = '';
    socket.on('data', (d: Buffer) => (reply += d.toString()));
    const socketClosed = new Promise((resolve) => socket.on('close', resolve));
    await eventually(async () => (await metricValue(server.registry, 'extlb_webhook_requests_in_flight')) === 1);

    let closed = false;
    const closing = server.close({ graceMs: 5000 }).then(() => (closed = true));
    assert.equal(server.ready, false);
    await assert.rejects(call(port, certs.cert, '/healthz'), /ECONNREFUSED/);
    assert.equal(closed, false, 'close waits for the request in flight');

    socket.write(body.slice(half));
    await closing;
    await socketClosed;
    assert.match(reply, /^HTTP\/1\.1 200 /);
    assert.match(reply, /\r\nConnection: close\r\n/i);
    assert.match(reply, /"allowed":true/);
  });

  it('keeps serving for the delay, reporting not ready, before it stops accepting', async () => {
    const certs = makeCert(tmp.dir, 'delay', 'delay');
    const server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
    const { port } = await server.listen();
    const closing = server.close({ delayMs: 1500 });
    const ready = await call(port, certs.cert, '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.headers.connection, 'close');
    assert.equal((await call(port, certs.cert, '/healthz')).status, 200);
    await closing;
    await assert.rejects(call(port, certs.cert, '/healthz'), /ECONNREFUSED/);
  });

  it('closes a stalled request once the grace period ends', async () => {
    const certs = makeCert(tmp.dir, 'stall', 'stall');
    const server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
    const { port } = await server.listen();
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.cert });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write('POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{');
    socket.on('error', () => {});
    const socketClosed = new Promise((resolve) => socket.on('close', resolve));
    await eventually(async () => (await metricValue(server.registry, 'extlb_webhook_requests_in_flight')) === 1);
    await server.close({ graceMs: 100 });
    await socketClosed;
  });
});

describe('a failing review', { timeout: 30_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('is denied with code 500, logged, and the server carries on', async () => {
    const certs = makeCert(tmp.dir, 'boom');
    const { logger, lines: logs } = capturingLogger();
    const server = createWebhookServer({
      certFile: certs.certFile,
      keyFile: certs.keyFile,
      host: '127.0.0.1',
      port: 0,
      logger,
      review: () => {
        throw new Error('boom');
      },
    });
    const { port } = await server.listen();
    try {
      const req = admissionReview(backendPool());
      const reply = await call(port, certs.cert, '/validate', { body: JSON.stringify(req) });
      assert.equal(reply.status, 200);
      const out = JSON.parse(reply.body) as AdmissionReview;
      assert.equal(out.response?.uid, req.request?.uid);
      assert.equal(out.response?.allowed, false);
      assert.equal(out.response?.status?.code, 500);
      assert.match(String(out.response?.status?.message), /boom/);
      assert.ok(logs.some((l) => l.level === 'error' && /boom/.test(String(l.error))));
      assert.equal(await metricValue(server.registry, 'extlb_webhook_requests_total', { endpoint: 'validate', kind: 'unknown', verdict: 'error' }), 1);
      assert.equal((await call(port, certs.cert, '/healthz')).status, 200);
    } finally {
      await server.close({ graceMs: 100 });
    }
  });
});
