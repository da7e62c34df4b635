// How README commands that need a cluster are found and read: the marks of a shell block's fence,
// and each command split into steps the README test knows how to check (cluster-commands.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterPipelines, isGatewayApiInstall, needsCluster, shellTokens } from './cluster-commands.js';
import { commandsOf } from './readme-commands.js';

const repo = join(import.meta.dirname, '../../..');
const kinds = (command: string) => clusterPipelines(command).map((p) => p.map((s) => s.kind));

describe('shell block marks', () => {
  const readme = [
    '```sh',
    'extlb --help',
    '```',
    '```ts',
    'kubectl(); // not a shell block',
    '```',
    '```bash cluster',
    'kubectl get pods',
    '```',
    '```sh cluster repo-root',
    'docker build -t x \\',
    '  .',
    '```',
  ].join('\n');

  it('reads cluster and repo-root from the opening fence, for that block only', () => {
    assert.deepEqual(commandsOf(readme, 'R.md'), [
      { readme: 'R.md', line: 2, command: 'extlb --help', cluster: false, repoRoot: false },
      { readme: 'R.md', line: 8, command: 'kubectl get pods', cluster: true, repoRoot: false },
      { readme: 'R.md', line: 11, command: 'docker build -t x .', cluster: true, repoRoot: true },
    ]);
  });

  it('rejects a word it does not know on a shell fence, with the line', () => {
    assert.throws(() => commandsOf('text\n```sh clustr\nkubectl get pods\n```\n', 'R.md'), /^Error: R\.md:2: clustr: not a mark of a shell block/);
  });

  it('leaves the info string of other languages alone', () => {
    assert.deepEqual(commandsOf('```yaml title="x"\na: 1\n```\n', 'R.md'), []);
  });
});

describe('needsCluster', () => {
  it('finds kubectl, docker and kind wherever a command starts', () => {
    for (const command of ['kubectl get pods', 'docker run --rm x crds | kubectl apply -f -', 'true && kind get clusters', 'for i in 1; do docker ps; done']) {
      assert.equal(needsCluster(command), true, command);
    }
  });

  it('not in arguments, quotes or other commands', () => {
    for (const command of ['npx extlb validate manifests/', 'echo kubectl', "grep 'a | kubectl' f", 'npx extlb convert m/ > envoy.yaml']) {
      assert.equal(needsCluster(command), false, command);
    }
  });
});

describe('clusterPipelines', () => {
  it('splits as the shell does: quotes, pipes, lists, background, a for loop', () => {
    assert.deepEqual(shellTokens(`a 'b | c' "d"e\\ f|g&&h &`), [
      { word: 'a' },
      { word: 'b | c' },
      { word: 'de f' },
      { op: '|' },
      { word: 'g' },
      { op: '&&' },
      { word: 'h' },
      { op: '&' },
    ]);
    assert.deepEqual(kinds('docker run --rm img crds | kubectl apply -f - ; kubectl get x & curl http://localhost:80/'), [
      ['docker-run', 'kubectl-files'],
      ['cluster'],
      ['curl'],
    ]);
    assert.deepEqual(kinds('for i in 1 2 3; do curl -s http://127.0.0.1:8080/hostname; echo; done'), [['curl'], ['echo']]);
  });

  it("reads every command of examples/deploy's README", () => {
    const commands = commandsOf(readFileSync(join(repo, 'examples/deploy/README.md'), 'utf8'), 'examples/deploy/README.md');
    assert.ok(
      commands.every((c) => c.cluster && c.repoRoot),
      'every block is marked cluster and repo-root',
    );
    const steps = commands.flatMap((c) => clusterPipelines(c.command).flat());
    const byKind = (kind: string) => steps.filter((s) => s.kind === kind);
    assert.deepEqual(byKind('docker-build'), [
      { kind: 'docker-build', text: 'docker build -t extlb/extlb:0.1.0 .', image: 'extlb/extlb:0.1.0', context: '.', dockerfile: 'Dockerfile' },
    ]);
    assert.deepEqual(
      byKind('docker-run').map((s) => s.kind === 'docker-run' && [s.image, ...s.args]),
      [
        ['extlb/extlb:0.1.0', 'install'],
        ['extlb/extlb:0.1.0', 'bootstrap', '--gateway', 'demo/edge', '--xds-server', 'extlb-controller.extlb-system.svc.cluster.local:18000'],
        ['extlb/extlb:0.1.0', 'install', '--webhook'],
      ],
    );
    assert.deepEqual(
      byKind('kubectl-files').flatMap((s) => (s.kind === 'kubectl-files' ? s.sources : [])),
      [
        'https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml',
        '-',
        'examples/deploy/provisioned/',
        'examples/deploy/gateway/edge.yaml',
        'examples/deploy/app/',
        '-',
      ],
    );
    assert.deepEqual(byKind('port-forward'), [{ kind: 'port-forward', text: 'kubectl -n demo port-forward service/edge-extlb 8080:8080', ports: [8080] }]);
    assert.deepEqual(byKind('curl'), [{ kind: 'curl', text: 'curl -s http://127.0.0.1:8080/hostname', port: 8080 }]);
    assert.deepEqual(byKind('kind-load'), [{ kind: 'kind-load', text: 'kind load docker-image extlb/extlb:0.1.0', images: ['extlb/extlb:0.1.0'] }]);
    assert.equal(byKind('cluster').length, 8, 'rollout status and get, for a provisioned Gateway and for your own Envoy');
    assert.deepEqual(
      byKind('extlb-cluster').map((s) => s.kind === 'extlb-cluster' && s.args.join(' ')),
      ['check --pre', 'check', 'proxy-status', 'config-dump --gateway demo/edge --type listeners', 'check'],
    );
  });

  it('reads the flags of kubectl, docker and kind wherever they are', () => {
    assert.deepEqual(clusterPipelines('kubectl --namespace=demo apply -R --filename=a/ -f b.yaml'), [
      [{ kind: 'kubectl-files', text: 'kubectl --namespace=demo apply -R --filename=a/ -f b.yaml', sources: ['a/', 'b.yaml'], recursive: true }],
    ]);
    assert.deepEqual(clusterPipelines('kubectl port-forward --address 0.0.0.0 pod/p 9000 :80 8443:443')[0]?.[0], {
      kind: 'port-forward',
      text: 'kubectl port-forward --address 0.0.0.0 pod/p 9000 :80 8443:443',
      ports: [9000, 8443],
    });
    assert.deepEqual(clusterPipelines('docker build --file build/Dockerfile --tag=img:1 ctx')[0]?.[0], {
      kind: 'docker-build',
      text: 'docker build --file build/Dockerfile --tag=img:1 ctx',
      image: 'img:1',
      context: 'ctx',
      dockerfile: 'build/Dockerfile',
    });
    assert.deepEqual(clusterPipelines('docker build -t img:1 ctx')[0]?.[0], {
      kind: 'docker-build',
      text: 'docker build -t img:1 ctx',
      image: 'img:1',
      context: 'ctx',
      dockerfile: 'ctx/Dockerfile',
    });
    assert.deepEqual(kinds('kind --name dev load docker-image a b'), [['kind-load']]);
    assert.deepEqual(kinds('kind create cluster'), [['cluster']]);
  });

  it('fails on what it cannot check, saying why', () => {
    const cases: [string, RegExp][] = [
      ['helm install x ./chart', /^Error: helm: not a command the README test knows in a cluster block/],
      ['docker push extlb/extlb:0.1.0', /docker push: the README test knows docker build and docker run/],
      ['docker run --rm -v /:/host img crds', /-v: a flag the README test does not know/],
      ['docker build -t a -t b .', /docker build -t IMAGE \[-f DOCKERFILE\] CONTEXT/],
      ['docker build --no-cache -t a .', /--no-cache: a flag the README test does not know/],
      ['curl https://example.com/', /curl to one loopback URL/],
      ['docker run --rm img crds > crds.yaml', /`>` \(redirection or subshell\)/],
      ['kubectl apply -f $(ls)', /`\(` \(redirection or subshell\)/],
      ['docker run --rm img $COMMAND', /a shell expansion/],
      ['kubectl port-forward svc/x http', /http: not a \[LOCAL:\]REMOTE port/],
      ['for i in 1 2; do curl http://127.0.0.1:1/', /a for loop without `done`/],
      ['for i; do echo; done', /not a `for NAME in WORDS` loop/],
      ["echo 'x", /an unterminated ' in/],
    ];
    for (const [command, error] of cases) assert.throws(() => clusterPipelines(command), error, command);
  });
});

describe('isGatewayApiInstall', () => {
  const release = (v: string, file: string) => `https://github.com/kubernetes-sigs/gateway-api/releases/download/${v}/${file}`;

  it("takes either channel's install file of the release, and nothing else", () => {
    assert.equal(isGatewayApiInstall(release('v1.6.1', 'standard-install.yaml'), 'v1.6.1'), true);
    assert.equal(isGatewayApiInstall(release('v1.6.1', 'experimental-install.yaml'), 'v1.6.1'), true);
    assert.equal(isGatewayApiInstall(release('v1.5.0', 'standard-install.yaml'), 'v1.6.1'), false);
    assert.equal(isGatewayApiInstall(release('v1.6.1', 'crds.tar.gz'), 'v1.6.1'), false);
    assert.equal(isGatewayApiInstall('https://example.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml', 'v1.6.1'), false);
  });
});
