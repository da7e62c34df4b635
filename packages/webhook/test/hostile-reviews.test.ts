// Reviews built to hurt: many errors, many warnings, objects whose kind validate() cannot read.
// The answer and the log line stay small whatever the input, and the metrics name what happened.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@extlb/telemetry';
import { reviewAdmission } from '../src/admission.js';
import { boundWarnings, clip } from '../src/bounds.js';
import { createWebhookServer, type WebhookServer } from '../src/server.js';
import type { AdmissionReview } from '../src/types.js';
import { admissionReview, backendPool, call, makeCert, postJson, tempDir, type CertFiles } from './helpers.js';

/** metadata.labels with `n` keys the API server refuses ("bad key 0", ...): one error each. */
function badLabels(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`bad key ${i}`, 'v']));
}

const withLabels = (n: number) => ({ ...backendPool(), metadata: { name: 'pool', namespace: 'default', labels: badLabels(n) } });

describe('the answer to a review with thousands of errors', () => {
  const { review } = reviewAdmission(admissionReview(withLabels(20_000)));
  const status = review.response?.status;

  it('stays small', () => {
    const size = Buffer.byteLength(JSON.stringify(review));
    assert.ok(size < 128 * 1024, `${size} bytes`);
  });

  it('lists the first errors and counts the rest', () => {
    const causes = status?.details?.causes ?? [];
    assert.ok(causes.length > 1 && causes.length < 200, `${causes.length} causes`);
    assert.match(String(status?.message), /^BackendPool\.extlb\.dev "pool" is invalid: \[metadata\.labels: Invalid value: "bad key 0": /);
    assert.match(String(status?.message), /\b\d{5} more\b/);
    assert.match(String(causes.at(-1)?.message), /\b\d{5} more\b/);
  });
});

describe('a megabyte value quoted in an error', () => {
  it('is cut, with a count of what was left out, in the message, the cause and its field', () => {
    const key = `bad key ${'x'.repeat(1024 * 1024)}`;
    const { review } = reviewAdmission(admissionReview({ ...backendPool(), metadata: { name: 'pool', namespace: 'default', labels: { [key]: 'v' } } }));
    const status = review.response?.status;
    assert.ok(JSON.stringify(review).length < 16 * 1024);
    assert.match(String(status?.message), /\.\.\. \(\d{7} more characters\)/);
    for (const cause of status?.details?.causes ?? []) {
      assert.ok(String(cause.message).length < 1100 && String(cause.field).length < 300, JSON.stringify(cause).slice(0, 200));
    }
  });

  it('never splits a character in two', () => {
    assert.equal(clip('ab\u{1F600}cd', 3), 'ab... (4 more characters)');
    assert.equal(clip('short', 5), 'short');
  });
});

describe('the warnings of a review', () => {
  it('are bounded as the API server bounds warning headers', () => {
    // Every unknown field draws a warning; the object is still allowed.
    const unknown = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`field${i}`, i]));
    const { review } = reviewAdmission(admissionReview(backendPool(unknown)));
    assert.equal(review.response?.allowed, true);
    const warnings = review.response?.warnings ?? [];
    const runes = warnings.reduce((n, w) => n + [...w].length, 0);
    assert.ok(warnings.length > 1 && runes <= 4096 + 256, `${warnings.length} warnings, ${runes} characters`);
  });
});

describe('boundWarnings', () => {
  it('passes up to 4096 characters through, deduplicated', () => {
    const w = ['a'.repeat(4000), 'b'.repeat(96), 'b'.repeat(96)];
    assert.deepEqual(boundWarnings(w), w.slice(0, 2));
  });

  it('past 4096 characters cuts each to 256, keeps what fits and counts the rest', () => {
    const out = boundWarnings(Array.from({ length: 40 }, (_, i) => `${i} ${'w'.repeat(300)}`));
    assert.equal(out.at(-1), '25 more warnings were not shown');
    assert.equal(out.length, 16);
    assert.ok(out.slice(0, -1).every((w) => w.length === 256));
  });
});

describe('over HTTPS', { timeout: 60_000 }, () => {
  const tmp = tempDir();
  let certs: CertFiles;
  let server: WebhookServer;
  let port: number;
  const out = new PassThrough();
  let logged = '';
  out.on('data', (d: Buffer) => (logged += d.toString()));

  before(async () => {
    certs = makeCert(tmp.dir, 'hostile');
    server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0, logger: createLogger({ destination: out }) });
    port = (await server.listen()).port;
  });
  after(async () => {
    await server.close({ graceMs: 1000 });
    tmp.remove();
  });

  const metric = async (line: RegExp) => Number(line.exec((await call(port, certs.cert, '/metrics')).body)?.[1] ?? 0);

  it('logs one bounded line for a review with thousands of errors', async () => {
    const reply = await postJson(port, certs.cert, '/validate', admissionReview(withLabels(20_000)));
    assert.equal(reply.status, 200);
    const line = logged.split('\n').find((l) => l.includes('"verdict":"denied"'));
    assert.ok(line, 'a request line was logged');
    assert.ok(line.length < 8 * 1024, `${line.length} characters`);
    assert.match(line, /"errorCount":20000\b/);
  });

  it('counts a denied review under the kind it names, even when its object cannot be read', async () => {
    const denied = (kind: string) => metric(new RegExp(`^extlb_webhook_requests_total\\{endpoint="validate",kind="${kind}",verdict="denied"\\} (\\d+)$`, 'm'));
    const before = await denied('BackendPool');
    const req = admissionReview(backendPool()) as AdmissionReview;
    req.request!.object = 'not an object';
    const out = (JSON.parse((await postJson(port, certs.cert, '/validate', req)).body) as AdmissionReview).response;
    assert.equal(out?.allowed, false);
    assert.equal(await denied('BackendPool'), before + 1);
    assert.equal(await denied('other'), 0);
  });
});

describe('boundWarnings of warnings known to be distinct', () => {
  it('answers as it does when it has to find the repeats itself', () => {
    const few = ['a', 'b'];
    const many = Array.from({ length: 5000 }, (_, i) => `unknown field "spec.field${i}"`);
    const long = Array.from({ length: 40 }, (_, i) => `${i} ${'w'.repeat(300)}`);
    for (const warnings of [few, many, long]) assert.deepEqual(boundWarnings(warnings, { distinct: true }), boundWarnings(warnings));
  });
});
