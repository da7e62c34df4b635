// Every schema limit of every kind, allowed and denied, with the API server's exact message. The
// locations come from the authored schemas, so a limit added to schemas/ is tested without edits
// here; the literal table at the top pins the message formats themselves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openApiSchema } from '../../../tools/codegen/src/crds.js';
import { loadSchemas } from '../../../tools/codegen/src/source.js';
import { validate } from '../src/index.js';
import type { FieldError } from '../src/types.js';
import { backendPool, everyField, fixtures, inferencePool, loadBalancerPolicy, parsePath, REMOVE, withField } from './fixtures.js';

const messages = (o: unknown) => validate(o).errors.map((e) => e.message);

describe('schema limits: literal messages', () => {
  const cases: [string, () => unknown, string][] = [
    [
      'maxItems',
      () =>
        withField(
          backendPool(),
          'spec.targetPorts',
          Array.from({ length: 9 }, (_, i) => ({ number: 8000 + i })),
        ),
      'spec.targetPorts: Too many: 9: must have at most 8 items',
    ],
    [
      'minItems',
      () => withField(backendPool(), 'spec.targetPorts', []),
      'spec.targetPorts: Invalid value: 0: spec.targetPorts in body should have at least 1 items',
    ],
    [
      'maximum',
      () => withField(backendPool(), 'spec.targetPorts[0].number', 70000),
      'spec.targetPorts[0].number: Invalid value: 70000: spec.targetPorts[0].number in body should be less than or equal to 65535',
    ],
    [
      'minimum',
      () => withField(backendPool(), 'spec.targetPorts[0].number', 0),
      'spec.targetPorts[0].number: Invalid value: 0: spec.targetPorts[0].number in body should be greater than or equal to 1',
    ],
    [
      'enum',
      () => withField(backendPool(), 'spec.loadBalancer.type', 'Fastest'),
      'spec.loadBalancer.type: Unsupported value: "Fastest": supported values: "External", "RoundRobin", "LeastRequest", "Random", "RingHash", "Maglev"',
    ],
    [
      'enum (appProtocol)',
      () => withField(backendPool(), 'spec.appProtocol', 'grpc'),
      'spec.appProtocol: Unsupported value: "grpc": supported values: "http", "kubernetes.io/h2c"',
    ],
    ['required', () => withField(backendPool(), 'spec.selector', REMOVE), 'spec.selector: Required value'],
    [
      'required (list item)',
      () => withField(backendPool(), 'spec.loadBalancer.external.refs[0].name', REMOVE),
      'spec.loadBalancer.external.refs[0].name: Required value',
    ],
    [
      'maxLength',
      () => withField(backendPool(), 'spec.loadBalancer.external.refs[0].name', 'n'.repeat(254)),
      'spec.loadBalancer.external.refs[0].name: Too long: may not be more than 253 bytes',
    ],
    [
      'minLength',
      () => withField(backendPool(), 'spec.loadBalancer.external.refs[0].name', ''),
      'spec.loadBalancer.external.refs[0].name: Invalid value: "": spec.loadBalancer.external.refs[0].name in body should be at least 1 chars long',
    ],
    [
      'pattern',
      () => withField(backendPool(), 'spec.loadBalancer.external.messageTimeout', '2 seconds'),
      'spec.loadBalancer.external.messageTimeout: Invalid value: "2 seconds": spec.loadBalancer.external.messageTimeout in body should match \'^([0-9]{1,5}(h|m|s|ms)){1,4}$\'',
    ],
    [
      'maxProperties',
      () => withField(backendPool(), 'spec.selector.matchLabels', Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']))),
      'spec.selector.matchLabels: Too many: 65: must have at most 64 items',
    ],
    [
      'minProperties',
      () => withField(backendPool(), 'spec.selector.matchLabels', {}),
      'spec.selector.matchLabels: Invalid value: 0: spec.selector.matchLabels in body should have at least 1 properties',
    ],
    [
      'map value pattern',
      () => withField(backendPool(), 'spec.selector.matchLabels.app', '-bad-'),
      'spec.selector.matchLabels.app: Invalid value: "-bad-": spec.selector.matchLabels.app in body should match \'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$\'',
    ],
    [
      'type (string for integer)',
      () => withField(backendPool(), 'spec.targetPorts[0].number', '80'),
      'spec.targetPorts[0].number: Invalid value: "string": spec.targetPorts[0].number in body must be of type integer: "string"',
    ],
    [
      'type (double for int32)',
      () => withField(backendPool(), 'spec.targetPorts[0].number', 80.5),
      'spec.targetPorts[0].number: Invalid value: "double": spec.targetPorts[0].number in body must be of type int32: "double"',
    ],
    [
      'type (object for string)',
      () => withField(backendPool(), 'spec.appProtocol', { a: 1 }),
      'spec.appProtocol: Invalid value: "object": spec.appProtocol in body must be of type string: "object"',
    ],
    [
      'type (array for object)',
      () => withField(backendPool(), 'spec.loadBalancer', []),
      'spec.loadBalancer: Invalid value: "array": spec.loadBalancer in body must be of type object: "array"',
    ],
    [
      'date-time',
      () => withField(backendPool(), 'status.parents[0].conditions[0].lastTransitionTime', 'yesterday'),
      'status.parents[0].conditions[0].lastTransitionTime: Invalid value: "yesterday": status.parents[0].conditions[0].lastTransitionTime in body must be of type date-time: "yesterday"',
    ],
    [
      'list-type map duplicate',
      () =>
        withField(backendPool(), 'status.parents[0].conditions', [
          { type: 'Accepted', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'A', message: '' },
          { type: 'Accepted', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'B', message: '' },
        ]),
      'status.parents[0].conditions[1]: Duplicate value: {"type":"Accepted"}',
    ],
    [
      'LoadBalancerPolicy maxItems',
      () =>
        withField(
          loadBalancerPolicy(),
          'spec.targetRefs',
          Array.from({ length: 17 }, (_, i) => ({ group: '', kind: 'Service', name: `s${i}` })),
        ),
      'spec.targetRefs: Too many: 17: must have at most 16 items',
    ],
    [
      'LoadBalancerPolicy status minItems',
      () => withField(loadBalancerPolicy(), 'status.ancestors[0].conditions', []),
      'status.ancestors[0].conditions: Invalid value: 0: status.ancestors[0].conditions in body should have at least 1 items',
    ],
    [
      'InferencePool enum',
      () => withField(inferencePool(), 'spec.endpointPickerRef.failureMode', 'FailSometimes'),
      'spec.endpointPickerRef.failureMode: Unsupported value: "FailSometimes": supported values: "FailOpen", "FailClose"',
    ],
  ];
  for (const [name, make, expected] of cases) {
    it(`${name}: ${expected.slice(0, 60)}`, () => assert.ok(messages(make()).includes(expected), `got ${JSON.stringify(messages(make()), null, 1)}`));
  }

  it('a blocking error (Required, Unsupported, Too long, Too many, type) skips CEL and says so', () => {
    const m = messages(withField(withField(backendPool(), 'spec.targetPorts', [{ number: 80 }, { number: 80 }]), 'spec.appProtocol', 'grpc'));
    assert.deepEqual(m, [
      'spec.appProtocol: Unsupported value: "grpc": supported values: "http", "kubernetes.io/h2c"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('a non-blocking error (pattern, maximum) still runs CEL', () => {
    const m = messages(withField(withField(backendPool(), 'spec.targetPorts', [{ number: 70000 }, { number: 70000 }]), 'spec.appProtocol', 'http'));
    assert.deepEqual(m, [
      'spec.targetPorts[0].number: Invalid value: 70000: spec.targetPorts[0].number in body should be less than or equal to 65535',
      'spec.targetPorts[1].number: Invalid value: 70000: spec.targetPorts[1].number in body should be less than or equal to 65535',
      'spec.targetPorts: Invalid value: "array": port number must be unique',
    ]);
  });

  it('every fixture is valid as written', () => {
    for (const make of Object.values(fixtures)) assert.deepEqual(validate(make()).errors, []);
  });
});

// ---- The sweep: every limit at every location of every kind. ----

interface Limit {
  kind: keyof typeof fixtures;
  /** Location with `[]` for list items and `[*]` for map values. */
  at: string;
  keyword: string;
  node: Record<string, any>;
}

const set = loadSchemas(new URL('../../../schemas', import.meta.url).pathname);
const KEYWORDS = [
  'maxLength',
  'minLength',
  'pattern',
  'maximum',
  'minimum',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'enum',
  'required',
  'format',
];

function limitsOf(kind: keyof typeof fixtures, node: Record<string, any>, at: string, out: Limit[]): Limit[] {
  for (const keyword of KEYWORDS) if (node[keyword] !== undefined) out.push({ kind, at, keyword, node });
  for (const [p, child] of Object.entries(node.properties ?? {})) limitsOf(kind, child as Record<string, any>, at ? `${at}.${p}` : p, out);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') limitsOf(kind, node.additionalProperties, `${at}[*]`, out);
  if (node.items) limitsOf(kind, node.items, `${at}[]`, out);
  return out;
}

/** The concrete path in a fixture: first list item, first map key. */
function concrete(object: unknown, at: string): string {
  let value: any = object;
  let path = '';
  for (const m of at.matchAll(/([^.[\]]+)|\[\]|\[\*\]/g)) {
    if (m[0] === '[]') {
      path += '[0]';
      value = value?.[0];
    } else if (m[0] === '[*]') {
      const key = Object.keys(value ?? {})[0]!;
      path += `.${key}`;
      value = value?.[key];
    } else {
      path += path ? `.${m[1]}` : m[1];
      value = value?.[m[1]!];
    }
  }
  return path;
}

function get(object: unknown, path: string): any {
  return parsePath(path).reduce((v: any, p) => v?.[p], object);
}

/** The denied value for a limit and the message the API server gives for it. */
function denied(limit: Limit, p: string, base: unknown): { value: unknown; message: string }[] {
  const n = limit.node[limit.keyword];
  switch (limit.keyword) {
    case 'maxLength':
      return [{ value: 'a'.repeat(n + 1), message: `${p}: Too long: may not be more than ${n} bytes` }];
    case 'minLength':
      return n === 0 ? [] : [{ value: '', message: `${p}: Invalid value: "": ${p} in body should be at least ${n} chars long` }];
    case 'pattern':
      return [{ value: ' ', message: `${p}: Invalid value: " ": ${p} in body should match '${n}'` }];
    case 'maximum':
      return [{ value: n + 1, message: `${p}: Invalid value: ${n + 1}: ${p} in body should be less than or equal to ${n}` }];
    case 'minimum':
      return [{ value: n - 1, message: `${p}: Invalid value: ${n - 1}: ${p} in body should be greater than or equal to ${n}` }];
    case 'maxItems': {
      const item = get(base, p)[0];
      return [{ value: Array.from({ length: n + 1 }, () => structuredClone(item)), message: `${p}: Too many: ${n + 1}: must have at most ${n} items` }];
    }
    case 'minItems':
      return [{ value: [], message: `${p}: Invalid value: 0: ${p} in body should have at least ${n} items` }];
    case 'maxProperties':
      return [
        {
          value: Object.fromEntries(Array.from({ length: n + 1 }, (_, i) => [`k${i}`, 'v'])),
          message: `${p}: Too many: ${n + 1}: must have at most ${n} items`,
        },
      ];
    case 'minProperties':
      return [{ value: {}, message: `${p}: Invalid value: 0: ${p} in body should have at least ${n} properties` }];
    case 'enum':
      return [
        { value: 'NotAValue', message: `${p}: Unsupported value: "NotAValue": supported values: ${(n as string[]).map((v) => JSON.stringify(v)).join(', ')}` },
      ];
    case 'format':
      if (n === 'date-time') return [{ value: 'yesterday', message: `${p}: Invalid value: "yesterday": ${p} in body must be of type date-time: "yesterday"` }];
      return [{ value: 1.5, message: `${p}: Invalid value: "double": ${p} in body must be of type ${n}: "double"` }];
    default:
      return [];
  }
}

/** Boundary values the limit allows. */
function allowed(limit: Limit): unknown[] {
  const n = limit.node[limit.keyword];
  switch (limit.keyword) {
    case 'maximum':
    case 'minimum':
      return [n];
    case 'maxLength':
      return limit.node.pattern || limit.node.format ? [] : ['a'.repeat(n)];
    case 'enum':
      return n;
    case 'format':
      return n === 'date-time' ? ['2026-05-06T07:08:09.123+02:00'] : [limit.node.maximum ?? 2147483647];
    default:
      return [];
  }
}

/** Errors that are the schema's (not CEL's) at exactly `p`. */
function schemaErrorsAt(errors: FieldError[], p: string): FieldError[] {
  return errors.filter((e) => e.field === p && (e.type !== 'Invalid value' || e.detail.includes(' in body ')));
}

describe('schema limits: every location of every kind', () => {
  const kinds = set.kinds.map((k) => ({ name: k.crd.kind as keyof typeof fixtures, schema: openApiSchema(set, k) as Record<string, any> }));
  let total = 0;
  for (const { name, schema } of kinds) {
    // apiVersion and kind name the schema; a different value is a different (unvalidated) kind.
    const limits = limitsOf(name, schema, '', []).filter((l) => l.at !== 'apiVersion' && l.at !== 'kind');
    const base = everyField(name);
    for (const limit of limits) {
      const p = concrete(base, limit.at);
      if (limit.keyword === 'required') {
        for (const field of limit.node.required as string[]) {
          const target = p ? `${p}.${field}` : field;
          total++;
          it(`${name} ${target}: Required value`, () => {
            assert.ok(messages(withField(base, target, REMOVE)).includes(`${target}: Required value`));
          });
        }
        continue;
      }
      for (const { value, message } of denied(limit, p, base)) {
        total++;
        it(`${name} ${limit.at} ${limit.keyword}: denied`, () => {
          const got = messages(withField(base, p, value));
          assert.ok(got.includes(message), `want ${message}\ngot ${JSON.stringify(got, null, 1)}`);
        });
      }
      for (const value of allowed(limit)) {
        it(`${name} ${limit.at} ${limit.keyword}: allows ${JSON.stringify(value).slice(0, 30)}`, () => {
          assert.deepEqual(schemaErrorsAt(validate(withField(base, p, value)).errors, p), []);
        });
      }
    }
  }
  it('covers every limit location', () => assert.ok(total > 250, `only ${total} denied cases`));
});
