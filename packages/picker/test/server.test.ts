import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { startPicker, splitHostPort, type RunningPicker } from '../src/server.js';
import { staticEndpoints } from '../src/pool-members.js';
import type { ProcessingRequest } from '../src/messages.js';
import { SERVING_STATUS } from '../src/health.js';
import { ManualPool, ask, check, closeClients, endpointOf, exchange, extProcClient, headers, healthClient } from './helpers.js';

const running: RunningPicker[] = [];
after(async () => {
  closeClients();
  await Promise.all(running.map((p) => p.close()));
});
async function start(options: Partial<Parameters<typeof startPicker>[0]> = {}): Promise<RunningPicker> {
  const p = await startPicker({ pool: staticEndpoints('10.0.0.1:8000,10.0.0.2:8000,[2001:db8::3]:8000'), ...options });
  running.push(p);
  return p;
}

test('answers the ordered list in the header and envoy.lb metadata, with the same value', async () => {
  const p = await start({ maxEndpoints: 2 });
  const client = extProcClient(p.address);
  const first = endpointOf(await ask(client, headers()));
  const second = endpointOf(await ask(client, headers()));
  assert.equal(first.header, '10.0.0.1:8000,10.0.0.2:8000');
  assert.equal(first.metadata, first.header);
  assert.equal(first.appendAction, 2, 'OVERWRITE_IF_EXISTS_OR_ADD');
  assert.equal(second.metadata, '10.0.0.2:8000,[2001:db8::3]:8000');
  const raw = await ask(client, headers());
  assert.equal(raw.request_headers?.response?.clear_route_cache, true);
});

test('a client-sent x-gateway-destination-endpoint is overwritten (header) or removed (metadata only)', async () => {
  const both = await start();
  const spoof = headers({ 'x-gateway-destination-endpoint': '10.0.0.2:8000' });
  const a = endpointOf(await ask(extProcClient(both.address), spoof));
  assert.equal(a.header, '10.0.0.1:8000', 'the picker decides, not the client');
  assert.equal(a.appendAction, 2);
  const metadataOnly = await start({ answerWith: 'metadata' });
  const b = endpointOf(await ask(extProcClient(metadataOnly.address), spoof));
  assert.equal(b.header, undefined);
  assert.equal(b.removed, true);
  assert.equal(b.metadata, '10.0.0.1:8000');
  const headerOnly = await start({ answerWith: 'header' });
  const c = endpointOf(await ask(extProcClient(headerOnly.address), spoof));
  assert.equal(c.metadata, undefined);
  assert.equal(c.header, '10.0.0.1:8000');
});

test('subset hint as a list or a comma-separated string; 503 ImmediateResponse when empty or ineligible', async () => {
  const p = await start({ maxEndpoints: 3 });
  const client = extProcClient(p.address);
  assert.equal(endpointOf(await ask(client, headers({}, true, ['[2001:db8::3]:8000']))).metadata, '[2001:db8::3]:8000');
  assert.equal(endpointOf(await ask(client, headers({}, true, '10.0.0.2:8000, 10.0.0.9:1'))).metadata, '10.0.0.2:8000');
  for (const subset of [[], ['192.0.2.1:1']]) {
    const r = await ask(client, headers({}, true, subset));
    assert.equal(r.immediate_response?.status?.code, 503, JSON.stringify(subset));
    assert.match(r.immediate_response?.details ?? '', /subset/);
  }
});

test('429 when shedding load, and the slot frees when the request ends', async () => {
  const p = await start({ maxInFlight: 1 });
  const client = extProcClient(p.address);
  const held = await exchange(client, [headers({}, false)], 1);
  assert.ok(endpointOf(held.answers[0] ?? {}).metadata);
  const shed = await ask(client, headers());
  assert.equal(shed.immediate_response?.status?.code, 429);
  held.session.finish();
  await held.session.next();
  held.session.cancel();
  for (let i = 0; i < 50 && p.picker.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(endpointOf(await ask(client, headers())).metadata);
});

test('full-duplex streaming: bodies come back as streamed responses, trailers answered; served endpoint recorded', async () => {
  const p = await start();
  const client = extProcClient(p.address);
  const { answers, session } = await exchange(
    client,
    [
      headers({}, false),
      { request_body: { body: Buffer.from('abc'), end_of_stream: false } },
      { request_body: { body: Buffer.from('def'), end_of_stream: false } },
      { request_trailers: { trailers: { headers: [] } } },
      {
        response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] }, end_of_stream: false },
        metadata_context: { filter_metadata: { 'envoy.lb': { fields: { 'x-gateway-destination-endpoint-served': { stringValue: '10.0.0.1:8000' } } } } },
      },
      { response_body: { body: Buffer.from('ok'), end_of_stream: true } },
    ],
    6,
  );
  assert.deepEqual(
    answers.map((a) => a.response),
    ['request_headers', 'request_body', 'request_body', 'request_trailers', 'response_headers', 'response_body'],
  );
  const bodies = answers
    .map((a) => a.request_body?.response?.body_mutation?.streamed_response ?? a.response_body?.response?.body_mutation?.streamed_response)
    .filter((b) => b !== undefined);
  assert.deepEqual(
    bodies.map((b) => [Buffer.from(b.body ?? []).toString(), b.end_of_stream ?? false]),
    [
      ['abc', false],
      ['def', false],
      ['ok', true],
    ],
  );
  session.finish();
  const end = await session.next();
  assert.deepEqual(end.kind === 'end' ? end.code : end.kind, grpc.status.OK);
  assert.deepEqual(p.picker.stats().served, { '10.0.0.1:8000': 1 });
  assert.equal(p.picker.stats().invalidMessages, 0);
});

test('buffered body mode answers body chunks with a plain CONTINUE', async () => {
  const p = await start({ bodyMode: 'buffered' });
  const { answers, session } = await exchange(
    extProcClient(p.address),
    [headers({}, false), { request_body: { body: Buffer.from('x'), end_of_stream: true } }],
    2,
  );
  session.cancel();
  assert.equal(answers[1]?.response, 'request_body');
  assert.equal(answers[1]?.request_body?.response?.body_mutation, undefined);
});

test('a message without any phase, or out of sequence, ends its stream with INVALID_ARGUMENT naming the problem', async () => {
  const p = await start();
  const client = extProcClient(p.address);
  const bodyChunk = { request_body: { body: Buffer.from('x'), end_of_stream: false } };
  const cases: Array<[ProcessingRequest[], number, string]> = [
    [[{}], 0, 'ProcessingRequest: carries none of the request/response phases'],
    [[headers({}, false), headers({}, false)], 1, 'request_headers: received twice on one stream'],
    [[bodyChunk], 0, 'request_body: the stream must begin with request_headers, on which the picker decides'],
    [[headers({}, false), { request_trailers: {} }, bodyChunk], 2, 'request_body: received after request_trailers'],
    [[headers({}, false), { response_body: {} }, { response_headers: {} }], 2, 'response_headers: received after response_body'],
  ];
  for (const [messages, answered, details] of cases) {
    const r = await exchange(client, messages, messages.length);
    assert.equal(r.answers.length, answered, details);
    assert.deepEqual(r.last.kind === 'end' ? [r.last.code, r.last.details] : r.last, [grpc.status.INVALID_ARGUMENT, details]);
  }
  assert.equal(p.picker.stats().invalidMessages, cases.length);
  assert.equal(p.picker.stats().inFlight, 0, 'the aborted picks were released');
});

test('a subset hint or served endpoint of the wrong shape is refused with the field path', async () => {
  const p = await start();
  const client = extProcClient(p.address);
  const subsetPath = 'metadata_context.filter_metadata["envoy.lb.subset_hint"]["x-gateway-destination-endpoint-subset"]';
  const cases: Array<[ProcessingRequest[], string]> = [
    [[headers({}, true, 7)], `${subsetPath}: expected a list of "ip:port" strings, got a number`],
    [[headers({}, true, ['10.0.0.1:8000', true])], `${subsetPath}[1]: expected an "ip:port" string, got a bool`],
    [
      [
        headers({}, false),
        {
          response_headers: {},
          metadata_context: { filter_metadata: { 'envoy.lb': { fields: { 'x-gateway-destination-endpoint-served': { listValue: {} } } } } },
        },
      ],
      'metadata_context.filter_metadata["envoy.lb"]["x-gateway-destination-endpoint-served"]: expected an "ip:port" string, got a list',
    ],
  ];
  for (const [messages, details] of cases) {
    const r = await exchange(client, messages, messages.length);
    assert.deepEqual(r.last.kind === 'end' ? [r.last.code, r.last.details] : r.last, [grpc.status.INVALID_ARGUMENT, details]);
  }
  assert.ok(endpointOf(await ask(client, headers())).metadata, 'still picking');
});

test('health: liveness always, readiness and ext_proc follow the pool members; Watch streams changes', async () => {
  const pool = new ManualPool();
  const p = await start({ pool });
  const health = healthClient(p.address);
  assert.deepEqual(await check(health, 'liveness'), { status: SERVING_STATUS.SERVING });
  assert.deepEqual(await check(health, 'readiness'), { status: SERVING_STATUS.NOT_SERVING });
  assert.deepEqual(await check(health, 'envoy.service.ext_proc.v3.ExternalProcessor'), { status: SERVING_STATUS.NOT_SERVING });
  assert.deepEqual(await check(health, 'nope'), { code: grpc.status.NOT_FOUND });
  const watch = (health as unknown as { Watch: (req: object) => grpc.ClientReadableStream<{ status: number }> }).Watch({ service: 'readiness' });
  const seen: number[] = [];
  const two = new Promise<void>((resolve) =>
    watch.on('data', (m: { status: number }) => {
      seen.push(Number(m.status));
      if (seen.length === 1) pool.load('10.0.0.5:80');
      if (seen.length === 2) resolve();
    }),
  );
  watch.on('error', () => undefined);
  await two;
  watch.cancel();
  assert.deepEqual(seen, [SERVING_STATUS.NOT_SERVING, SERVING_STATUS.SERVING]);
  assert.deepEqual(await check(health, 'readiness'), { status: SERVING_STATUS.SERVING });
  assert.equal(endpointOf(await ask(extProcClient(p.address), headers())).metadata, '10.0.0.5:80');
});

test('listen addresses: IPv6 loopback works, bad ones are refused', async () => {
  assert.deepEqual(splitHostPort('[::1]:9002'), { host: '::1', port: 9002 });
  assert.throws(() => splitHostPort('localhost'), /is not HOST:PORT/);
  assert.throws(() => splitHostPort('1.2.3.4:99999'), /is not HOST:PORT/);
  const v6 = await start({ listen: '[::1]:0' }).catch((e: Error) => e);
  if (v6 instanceof Error) return; // hosts without IPv6 loopback cannot run this half
  assert.match(v6.address, /^\[::1\]:\d+$/);
  assert.ok(endpointOf(await ask(extProcClient(v6.address), headers())).metadata);
});
