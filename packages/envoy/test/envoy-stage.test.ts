// Envoy-stage cases: each folder under envoy-stage/ holds a hand-written IR of one Gateway
// (`ir.yaml`, type-checked against the IR's types) and the Envoy stage's output for it alone:
// `envoy.yaml` (the xDS resources and any manifests) and, when the stage says something,
// `diagnostics.yaml`. Each case isolates one builder concern, so a change to the Envoy stage shows
// here at its own layer, apart from the read and resolve stages the scenarios also run.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Diagnostics } from '../src/diagnostics.js';
import { envoyOptions } from '../src/converter/index.js';
import { toBootstrap, toEnvoy, toXds } from '../src/envoy/index.js';
import type { CertificateLookup } from '../src/resolve/certificates.js';
import type { EndpointLookup } from '../src/resolve/endpoints.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { type EnvoyStageCase, loadCases, loadCertificates } from './envoy-stage/case.js';
import { expectGolden, toYaml } from './golden.js';

const root = fileURLToPath(new URL('./envoy-stage/', import.meta.url));
const names = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const cases = loadCases(root, names);
const pems = loadCertificates(join(root, 'certificates.yaml'));

function run(c: EnvoyStageCase) {
  const options = { ...envoyOptions({}, new Diagnostics()), ...c.options };
  const endpoints: EndpointLookup = {
    backend: (b) => c.endpoints?.backends?.[b.key] ?? [],
    picker: (p) => c.endpoints?.pickers?.[`${p.namespace}/${p.service}`] ?? [],
  };
  const has = (namespace: string, name: string) => c.certificates?.includes(`${namespace}/${name}`) === true;
  const certificates: CertificateLookup = {
    keyPair: (namespace, name) => (has(namespace, name) ? pems.keyPairs[`${namespace}/${name}`] : undefined),
    caBundle: (namespace, name) => (has(namespace, name) ? pems.caBundles[`${namespace}/${name}`] : undefined),
  };
  const diags = new Diagnostics();
  return { options, config: toEnvoy(c.gateway, endpoints, certificates, options, diags), diagnostics: diags.sorted() };
}

test('there are cases, one builder concern each', () => {
  assert.ok(names.length >= 12, `only ${names.length} cases`);
});

for (const name of names) {
  test(`envoy stage ${name}`, () => {
    const dir = join(root, name);
    const { options, config, diagnostics } = run(cases.get(name) as EnvoyStageCase);
    const validator = loadEnvoyValidator(options.envoy);
    assert.deepEqual(validator.validateXds(toXds(config)), [], 'the xDS resources must load in Envoy');
    assert.deepEqual(validator.validateBootstrap(toBootstrap(config, { xdsServer: 'extlb-xds:18000' })), [], 'the bootstrap must load in Envoy');
    const { gateway: _, manifests, ...resources } = config;
    expectGolden(join(dir, 'envoy.yaml'), toYaml({ ...toXds(config), ...(manifests.length > 0 ? { manifests } : {}) }));
    assert.ok(
      Object.values(resources).some((list) => list.length > 0),
      'the case builds something',
    );
    const diagnosticsFile = join(dir, 'diagnostics.yaml');
    if (diagnostics.length > 0 || existsSync(diagnosticsFile)) expectGolden(diagnosticsFile, toYaml(diagnostics));
  });
}

test('an ir.yaml that does not match the IR types fails at its file:line:col', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'extlb-envoy-stage-'));
  try {
    mkdirSync(join(tmp, 'bad'));
    writeFileSync(
      join(tmp, 'bad', 'ir.yaml'),
      [
        'gateway:',
        '  name: default/gw',
        '  ref: {kind: Gateway, namespace: default, name: gw}',
        '  listeners:',
        '    - name: default/gw/80',
        '      port: 80',
        '      protocol: HTTP',
        '      servers:',
        '        - name: default/gw/80',
        '          virtualHost: []',
        '  backends: {}',
        '  pickerSets: {}',
        '',
      ].join('\n'),
    );
    assert.throws(
      () => loadCases(tmp, ['bad']),
      (err: Error) => {
        assert.match(err.message, /bad\/ir\.yaml:10:11: .*virtualHost"?' does not exist in type 'Server'/);
        return true;
      },
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
