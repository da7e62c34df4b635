// The webhook's worst case: reviews just under the 3 MiB body limit, each built to be expensive in
// its own way (every list item invalid on UPDATE, so ratcheting compares everything; thousands of
// bad label keys; unknown fields by the hundred thousand; a megabyte string under a pattern; ...).
// Each is posted over HTTPS to a webhook in this process. Printed per shape, the best of a few
// runs: the CPU time reviewAdmission() takes (parsing included) beside the CPU time JSON.parse of
// the same body takes, the wall time to answer over HTTPS, the longest the event loop was blocked
// meanwhile (what a /healthz probe or any other request would have waited), and the answer's size.
// Beside the worst case, issue 19's anchors from the same run: the same body posted to a bare HTTPS
// server that only reads and JSON.parses it, and JSON.parse of it alone. On a shared machine wall
// time mostly measures the others, so the aim is read against CPU time.
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

const best = (xs: number[]) => Math.min(...xs);

/** `fn`'s process CPU time and wall time, in milliseconds. */
function measured(fn: () => unknown): { cpu: number; wall: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wall = performance.now() - t0;
  const used = process.cpuUsage(cpu0);
  return { cpu: (used.user + used.system) / 1000, wall };
}

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
    `node ${process.version}; every review under the ${MAX_BODY_BYTES}-byte limit, posted over loopback HTTPS to a webhook in this process; best of ${RUNS} runs`,
  );
  console.log(
    `${'shape'.padEnd(50)} ${'body'.padStart(9)} ${'answer'.padStart(9)} ${'review CPU'.padStart(11)} ${'parse CPU'.padStart(10)} ${'review wall'.padStart(12)} ${'HTTPS'.padStart(8)} ${'blocked'.padStart(8)}`,
  );
  let worst = { name: '', cpu: 0, wall: 0, https: 0, body: '' };
  for (const [name, make] of Object.entries(SHAPES)) {
    const body = JSON.stringify(make());
    if (body.length > MAX_BODY_BYTES) throw new Error(`${name}: ${body.length} bytes is over the limit`);
    const cpu: number[] = [];
    const wall: number[] = [];
    const parse: number[] = [];
    const https: number[] = [];
    const blocked: number[] = [];
    let answer = 0;
    for (let i = 0; i < RUNS; i++) {
      parse.push(measured(() => JSON.parse(body)).cpu);
      const direct = measured(() => reviewAdmission(parseAdmissionReview(body)));
      cpu.push(direct.cpu);
      wall.push(direct.wall);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const reply = await timed('/validate', body);
      loop.disable();
      if (reply.status !== 200) throw new Error(`${name}: answered ${reply.status}`);
      https.push(reply.ms);
      blocked.push(loop.max / 1e6);
      answer = reply.bytes;
    }
    if (best(cpu) > worst.cpu) worst = { name, cpu: best(cpu), wall: best(wall), https: best(https), body };
    const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
    const f = (x: number) => `${x.toFixed(0)} ms`;
    console.log(
      `${name.padEnd(50)} ${kib(body.length).padStart(9)} ${kib(answer).padStart(9)} ${f(best(cpu)).padStart(11)} ${f(best(parse)).padStart(10)} ${f(best(wall)).padStart(12)} ${f(best(https)).padStart(8)} ${f(best(blocked)).padStart(8)}`,
    );
  }
  const bareMs: number[] = [];
  const parseCpu: number[] = [];
  const parseWall: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bareMs.push((await timed('/', worst.body, barePort)).ms);
    const parsed = measured(() => JSON.parse(worst.body));
    parseCpu.push(parsed.cpu);
    parseWall.push(parsed.wall);
  }
  console.log(
    `webhook, worst review under 3 MiB: ${worst.cpu.toFixed(0)} ms CPU, ${worst.wall.toFixed(0)} ms wall, ${worst.https.toFixed(0)} ms over HTTPS (${worst.name}); ` +
      `beside it: bare HTTPS reading and JSON.parsing the same body ${best(bareMs).toFixed(0)} ms, JSON.parse alone ${best(parseCpu).toFixed(0)} ms CPU ` +
      `(${best(parseWall).toFixed(0)} ms wall), the review ${(worst.cpu / best(parseCpu)).toFixed(1)}x of it; aim <= 100 ms: ${worst.cpu <= 100 ? 'met' : 'NOT met'}`,
  );
  console.log(`machine: ${cpus().length} CPUs, 1-minute load average ${loadavg()[0]!.toFixed(2)} at the end (above ~1, other work shared the CPUs)`);
} finally {
  agent.destroy();
  bare.close();
  await server.close({ graceMs: 1000 });
  tmp.remove();
}
