// The authored API (schemas/) against the API-review lint, and the generated CRDs against the
// API server's structural-schema rules and CEL parsing.
import { deepStrictEqual, equal, match, ok } from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { crdObject } from '../src/crds.js';
import { formatFindings, lintSchemas } from '../src/lint.js';
import { REPO_ROOT } from '../src/main.js';
import { checkCelRule, checkStructural } from '../src/structural.js';
import { loadSchemas, type JsonObject } from '../src/source.js';

const api = loadSchemas(join(REPO_ROOT, 'schemas'));

describe('schema lint', () => {
  it('passes on schemas/', () => equal(formatFindings(lintSchemas(api)), ''));

  const dir = mkdtempSync(join(tmpdir(), 'extlb-lint-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports file:line:col and the reason for each lapse', () => {
    writeFileSync(
      join(dir, 'thing.yaml'),
      `$id: thing.yaml
x-extlb-crd: {group: a.dev, version: v1, kind: Thing, plural: things, singular: thing, listKind: ThingList, shortNames: [], categories: [], publish: true, printerColumns: []}
type: object
properties:
  spec:
    description: spec is the spec.
    type: object
    properties:
      name:
        type: string
        maxLength: 10
      tags:
        description: tags tag the thing.
        type: array
        items:
          type: string
          maxLength: 5
      note:
        description: note is free text.
        type: string
      labels:
        description: labels label the thing.
        type: object
        additionalProperties:
          type: string
          maxLength: 63
`,
    );
    const findings = formatFindings(lintSchemas(loadSchemas(dir))).split('\n');
    const file = join(dir, 'thing.yaml');
    deepStrictEqual(findings, [
      `${file}:10:9: properties.spec.properties.name: property has no description`,
      `${file}:13:9: properties.spec.properties.tags: list has no maxItems`,
      `${file}:19:9: properties.spec.properties.note: string has no maxLength, enum or pattern`,
      `${file}:22:9: properties.spec.properties.labels: map has no maxProperties`,
    ]);
  });
});

describe('generated CRDs are structural and their CEL rules are sound', () => {
  for (const kind of api.kinds) {
    it(kind.crd.kind, () => {
      const crd = crdObject(api, kind, 'v0.0.0') as { spec: { versions: { schema: { openAPIV3Schema: JsonObject } }[] } };
      deepStrictEqual(checkStructural(crd.spec.versions[0]!.schema.openAPIV3Schema), []);
    });
  }

  it('counts every CEL rule it checks', () => {
    let rules = 0;
    const count = (v: unknown): void => {
      if (Array.isArray(v)) {
        v.forEach(count);
        return;
      }
      if (v && typeof v === 'object') {
        for (const [k, c] of Object.entries(v)) if (k === 'x-kubernetes-validations' && Array.isArray(c)) rules += c.length;
        Object.values(v).forEach(count);
      }
    };
    for (const kind of api.kinds) count(crdObject(api, kind, 'v0').spec);
    ok(rules >= 20, `expected the API to carry at least 20 CEL rules, found ${rules}`);
  });
});

describe('structural checker catches what the API server rejects', () => {
  const obj = (props: JsonObject, extra: JsonObject = {}): JsonObject => ({ type: 'object', properties: props, ...extra });
  const reasons = (s: JsonObject) => checkStructural(s).map((p) => `${p.path}: ${p.reason}`);

  it('untyped nodes and leftover $ref', () => {
    deepStrictEqual(reasons(obj({ a: { description: 'x' }, b: { $ref: '#/x', type: 'string' } })), [
      'a: node has no type',
      'b: keyword "$ref" is not allowed in a CRD schema',
    ]);
  });

  it('properties next to additionalProperties', () => {
    deepStrictEqual(reasons(obj({ a: { type: 'string' } }, { additionalProperties: false })), [
      '(root): properties and additionalProperties are mutually exclusive',
    ]);
  });

  it('int-or-string in a form the API server refuses', () => {
    deepStrictEqual(reasons(obj({ a: { type: 'string', 'x-kubernetes-int-or-string': true } })), [
      'a: x-kubernetes-int-or-string needs no type and, if any, anyOf [{type: integer}, {type: string}]',
    ]);
    deepStrictEqual(reasons(obj({ a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } })), []);
  });

  it('defaults that break their own schema', () => {
    const [problem] = reasons(obj({ a: { type: 'integer', minimum: 1, default: 0 } }));
    match(problem!, /^a: default 0 is not valid against its own schema: data must be >= 1$/);
  });

  it('list-map keys that are neither required nor defaulted', () => {
    const list = {
      type: 'array',
      maxItems: 2,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: obj({ name: { type: 'string' } }),
    };
    deepStrictEqual(reasons(obj({ l: list })), ['l: list-map key "name" must be required or defaulted']);
  });

  it('metadata with more than a type', () => {
    deepStrictEqual(reasons(obj({ metadata: { type: 'object', properties: { name: { type: 'string' } } } })), [
      'metadata: metadata may only say type: object (found properties)',
    ]);
  });

  it('CEL rules that do not parse or name missing fields', () => {
    const self = obj({ type: { type: 'string' }, refs: { type: 'array', items: obj({ name: { type: 'string' } }) } });
    deepStrictEqual(checkCelRule("self.type == 'A'", self), []);
    deepStrictEqual(checkCelRule('self.refs.all(r, r.name != "")', self), []);
    deepStrictEqual(checkCelRule('self.refs.all(r, r.nmae != "")', self), ['names field "nmae", which does not exist (fields: name)']);
    deepStrictEqual(checkCelRule('has(self.typ)', self), ['names field "typ", which does not exist (fields: type, refs)']);
    match(checkCelRule('self.type ==', self)[0]!, /^does not parse: /);
  });
});
