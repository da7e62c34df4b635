// The conformance kit against the reference picker and against deliberately broken pickers. Each
// broken picker is a real gRPC server whose one fault is injected at its stream (what it reads,
// what it writes, how it ends) or its health service; the kit must fail exactly the rules that
// fault breaks and pass the rest.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { parse } from 'yaml';
import { runConformance, type ConformanceReport } from '../src/conformance/kit.js';
import { formatReportText, formatReportYaml } from '../src/conformance/report.js';
import { RULES, type RuleId } from '../src/conformance/rules.js';
import { createProcessHandler, startPicker, type HandlerOptions, type RunningPicker } from '../src/server.js';
import { EndpointPicker, restrictToSubset } from '../src/picker.js';
import { staticEndpoints } from '../src/pool-members.js';
import { SERVING_STATUS, healthHandlers, pickerHealth, type HealthState } from '../src/health.js';
import { loadProtos } from '../src/protos.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';

const ENDPOINTS = '10.0.0.1:8000,10.0.0.2:8000,[2001:db8::3]:8000';
const servers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function reference(options: Partial<Parameters<typeof startPicker>[0]> = {}): Promise<RunningPicker> {
  const p = await startPicker({ pool: staticEndpoints(ENDPOINTS), maxEndpoints: 2, ...options });
  servers.push(p);
  return p;
}

/** One stream's fault: what the broken picker does to what it reads, writes, or at the end of the stream. */
interface StreamFault {
  /** Rewrites each message the picker receives; returning an Error ends the stream with it. */
  receive?: (r: ProcessingRequest) => ProcessingRequest | Error;
  /** Sends (or holds back, or changes) each message the picker writes. */
  write?: (r: ProcessingResponse, send: (r: ProcessingResponse) => void) => void;
  /** When the data plane closes the stream: an Error ends it with that instead of OK. */
  end?: () => Error | undefined;
}

interface Fault {
  /** A fresh fault for each stream, so it can keep per-request state. */
  stream?: () => StreamFault;
  /** The health service: false for none, or the state it reports. */
  health?: false | HealthState;
  silent?: boolean;
  handler?: HandlerOptions;
}

const rewriting = (change: (r: ProcessingResponse) => ProcessingResponse) => (): StreamFault => ({ write: (r, send) => send(change(structuredClone(r))) });
const receiving = (change: (r: ProcessingRequest) => ProcessingRequest | Error) => (): StreamFault => ({ receive: change });

async function broken(fault: Fault): Promise<string> {
  const protos = loadProtos();
  const picker = new EndpointPicker({ pool: staticEndpoints(ENDPOINTS), maxEndpoints: 2 });
  const inner = createProcessHandler(picker, fault.handler);
  const server = new grpc.Server();
  server.addService(protos.extProc, {
    Process: (call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>) => {
      if (fault.silent) {
        call.on('data', () => undefined);
        call.on('end', () => call.end());
        return;
      }
      const f = fault.stream?.() ?? {};
      if (f.write) {
        const send = call.write.bind(call) as (m: ProcessingResponse) => boolean;
        const write = f.write;
        call.write = ((m: ProcessingResponse) => {
          write(m, send);
          return true;
        }) as typeof call.write;
      }
      const on = call.on.bind(call) as (event: string, fn: (...a: unknown[]) => void) => typeof call;
      call.on = ((event: string, fn: (...a: unknown[]) => void) => {
        if (event === 'data' && f.receive) {
          const receive = f.receive;
          return on(event, (m: unknown) => {
            const changed = receive(m as ProcessingRequest);
            if (changed instanceof Error) call.emit('error', { code: grpc.status.INTERNAL, details: changed.message });
            else fn(changed);
          });
        }
        if (event === 'end' && f.end) {
          const end = f.end;
          return on(event, () => {
            const error = end();
            if (error) call.emit('error', { code: grpc.status.FAILED_PRECONDITION, details: error.message });
            else fn();
          });
        }
        return on(event, fn);
      }) as typeof call.on;
      inner(call);
    },
  });
  if (fault.health !== false) {
    const state =
      fault.health ??
      pickerHealth(
        () => true,
        () => () => true,
      );
    server.addService(protos.health, healthHandlers(state).handlers);
  }
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

/** The subset hint's entries, when the message carries one as a list. */
function subsetOf(m: ProcessingRequest): string[] | undefined {
  const subset = m.metadata_context?.filter_metadata?.['envoy.lb.subset_hint']?.fields?.['x-gateway-destination-endpoint-subset'];
  return subset ? (subset.listValue?.values ?? []).map((v) => v.stringValue ?? '') : undefined;
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
    const p = await reference({ pool: staticEndpoints([]) });
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
        'scope.pool-members',
        'scope.served-fallback',
        'scope.request-only',
        'served.accepted',
        'streaming.full-duplex',
        'streaming.response-chunks',
      ],
    );
    assert.match(report.results.find((r) => r.id === 'endpoint.present')?.detail ?? '', /ImmediateResponse 503/);
  });

  test('with --endpoints given, the kit offers subsets of those instead of learning them', async () => {
    const p = await reference();
    const report = await runConformance({ target: p.address, timeoutMs: 1000, endpoints: ['10.0.0.2:8000', '[2001:DB8::3]:8000'] });
    expectOnly(report, ['scope.pool-members']);
    assert.equal(report.results.find((r) => r.id === 'subset.respected')?.detail, '3 subsets offered, every answer stayed inside them');
    // The picker really has a third endpoint: against the pool as given, it names a stranger.
    assert.match(
      report.results.find((r) => r.id === 'scope.pool-members')?.detail ?? '',
      /10\.0\.0\.1:8000, not in the pool \[10\.0\.0\.2:8000, \[2001:db8::3\]:8000\]/,
    );
    const whole = await runConformance({ target: p.address, timeoutMs: 1000, endpoints: ENDPOINTS.split(',') });
    expectOnly(whole, []);
    assert.match(whole.results.find((r) => r.id === 'scope.pool-members')?.detail ?? '', /\(as given\)$/);
  });

  test('reports as text and as YAML', async () => {
    const p = await reference();
    const report = await run(p.address, {});
    const text = formatReportText(report);
    assert.match(text, /^PASS {2}subset\.empty-503 +answers ImmediateResponse 503 to an empty subset$/m);
    assert.match(text, /17 passed, 0 failed, 0 skipped/);
    const yaml = parse(formatReportYaml(report)) as { kind: string; summary: object; rules: Array<{ id: string; status: string; requirement: string }> };
    assert.equal(yaml.kind, 'PickerConformanceReport');
    assert.deepEqual(yaml.summary, { passed: 17, failed: 0, skipped: 0 });
    assert.deepEqual(
      yaml.rules.map((r) => r.id),
      RULES.map((r) => r.id),
    );
    assert.ok(yaml.rules.every((r) => r.status === 'pass' && r.requirement.length > 0));
  });
});

describe('broken pickers fail exactly the rules they break', () => {
  test('wrong format: a missing port and a non-canonical IPv6 spelling', async () => {
    const target = await broken({
      stream: rewriting((r) => mapValue(r, (v) => v.replace('10.0.0.2:8000', '10.0.0.2').replace('[2001:db8::3]', '[2001:DB8:0::3]'))),
    });
    const report = await run(target);
    expectOnly(report, ['endpoint.format']);
    const detail = report.results.find((r) => r.id === 'endpoint.format')?.detail ?? '';
    assert.match(detail, /"10\.0\.0\.2": missing ":port"/);
    assert.match(detail, /write \[2001:db8::3\]:8000/);
  });

  test('header and metadata disagree', async () => {
    const target = await broken({ stream: rewriting((r) => mapValue(r, (v, where) => (where === 'header' ? v.split(',').reverse().join(',') : v))) });
    expectOnly(await run(target), ['endpoint.agree']);
  });

  test('repeated entries in the list', async () => {
    const target = await broken({ stream: rewriting((r) => mapValue(r, (v) => `${v.split(',')[0]},${v}`)) });
    const report = await run(target);
    expectOnly(report, ['endpoint.ordered-list']);
    assert.match(report.results.find((r) => r.id === 'endpoint.ordered-list')?.detail ?? '', /duplicate of entry 0/);
  });

  test('subset ignored', async () => {
    const target = await broken({ stream: receiving((m) => ({ ...m, metadata_context: {} })) });
    expectOnly(await run(target), ['subset.respected', 'subset.empty-503', 'subset.ineligible-503']);
  });

  test('no 503: an empty or ineligible subset is answered from the whole pool', async () => {
    const all = staticEndpoints(ENDPOINTS).endpoints();
    const target = await broken({
      stream: receiving((m) => {
        const entries = subsetOf(m);
        return entries && restrictToSubset(all, entries).length === 0 ? { ...m, metadata_context: {} } : m;
      }),
    });
    expectOnly(await run(target), ['subset.empty-503', 'subset.ineligible-503']);
  });

  test('no health service', async () => {
    const target = await broken({ health: false });
    const report = await run(target);
    expectOnly(report, ['health.services', 'health.protocol']);
    assert.match(report.results.find((r) => r.id === 'health.services')?.detail ?? '', /liveness: UNIMPLEMENTED/);
  });

  test('health that knows no whole-server name and calls every name SERVING', async () => {
    const target = await broken({ health: { status: (service) => (service === '' ? undefined : SERVING_STATUS.SERVING), subscribe: () => () => true } });
    const report = await run(target);
    expectOnly(report, ['health.protocol']);
    const detail = report.results.find((r) => r.id === 'health.protocol')?.detail ?? '';
    assert.match(detail, /the whole server \(""\): NOT_FOUND/);
    assert.match(detail, /unknown service "extlb\.conformance\.NoSuchService": status SERVING, not NOT_FOUND/);
  });

  test('header appended instead of overwritten, so a client value would win', async () => {
    const target = await broken({
      stream: rewriting((r) => {
        for (const h of r.request_headers?.response?.header_mutation?.set_headers ?? []) h.append_action = 0;
        return r;
      }),
    });
    expectOnly(await run(target), ['endpoint.client-header-ignored']);
  });

  test('not full-duplex: body chunks answered with plain body responses', async () => {
    const target = await broken({ handler: { bodyMode: 'buffered' } });
    const report = await run(target);
    expectOnly(report, ['streaming.full-duplex', 'streaming.response-chunks']);
    assert.match(report.results.find((r) => r.id === 'streaming.full-duplex')?.detail ?? '', /without streamed_response/);
  });

  test('response chunks held back until the body ends: whole bodies pass, token-by-token delivery does not', async () => {
    const target = await broken({
      stream: () => {
        const held: ProcessingResponse[] = [];
        return {
          write: (r, send) => {
            const streamed = r.response_body?.response?.body_mutation?.streamed_response;
            if (streamed && !streamed.end_of_stream) {
              held.push(r);
              return;
            }
            for (const h of held.splice(0)) send(h);
            send(r);
          },
        };
      },
    });
    const report = await run(target);
    expectOnly(report, ['streaming.response-chunks']);
    assert.match(report.results.find((r) => r.id === 'streaming.response-chunks')?.detail ?? '', /chunk 1 of 3 was not answered within 1000 ms/);
  });

  test('served endpoint rejected on the response path', async () => {
    const target = await broken({
      stream: receiving((m) => (m.metadata_context?.filter_metadata?.['envoy.lb'] ? new Error('unexpected metadata') : m)),
    });
    expectOnly(await run(target), ['served.accepted', 'scope.served-fallback']);
  });

  test("names the subset hint's first entry as given, even one outside its pool", async () => {
    const target = await broken({
      stream: () => {
        let first: string | undefined;
        return {
          receive: (m) => {
            first = subsetOf(m)?.[0] ?? first;
            return m;
          },
          write: (r, send) => send(first && r.request_headers ? mapValue(structuredClone(r), () => first as string) : r),
        };
      },
    });
    const report = await run(target);
    expectOnly(report, ['scope.pool-members']);
    assert.match(report.results.find((r) => r.id === 'scope.pool-members')?.detail ?? '', /answered with 192\.0\.2\.1:1, which is not in the picker's pool/);
  });

  test('refuses a served endpoint other than the first it named (a retry on the same pool walked on)', async () => {
    const target = await broken({
      stream: () => {
        let primary: string | undefined;
        return {
          write: (r, send) => {
            mapValue(structuredClone(r), (v) => {
              primary = v.split(',')[0];
              return v;
            });
            send(r);
          },
          receive: (m) => {
            const served = m.metadata_context?.filter_metadata?.['envoy.lb']?.fields?.['x-gateway-destination-endpoint-served']?.stringValue;
            return served !== undefined && served !== primary ? new Error(`${served} is not the endpoint this picker chose`) : m;
          },
        };
      },
    });
    const report = await run(target);
    expectOnly(report, ['scope.served-fallback']);
    assert.match(report.results.find((r) => r.id === 'scope.served-fallback')?.detail ?? '', /is not the endpoint this picker chose/);
  });

  test('fails a stream that ends without a response (the request moved to another pool)', async () => {
    const target = await broken({
      stream: () => {
        let responded = false;
        return {
          receive: (m) => {
            responded ||= m.response_headers !== undefined;
            return m;
          },
          end: () => (responded ? undefined : new Error('the request ended before its response')),
        };
      },
    });
    const report = await run(target);
    expectOnly(report, ['scope.request-only']);
    assert.match(report.results.find((r) => r.id === 'scope.request-only')?.detail ?? '', /FAILED_PRECONDITION \(the request ended before its response\)/);
  });

  test('a picker that never answers fails the transport rule and skips the rest', async () => {
    const target = await broken({ silent: true });
    const report = await run(target, { timeoutMs: 200 });
    const skipped = RULES.map((r) => r.id).filter((id) => id !== 'ext-proc.answers' && !id.startsWith('health.'));
    expectOnly(report, ['ext-proc.answers'], skipped);
  });

  test('nothing listening: every rule fails or skips with the connection error, no crash', async () => {
    const p = await reference();
    const target = p.address;
    await p.close();
    const report = await run(target, { timeoutMs: 300 });
    assert.equal(statuses(report)['ext-proc.answers'], 'fail');
    assert.equal(statuses(report)['health.services'], 'fail');
    assert.equal(statuses(report)['health.protocol'], 'fail');
    assert.match(report.results[0]?.detail ?? '', /UNAVAILABLE/);
  });
});
