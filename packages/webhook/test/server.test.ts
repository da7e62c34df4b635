import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { validate } from '@extlb/validate';
import { applyPatch } from '../src/json-patch.js';
import { createWebhookServer, type WebhookServer } from '../src/server.js';
import type { AdmissionReview } from '../src/types.js';
import { admissionReview, backendPool, call, capturingLogger, decodePatch, makeCert, postJson, tempDir, type CertFiles } from './helpers.js';

const MAX_BODY = 3 * 1024 * 1024;

describe('webhook server over HTTPS', { timeout: 60_000 }, () => {
  const tmp = tempDir();
  let certs: CertFiles;
  let server: WebhookServer;
  let port: number;
  const { logger, lines: logs } = capturingLogger();

  before(async () => {
    certs = makeCert(tmp.dir, 'webhook-test');
    server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0, logger });
    port = (await server.listen()).port;
  });

  after(async () => {
    await server.close({ graceMs: 1000 });
    tmp.remove();
  });

  const review = async (path: string, value: unknown): Promise<AdmissionReview> => {
    const reply = await postJson(port, certs.cert, path, value);
    assert.equal(reply.status, 200, reply.body);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    return JSON.parse(reply.body) as AdmissionReview;
  };

  describe('POST /validate', () => {
    it('allows a valid object and answers with the same uid', async () => {
      const req = admissionReview(backendPool());
      // The API server appends its timeout as a query parameter.
      const out = await review('/validate?timeout=5s', req);
      assert.equal(out.apiVersion, 'admission.k8s.io/v1');
      assert.equal(out.kind, 'AdmissionReview');
      assert.equal(out.response?.uid, req.request?.uid);
      assert.equal(out.response?.allowed, true);
      assert.equal(out.response?.patch, undefined);
    });

    it('denies an invalid object with 422 Invalid and the API server message', async () => {
      const req = admissionReview(backendPool({ targetPorts: [{ number: 80 }, { number: 80 }] }, 'dup'));
      const out = await review('/validate', req);
      assert.equal(out.response?.uid, req.request?.uid);
      assert.equal(out.response?.allowed, false);
      assert.deepEqual(out.response?.status, {
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message: 'BackendPool.extlb.dev "dup" is invalid: spec.targetPorts: Invalid value: "array": port number must be unique',
        details: {
          name: 'dup',
          group: 'extlb.dev',
          kind: 'BackendPool',
          causes: [{ type: 'FieldValueInvalid', message: 'Invalid value: "array": port number must be unique', field: 'spec.targetPorts' }],
        },
      });
    });

    it('lists several errors in brackets, as the API server aggregates them', async () => {
      const ports = Array.from({ length: 9 }, (_, i) => ({ number: 8000 + i }));
      const object = backendPool({ targetPorts: ports }, 'too-many');
      const out = await review('/validate', admissionReview(object));
      const { errors } = validate(object, { operation: 'CREATE' });
      assert.ok(errors.length > 1);
      assert.equal(errors[0]?.message, 'spec.targetPorts: Too many: 9: must have at most 8 items');
      assert.equal(out.response?.status?.message, `BackendPool.extlb.dev "too-many" is invalid: [${errors.map((e) => e.message).join(', ')}]`);
      assert.equal(out.response?.status?.details?.causes?.[0]?.type, 'FieldValueTooMany');
    });

    it('validates the new object on UPDATE', async () => {
      const old = backendPool({}, 'upd');
      const out = await review('/validate', admissionReview(backendPool({ appProtocol: 'grpc' }, 'upd'), { operation: 'UPDATE', oldObject: old }));
      assert.equal(out.response?.allowed, false);
      assert.match(String(out.response?.status?.message), /spec\.appProtocol: Unsupported value: "grpc"/);
    });

    it('returns unknown fields as warnings and still allows the object', async () => {
      const out = await review('/validate', admissionReview(backendPool({ bogus: 1 })));
      assert.equal(out.response?.allowed, true);
      assert.deepEqual(out.response?.warnings, ['unknown field "spec.bogus"']);
    });

    it('passes semantic warnings through with the verdict', async () => {
      const external = { type: 'External', external: { refs: [{ name: 'epp', port: { number: 9002 } }], failureMode: 'FailOpen' } };
      const out = await review('/validate', admissionReview(backendPool({ loadBalancer: external })));
      assert.equal(out.response?.allowed, true);
      assert.equal(out.response?.warnings?.length, 1);
      assert.match(String(out.response?.warnings?.[0]), /^spec\.loadBalancer\.external\.failureMode: FailOpen .*Envoy 1\.35\.1/);
    });

    it('allows DELETE, CONNECT and kinds it does not validate', async () => {
      for (const req of [
        admissionReview(null, { operation: 'DELETE', oldObject: backendPool({ targetPorts: [] }) }),
        admissionReview(backendPool({ targetPorts: [] }), { operation: 'CONNECT' }),
        admissionReview({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: {} }),
        admissionReview({ apiVersion: 'extlb.dev/v1beta9', kind: 'BackendPool', metadata: { name: 'x' }, spec: 42 }),
      ]) {
        const out = await review('/validate', req);
        assert.equal(out.response?.allowed, true, JSON.stringify(req.request));
        assert.equal(out.response?.uid, req.request?.uid);
      }
    });
  });

  describe('POST /mutate', () => {
    it('returns the defaults as a base64 JSONPatch that yields the defaulted object', async () => {
      const object = backendPool({ loadBalancer: { type: 'External', external: { refs: [{ name: 'epp', port: { number: 9002 } }] } } });
      const out = await review('/mutate', admissionReview(object));
      assert.equal(out.response?.allowed, true);
      assert.equal(out.response?.patchType, 'JSONPatch');
      assert.equal(out.response?.warnings, undefined, 'warnings come from /validate only');
      const ops = decodePatch(out.response?.patch);
      assert.ok(
        ops.every((op) => op.op === 'add'),
        'defaulting only adds',
      );
      assert.ok(ops.some((op) => op.path === '/spec/loadBalancer/external/refs/0/kind'));
      const patched = applyPatch(object, ops);
      assert.deepEqual(patched, validate(object, { operation: 'CREATE' }).object);
      // The defaulted object needs no further patch.
      const again = await review('/mutate', admissionReview(patched));
      assert.equal(again.response?.patch, undefined);
    });

    it('does not remove unknown fields (the API server prunes and warns) nor patch invalid objects', async () => {
      const withUnknown = backendPool({ bogus: true });
      const ops = decodePatch((await review('/mutate', admissionReview(withUnknown))).response?.patch);
      assert.deepEqual(ops, [{ op: 'add', path: '/spec/appProtocol', value: 'http' }]);
      const invalid = await review('/mutate', admissionReview(backendPool({ targetPorts: [] })));
      assert.deepEqual(invalid.response, { uid: invalid.response?.uid, allowed: true });
    });

    it('leaves objects it does not validate unpatched', async () => {
      const out = await review('/mutate', admissionReview({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }));
      assert.deepEqual(out.response, { uid: out.response?.uid, allowed: true });
    });
  });

  describe('bad input', () => {
    it('answers malformed JSON with 400 and the parse error', async () => {
      const reply = await call(port, certs.cert, '/validate', { body: '{"apiVersion": ', headers: { 'Content-Type': 'application/json' } });
      assert.equal(reply.status, 400);
      assert.match(reply.body, /^request body is not valid JSON: /);
    });

    it('answers bodies that are not an AdmissionReview v1 with 400', async () => {
      const cases: [unknown, RegExp][] = [
        [[], /must be an AdmissionReview object, not an array/],
        [null, /not null/],
        [{ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: {} }, /expected apiVersion admission.k8s.io\/v1/],
        [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, /^AdmissionReview\.request is missing$/m],
        [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: 'x' }, /request must be an object, not a string/],
        [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }, /uid must be a non-empty string/],
        [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'PATCH' } }, /operation must be one of/],
      ];
      for (const [body, message] of cases) {
        const reply = await postJson(port, certs.cert, '/validate', body);
        assert.equal(reply.status, 400, JSON.stringify(body));
        assert.match(reply.body, message);
      }
    });

    it('refuses deep nesting with 400 instead of recursing', async () => {
      const depth = 200_000;
      const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      const reply = await call(port, certs.cert, '/validate', { body });
      assert.equal(reply.status, 400);
      assert.match(reply.body, /nests deeper than 100 levels/);
    });

    it('keeps "__proto__" and "constructor" members as data: nothing is polluted', async () => {
      const object = JSON.parse(
        '{"apiVersion":"extlb.dev/v1alpha1","kind":"BackendPool","metadata":{"name":"p","__proto__":{"polluted":"yes"}},' +
          '"spec":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"selector":{"matchLabels":{"__proto__":"x"}},"targetPorts":[{"number":80}]}}',
      );
      for (const path of ['/validate', '/mutate']) {
        const out = await review(path, admissionReview(object));
        assert.equal(typeof out.response?.allowed, 'boolean');
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    });

    it('refuses a declared Content-Length over 3 MiB with 413 before reading it', async () => {
      const body = Buffer.alloc(MAX_BODY + 1, 0x20);
      const reply = await call(port, certs.cert, '/validate', { body, headers: { 'Content-Length': String(body.length) } });
      assert.equal(reply.status, 413);
      assert.match(reply.body, /exceeds the 3145728-byte limit/);
    });

    it('cuts off a chunked body as soon as it passes 3 MiB with 413', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.cert }, () => {
          socket.write('POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n');
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          let sent = 0;
          // Keeps sending well past the limit; the server must answer without waiting for the end.
          const pump = () => {
            while (sent < 16 * MAX_BODY && !socket.destroyed) {
              sent += chunk.length;
              if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`)) {
                socket.once('drain', pump);
                return;
              }
            }
          };
          pump();
        });
        let head = '';
        socket.on('data', (d: Buffer) => {
          head += d.toString();
          const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
          if (m) {
            socket.destroy();
            resolve(Number(m[1]));
          }
        });
        socket.on('error', reject);
      });
      assert.equal(status, 413);
    });

    it('answers a wrong method with 405 and Allow, an unknown path with 404, a wrong media type with 415', async () => {
      const get = await call(port, certs.cert, '/validate');
      assert.equal(get.status, 405);
      assert.equal(get.headers.allow, 'POST');
      const put = await call(port, certs.cert, '/mutate', { method: 'PUT', body: '{}' });
      assert.equal(put.status, 405);
      const post = await call(port, certs.cert, '/healthz', { body: '' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
      const missing = await call(port, certs.cert, '/nope');
      assert.equal(missing.status, 404);
      assert.match(missing.body, /no such path: \/nope/);
      const yaml = await call(port, certs.cert, '/validate', { body: 'a: 1', headers: { 'Content-Type': 'application/yaml' } });
      assert.equal(yaml.status, 415);
    });

    // A second server with short timeouts, so that the one above never times out a large body
    // on a busy machine.
    let strict: WebhookServer;
    before(async () => {
      strict = createWebhookServer({
        certFile: certs.certFile,
        keyFile: certs.keyFile,
        host: '127.0.0.1',
        port: 0,
        headersTimeoutMs: 300,
        requestTimeoutMs: 600,
        timeoutCheckIntervalMs: 50,
        handshakeTimeoutMs: 300,
      });
      await strict.listen();
    });
    after(() => strict.close({ graceMs: 100 }));

    const slowClient = (send: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: strict.address()!.port, ca: certs.cert }, () => socket.write(send));
        let got = '';
        socket.on('data', (d: Buffer) => (got += d.toString()));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });

    it('times out a client that never finishes its headers', async () => {
      const got = await slowClient('POST /validate HTTP/1.1\r\nHost: x\r\n');
      assert.match(got, /^HTTP\/1\.1 408/);
    });

    it('times out a client that never finishes its body', async () => {
      const got = await slowClient('POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"api');
      assert.match(got, /^HTTP\/1\.1 408/);
    });

    it('drops a connection that never starts its TLS handshake', async () => {
      const closed = await new Promise<boolean>((resolve, reject) => {
        const socket = netConnect({ host: '127.0.0.1', port: strict.address()!.port });
        socket.on('close', () => resolve(true));
        socket.on('error', reject);
      });
      assert.ok(closed);
    });

    it('answers oversized headers with 431', async () => {
      const got = await slowClient(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(got, /^HTTP\/1\.1 431/);
    });

    it('answers malformed HTTP with 400 and keeps serving', async () => {
      const got = await slowClient('NOT HTTP AT ALL\r\n\r\n');
      assert.match(got, /^HTTP\/1\.1 400/);
      assert.equal((await call(port, certs.cert, '/healthz')).status, 200);
    });

    it('counts the answers Node writes itself (408, 431, 400) with the others', async () => {
      const text = (await call(strict.address()!.port, certs.cert, '/metrics')).body;
      for (const code of ['408', '431', '400']) assert.match(text, new RegExp(`^extlb_webhook_http_responses_total\\{code="${code}"\\} [1-9]\\d*$`, 'm'), code);
    });

    it('refuses TLS 1.1', async () => {
      await assert.rejects(
        () =>
          new Promise((resolve, reject) => {
            const s = tlsConnect({ host: '127.0.0.1', port, ca: certs.cert, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }, () => resolve(s));
            s.on('error', reject);
          }),
      );
    });
  });

  describe('probes, metrics and logs', () => {
    it('serves /healthz and /readyz', async () => {
      assert.equal((await call(port, certs.cert, '/healthz')).body, 'ok\n');
      assert.equal((await call(port, certs.cert, '/readyz')).status, 200);
      assert.equal((await call(port, certs.cert, '/readyz', { method: 'HEAD' })).status, 200);
      assert.equal(server.ready, true);
    });

    it('counts reviews by endpoint, kind and verdict in the Prometheus text format', async () => {
      await review('/validate', admissionReview(backendPool()));
      await review('/validate', admissionReview(backendPool({ targetPorts: Array.from({ length: 9 }, (_, i) => ({ number: i + 1 })) })));
      const reply = await call(port, certs.cert, '/metrics');
      assert.equal(reply.status, 200);
      assert.match(String(reply.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const text = reply.body;
      assert.match(text, /^# TYPE extlb_webhook_requests_total counter$/m);
      assert.match(text, /^# TYPE extlb_webhook_request_duration_seconds histogram$/m);
      const count = (labels: string) => Number(new RegExp(`^extlb_webhook_requests_total\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      assert.ok(count('endpoint="validate",kind="BackendPool",verdict="allowed"') >= 1);
      assert.ok(count('endpoint="validate",kind="BackendPool",verdict="denied"') >= 1);
      assert.ok(count('endpoint="validate",kind="unknown",verdict="bad_request"') >= 1);
      assert.match(text, /^extlb_webhook_request_duration_seconds_bucket\{le="\+Inf",endpoint="validate",kind="BackendPool",verdict="allowed"\} \d+$/m);
      // Node's own, from prom-client's default metrics.
      assert.match(text, /^process_start_time_seconds \d+$/m);
      assert.match(text, /^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
      assert.match(text, /^extlb_webhook_http_responses_total\{code="413"\} \d+$/m);
      // Every sample line is `name{labels} value` or `name value`.
      for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
        assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eInfa]+$/, line);
      }
    });

    it('logs one structured line per review', () => {
      const reviews = logs.filter((l) => l.msg === 'request' && l.path === '/validate' && l.status === 200);
      assert.ok(reviews.length > 0);
      for (const l of reviews) {
        assert.equal(typeof l.uid, 'string');
        assert.equal(typeof l.durationMs, 'number');
        assert.ok(['allowed', 'denied'].includes(String(l.verdict)));
      }
      assert.ok(logs.some((l) => l.verdict === 'denied' && /is invalid/.test(String(l.message))));
    });
  });
});
