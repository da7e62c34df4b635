// The committed generated/ folder is what tools/codegen makes from schemas/ today, and it is
// plain standalone code: nothing compiles a schema or builds a function at run time.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BANNER } from '../../../tools/codegen/src/generate.js';
import { loadSchemas } from '../../../tools/codegen/src/source.js';
import { generateValidators, VALIDATE_GENERATED_DIR } from '../../../tools/codegen/src/validators.js';
import { allKinds } from '../src/kinds.js';
import { compileAllRules } from '../src/cel/rules.js';

const root = new URL('../../../', import.meta.url).pathname;
const expected = generateValidators(loadSchemas(`${root}schemas`), BANNER);
const dir = `${root}${VALIDATE_GENERATED_DIR}`;

describe('generated validators', () => {
  it('match schemas/ (run `npm run generate` after changing a schema)', () => {
    const onDisk = readdirSync(dir).sort();
    assert.deepEqual(onDisk, [...expected.keys()].map((p) => p.slice(VALIDATE_GENERATED_DIR.length + 1)).sort());
    for (const [path, content] of expected) assert.equal(readFileSync(`${root}${path}`, 'utf8'), content, path);
  });

  for (const [path, content] of expected) {
    it(`${path.split('/').pop()} carries the banner and no run-time code generation`, () => {
      assert.ok(content.startsWith(`// ${BANNER}\n`));
      assert.doesNotMatch(content, /\brequire\(|new Function|\beval\(/);
    });
  }

  it('every CEL rule of every kind compiles in the Kubernetes environment', () => {
    const counts = allKinds().map((k) => [k.kind, compileAllRules(k.structure)]);
    assert.deepEqual(Object.fromEntries(counts), { BackendPool: 12, InferencePool: 2, LoadBalancerPolicy: 15 });
  });
});
