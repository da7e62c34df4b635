// `extlb convert` end to end: files, stdin, formats, statuses, diagnostics at file:line:col, exit
// codes, and --from-cluster against a local server that answers the Kubernetes list API.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadEnvoyValidator } from '@extlb/envoy/validator';
import { parse, parseAllDocuments } from 'yaml';
import { convertExamples } from '../src/commands/convert.js';
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
  let server: Server;
  let kubeconfig: string;
  const requests: string[] = [];
  const queries = new Map<string, URLSearchParams>();
  // What a cluster holds: the scenario's objects, grouped by their list URL.
  const objects = parseAllDocuments(readFileSync(scenario('backendpool-picker'), 'utf8')).map((d) => d.toJS() as { apiVersion: string; kind: string });
  const RESOURCES: Record<string, [string, string, boolean][]> = {
    '/api/v1': [
      ['services', 'Service', true],
      ['pods', 'Pod', true],
      ['namespaces', 'Namespace', false],
      ['secrets', 'Secret', true],
      ['configmaps', 'ConfigMap', true],
    ],
    '/apis/gateway.networking.k8s.io/v1': [
      ['gatewayclasses', 'GatewayClass', false],
      ['gateways', 'Gateway', true],
      ['httproutes', 'HTTPRoute', true],
    ],
    '/apis/gateway.networking.k8s.io/v1beta1': [['referencegrants', 'ReferenceGrant', true]],
    '/apis/discovery.k8s.io/v1': [['endpointslices', 'EndpointSlice', true]],
    '/apis/extlb.dev/v1alpha1': [
      ['backendpools', 'BackendPool', true],
      ['loadbalancerpolicies', 'LoadBalancerPolicy', true],
    ],
  };

  before(async () => {
    server = createServer((req, res) => {
      const [url = '', query = ''] = (req.url ?? '').split('?');
      requests.push(`${req.headers.authorization ?? ''} ${url}`);
      queries.set(url, new URLSearchParams(query));
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const discovery = RESOURCES[url];
      if (discovery) {
        return json(200, {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: url.replace(/^\/apis?\//, ''),
          resources: discovery.map(([name, kind, namespaced]) => ({ name, singularName: kind.toLowerCase(), namespaced, kind, verbs: ['list'] })),
        });
      }
      for (const [base, list] of Object.entries(RESOURCES)) {
        for (const [plural, kind] of list) {
          if (url !== `${base}/${plural}`) continue;
          const apiVersion = base.replace(/^\/apis?\//, '');
          // The API server leaves apiVersion and kind out of list items.
          const items = objects.filter((o) => o.kind === kind).map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
          return json(200, { apiVersion, kind: `${kind}List`, metadata: { resourceVersion: '1' }, items });
        }
      }
      json(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'the server could not find the requested resource',
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- {name: local, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}`,
        'users: [{name: tester, user: {token: secret-token}}]',
        'contexts:',
        '- {name: test, context: {cluster: local, user: tester}}',
        '- {name: elsewhere, context: {cluster: nowhere, user: tester}}',
        'current-context: elsewhere',
        '',
      ].join('\n'),
    );
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lists every kind through the selected context and converts them', async () => {
    const r = await cli(['--from-cluster', '--kubeconfig', kubeconfig, '--context', 'test', '--gateway-class', 'extlb', '--status-out', 'cluster-status.yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      requests.some((q) => q === 'Bearer secret-token /apis/extlb.dev/v1alpha1/backendpools'),
      requests.join('\n'),
    );
    assert.match(r.stderr, /cluster: warning: InferencePool \(inference\.networking\.k8s\.io\/v1\) not listed/);
    const bootstrap = parse(r.stdout) as { static_resources: { clusters: { name: string; load_assignment?: { endpoints: { lb_endpoints: unknown[] }[] } }[] } };
    assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(bootstrap), []);
    const pool = bootstrap.static_resources.clusters.find((c) => c.name === 'bpool/default/llm');
    assert.equal(pool?.load_assignment?.endpoints[0]?.lb_endpoints.length, 3);
    assert.match(readFileSync(join(dir, 'cluster-status.yaml'), 'utf8'), /kind: BackendPool/);
    // Secrets are listed for listener certificates, and only TLS ones.
    assert.equal(queries.get('/api/v1/secrets')?.get('fieldSelector'), 'type=kubernetes.io/tls');
    assert.equal(queries.get('/api/v1/configmaps')?.get('fieldSelector'), null);
  });

  it('fails with exit 1 when the context names no reachable cluster', async () => {
    const r = await cli(['--from-cluster', '--kubeconfig', join(dir, 'missing-kubeconfig')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read the cluster/);
  });
});
