// Golden tests for the generators on a small fixture API that uses every path: $ref across files,
// int-or-string, preserve-unknown-fields, list maps, defaults, CEL and YAML 1.1 words like "on".
import { deepStrictEqual, equal, match } from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { generate } from '../src/generate.js';
import { loadSchemas } from '../src/source.js';
import { matchGolden } from './golden.js';
import { typeErrors } from './typecheck.js';

const fixture = join(import.meta.dirname, 'fixtures/widget');
const golden = join(fixture, 'golden');
const files = await generate(loadSchemas(join(fixture, 'schemas')), { bundleVersion: 'v9.9.9' });

describe('generators on the widget fixture', () => {
  it('writes exactly the expected files', () => {
    deepStrictEqual([...files.keys()].sort(), [
      'docs/api.md',
      'packages/crds/generated/example.extlb.dev_widgets.yaml',
      'packages/crds/generated/install.yaml',
      'packages/crds/generated/json-schema/example.extlb.dev/widget_v1.json',
      'packages/crds/src/generated/crds.ts',
      'packages/types/src/generated/types.ts',
      'packages/validate/src/generated/structures.ts',
      'packages/validate/src/generated/validators.ts',
      'packages/validate/src/generated/widget.validator.ts',
    ]);
  });

  for (const [path, content] of files) {
    it(`matches the golden ${path}`, () => matchGolden(join(golden, path), content));
  }

  it('emits YAML that a YAML 1.1 reader reads back unchanged', () => {
    const crd = files.get('packages/crds/generated/example.extlb.dev_widgets.yaml')!;
    // "on" must stay a string for kubectl, which reads YAML 1.1 where bare on is true.
    const back = YAML.parse(crd, { version: '1.1' });
    equal(back.metadata.labels['example.extlb.dev/tier'], 'on');
    const spec = back.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    deepStrictEqual(spec.properties.mode.enum, ['on', 'off']);
  });

  it('inlines references and keeps rules from both sides of a $ref', () => {
    const crd = YAML.parse(files.get('packages/crds/generated/example.extlb.dev_widgets.yaml')!);
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    equal(JSON.stringify(crd).includes('$ref'), false);
    deepStrictEqual(spec.properties.owner, {
      description: 'owner names who runs the widget.',
      type: 'string',
      minLength: 1,
      maxLength: 63,
      'x-kubernetes-validations': [{ rule: "self != 'root'", message: 'owner must not be root' }],
    });
    equal(spec.additionalProperties, undefined, 'CRDs must not say additionalProperties: false next to properties');
  });

  it('generates types that type-check, with int-or-string and open objects typed usefully', () => {
    const types = files.get('packages/types/src/generated/types.ts')!;
    match(types, /size\?: Size;/);
    match(types, /export type Size = number \| string;/);
    match(types, /extra\?: \{\s*\[k: string\]: unknown;\s*\};/);
    const objectMeta = readFileSync(join(import.meta.dirname, '../../../packages/types/src/object-meta.ts'), 'utf8');
    const use = `import type { Widget } from './generated/types.js';
const w: Widget = { apiVersion: 'example.extlb.dev/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { mode: 'on', size: '50%', parts: [{ name: 'p', count: 2 }] } };
// @ts-expect-error kind is a literal type
const bad: Widget = { ...w, kind: 'Gadget' };
export { w, bad };
`;
    deepStrictEqual(
      typeErrors({ '/t/package.json': '{"type":"module"}', '/t/generated/types.ts': types, '/t/object-meta.ts': objectMeta, '/t/use.ts': use }),
      [],
    );
  });

  it('is deterministic', async () => {
    const again = await generate(loadSchemas(join(fixture, 'schemas')), { bundleVersion: 'v9.9.9' });
    deepStrictEqual(again, files);
  });
});
