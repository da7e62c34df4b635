// `extlb controller` provisions each Gateway's Envoy by default; `--no-provision` turns that off for
// every Gateway (teams deploy their own, as examples/deploy/gateway/edge.yaml shows). The built
// CLI, run as a user runs it, against the in-process API server.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { kubeconfigFile } from './cluster-cli.js';

type Json = Record<string, any>;
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const GW = 'gateway.networking.k8s.io/v1';

const estate: Json[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extlb-system' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
  { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'extlb' }, spec: { controllerName: 'extlb.dev/gateway-controller' } },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'edge', namespace: 'demo' },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
  },
];

async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function controller(t: TestContext, flags: string[]) {
  const api = await startKubeApiServer({ objects: estate as KubeObject[] });
  t.after(() => api.close());
  const kubeconfig = kubeconfigFile(t, api);
  const child: ChildProcess = spawn(
    process.execPath,
    [
      BIN,
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      'extlb-system',
      '--xds-listen',
      '127.0.0.1:0',
      '--http-listen',
      '127.0.0.1:0',
      '--debug-listen',
      'off',
      '--xds-plaintext',
      ...flags,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  });
  // A cold start of the CLI's module graph takes seconds on a loaded machine.
  const running = await until(() => out.split('\n').find((l) => l.includes('"controller running"')), 'the controller to start');
  const programmed = () => ((api.get(GW, 'Gateway', 'edge', 'demo') as Json | undefined)?.status?.conditions ?? []).find((c: Json) => c.type === 'Programmed');
  return { api, running: JSON.parse(running) as Json, programmed };
}

describe('extlb controller and provisioning', () => {
  it("provisions a Gateway's Envoy by default", async (t) => {
    const { api, running } = await controller(t, []);
    assert.equal(running.provision, true);
    await until(() => api.get('apps/v1', 'Deployment', 'edge-extlb', 'demo'), 'the provisioned Deployment');
    for (const [v, k] of [
      ['v1', 'ServiceAccount'],
      ['v1', 'ConfigMap'],
      ['v1', 'Service'],
    ])
      await until(() => api.get(v as string, k as string, 'edge-extlb', 'demo'), `the provisioned ${k}`);
  });

  it('--no-provision writes none of them, and the Gateway is still served and given its status', async (t) => {
    const { api, running, programmed } = await controller(t, ['--no-provision']);
    assert.equal(running.provision, false);
    // The leader has converted the Gateway and written its status: a provisioning pass, had there
    // been one, would have come first (Programmed then waits on the Deployment).
    const condition = await until(programmed, "the Gateway's Programmed condition");
    assert.doesNotMatch(String(condition.message), /Deployment/);
    for (const [v, k] of [
      ['apps/v1', 'Deployment'],
      ['v1', 'ServiceAccount'],
      ['v1', 'ConfigMap'],
      ['v1', 'Service'],
    ])
      assert.equal(api.get(v as string, k as string, 'edge-extlb', 'demo'), undefined, `no ${k}`);
  });

  it('says what the flag takes in its usage', async () => {
    const child = spawn(process.execPath, [BIN, 'controller', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise((r) => child.once('exit', r));
    assert.match(out, /--no-provision/);
  });
});
