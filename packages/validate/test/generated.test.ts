// The committed generated/ folder is plain standalone code: nothing compiles a schema or builds a
// function at run time. (That it matches schemas/ is the codegen drift test's job.)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BANNER } from '../../../tools/codegen/src/generate.js';
import { allKinds } from '../src/kinds.js';
import { compileAllRules } from '../src/cel/rules.js';

const dir = new URL('../src/generated/', import.meta.url);
const files = readdirSync(dir).sort();

describe('generated validators', () => {
  it('are one validator per kind plus the structure and index modules', () => {
    assert.deepEqual(files, [
      'backendpool.validator.ts',
      'gatewayparameters.validator.ts',
      'inferencepool.validator.ts',
      'loadbalancerpolicy.validator.ts',
      'structures.ts',
      'validators.ts',
    ]);
  });

  for (const name of files) {
    it(`${name} carries the banner and no run-time code generation`, () => {
      const content = readFileSync(new URL(name, dir), 'utf8');
      assert.ok(content.startsWith(`// ${BANNER}\n`));
      assert.doesNotMatch(content, /\brequire\(|new Function|\beval\(/);
    });
  }

  it('every CEL rule of every kind compiles in the Kubernetes environment', () => {
    const counts = allKinds().map((k) => [k.kind, compileAllRules(k.structure)]);
    assert.deepEqual(Object.fromEntries(counts), { BackendPool: 12, GatewayParameters: 9, InferencePool: 2, LoadBalancerPolicy: 15 });
  });
});
