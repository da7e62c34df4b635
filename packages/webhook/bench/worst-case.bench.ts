// The webhook's worst case: reviews just under the 3 MiB body limit, each built to be expensive in
// its own way (every list item invalid on UPDATE, so ratcheting compares everything; thousands of
// bad label keys; unknown fields by the hundred thousand; a megabyte string under a pattern; ...).
// Each is posted over HTTPS to a webhook in this process. Printed per shape: the time to answer
// (median of a few runs), the time reviewAdmission() alone takes, the longest the event loop was
// blocked meanwhile (what a /healthz probe or any other request would have waited), and the
// answer's size. Beside the worst case, issue 19's anchors from the same run: the same body posted
// to a bare HTTPS server that only reads and JSON.parses it, and JSON.parse of it alone.
// Run with `npm run bench -- --filter=@extlb/webhook` from the repository root.
import { Agent, createServer, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseAdmissionReview, reviewAdmission } from '../src/admission.js';
import { MAX_BODY_BYTES } from '../src/body.js';
import { createWebhookServer } from '../src/server.js';
import { admissionReview, backendPool, makeCert, tempDir } from '../test/helpers.js';

const RUNS = 3;
/** Room left under the limit for the review around the object. */
const BUDGET = MAX_BODY_BYTES - 8 * 1024;

/** Entries `make(0)`, `make(1)`, ... until their JSON fills `budget` characters. */
function fill<T>(make: (i: number) => T, budget = BUDGET, size = (v: T) => JSON.stringify(v).length + 1): T[] {
  const out: T[] = [];
  for (let used = 0, i = 0; used < budget; i++) {
    const v = make(i);
    used += size(v);
    out.push(v);
  }
  return out;
}

const entries = (make: (i: number) => [string, unknown]) => Object.fromEntries(fill(make, BUDGET, ([k, v]) => k.length + JSON.stringify(v).length + 4));
const badPorts = () => fill(() => ({ number: 'bad' }), BUDGET / 2);
const external = (name: string) => ({ type: 'External', external: { refs: [{ name, port: { number: 9002 } }] } });

const SHAPES: Record<string, () => unknown> = {
  'UPDATE, every port invalid, unchanged but the last': () => {
    const ports = badPorts();
    const old = [...ports.slice(0, -1), { number: 'other' }];
    return admissionReview(backendPool({ targetPorts: ports }), { operation: 'UPDATE', oldObject: backendPool({ targetPorts: old }) });
  },
  'CREATE, every port invalid': () => admissionReview(backendPool({ targetPorts: fill(() => ({ number: 'bad' })) })),
  'metadata.labels, every key invalid': () =>
    admissionReview({ ...backendPool(), metadata: { name: 'pool', namespace: 'default', labels: entries((i) => [`bad key ${i}`, 'v']) } }),
  'matchLabels, every key invalid': () => admissionReview(backendPool({ selector: { matchLabels: entries((i) => [`bad key ${i}`, 'v']) } })),
  'unknown fields (a warning each)': () => admissionReview(backendPool(entries((i) => [`field${i}`, i]))),
  'a 3 MiB string under a pattern': () => admissionReview(backendPool({ loadBalancer: external(`${'a-'.repeat(BUDGET / 2)}!`) })),
  'annotations, every key valid': () =>
    admissionReview({ ...backendPool(), metadata: { name: 'pool', namespace: 'default', annotations: entries((i) => [`example.com/key-${i}`, 'v']) } }),
  'managedFields, deep and wide': () => {
    const fieldsV1 = (depth: number): unknown => (depth === 0 ? {} : Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f:k${i}`, fieldsV1(depth - 1)])));
    const managedFields = fill((i) => ({ manager: `m${i}`, operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: fieldsV1(4) }));
    return admissionReview({ ...backendPool(), metadata: { name: 'pool', namespace: 'default', managedFields } });
  },
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const tmp = tempDir();
const certs = makeCert(tmp.dir, 'worst-case');
const server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
const { port } = await server.listen();
const agent = new Agent({ keepAlive: true, maxSockets: 8, ca: certs.cert });

// The same TLS and HTTP stack reading the body and JSON.parsing it, answering a fixed review.
const bare = createServer({ cert: certs.cert, key: readFileSync(certs.keyFile), minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true}}');
  });
});
const barePort = await new Promise<number>((resolve) => bare.listen(0, '127.0.0.1', () => resolve((bare.address() as { port: number }).port)));

function timed(path: string, body?: string, to = port): Promise<{ ms: number; bytes: number; status: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: to, path, method: body === undefined ? 'GET' : 'POST', agent, headers: { 'Content-Type': 'application/json' } },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ ms: performance.now() - start, bytes, status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

try {
  console.log(
    `node ${process.version}; every review under the ${MAX_BODY_BYTES}-byte limit, posted over loopback HTTPS to a webhook in this process; median of ${RUNS} runs`,
  );
  console.log(
    `${'shape'.padEnd(50)} ${'body'.padStart(9)} ${'answer'.padStart(9)} ${'review()'.padStart(10)} ${'HTTPS'.padStart(10)} ${'blocked'.padStart(10)}`,
  );
  let worst = { name: '', ms: 0, body: '' };
  for (const [name, make] of Object.entries(SHAPES)) {
    const body = JSON.stringify(make());
    if (body.length > MAX_BODY_BYTES) throw new Error(`${name}: ${body.length} bytes is over the limit`);
    const direct: number[] = [];
    const https: number[] = [];
    const blocked: number[] = [];
    let answer = 0;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      reviewAdmission(parseAdmissionReview(body));
      direct.push(performance.now() - t0);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const reply = await timed('/validate', body);
      loop.disable();
      if (reply.status !== 200) throw new Error(`${name}: answered ${reply.status}`);
      https.push(reply.ms);
      blocked.push(loop.max / 1e6);
      answer = reply.bytes;
    }
    const ms = median(https);
    if (ms > worst.ms) worst = { name, ms, body };
    const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
    const f = (x: number) => `${x.toFixed(0)} ms`;
    console.log(
      `${name.padEnd(50)} ${kib(body.length).padStart(9)} ${kib(answer).padStart(9)} ${f(median(direct)).padStart(10)} ${f(ms).padStart(10)} ${f(median(blocked)).padStart(10)}`,
    );
  }
  const bareMs: number[] = [];
  const parseMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bareMs.push((await timed('/', worst.body, barePort)).ms);
    const t0 = performance.now();
    JSON.parse(worst.body);
    parseMs.push(performance.now() - t0);
  }
  console.log(
    `webhook, worst review under 3 MiB: ${worst.ms.toFixed(0)} ms (${worst.name}); beside it: bare HTTPS reading and JSON.parsing the same body ${median(bareMs).toFixed(0)} ms, ` +
      `JSON.parse alone ${median(parseMs).toFixed(0)} ms; aim <= 100 ms: ${worst.ms <= 100 ? 'met' : 'NOT met'}`,
  );
  console.log(`machine: ${cpus().length} CPUs, 1-minute load average ${loadavg()[0]!.toFixed(2)} at the end (above ~1, other work shared the CPUs)`);
} finally {
  agent.destroy();
  bare.close();
  await server.close({ graceMs: 1000 });
  tmp.remove();
}
