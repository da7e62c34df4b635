// The controller's Kubernetes I/O against an API server that misbehaves (the in-process one, taught
// each fault): watch lines that are not events, LISTs that are not lists, every watch 410 Gone, a
// watch that never speaks; and one that speaks plain HTTP, as `kubectl proxy` does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type KubeApiServer, type KubeApiServerOptions, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { Controller, type ControllerOptions, Informers, KubeApi, type KubeApiOptions, WATCHED_KINDS, startOpsServer } from '../src/index.js';
import { until } from './helpers.js';

type Json = Record<string, any>;
const NS = 'shop';
const BIN = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));
const ENDPOINT_SLICE = WATCHED_KINDS.find((k) => k.kind === 'EndpointSlice') ?? assert.fail('EndpointSlice is watched');
const dir = mkdtempSync(join(tmpdir(), 'extlb-api-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function slice(name: string, addresses: string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  } as KubeObject;
}

const estate: Json[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: NS },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  slice('web-1', ['10.0.0.1']),
];

async function server(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const api = await startKubeApiServer({ objects: estate as KubeObject[], ...options });
  after(() => api.close());
  return api;
}

const silent = createLogger({ level: 'silent' });
const BACKOFF = { backoffMs: 20, maxBackoffMs: 2000 };

/** Informers on EndpointSlices alone, with a short backoff, and everything they report. */
async function sliceInformers(api: KubeApiServer, backoff = BACKOFF, options: KubeApiOptions = {}) {
  const errors: { error: Error; retryInMs: number }[] = [];
  const deleted: string[] = [];
  const relists: number[] = [];
  const informers = new Informers(
    new KubeApi(api.kubeConfig(), options),
    {
      onError: (_kind, error, retryInMs) => errors.push({ error: error as Error, retryInMs }),
      onChange: (_kind, event, o) => (event === 'delete' ? deleted.push(String(o.metadata?.name)) : undefined),
      onRelist: (_kind, waitMs) => relists.push(waitMs),
    },
    { kinds: [ENDPOINT_SLICE], ...backoff },
  );
  await informers.start();
  after(() => informers.stop());
  await api.waitForWatches(1, { resource: 'endpointslices' });
  const names = () =>
    informers
      .list('EndpointSlice')
      .map((o) => String((o.metadata as Json).name))
      .sort();
  return { informers, errors, deleted, relists, names };
}

const watchesOf = (api: KubeApiServer) => api.requestsMatching({ verb: 'watch', resource: 'endpointslices' });
const listsOf = (api: KubeApiServer) => api.requestsMatching({ verb: 'list', resource: 'endpointslices' });

/** Gaps between successive requests, in ms. */
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] ?? t));

/** A controller on `api` (its informers back off from 0.8 s, as by default); it stops when the tests end. */
function controller(api: KubeApiServer, options: Partial<ControllerOptions> = {}): Controller {
  const c = new Controller({
    kubeConfig: api.kubeConfig(),
    identity: 'solo',
    leaseNamespace: 'extlb-system',
    lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    xds: { host: '127.0.0.1', port: 0 },
    delayMs: 20,
    maxDelayMs: 100,
    logger: silent,
    ...options,
  });
  after(() => c.stop(50));
  return c;
}

const counted = async (c: Controller, name: string, labels: Record<string, string>) => {
  const metric = (await c.metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((n, v) => n + v.value, 0);
};

describe('watch lines and LISTs that are not what they claim', () => {
  const HOSTILE = [
    'null',
    '[1]',
    '"x"',
    '{"type":"ADDED","object":null}',
    '{"type":"MODIFIED","object":{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1"}}',
    '{"type":"DELETED","object":{"metadata":null}}',
    '{"type":"ERROR","object":null}',
    '{"type":"BOOKMARK","object":null}',
  ];

  it('each line restarts the watch with backoff and is reported once; the cache and the resourceVersion stay as they were', async () => {
    const api = await server();
    const quick = { backoffMs: 10, maxBackoffMs: 80 };
    const s = await sliceInformers(api, quick);
    for (const line of HOSTILE) {
      const failures = s.errors.length;
      const watches = watchesOf(api).length;
      api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, lines: [line] });
      api.faults.dropWatches({ graceful: true });
      await until(() => s.errors.length > failures && watchesOf(api).length >= watches + 2 && api.watches().length === 1, `the watch restarted after ${line}`);
      // (A watch the server ends within a second of its start, as this drop may, is a failure of its own: a ShortWatch.)
      const reported = s.errors.slice(failures).filter((e) => e.error.name !== 'ShortWatch');
      assert.equal(reported.length, 1, `${line}: reported once`);
      assert.equal(reported[0]?.error.name, 'MalformedResponse', line);
      assert.ok(reported[0]?.error.message.includes(line), `${line}: the message quotes the line: ${reported[0]?.error.message}`);
      assert.ok((reported[0]?.retryInMs ?? 0) >= quick.backoffMs, `${line}: after a backoff`);
      assert.deepEqual(s.names(), ['web-1'], `${line}: the cache is untouched`);
    }
    assert.deepEqual(s.deleted, []);
    assert.equal(listsOf(api).length, 1, 'no relist: every restart resumed from the last resourceVersion');
    api.put(slice('web-2', ['10.0.0.2']));
    await until(() => s.names().includes('web-2'), 'a change after it all');
  });

  it('a LIST whose items hold a null is refused whole: listed again after a backoff, the cache kept meanwhile', async () => {
    const api = await server();
    const s = await sliceInformers(api);
    const bad = { kind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1', metadata: { resourceVersion: api.resourceVersion }, items: [null] };
    api.faults.inject({ match: { verb: 'list', resource: 'endpointslices' }, reply: { body: bad } });
    // A relist: the watch it resumes is told its resourceVersion is gone.
    api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, gone: true });
    api.faults.dropWatches({ graceful: true });
    await until(() => listsOf(api).length === 3 && api.watches().length === 1, 'a good list after the bad one');
    assert.deepEqual(s.names(), ['web-1']);
    assert.deepEqual(s.deleted, [], 'nothing left the cache on the way');
    const malformed = s.errors.filter((e) => e.error.name === 'MalformedResponse');
    assert.equal(malformed.length, 1);
    assert.match(malformed[0]?.error.message ?? '', /items\[0\] is not an object: null/);
    assert.deepEqual(
      listsOf(api).map((r) => r.fault ?? 'ok'),
      ['ok', 'reply', 'ok'],
    );
    api.put(slice('web-2', ['10.0.0.2']));
    await until(() => s.names().includes('web-2'), 'a change after it');
  });

  it('a LIST whose items is not a list is tried again with a backoff that grows', async () => {
    const api = await server();
    const s = await sliceInformers(api);
    const broken = api.faults.inject({
      match: { verb: 'list', resource: 'endpointslices' },
      reply: { body: '{"items":{"not":"a list"}}' },
      times: Number.POSITIVE_INFINITY,
    });
    api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, gone: true });
    api.faults.dropWatches({ graceful: true });
    await until(() => broken.hits >= 5, 'five refused lists', 30_000);
    broken.remove();
    // The first refused list came after the relist's own wait (20 ms); each next one after a backoff twice the last: at least 40, 80, 160, 320 ms.
    const waits = gaps(
      listsOf(api)
        .filter((r) => r.fault === 'reply')
        .map((r) => r.time),
    );
    waits.slice(0, 4).forEach((gap, i) => {
      assert.ok(gap >= BACKOFF.backoffMs * 2 ** (i + 1), `wait ${i + 1} was ${gap} ms: ${waits.join(', ')}`);
    });
    assert.match(s.errors.find((e) => e.error.name === 'MalformedResponse')?.error.message ?? '', /"items" is not a list/);
    await until(() => listsOf(api).at(-1)?.fault === undefined && api.watches().length === 1, 'a good list once the fault is gone');
    assert.deepEqual(s.names(), ['web-1'], 'the cache stayed meanwhile');
  });

  it('the controller counts a malformed event, logs it once, and serves on', async () => {
    const api = await server();
    const lines: Json[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const c = controller(api, { logger });
    await c.start();
    await until(() => c.notReady() === undefined, 'readiness');
    await api.waitForWatches(1, { resource: 'endpointslices' });
    api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, lines: ['{"type":"ADDED","object":null}'] });
    api.faults.dropWatches({ graceful: true });
    await until(async () => (await counted(c, 'extlb_controller_informer_errors_total', { kind: 'EndpointSlice', reason: 'malformed' })) === 1, 'the metric');
    const logged = lines.filter((l) => JSON.stringify(l).includes('{\\"type\\":\\"ADDED\\",\\"object\\":null}'));
    assert.equal(logged.length, 1, JSON.stringify(lines));
    assert.equal(logged[0]?.kind, 'EndpointSlice');
    api.put(slice('web-1', ['10.0.0.9']));
    await until(() => JSON.stringify(c.informers.get('EndpointSlice', 'web-1', NS)).includes('10.0.0.9'), 'the next change');
    assert.equal(c.notReady(), undefined);
  });
});

describe('every watch answered 410 Gone', () => {
  it('relists are spaced by a growing, jittered backoff and counted; once the storm passes the informer follows again', async () => {
    const api = await server();
    const s = await sliceInformers(api);
    const storm = api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, gone: true, times: Number.POSITIVE_INFINITY });
    const from = listsOf(api).length;
    api.faults.dropWatches({ graceful: true });
    await until(() => listsOf(api).length >= from + 5, 'five relists', 30_000);
    storm.remove();
    const relists = listsOf(api)
      .slice(from)
      .map((r) => r.time);
    gaps(relists)
      .slice(0, 5)
      .forEach((gap, i) => {
        assert.ok(gap >= BACKOFF.backoffMs * 2 ** (i + 1), `relist ${i + 2} came ${gap} ms after the one before`);
      });
    // Each relist is reported with its wait: at least its step's (a restart before may have taken a step), each longer than the last, jittered.
    const waits = s.relists.slice(0, 5);
    assert.equal(waits.length, 5);
    waits.forEach((waitMs, i) => {
      assert.ok(waitMs >= BACKOFF.backoffMs * 2 ** i && waitMs > (waits[i - 1] ?? 0), `waits ${waits.join(', ')} ms`);
    });
    assert.ok(
      waits.some((w) => !Number.isInteger(Math.log2(w / BACKOFF.backoffMs))),
      `jittered, not exact doublings: ${waits.join(', ')}`,
    );
    api.put(slice('web-2', ['10.0.0.2']));
    await until(() => s.names().includes('web-2'), 'a change after the storm', 30_000);
  });

  it('the controller counts relists in a metric', async () => {
    const api = await server();
    const c = controller(api);
    await c.start();
    await until(() => c.notReady() === undefined, 'readiness');
    await api.waitForWatches(1, { resource: 'endpointslices' });
    const storm = api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, gone: true, times: 2 });
    api.faults.dropWatches({ graceful: true });
    await until(async () => (await counted(c, 'extlb_controller_informer_relists_total', { kind: 'EndpointSlice' })) >= 2, 'two relists counted');
    assert.equal(storm.hits, 2);
  });
});

describe('a watch that never speaks', () => {
  it('is cut past the silence bound and restarted; /readyz says which informer is not current until it hears again', async () => {
    const api = await server();
    const c = controller(api, { api: { watchTimeoutSeconds: 1, watchSilenceMs: 3000 } });
    await c.start();
    const ops = await startOpsServer({ host: '127.0.0.1', port: 0, registry: c.metrics.registry, notReady: () => c.notReady() });
    after(() => new Promise((r) => ops.server.close(r)));
    const readyz = async () => {
      const r = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      return { code: r.status, text: await r.text() };
    };
    await until(async () => (await readyz()).code === 200, 'readiness');
    const hush = api.faults.inject({ match: { verb: 'watch', resource: 'endpointslices' }, silent: true, times: Number.POSITIVE_INFINITY });
    api.faults.dropWatches({ graceful: true });
    await api.waitForWatches(1, { resource: 'endpointslices', silent: true });
    api.put(slice('web-1', ['10.0.0.7']));
    // The silent informer stays not current for as long as the silence lasts; on a loaded machine
    // another informer may lag for a moment too, so wait for the answer that names it alone.
    let last = '';
    const notReady = await until(async () => {
      const r = await readyz();
      last = r.text;
      return r.code === 503 && /EndpointSlice/.test(r.text) && !/HTTPRoute|Gateway\b|Service\b|Namespace|Secret/.test(r.text) && r.text;
    }, 'readiness to turn, naming the silent informer alone').catch((err: Error) => {
      throw new Error(`${err.message}; /readyz said: ${last}`);
    });
    assert.match(notReady, /EndpointSlice/);
    await until(() => hush.hits >= 2, 'the silent watch to be cut and opened again');
    hush.remove();
    await until(() => JSON.stringify(c.informers.get('EndpointSlice', 'web-1', NS)).includes('10.0.0.7'), 'the change made in the silence');
    await until(async () => (await readyz()).code === 200, 'readiness once it hears again');
    assert.ok((await counted(c, 'extlb_controller_informer_errors_total', { kind: 'EndpointSlice', reason: 'silent' })) >= 1);
  });
});

describe('an API server that speaks plain HTTP', () => {
  it('the Controller lists, watches and writes through an http:// kubeconfig as kubectl proxy users write it', async () => {
    const api = await server({ tls: false });
    assert.match(api.url, /^http:/);
    const c = controller(api);
    await c.start();
    await until(() => c.notReady() === undefined, 'readiness');
    await until(() => (api.get('gateway.networking.k8s.io/v1', 'HTTPRoute', 'web', NS) as Json | undefined)?.status?.parents?.length, 'a status written');
    api.put(slice('web-2', ['10.0.0.2']));
    await until(() => c.informers.get('EndpointSlice', 'web-2', NS), 'a change through the watch');
  });

  it('extlb controller turns ready against it and follows changes', async () => {
    const api = await server({ tls: false });
    const kubeconfig = api.writeKubeconfig(join(dir, 'plain.kubeconfig'));
    const child = spawn(
      process.execPath,
      [BIN, 'controller', '--kubeconfig', kubeconfig, '--namespace', 'extlb-system', '--xds-listen', '127.0.0.1:0', '--http-listen', '127.0.0.1:0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    // A cold process start (the CLI's module graph) takes seconds on a loaded machine.
    const port = await until(() => /"httpPort":(\d+)/.exec(out)?.[1], 'the controller to start', 60_000);
    await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, 'readiness');
    assert.doesNotMatch(out, /not supported|HTTP protocol is not allowed/);
    const route = (name: string) => ({ ...estate[4], metadata: { name, namespace: NS } }) as KubeObject;
    api.put(route('late'));
    await until(
      () => (api.get('gateway.networking.k8s.io/v1', 'HTTPRoute', 'late', NS) as Json | undefined)?.status?.parents?.length,
      'the status of a new route',
    );
    child.kill('SIGTERM');
    assert.equal(await new Promise((r) => child.once('exit', r)), 0);
  });
});
