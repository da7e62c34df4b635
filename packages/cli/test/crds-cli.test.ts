// `extlb crds` prints the generated files unchanged, so that `extlb crds | kubectl apply -f -`
// installs exactly what @extlb/crds ships.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { installYamlPath, jsonSchemaPath } from '@extlb/crds';
import { parseAllDocuments } from 'yaml';
import { main } from '../src/main.js';

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await main(args, { stdin: new PassThrough(), stdout, stderr, cwd: process.cwd() });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

describe('extlb crds', () => {
  it('prints install.yaml: every published CRD', async () => {
    const { code, stdout } = await run(['crds']);
    assert.equal(code, 0);
    assert.equal(stdout, readFileSync(installYamlPath, 'utf8'));
    const names = parseAllDocuments(stdout)
      .map((d) => (d.toJS() as { metadata: { name: string } } | null)?.metadata.name)
      .filter(Boolean);
    assert.deepEqual(names, ['backendpools.extlb.dev', 'gatewayparameters.extlb.dev', 'loadbalancerpolicies.extlb.dev']);
  });

  it('prints one CRD, or a JSON Schema', async () => {
    const one = await run(['crds', '--kind', 'LoadBalancerPolicy']);
    assert.equal(one.code, 0);
    assert.match(one.stdout, /name: loadbalancerpolicies\.extlb\.dev/);
    assert.doesNotMatch(one.stdout, /backendpools/);
    const schema = await run(['crds', '--kind', 'InferencePool', '--json-schema']);
    assert.equal(schema.stdout, readFileSync(jsonSchemaPath('InferencePool'), 'utf8'));
  });

  it('exits 2 with the reason on bad flags', async () => {
    for (const [args, message] of [
      [['crds', '--kind', 'Widget'], /--kind must be one of BackendPool, GatewayParameters, InferencePool, LoadBalancerPolicy, not "Widget"/],
      [['crds', '--json-schema'], /--json-schema needs --kind/],
      [['crds', '--kind', 'InferencePool'], /does not publish the InferencePool CRD/],
      [['crds', 'extra'], /Unexpected argument 'extra'/],
    ] as const) {
      const r = await run([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
  });
});
