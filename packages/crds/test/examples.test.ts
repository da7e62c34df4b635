// Every manifest under examples/ parses with the real yaml library, and every object of a kind
// with a generated JSON Schema is valid against it — the check editors and kubeconform make.
import { deepStrictEqual, equal, ok } from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parseAllDocuments } from 'yaml';
import { jsonSchemaPath, kinds } from '../src/index.js';

const addFormats = addFormatsModule.default;
const root = join(import.meta.dirname, '../../..');
const examples = join(root, 'examples');

function compileSchemas(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addVocabulary([
    'x-kubernetes-validations',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-preserve-unknown-fields',
  ]);
  addFormats(ajv);
  const out = new Map<string, ValidateFunction>();
  for (const k of kinds) {
    out.set(`${k.group}/${k.version}/${k.kind}`, ajv.compile(JSON.parse(readFileSync(jsonSchemaPath(k.kind), 'utf8'))));
  }
  return out;
}

const validators = compileSchemas();

function manifests(dir: string): { file: string; object: { apiVersion?: string; kind?: string } }[] {
  const out: { file: string; object: { apiVersion?: string; kind?: string } }[] = [];
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    if (!/\.ya?ml$/.test(name)) continue;
    const file = join(dir, name);
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' }) as never as { errors: unknown[]; toJS(): unknown }[]) {
      deepStrictEqual(doc.errors, [], `${relative(root, file)} has YAML errors`);
      const object = doc.toJS() as { apiVersion?: string; kind?: string } | null;
      if (object) out.push({ file: relative(root, file), object });
    }
  }
  return out;
}

function errorsOf(object: { apiVersion?: string; kind?: string }): string[] | undefined {
  const validate = validators.get(`${object.apiVersion}/${object.kind}`);
  if (!validate) return undefined;
  return validate(object) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}

describe('examples/', () => {
  const all = manifests(examples);

  it('every object names apiVersion, kind and metadata.name', () => {
    for (const { file, object } of all) {
      const meta = (object as { metadata?: { name?: unknown } }).metadata;
      ok(object.apiVersion && object.kind && typeof meta?.name === 'string', `${file}: object without apiVersion, kind or name`);
    }
  });

  for (const folder of ['quickstart', 'policy-on-service', 'inferencepool']) {
    it(`${folder}: extlb and GIE objects are valid against the generated JSON Schemas`, () => {
      const checked = all.filter((m) => m.file.startsWith(`examples/${folder}/`) && errorsOf(m.object) !== undefined);
      ok(checked.length > 0, `${folder} has no object of a kind with a generated schema`);
      for (const { file, object } of checked) deepStrictEqual(errorsOf(object), [], `${file}: ${object.kind}`);
    });
  }

  it('covers BackendPool, LoadBalancerPolicy, GatewayParameters and InferencePool', () => {
    const seen = new Set(all.filter((m) => errorsOf(m.object) !== undefined).map((m) => m.object.kind));
    deepStrictEqual([...seen].sort(), ['BackendPool', 'GatewayParameters', 'InferencePool', 'LoadBalancerPolicy']);
  });

  it('the schemas reject what they should, so the checks above can fail', () => {
    const pool = all.find((m) => m.object.kind === 'BackendPool')!.object as { kind?: string; spec: Record<string, unknown> };
    const broken = structuredClone(pool);
    broken.spec.targetPorts = [{ number: 70000 }];
    broken.spec.surprise = true;
    deepStrictEqual(errorsOf(broken as { kind?: string }), ['/spec must NOT have additional properties', '/spec/targetPorts/0/number must be <= 65535']);
    equal(errorsOf({ ...pool, apiVersion: 'extlb.dev/v1alpha1', kind: 'BackendPool', spec: undefined } as never)?.[0], "/ must have required property 'spec'");
  });
});
