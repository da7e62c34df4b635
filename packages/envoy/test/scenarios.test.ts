// Golden scenarios: each folder under scenarios/ holds input.yaml (and optionally options.json),
// and the expected output of every stage: ir.yaml (the resolve stage), envoy.yaml (the bootstrap
// of each Gateway), status.yaml and diagnostics.yaml — so a change shows at the layer it happens.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ConvertOptions, type ConvertResult, convert, toBootstrap, toXds } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { expectGolden, readObjects, toYaml } from './golden.js';

const root = fileURLToPath(new URL('./scenarios/', import.meta.url));
const NOW = '2026-01-01T00:00:00Z';

/** Where the eds scenarios' proxies find their xDS server. */
const BOOTSTRAP = { xdsServer: 'extlb-xds:18000' };

/** A scenario with one Gateway shows its bootstrap; with several, a map of them by Gateway. */
function bootstraps(result: ConvertResult): unknown {
  const entries = Object.entries(result.gateways).map(([name, config]) => [name, toBootstrap(config, BOOTSTRAP)] as const);
  return entries.length === 1 ? entries[0]?.[1] : Object.fromEntries(entries);
}

for (const name of readdirSync(root).sort()) {
  const dir = join(root, name);
  test(`scenario ${name}`, () => {
    const objects = readObjects(join(dir, 'input.yaml'));
    const optionsFile = join(dir, 'options.json');
    const options: ConvertOptions = { now: NOW, ...(existsSync(optionsFile) ? (JSON.parse(readFileSync(optionsFile, 'utf8')) as ConvertOptions) : {}) };
    const result = convert(objects, options);
    const validator = loadEnvoyValidator(options.envoy ?? '1.35');
    for (const [gateway, config] of Object.entries(result.gateways)) {
      assert.deepEqual(validator.validateBootstrap(toBootstrap(config, BOOTSTRAP)), [], `${gateway}: the bootstrap must load in Envoy`);
      assert.deepEqual(validator.validateXds(toXds(config)), [], `${gateway}: the xDS resources must load in Envoy`);
    }
    expectGolden(join(dir, 'ir.yaml'), toYaml(result.ir));
    expectGolden(join(dir, 'envoy.yaml'), toYaml(bootstraps(result)));
    expectGolden(join(dir, 'status.yaml'), toYaml(result.statuses));
    expectGolden(join(dir, 'diagnostics.yaml'), toYaml(result.diagnostics));
    const extra = Object.values(result.gateways).filter((c) => c.manifests.length > 0 || c.endpoints.length > 0);
    if (extra.length > 0) {
      expectGolden(join(dir, 'extra.yaml'), toYaml(extra.length === 1 ? { manifests: extra[0]?.manifests, endpoints: extra[0]?.endpoints } : extra));
    }
    // Same objects in another order: byte-identical output.
    const shuffled = [...objects.slice(1).reverse(), ...objects.slice(0, 1)];
    const again = convert(shuffled, options);
    assert.equal(toYaml(again.ir), toYaml(result.ir));
    assert.equal(toYaml(bootstraps(again)), toYaml(bootstraps(result)));
    assert.equal(toYaml(again.statuses), toYaml(result.statuses));
    assert.equal(toYaml(again.diagnostics), toYaml(result.diagnostics));
  });
}
