// Golden scenarios: each folder under scenarios/ holds input.yaml (and optionally options.json),
// and the expected envoy.yaml (bootstrap), status.yaml and diagnostics.yaml.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert, toBootstrap, toXds, type ConvertOptions } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator.js';
import { expectGolden, readObjects, toYaml } from './golden.js';

const root = fileURLToPath(new URL('./scenarios/', import.meta.url));
const NOW = '2026-01-01T00:00:00Z';

for (const name of readdirSync(root).sort()) {
  const dir = join(root, name);
  test(`scenario ${name}`, () => {
    const objects = readObjects(join(dir, 'input.yaml'));
    const optionsFile = join(dir, 'options.json');
    const options: ConvertOptions = { now: NOW, ...(existsSync(optionsFile) ? (JSON.parse(readFileSync(optionsFile, 'utf8')) as ConvertOptions) : {}) };
    const result = convert(objects, options);
    const bootstrap = toBootstrap(result.envoy);
    const validator = loadEnvoyValidator(options.envoy ?? '1.35');
    assert.deepEqual(validator.validateBootstrap(bootstrap), [], 'bootstrap must load in Envoy');
    assert.deepEqual(validator.validateXds(toXds(result.envoy)), [], 'xDS resources must load in Envoy');
    expectGolden(join(dir, 'envoy.yaml'), toYaml(bootstrap));
    expectGolden(join(dir, 'status.yaml'), toYaml(result.statuses));
    expectGolden(join(dir, 'diagnostics.yaml'), toYaml(result.diagnostics));
    if (result.envoy.manifests.length > 0 || result.envoy.endpoints.length > 0) {
      expectGolden(join(dir, 'extra.yaml'), toYaml({ manifests: result.envoy.manifests, endpoints: result.envoy.endpoints }));
    }
    // Same objects in another order: byte-identical output.
    const shuffled = [...objects.slice(1).reverse(), ...objects.slice(0, 1)];
    const again = convert(shuffled, options);
    assert.equal(toYaml(toBootstrap(again.envoy)), toYaml(bootstrap));
    assert.equal(toYaml(again.statuses), toYaml(result.statuses));
    assert.equal(toYaml(again.diagnostics), toYaml(result.diagnostics));
  });
}
