// `extlb install`: its output is examples/deploy's files word for word (so the manifest tests of
// packages/controller/test/deploy*.test.ts and packages/webhook/test/deploy.test.ts hold for it),
// `extlb validate` accepts it, and its flags change the namespace, the image and the replicas only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { installYamlPath } from '@extlb/crds';
import { parseAllDocuments } from 'yaml';
import { GENERATED, installFiles, installModule } from '../scripts/generate-install.js';
import { extlb } from './cluster-cli.js';

const DEPLOY = join(import.meta.dirname, '../../../examples/deploy');
const file = (path: string) => readFileSync(join(DEPLOY, path), 'utf8');
type Json = Record<string, any>;

/** The output's sections: the CRDs first, then each `# Source:` file's text. */
function sections(output: string): { crds: string; files: Map<string, string> } {
  const [head = '', ...rest] = output.split(/^---\n# Source: examples\/deploy\/(.+)\n/m);
  const files = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) files.set(rest[i] as string, (rest[i + 1] as string).replace(/---\n$/, ''));
  return { crds: head.replace(/^# extlb .*\n/, ''), files };
}

function objects(output: string): Json[] {
  return parseAllDocuments(output, { uniqueKeys: true }).flatMap((d) => {
    assert.deepEqual(d.errors, []);
    const o = d.toJS();
    return o ? [o] : [];
  });
}

describe('extlb install', () => {
  it('the generated module holds examples/deploy as it is (npm run generate -w @extlb/cli)', () => {
    assert.equal(readFileSync(GENERATED, 'utf8'), installModule(), 'examples/deploy changed: run npm run generate -w @extlb/cli');
  });

  it('with --webhook prints the extlb CRDs and examples/deploy files word for word', async () => {
    const run = await extlb(['install', '--webhook']);
    assert.equal(run.code, 0, run.stderr);
    const { crds, files } = sections(run.stdout);
    assert.equal(crds, readFileSync(installYamlPath, 'utf8'));
    assert.deepEqual(
      [...files.keys()],
      [
        'namespace.yaml',
        'controller/rbac.yaml',
        'controller/controller.yaml',
        'controller/gatewayclass.yaml',
        'controller/gatewayparameters.yaml',
        'certificate.yaml',
        'webhook.yaml',
        'webhook-configurations.yaml',
      ],
    );
    for (const [path, text] of files) assert.equal(text, file(path), path);
  });

  it('without it: the controller files word for word, the namespace alone, no webhook object', async () => {
    const run = await extlb(['install']);
    assert.equal(run.code, 0, run.stderr);
    const { files } = sections(run.stdout);
    const base = installFiles()
      .filter((f) => f.part === 'base')
      .map((f) => f.path);
    assert.deepEqual([...files.keys()], base);
    for (const path of base.filter((p) => p !== 'namespace.yaml')) assert.equal(files.get(path), file(path), path);
    assert.deepEqual(
      objects(files.get('namespace.yaml') ?? '').map((o) => o.kind),
      ['Namespace'],
    );
    assert.ok(!objects(run.stdout).some((o) => /webhook/i.test(`${o.kind} ${o.metadata.name}`)));
  });

  it('extlb validate accepts both outputs', async () => {
    for (const args of [['install'], ['install', '--webhook'], ['install', '--namespace', 'lb', '--replicas', '1', '--webhook']]) {
      const output = (await extlb(args)).stdout;
      const run = await extlb(['validate', '-'], output);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
    }
  });

  it('--namespace, --image and --replicas change those and nothing else', async () => {
    const base = objects((await extlb(['install', '--webhook'])).stdout);
    const run = await extlb(['install', '--webhook', '--namespace', 'lb', '--image', 'registry.example.com/extlb:1.2.3', '--replicas', '3']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes('extlb-system'));
    assert.ok(!run.stdout.includes('extlb/extlb:'));
    const changed = objects(run.stdout);
    assert.equal(changed.length, base.length);
    const swap = (v: unknown): unknown =>
      JSON.parse(
        JSON.stringify(v)
          .replaceAll('extlb/extlb:0.1.0', 'registry.example.com/extlb:1.2.3')
          .replace(/\bextlb-system\b/g, 'lb'),
      );
    for (const [i, o] of changed.entries()) {
      const expected = swap(base[i]) as Json;
      if (o.kind === 'Deployment' && o.metadata.name === 'extlb-controller') expected.spec.replicas = 3;
      assert.deepEqual(o, expected, `${o.kind} ${o.metadata.name}`);
    }
    for (const o of changed.filter((x) => x.metadata.namespace !== undefined)) assert.equal(o.metadata.namespace, 'lb', `${o.kind} ${o.metadata.name}`);
  });

  it('one replica: no disruption budget that would block every drain', async () => {
    const o = objects((await extlb(['install', '--replicas', '1'])).stdout);
    const controller = o.find((x) => x.kind === 'Deployment' && x.metadata.name === 'extlb-controller');
    assert.equal(controller?.spec.replicas, 1);
    assert.ok(!o.some((x) => x.kind === 'PodDisruptionBudget'));
  });

  it('bad flags are usage errors naming the flag', async () => {
    assert.match((await extlb(['install', '--namespace', 'Bad_NS'])).stderr, /--namespace must be a DNS label/);
    assert.match((await extlb(['install', '--replicas', '0'])).stderr, /--replicas must be a whole number in 1..10/);
    assert.match((await extlb(['install', '--image', 'a b'])).stderr, /--image must be an image reference/);
    assert.equal((await extlb(['install', '--bogus'])).code, 2);
  });
});
