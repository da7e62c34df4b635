// `extlb convert` end to end: files, stdin, formats, statuses, diagnostics at file:line:col, exit
// codes, and --from-cluster against the shared in-process Kubernetes API server.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadEnvoyValidator } from '@extlb/envoy/validator';
import { DEFAULT_KINDS, type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { convertExamples, gatewayFileName, MAX_FILE_NAME } from '../src/commands/convert.js';
import type { Io } from '../src/io.js';
import { main } from '../src/main.js';

const dir = mkdtempSync(join(tmpdir(), 'extlb-convert-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const scenario = (name: string) => join(repo, 'packages/envoy/test/scenarios', name, 'input.yaml');

function capture(stdinText = ''): { io: Io; out: () => string; err: () => string } {
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  const stdout = new PassThrough().on('data', (b: Buffer) => chunks.out.push(b));
  const stderr = new PassThrough().on('data', (b: Buffer) => chunks.err.push(b));
  return { io: { stdin, stdout, stderr, cwd: dir }, out: () => Buffer.concat(chunks.out).toString(), err: () => Buffer.concat(chunks.err).toString() };
}

async function cli(args: string[], stdinText = '') {
  const t = capture(stdinText);
  const code = await main(['convert', ...args], t.io);
  return { code, stdout: t.out(), stderr: t.err() };
}

describe('extlb convert on files', () => {
  it('writes a bootstrap Envoy loads, and exits 0 for valid input', async () => {
    const r = await cli([scenario('backendpool-picker')]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(parse(r.stdout)), []);
  });

  it('reports a missing backend at file:line:col, exits 1, and still writes the output', async () => {
    const file = scenario('unknown-backend-kind');
    const r = await cli([file, '--status-out', 'status.yaml']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:17:7: error: HTTPRoute default/mixed: spec\\.rules\\[0\\]\\.backendRefs\\[1\\]: Service default/missing not found`,
      ),
    );
    assert.ok(parse(r.stdout).static_resources.clusters.some((c: { name: string }) => c.name === 'bpool/default/llm'));
    // Documents kubectl can apply, one per object.
    const statuses = parseAllDocuments(readFileSync(join(dir, 'status.yaml'), 'utf8')).map((d) => d.toJS()) as {
      kind: string;
      status: { parents: { conditions: { type: string; reason: string }[] }[] };
    }[];
    const route = statuses.find((s) => s.kind === 'HTTPRoute');
    assert.equal(route?.status.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs')?.reason, 'InvalidKind');
  });

  it('reads stdin and writes xDS resource lists as JSON', async () => {
    const r = await cli(['-', '--format', 'xds', '-o', 'json', '--endpoints', 'eds'], readFileSync(scenario('backendpool-picker'), 'utf8'));
    assert.equal(r.code, 0, r.stderr);
    const xds = JSON.parse(r.stdout) as { endpoints: unknown[] };
    assert.equal(xds.endpoints.length, 2, "the pool's and the picker's ClusterLoadAssignments");
    assert.deepEqual(loadEnvoyValidator('1.35').validateXds(xds), []);
  });

  it('reports an extlb object the API server would refuse with its message', async () => {
    writeFileSync(
      join(dir, 'bad.yaml'),
      'apiVersion: extlb.dev/v1alpha1\nkind: BackendPool\nmetadata: {name: p, namespace: default}\nspec:\n  selector: {matchLabels: {app: x}}\n  targetPorts: [{number: 80}, {number: 80}]\n',
    );
    const r = await cli(['bad.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^bad\.yaml:6:\d+: error: .*port number must be unique/m);
  });

  it('writes the headless Services of dns mode with --manifests-out', async () => {
    const r = await cli([scenario('backendpool-picker'), '--endpoints', 'dns', '--manifests-out', 'headless.yaml']);
    assert.equal(r.code, 0, r.stderr);
    const docs = parseAllDocuments(readFileSync(join(dir, 'headless.yaml'), 'utf8')).map((d) => d.toJS()) as { kind: string; spec: { clusterIP: string } }[];
    assert.equal(docs[0]?.kind, 'Service');
    assert.equal(docs[0]?.spec.clusterIP, 'None');
  });

  it('warns in legacy mode that there is no fallback list', async () => {
    const r = await cli([scenario('legacy-mode'), '--envoy', 'legacy']);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /warning: BackendPool default\/llm: legacy mode: .*no fallback list/);
  });

  it('prints info diagnostics with -v only, and counts them otherwise', async () => {
    const quiet = await cli([scenario('route-features')]);
    assert.match(quiet.stderr, /^1 info message\(s\), such as ignored kinds; -v shows them$/m);
    const loud = await cli([scenario('route-features'), '-v']);
    assert.match(loud.stderr, /input\.yaml:\d+:1: info: ServiceAccount default\/unrelated: v1 ServiceAccount is not an input of the converter and is ignored/);
  });

  it('refuses bad flags with exit 2', async () => {
    assert.equal((await cli([scenario('legacy-mode'), '--envoy', '1.20'])).code, 2);
    assert.equal((await cli([])).code, 2);
    assert.equal((await cli(['x.yaml', '--from-cluster'])).code, 2);
  });

  it('one configuration per Gateway: several need --gateway or --out-dir, and a usage error lists them', async () => {
    const file = scenario('two-gateways-same-port');
    const both = await cli([file]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /the input has 2 Gateways \(team-a\/shop, team-b\/blog\); .*--gateway NAMESPACE\/NAME.*--out-dir DIR/);
    const one = await cli([file, '--gateway', 'team-b/blog']);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(
      parse(one.stdout).static_resources.clusters.map((c: { name: string }) => c.name),
      ['svc/team-b/posts/80'],
    );
    const missing = await cli([file, '--gateway', 'team-c/none']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--gateway team-c\/none: no such Gateway is converted; the input has team-a\/shop, team-b\/blog/);
    const all = await cli([file, '--out-dir', 'per-gateway', '-o', 'json']);
    assert.equal(all.code, 0, all.stderr);
    for (const [ns, name] of [
      ['team-a', 'shop'],
      ['team-b', 'blog'],
    ]) {
      const bootstrap = JSON.parse(readFileSync(join(dir, 'per-gateway', ns as string, `${name}.json`), 'utf8'));
      assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(bootstrap), []);
    }
  });

  it('--out-dir names a file for a Gateway of the longest name any file system takes, stable and distinct', async () => {
    // Kubernetes' limit for a name is 253 characters (upstream GatewayNameMaximumLength).
    const long = (end: string) => `${'a'.repeat(250)}${end}`;
    const gateway = (name: string) =>
      `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ${name}, namespace: default}\n` +
      'spec: {gatewayClassName: extlb, listeners: [{name: http, port: 8080, protocol: HTTP}]}\n';
    writeFileSync(join(dir, 'long-names.yaml'), `${gateway(long('-x1'))}---\n${gateway(long('-x2'))}`);
    const read = async () => {
      const r = await cli(['long-names.yaml', '--out-dir', 'long']);
      assert.equal(r.code, 0, r.stderr);
      return readdirSync(join(dir, 'long', 'default')).sort();
    };
    const files = await read();
    assert.equal(files.length, 2, files.join(', '));
    for (const name of files) {
      assert.ok(Buffer.byteLength(name) <= MAX_FILE_NAME, name);
      assert.match(name, /^a+-[0-9a-f]{16}\.yaml$/);
      assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(parse(readFileSync(join(dir, 'long', 'default', name), 'utf8'))), []);
    }
    rmSync(join(dir, 'long'), { recursive: true });
    assert.deepEqual(await read(), files, 'the same names again');
    assert.equal(gatewayFileName('shop', 'yaml'), 'shop.yaml');
  });

  it('a file it cannot write is exit 1 with the reason, not a usage error', async () => {
    writeFileSync(join(dir, 'not-a-folder'), '');
    for (const args of [
      ['--out-dir', 'not-a-folder'],
      ['--out', 'not-a-folder/envoy.yaml'],
      ['--status-out', 'not-a-folder/status.yaml'],
    ]) {
      const r = await cli([scenario('backendpool-picker'), ...args]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^extlb convert: cannot write not-a-folder\S*: E(NOTDIR|EXIST) \(/m);
      assert.doesNotMatch(r.stderr, /usage:/);
    }
  });

  it('a bootstrap in eds mode needs --xds-server, and names the node after the Gateway', async () => {
    const file = scenario('backendpool-picker');
    const without = await cli([file, '--endpoints', 'eds']);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /--endpoints eds with a bootstrap needs --xds-server HOST:PORT/);
    assert.equal((await cli([file, '--endpoints', 'eds', '--xds-server', 'nope'])).code, 2);
    const r = await cli([file, '--endpoints', 'eds', '--xds-server', 'extlb-controller.extlb-system:18000', '--node-id', 'envoy-0']);
    assert.equal(r.code, 0, r.stderr);
    const bootstrap = parse(r.stdout);
    assert.deepEqual(bootstrap.node, { id: 'envoy-0', cluster: 'default/gw' });
    assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(bootstrap), []);
  });

  it('convertExamples converts the quickstart and says where the output went', async () => {
    const t = capture();
    const code = await convertExamples({ ...t.io, cwd: repo }, 'examples/quickstart', join(dir, 'quickstart'));
    assert.equal(code, 0, t.err());
    assert.match(t.out(), /examples\/quickstart -> .*envoy\.yaml \(Envoy bootstrap\)/);
    assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(parse(readFileSync(join(dir, 'quickstart', 'envoy.yaml'), 'utf8'))), []);
  });
});

describe('extlb convert --from-cluster', () => {
  let api: KubeApiServer;
  let kubeconfig: string;
  // What the cluster holds: the scenario's objects, on a cluster without the Inference Extension's CRDs.
  const objects = parseAllDocuments(readFileSync(scenario('backendpool-picker'), 'utf8')).map((d) => d.toJS() as KubeObject);

  before(async () => {
    api = await startKubeApiServer({
      objects,
      defaultKinds: false,
      kinds: DEFAULT_KINDS.filter((k) => k.group !== 'inference.networking.k8s.io'),
      auth: { tokens: { 'secret-token': 'tester' } },
    });
    // Two contexts; the current one names a cluster the file does not have, so --context must pick `test`.
    const config = parse(api.kubeconfig({ name: 'test' })) as { contexts: unknown[]; 'current-context': string };
    config.contexts.push({ name: 'elsewhere', context: { cluster: 'nowhere', user: 'test' } });
    config['current-context'] = 'elsewhere';
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, stringify(config));
  });
  after(() => api.close());

  it('lists every kind through the selected context and converts them', async () => {
    const r = await cli(['--from-cluster', '--kubeconfig', kubeconfig, '--context', 'test', '--gateway-class', 'extlb', '--status-out', 'cluster-status.yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      api.requestsMatching({ path: '/apis/extlb.dev/v1alpha1/backendpools' }).map((r) => `${r.user} ${r.verb} ${r.code}`),
      ['tester list 200'],
    );
    assert.match(r.stderr, /cluster: warning: InferencePool \(inference\.networking\.k8s\.io\/v1\) not listed/);
    const bootstrap = parse(r.stdout) as { static_resources: { clusters: { name: string; load_assignment?: { endpoints: { lb_endpoints: unknown[] }[] } }[] } };
    assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(bootstrap), []);
    const pool = bootstrap.static_resources.clusters.find((c) => c.name === 'bpool/default/llm');
    assert.equal(pool?.load_assignment?.endpoints[0]?.lb_endpoints.length, 3);
    assert.match(readFileSync(join(dir, 'cluster-status.yaml'), 'utf8'), /kind: BackendPool/);
    // Secrets are listed for listener certificates, and only TLS ones.
    const selector = (path: string) => api.requestsMatching({ path }).map((r) => r.query.fieldSelector);
    assert.deepEqual(selector('/api/v1/secrets'), ['type=kubernetes.io/tls']);
    assert.deepEqual(selector('/api/v1/configmaps'), [undefined]);
  });

  it('reads a plain-HTTP API server (kubectl proxy) through an http:// kubeconfig as its users write it', async () => {
    const plain = await startKubeApiServer({
      objects,
      tls: false,
      defaultKinds: false,
      kinds: DEFAULT_KINDS.filter((k) => k.group !== 'inference.networking.k8s.io'),
    });
    after(() => plain.close());
    const file = plain.writeKubeconfig(join(dir, 'plain-kubeconfig'));
    const r = await cli(['--from-cluster', '--kubeconfig', file, '--gateway-class', 'extlb']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /HTTP protocol is not allowed/);
    assert.deepEqual(
      plain.requestsMatching({ path: '/apis/extlb.dev/v1alpha1/backendpools' }).map((q) => `${q.verb} ${q.code}`),
      ['list 200'],
    );
    const bootstrap = parse(r.stdout) as { static_resources: { clusters: { name: string; load_assignment?: { endpoints: { lb_endpoints: unknown[] }[] } }[] } };
    const pool = bootstrap.static_resources.clusters.find((c) => c.name === 'bpool/default/llm');
    assert.equal(pool?.load_assignment?.endpoints[0]?.lb_endpoints.length, 3);
  });

  it('fails with exit 1 when the context names no reachable cluster', async () => {
    const r = await cli(['--from-cluster', '--kubeconfig', join(dir, 'missing-kubeconfig')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read the cluster/);
  });
});
