// Two `extlb controller` processes share one Lease: only the leader writes; when it is killed
// (SIGKILL: no goodbye), the other takes the Lease over once it expires and writes from then on —
// and at no moment do both write. Also the faults a watch meets: a dropped stream, 410 Gone, and
// an API server that is down when the controller starts.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { createLogger } from '@extlb/telemetry';
import { Controller } from '../src/index.js';
import { until } from './helpers.js';

type Json = Record<string, any>;
const NS = 'shop';
const BIN = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'extlb-replicas-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const objects: Json[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: NS },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { ports: [{ name: 'http', port: 80 }] } },
];
const route = (name: string): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace: NS },
  spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
});

const routeStatus = (api: KubeApiServer, name: string) =>
  (api.get('gateway.networking.k8s.io/v1', 'HTTPRoute', name, NS) as Json | undefined)?.status?.parents?.[0];
const statusWrites = (api: KubeApiServer, user: string) => api.requestsMatching({ subresource: 'status', verb: ['update', 'patch'], user });

function replica(api: KubeApiServer, token: string): ChildProcess {
  const kubeconfig = api.writeKubeconfig(join(dir, `${token}.kubeconfig`), { token });
  const child = spawn(
    process.execPath,
    [
      BIN,
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--id',
      `replica-${token}`,
      '--namespace',
      'extlb-system',
      '--xds-listen',
      '127.0.0.1:0',
      '--http-listen',
      '127.0.0.1:0',
      '--lease-duration',
      '1.5',
      '--renew-deadline',
      '1',
      '--retry-period',
      '0.2',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

describe('extlb controller replicas', () => {
  it('only the leader writes; a killed leader is replaced once its Lease expires, and no status is written by both', async () => {
    const api = await startKubeApiServer({ objects: objects as KubeObject[], auth: { tokens: { a: 'replica-a', b: 'replica-b' } } });
    after(() => api.close());
    const a = replica(api, 'a');
    const b = replica(api, 'b');
    const holder = () =>
      (api.get('coordination.k8s.io/v1', 'Lease', 'extlb-controller', 'extlb-system') as Json | undefined)?.spec?.holderIdentity as string | undefined;
    const leader = await until(() => holder(), 'a leader');
    api.put(route('one') as KubeObject);
    await until(() => routeStatus(api, 'one'), 'the status of route one');
    const [first, second] = leader === 'replica-a' ? [a, b] : [b, a];
    const [firstUser, secondUser] = leader === 'replica-a' ? ['replica-a', 'replica-b'] : ['replica-b', 'replica-a'];
    assert.ok(statusWrites(api, firstUser).length > 0, 'the leader writes');
    assert.equal(statusWrites(api, secondUser).length, 0, 'the other replica writes nothing');
    // Kill the leader outright: no Lease release, no drain.
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const killedAt = Date.now();
    const lastByFirst = statusWrites(api, firstUser).length;
    api.put(route('two') as KubeObject);
    await until(() => holder() === `${secondUser}` && routeStatus(api, 'two'), 'the other replica to take over and write', 30_000);
    const takeoverMs = Date.now() - killedAt;
    assert.ok(statusWrites(api, secondUser).length > 0, 'the new leader writes');
    assert.equal(statusWrites(api, firstUser).length, lastByFirst, 'nothing more from the killed leader');
    // Never both: every write of the new leader comes after the last write of the old one.
    const times = (user: string) =>
      api.requestsMatching({ subresource: 'status', verb: ['update', 'patch'], user }).map((r) => (r as unknown as { time?: number }).time ?? 0);
    const lastOld = Math.max(...times(firstUser));
    const firstNew = Math.min(...times(secondUser));
    if (lastOld > 0 && firstNew > 0) assert.ok(firstNew >= lastOld, 'the new leader wrote only after the old one stopped');
    console.log(`# takeover after ${takeoverMs} ms (lease 1.5 s, retry 0.2 s)`);
    second.kill('SIGTERM');
    const code = await new Promise((r) => second.once('exit', (c) => r(c)));
    assert.equal(code, 0, 'SIGTERM drains and exits 0');
  });
});

describe('extlb controller against a failing API server', () => {
  const silent = createLogger({ level: process.env.EXTLB_TEST_LOG ? 'debug' : 'silent', destination: process.env.EXTLB_TEST_LOG ?? 1 });
  const start = (api: KubeApiServer) => {
    const c = new Controller({
      kubeConfig: api.kubeConfig({ token: 'a' }),
      identity: 'solo',
      leaseNamespace: 'extlb-system',
      xds: { host: '127.0.0.1', port: 0, plaintext: true },
      delayMs: 20,
      maxDelayMs: 100,
      logger: silent,
      lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    });
    after(() => c.stop(50));
    return c;
  };

  it('becomes ready when an API server that was down at start comes up, and follows changes', async () => {
    const api = await startKubeApiServer({ objects: objects as KubeObject[], auth: { tokens: { a: 'replica-a' } }, listening: false });
    after(() => api.close());
    const c = start(api);
    await c.start();
    // Wait on what happens, not on the clock: the informers have met the refused connection.
    const failures = async () => (await c.metrics.informerErrors.get()).values.reduce((n, v) => n + v.value, 0);
    await until(async () => (await failures()) > 0, 'a failed list while the API server is down');
    assert.match(c.notReady() ?? '', /waiting for the first list/);
    await api.start();
    await until(() => c.notReady() === undefined, 'readiness after the API server came up', 60_000);
    api.put(route('late') as KubeObject);
    await until(() => routeStatus(api, 'late'), 'the status of a route made after the outage', 30_000);
  });

  it('keeps following after a watch is dropped mid-stream and after 410 Gone', async () => {
    const api = await startKubeApiServer({ objects: objects as KubeObject[], auth: { tokens: { a: 'replica-a' } } });
    after(() => api.close());
    const c = start(api);
    await c.start();
    await until(() => c.notReady() === undefined, 'readiness');
    await api.waitForWatches(1, { resource: 'httproutes' });
    api.faults.dropWatches();
    api.put(route('after-drop') as KubeObject);
    await until(() => routeStatus(api, 'after-drop'), 'a change made while the watch was down', 30_000);
    // History compacted: a watch resuming from an older resourceVersion gets 410 and lists again.
    const lists = () => api.requestsMatching({ resource: 'httproutes', verb: 'list' }).length;
    const before = lists();
    api.faults.compact();
    api.faults.dropWatches();
    api.put(route('after-gone') as KubeObject);
    await until(() => routeStatus(api, 'after-gone'), 'a change made across 410 Gone', 30_000);
    assert.ok(lists() >= before, 'the informer listed again where it had to');
  });
});
