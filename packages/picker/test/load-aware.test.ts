// The load-aware profile end to end: real model-server metrics over HTTP, real ext_proc over gRPC.
// The answer is the score order; the decision waits for the prompt in the body and answers the
// held messages in order; every eligible endpoint saturated means 429 or a bounded wait; endpoints
// without fresh metrics are last and counted; the conformance kit passes in every profile.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { runConformance } from '../src/conformance/kit.js';
import { responseHeaders } from '../src/conformance/answers.js';
import { PROFILES, type ProfileName } from '../src/picker.js';
import { staticEndpoints } from '../src/pool-members.js';
import type { ProcessingRequest } from '../src/messages.js';
import { DEFAULT_LOAD_AWARE, rendezvousWeight, type LoadAwareConfig } from '../src/scoring.js';
import { startPicker, type RunningPicker } from '../src/server.js';
import { PromptReader } from '../src/prompt.js';
import { closeClients, endpointOf, exchange, extProcClient, headers } from './helpers.js';
import { MetricsServer, eventually } from './metrics-server.js';

const pickers: RunningPicker[] = [];
const servers: MetricsServer[] = [];
after(async () => {
  closeClients();
  await Promise.all(pickers.map((p) => p.close()));
  await Promise.all(servers.map((s) => s.close()));
});

/** Model servers whose own address serves /metrics, as `--profile load-aware` expects by default. */
async function modelServers(n: number): Promise<MetricsServer[]> {
  const list = await Promise.all(Array.from({ length: n }, async () => (await new MetricsServer().start()).vllm({})));
  servers.push(...list);
  return list;
}

async function loadAware(endpoints: MetricsServer[], config: Partial<LoadAwareConfig> = {}, maxEndpoints = 3): Promise<RunningPicker> {
  const p = await startPicker({
    pool: staticEndpoints(endpoints.map((s) => s.address)),
    strategy: 'load-aware',
    maxEndpoints,
    loadAware: { ...DEFAULT_LOAD_AWARE, ...config },
    scrape: { intervalMs: 20, staleAfterMs: 2000, timeoutMs: 500 },
  });
  pickers.push(p);
  return p;
}

/** Waits until the picker has scraped every endpoint since `since` scrapes were counted at each. */
async function scraped(p: RunningPicker, endpoints: MetricsServer[]): Promise<void> {
  const marks = endpoints.map((s) => s.scrapes);
  await eventually(
    () => (endpoints.every((s, i) => s.scrapes >= (marks[i] as number) + 2) && p.signals?.states().fresh === endpoints.length ? true : undefined),
    'fresh scrapes',
  );
}

const names = (value: string | undefined): string[] => (value ?? '').split(',').filter((x) => x !== '');

test('the answer is the score order: least loaded first, the fullest last', async () => {
  const s = await modelServers(3);
  s[0]?.vllm({ waiting: 5, kv: 0.5 });
  s[1]?.vllm({ waiting: 0, kv: 0.1 });
  s[2]?.vllm({ waiting: 2, kv: 0.3 });
  const p = await loadAware(s, {
    scorers: [
      { type: 'queue', weight: 2, max: 8 },
      { type: 'kv-cache', weight: 2 },
    ],
    shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'none' },
  });
  await scraped(p, s);
  const { answers, session } = await exchange(extProcClient(p.address), [headers()], 1);
  session.cancel();
  assert.deepEqual(
    names(endpointOf(answers[0] ?? {}).metadata),
    [s[1], s[2], s[0]].map((x) => x?.address),
  );
});

/** A completions body whose prompt is `words` shared words, then its own. */
function body(shared: string, own: string): Buffer {
  const prompt = `${Array.from({ length: 300 }, (_, i) => `${shared}${i}`).join(' ')} ${own}`;
  return Buffer.from(JSON.stringify({ model: 'm', prompt, max_tokens: 8 }));
}

test('the decision waits for the prompt: nothing is answered until enough body arrives, then headers first and the body in order', async () => {
  const s = await modelServers(4);
  const p = await loadAware(s);
  await scraped(p, s);
  const b = body('system', 'question');
  const chunks = [b.subarray(0, 100), b.subarray(100, 3000), b.subarray(3000)];
  const client = extProcClient(p.address);
  // Headers and the first small chunk only: the picker has not read its 8 blocks of 256 bytes yet.
  const early = await exchange(client, [headers({}, false), { request_body: { body: chunks[0], end_of_stream: false } }], 1, 300);
  assert.deepEqual([early.answers.length, early.last.kind], [0, 'timeout']);
  early.session.send({ request_body: { body: chunks[1], end_of_stream: false } });
  early.session.send({ request_body: { body: chunks[2], end_of_stream: true } });
  const got = [];
  for (let i = 0; i < 4; i++) got.push(await early.session.next());
  early.session.cancel();
  const kinds = got.map((r) => (r.kind === 'message' ? r.message.response : r.kind));
  assert.deepEqual(kinds, ['request_headers', 'request_body', 'request_body', 'request_body']);
  const echoed = got
    .slice(1)
    .map((r) => (r.kind === 'message' ? Buffer.from(r.message.request_body?.response?.body_mutation?.streamed_response?.body ?? []) : Buffer.alloc(0)));
  assert.ok(Buffer.concat(echoed).equals(b), 'the body passes through whole and in order');
  // The primary is the prefix's rendezvous home (every endpoint idle, so the prefix decides).
  const reader = new PromptReader({ blockBytes: 256, blocks: 8, model: true, maxBytes: 16 * 1024 });
  reader.push(b);
  const key = reader.result().blocks.at(-1) as number;
  const home = s.map((x) => x.address).sort((x, y) => rendezvousWeight(key, y) - rendezvousWeight(key, x))[0];
  const first = got[0]?.kind === 'message' ? endpointOf(got[0].message).metadata : undefined;
  assert.equal(names(first)[0], home);
});

test('active-active over gRPC: two replicas that share nothing send each prefix to the same endpoint', async () => {
  const s = await modelServers(4);
  const a = await loadAware(s);
  const b = await loadAware(s);
  await scraped(a, s);
  await scraped(b, s);
  const primaries = async (p: RunningPicker, group: string): Promise<string> => {
    const { answers, session } = await exchange(
      extProcClient(p.address),
      [headers({}, false), { request_body: { body: body(group, `q-${Math.random()}`), end_of_stream: true } }],
      1,
    );
    session.cancel();
    return names(endpointOf(answers[0] ?? {}).metadata)[0] ?? '';
  };
  const homes = new Set<string>();
  for (const group of ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta']) {
    const x = await primaries(a, group);
    const y = await primaries(b, group);
    assert.equal(x, y, group);
    homes.add(x);
  }
  assert.ok(homes.size > 1, 'different prefixes spread over the endpoints');
});

test('shedding: 429 when every eligible endpoint is saturated (reject), never an answer naming one', async () => {
  const s = await modelServers(2);
  for (const x of s) x.vllm({ waiting: 20 });
  const p = await loadAware(s, { shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'reject', queue: 8 } });
  await scraped(p, s);
  const { answers } = await exchange(extProcClient(p.address), [headers()], 1);
  assert.equal(answers[0]?.immediate_response?.status?.code, 429);
  assert.match(answers[0]?.immediate_response?.details ?? '', /every eligible endpoint is saturated/);
  // One endpoint with room: it alone is named (the saturated one is never a fallback either).
  s[1]?.vllm({ waiting: 1 });
  await scraped(p, s);
  const again = await exchange(extProcClient(p.address), [headers()], 1);
  assert.deepEqual(names(endpointOf(again.answers[0] ?? {}).metadata), [s[1]?.address]);
  assert.equal(p.picker.stats().picks.shedding, 1);
});

test('shedding by queueing: a request waits for an endpoint with room, then 429 when the wait runs out', async () => {
  const s = await modelServers(2);
  for (const x of s) x.vllm({ kv: 0.99 });
  const p = await loadAware(s, { shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'queue', kvCache: 0.95, maxWaitMs: 60_000 } });
  await scraped(p, s);
  const client = extProcClient(p.address);
  const waiting = await exchange(client, [headers()], 1, 300);
  assert.deepEqual([waiting.answers.length, p.picker.stats().waiting], [0, 1], 'held, not answered');
  s[0]?.vllm({ kv: 0.2 });
  const r = await waiting.session.next();
  waiting.session.cancel();
  assert.equal(r.kind, 'message');
  assert.deepEqual(names(r.kind === 'message' ? endpointOf(r.message).metadata : undefined), [s[0]?.address]);
  assert.equal(p.picker.stats().queued, 1);
  // With a short wait and no room, the wait ends in 429.
  const q = await loadAware(s, { shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'queue', kvCache: 0.1, maxWaitMs: 50 } });
  await scraped(q, s);
  const late = await exchange(extProcClient(q.address), [headers()], 1);
  assert.equal(late.answers[0]?.immediate_response?.status?.code, 429);
  assert.match(late.answers[0]?.immediate_response?.details ?? '', /waited 50 ms/);
});

test('endpoints whose metrics cannot be read rank last, and the picker counts them by state in /metrics', async () => {
  const s = await modelServers(3);
  (s[0] as MetricsServer).status = 500;
  (s[1] as MetricsServer).page = '<html>upstream connect error</html>\n';
  (s[2] as MetricsServer).vllm({ waiting: 6, kv: 0.8 });
  const p = await loadAware(s, { shedding: { ...DEFAULT_LOAD_AWARE.shedding, mode: 'none' } });
  await eventually(
    () => (p.signals?.states().fresh === 1 && p.signals.states().unreachable === 1 && p.signals.states().malformed === 1 ? true : undefined),
    'states',
  );
  const { answers } = await exchange(extProcClient(p.address), [headers()], 1);
  assert.equal(names(endpointOf(answers[0] ?? {}).metadata)[0], s[2]?.address, 'the busy endpoint whose load is known beats the two unknown ones');
  const text = await p.registry.metrics();
  assert.match(text, /extlb_picker_endpoint_signals\{state="unreachable"\} 1/);
  assert.match(text, /extlb_picker_endpoint_signals\{state="malformed"\} 1/);
  assert.match(text, /extlb_picker_endpoint_signals\{state="fresh"\} 1/);
});

test('the conformance kit passes against the picker in every profile', async () => {
  const s = await modelServers(3);
  for (const profile of PROFILES) {
    const p =
      profile === 'load-aware'
        ? await loadAware(s, {}, 2)
        : await startPicker({ pool: staticEndpoints(s.map((x) => x.address)), strategy: profile as ProfileName, maxEndpoints: 2, hashHeader: 'x-session-id' });
    if (profile !== 'load-aware') pickers.push(p);
    if (profile === 'load-aware') await scraped(p, s);
    const report = await runConformance({ target: p.address, endpoints: s.map((x) => x.address) });
    const failed = report.results.filter((r) => r.status !== 'pass');
    assert.deepEqual(failed, [], `${profile}: ${JSON.stringify(failed)}`);
  }
});

test('fuzz: every well-formed exchange is answered in full by the load-aware picker, whatever the body', async () => {
  const s = await modelServers(3);
  const p = await loadAware(s, { prefix: { blockBytes: 16, blocks: 2, maxBytes: 64 } });
  await scraped(p, s);
  const client = extProcClient(p.address);
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.constant(new Uint8Array(Buffer.from('{"model":"m","prompt":"abcdefghijklmnopqrstuvwxyz0123456789"}')))),
        { maxLength: 4 },
      ),
      fc.boolean(),
      async (chunks, respond) => {
        const sent: ProcessingRequest[] = [headers({}, chunks.length === 0)];
        for (const [i, c] of chunks.entries()) sent.push({ request_body: { body: c, end_of_stream: i === chunks.length - 1 } });
        if (respond) sent.push(responseHeaders({ served: s[0]?.address }));
        const { answers, last, session } = await exchange(client, sent, sent.length);
        session.finish();
        session.cancel();
        assert.equal(answers.length, sent.length, JSON.stringify(last));
        assert.deepEqual(
          answers.map((a) => a.response),
          sent.map((m) => Object.keys(m).find((k) => k !== 'metadata_context')),
        );
      },
    ),
    { numRuns: 40 },
  );
  assert.equal(p.picker.stats().invalidMessages, 0);
});
