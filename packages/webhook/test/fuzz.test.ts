// Property-based, over real HTTPS: AdmissionReviews with arbitrary JSON at any field, and bodies
// with bytes flipped, cut or inserted. The webhook answers each with a status it means (200 with
// the request's uid, or 400/413/415), never a 500 and never a crash, and with an answer in
// proportion to what was sent. Bounded in runs and in time.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createWebhookServer, type WebhookServer } from '../src/server.js';
import type { AdmissionReview } from '../src/types.js';
import { admissionReview, backendPool, makeCert, tempDir } from './helpers.js';

/** Every field path of an object as a list of keys and indexes, containers included. */
function pathsOf(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...at, k], ...pathsOf(v, [...at, k])]);
}

function withValue(review: AdmissionReview, path: (string | number)[], value: unknown): AdmissionReview {
  const copy = structuredClone(review) as unknown as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path[path.length - 1]!] = value;
  return copy as unknown as AdmissionReview;
}

const pool = backendPool({ loadBalancer: { type: 'External', external: { refs: [{ name: 'epp', port: { number: 9002 } }] } } });
const seeds = [
  admissionReview(pool),
  admissionReview(pool, { operation: 'UPDATE', oldObject: backendPool() }),
  admissionReview({
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'LoadBalancerPolicy',
    metadata: { name: 'p' },
    spec: { targetRefs: [], loadBalancer: { type: 'RoundRobin' } },
  }),
];

const mutatedReview = fc
  .constantFrom(...seeds)
  .chain((seed) => fc.tuple(fc.constant(seed), fc.constantFrom(...pathsOf(seed)), fc.jsonValue({ maxDepth: 4 })))
  .map(([seed, path, value]) => JSON.stringify(withValue(seed, path, value)));

const mutatedBytes = fc
  .tuple(
    fc.constantFrom(...seeds.map((s) => JSON.stringify(s))),
    fc.array(fc.tuple(fc.nat(), fc.nat(255), fc.constantFrom('flip', 'cut', 'insert')), { minLength: 1, maxLength: 8 }),
  )
  .map(([text, edits]) => {
    let bytes = Buffer.from(text);
    for (const [at, byte, edit] of edits) {
      const i = at % Math.max(bytes.length, 1);
      if (edit === 'flip') bytes[i] = byte;
      else if (edit === 'cut') bytes = Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + 1 + (byte % 16))]);
      else bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i)]);
    }
    return bytes;
  });

describe('the webhook under arbitrary reviews and bodies (property-based, over HTTPS)', { timeout: 120_000 }, () => {
  const tmp = tempDir();
  let server: WebhookServer;
  let port: number;
  let ca: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });

  before(async () => {
    const certs = makeCert(tmp.dir, 'fuzz');
    ca = certs.cert;
    server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
    port = (await server.listen()).port;
  });
  after(async () => {
    agent.destroy();
    await server.close({ graceMs: 1000 });
    tmp.remove();
  });

  const post = (path: string, body: string | Buffer) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', ca, agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('answers every one with a meaningful status, the request uid and a proportionate body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutatedReview, mutatedBytes), fc.constantFrom('/validate', '/mutate'), async (body, path) => {
        const reply = await post(path, body);
        assert.ok([200, 400].includes(reply.status), `${reply.status}: ${reply.body.slice(0, 500)}`);
        assert.ok(reply.body.length <= 2 * body.length + 128 * 1024, `${reply.body.length} bytes out for ${body.length} in`);
        if (reply.status === 200) {
          const sent = JSON.parse(body.toString()) as AdmissionReview;
          const answer = JSON.parse(reply.body) as AdmissionReview;
          assert.equal(answer.response?.uid, sent.request?.uid);
          assert.equal(typeof answer.response?.allowed, 'boolean');
        }
      }),
      { numRuns: 300, interruptAfterTimeLimit: 60_000 },
    );
    const health = await new Promise<number>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path: '/healthz', ca, agent }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end(),
    );
    assert.equal(health, 200);
  });
});
