// The conformance kit against the reference picker and against deliberately broken pickers. Each
// broken picker is a real gRPC server whose one fault is injected at its stream (what it reads or
// what it writes); the kit must fail exactly the rules that fault breaks and pass the rest.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { parse } from 'yaml';
import { runConformance, type ConformanceReport } from '../src/conformance/kit.js';
import { formatReportText, formatReportYaml } from '../src/conformance/report.js';
import { RULES, type RuleId } from '../src/conformance/rules.js';
import { createProcessHandler, startPicker, type HandlerOptions, type RunningPicker } from '../src/server.js';
import { EndpointPicker, restrictToSubset } from '../src/picker.js';
import { staticEndpoints } from '../src/endpoints.js';
import { healthHandlers, pickerHealth } from '../src/health.js';
import { loadProtos } from '../src/protos.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';

const ENDPOINTS = '10.0.0.1:8000,10.0.0.2:8000,[2001:db8::3]:8000';
const servers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function reference(options: Partial<Parameters<typeof startPicker>[0]> = {}): Promise<RunningPicker> {
  const p = await startPicker({ source: staticEndpoints(ENDPOINTS), maxEndpoints: 2, ...options });
  servers.push(p);
  return p;
}

interface Fault {
  /** Rewrites each message the picker sends. */
  rewrite?: (r: ProcessingResponse) => ProcessingResponse;
  /** Rewrites each message the picker receives; returning an Error ends the stream with it. */
  receive?: (r: ProcessingRequest) => ProcessingRequest | Error;
  health?: boolean;
  silent?: boolean;
  handler?: HandlerOptions;
}

async function broken(fault: Fault): Promise<string> {
  const protos = loadProtos();
  const source = staticEndpoints(ENDPOINTS);
  const picker = new EndpointPicker({ source, maxEndpoints: 2 });
  const inner = createProcessHandler(picker, fault.handler);
  const server = new grpc.Server();
  server.addService(protos.extProc, {
    Process: (call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>) => {
      if (fault.silent) {
        call.on('data', () => undefined);
        call.on('end', () => call.end());
        return;
      }
      const rewrite = fault.rewrite;
      if (rewrite) {
        const write = call.write.bind(call) as (m: ProcessingResponse) => boolean;
        call.write = ((m: ProcessingResponse) => write(rewrite(structuredClone(m)))) as typeof call.write;
      }
      const receive = fault.receive;
      if (receive) {
        const on = call.on.bind(call) as (event: string, fn: (...a: unknown[]) => void) => typeof call;
        call.on = ((event: string, fn: (...a: unknown[]) => void) =>
          on(
            event,
            event !== 'data'
              ? fn
              : (m: unknown) => {
                  const changed = receive(m as ProcessingRequest);
                  if (changed instanceof Error) call.emit('error', { code: grpc.status.INTERNAL, details: changed.message });
                  else fn(changed);
                },
          )) as typeof call.on;
      }
      inner(call);
    },
  });
  if (fault.health !== false)
    server.addService(
      protos.health,
      healthHandlers(
        pickerHealth(
          () => true,
          () => () => true,
        ),
      ).handlers,
    );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  });
  return `127.0.0.1:${port}`;
}

/** Applies `change` to the endpoint value in both the header and the metadata of a headers answer. */
function mapValue(r: ProcessingResponse, change: (value: string, where: 'header' | 'metadata') => string): ProcessingResponse {
  for (const h of r.request_headers?.response?.header_mutation?.set_headers ?? []) {
    if (h.header.key === 'x-gateway-destination-endpoint') h.header.raw_value = Buffer.from(change(Buffer.from(h.header.raw_value ?? []).toString(), 'header'));
  }
  const v = r.dynamic_metadata?.fields?.['envoy.lb']?.structValue?.fields?.['x-gateway-destination-endpoint'];
  if (v?.stringValue !== undefined) v.stringValue = change(v.stringValue, 'metadata');
  return r;
}

function statuses(report: ConformanceReport): Record<string, string> {
  return Object.fromEntries(report.results.map((r) => [r.id, r.status]));
}

/** Every rule passes except `failing` (and `skipped`, when given). */
function expectOnly(report: ConformanceReport, failing: RuleId[], skipped: RuleId[] = []): void {
  const want = Object.fromEntries(RULES.map((r) => [r.id, failing.includes(r.id) ? 'fail' : skipped.includes(r.id) ? 'skip' : 'pass']));
  assert.deepEqual(statuses(report), want, formatReportText(report));
  for (const r of report.results) assert.ok(r.detail.length > 0, `${r.id} explains itself`);
}

const run = (target: string, extra: { timeoutMs?: number } = {}) => runConformance({ target, timeoutMs: 1000, ...extra });

describe('the reference picker', () => {
  test('passes every rule, in headers+metadata mode', async () => {
    const p = await reference();
    const report = await run(p.address);
    expectOnly(report, []);
    assert.deepEqual(report.summary, { passed: RULES.length, failed: 0, skipped: 0 });
  });

  test('passes in metadata-only mode, skipping only the header/metadata comparison', async () => {
    const p = await reference({ answerWith: 'metadata', strategy: 'least-request', maxEndpoints: 3 });
    expectOnly(await run(p.address), [], ['endpoint.agree']);
  });

  test('with no endpoints it still answers 503 correctly; the endpoint rules are skipped with the reason', async () => {
    const p = await reference({ source: staticEndpoints([]) });
    const report = await run(p.address);
    expectOnly(
      report,
      [],
      [
        'endpoint.present',
        'endpoint.format',
        'endpoint.agree',
        'endpoint.ordered-list',
        'endpoint.client-header-ignored',
        'subset.respected',
        'served.accepted',
        'streaming.full-duplex',
      ],
    );
    assert.match(report.results.find((r) => r.id === 'endpoint.present')?.detail ?? '', /ImmediateResponse 503/);
  });

  test('with --endpoints given, the kit offers subsets of those instead of learning them', async () => {
    const p = await reference();
    const report = await runConformance({ target: p.address, timeoutMs: 1000, endpoints: ['10.0.0.2:8000', '[2001:DB8::3]:8000'] });
    expectOnly(report, []);
    assert.equal(report.results.find((r) => r.id === 'subset.respected')?.detail, '3 subsets offered, every answer stayed inside them');
  });

  test('reports as text and as YAML', async () => {
    const p = await reference();
    const report = await run(p.address, {});
    const text = formatReportText(report);
    assert.match(text, /^PASS {2}subset\.empty-503 +answers ImmediateResponse 503 to an empty subset$/m);
    assert.match(text, /12 passed, 0 failed, 0 skipped/);
    const yaml = parse(formatReportYaml(report)) as { kind: string; summary: object; rules: Array<{ id: string; status: string; requirement: string }> };
    assert.equal(yaml.kind, 'PickerConformanceReport');
    assert.deepEqual(yaml.summary, { passed: 12, failed: 0, skipped: 0 });
    assert.deepEqual(
      yaml.rules.map((r) => r.id),
      RULES.map((r) => r.id),
    );
    assert.ok(yaml.rules.every((r) => r.status === 'pass' && r.requirement.length > 0));
  });
});

describe('broken pickers fail exactly the rules they break', () => {
  test('wrong format: a missing port and a non-canonical IPv6 spelling', async () => {
    const target = await broken({ rewrite: (r) => mapValue(r, (v) => v.replace('10.0.0.2:8000', '10.0.0.2').replace('[2001:db8::3]', '[2001:DB8:0::3]')) });
    const report = await run(target);
    expectOnly(report, ['endpoint.format']);
    const detail = report.results.find((r) => r.id === 'endpoint.format')?.detail ?? '';
    assert.match(detail, /"10\.0\.0\.2": missing ":port"/);
    assert.match(detail, /write \[2001:db8::3\]:8000/);
  });

  test('header and metadata disagree', async () => {
    const target = await broken({ rewrite: (r) => mapValue(r, (v, where) => (where === 'header' ? v.split(',').reverse().join(',') : v)) });
    expectOnly(await run(target), ['endpoint.agree']);
  });

  test('repeated entries in the list', async () => {
    const target = await broken({ rewrite: (r) => mapValue(r, (v) => `${v.split(',')[0]},${v}`) });
    const report = await run(target);
    expectOnly(report, ['endpoint.ordered-list']);
    assert.match(report.results.find((r) => r.id === 'endpoint.ordered-list')?.detail ?? '', /duplicate of entry 0/);
  });

  test('subset ignored', async () => {
    const target = await broken({ receive: (m) => ({ ...m, metadata_context: {} }) });
    expectOnly(await run(target), ['subset.respected', 'subset.empty-503', 'subset.ineligible-503']);
  });

  test('no 503: an empty or ineligible subset is answered from the whole pool', async () => {
    const all = staticEndpoints(ENDPOINTS).endpoints();
    const target = await broken({
      receive: (m) => {
        const subset = m.metadata_context?.filter_metadata?.['envoy.lb.subset_hint']?.fields?.['x-gateway-destination-endpoint-subset'];
        const entries = (subset?.listValue?.values ?? []).map((v) => v.stringValue ?? '');
        return subset && restrictToSubset(all, entries).length === 0 ? { ...m, metadata_context: {} } : m;
      },
    });
    expectOnly(await run(target), ['subset.empty-503', 'subset.ineligible-503']);
  });

  test('no health service', async () => {
    const target = await broken({ health: false });
    const report = await run(target);
    expectOnly(report, ['health.services']);
    assert.match(report.results.find((r) => r.id === 'health.services')?.detail ?? '', /liveness: UNIMPLEMENTED/);
  });

  test('header appended instead of overwritten, so a client value would win', async () => {
    const target = await broken({
      rewrite: (r) => {
        for (const h of r.request_headers?.response?.header_mutation?.set_headers ?? []) h.append_action = 0;
        return r;
      },
    });
    expectOnly(await run(target), ['endpoint.client-header-ignored']);
  });

  test('not full-duplex: body chunks answered with plain body responses', async () => {
    const target = await broken({ handler: { bodyMode: 'buffered' } });
    const report = await run(target);
    expectOnly(report, ['streaming.full-duplex']);
    assert.match(report.results.find((r) => r.id === 'streaming.full-duplex')?.detail ?? '', /without streamed_response/);
  });

  test('served endpoint rejected on the response path', async () => {
    const target = await broken({
      receive: (m) => (m.metadata_context?.filter_metadata?.['envoy.lb'] ? new Error('unexpected metadata') : m),
    });
    expectOnly(await run(target), ['served.accepted']);
  });

  test('a picker that never answers fails the transport rule and skips the rest, quickly', async () => {
    const target = await broken({ silent: true });
    const started = Date.now();
    const report = await run(target, { timeoutMs: 200 });
    const skipped = RULES.map((r) => r.id).filter((id) => id !== 'ext-proc.answers' && id !== 'health.services');
    expectOnly(report, ['ext-proc.answers'], skipped);
    assert.ok(Date.now() - started < 5000);
  });

  test('nothing listening: every rule fails or skips with the connection error, no crash', async () => {
    const p = await reference();
    const target = p.address;
    await p.close();
    const report = await run(target, { timeoutMs: 300 });
    assert.equal(statuses(report)['ext-proc.answers'], 'fail');
    assert.equal(statuses(report)['health.services'], 'fail');
    assert.match(report.results[0]?.detail ?? '', /UNAVAILABLE/);
  });
});
