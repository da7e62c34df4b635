// Hostile input to the converter: what the API server accepts but Envoy refuses is reported as
// invalid and never emitted (one tenant's route cannot break a shared Gateway), selectors never
// fail open, and convert() neither throws nor grows faster than its input, whatever it is given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type ConvertResult, convert, DEFAULT_MAX_OUTPUT_BYTES, type EnvoyConfig, jsonSize, toBootstrap, toXds } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { type PickerEstateSize, pickerEstate, routeBackendPairs } from './picker-estate.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const validator = loadEnvoyValidator('1.35');

const gateway = (listeners: Json[] = [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'extlb', listeners },
});
const route = (spec: Json, name = 'r', namespace = 'default'): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace },
  spec: { parentRefs: [{ name: 'gw', namespace: 'default' }], ...spec },
});
const api = [
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'api-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'api' } },
    ports: [{ name: 'http', port: 80 }],
    endpoints: [{ addresses: ['10.0.0.1'] }],
  },
];
/** A healthy route beside the hostile one: it must keep working. */
const healthy = route({ hostnames: ['ok.example.com'], rules: [{ backendRefs: [{ name: 'api', port: 80 }] }] }, 'healthy');

/** Every Gateway's configuration loads in Envoy. */
function loads(r: ConvertResult): void {
  for (const [name, config] of Object.entries(r.gateways)) {
    assert.deepEqual(validator.validateBootstrap(toBootstrap(config)), [], `${name}: bootstrap`);
    assert.deepEqual(validator.validateXds(toXds(config)), [], `${name}: xDS`);
  }
}

function routeConditions(r: ConvertResult, name: string): Json {
  const s = r.statuses.find((x) => x.kind === 'HTTPRoute' && (x.metadata as Json).name === name) as Json;
  return Object.fromEntries(s.status.parents[0].conditions.map((c: Json) => [c.type, c]));
}

/** Converts the hostile route beside a healthy one; both statuses and the output are checked. */
function hostile(rules: Json[], extra: Json = {}): { r: ConvertResult; conditions: Json; json: string } {
  const r = convert([gateway(), healthy, route({ rules, ...extra }), ...api], { now: NOW });
  loads(r);
  assert.equal(routeConditions(r, 'healthy').Accepted.status, 'True', 'the other route is untouched');
  return { r, conditions: routeConditions(r, 'r'), json: JSON.stringify(r.gateways) };
}

test('a header modifier may not set or remove Host: the entry is invalid, the rest of the route stands', () => {
  const { conditions, json } = hostile([
    {
      filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Host', value: 'evil.example.com' }], remove: ['host'] } }],
      backendRefs: [{ name: 'api', port: 80 }],
    },
  ]);
  assert.equal(conditions.PartiallyInvalid?.status, 'True');
  assert.match(conditions.PartiallyInvalid.message, /the Host header cannot be set or removed by a header modifier/);
  assert.doesNotMatch(json, /evil\.example\.com/);
});

test("'%' in a header value is sent literally, never read as an Envoy command; CR and LF are refused", () => {
  const { r, conditions } = hostile([
    {
      filters: [
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: {
            set: [
              { name: 'x-share', value: '50%' },
              { name: 'x-peer', value: '%DOWNSTREAM_REMOTE_ADDRESS%' },
              { name: 'x-split', value: 'a\r\nX-Injected: 1' },
            ],
          },
        },
      ],
      backendRefs: [{ name: 'api', port: 80 }],
    },
  ]);
  const values = JSON.stringify(r.gateways).match(/"x-(share|peer)","value":"[^"]*"/g);
  assert.deepEqual(values, ['"x-share","value":"50%%"', '"x-peer","value":"%%DOWNSTREAM_REMOTE_ADDRESS%%"']);
  assert.match(conditions.PartiallyInvalid?.message ?? '', /x-split|set\[2\].*NUL, CR or LF/);
});

test('regexes are checked with RE2 and the program size Envoy allows', () => {
  for (const [regex, why] of [
    ['/a{1001}', /invalid repeat count/],
    ['/a{100}', /RE2 program of size \d+, over Envoy's limit of 100/],
    ['/(?<=x)y', /not a valid RE2 regular expression/],
    ['/(a)\\1', /not a valid RE2 regular expression/],
  ] as const) {
    const { conditions } = hostile([{ matches: [{ path: { type: 'RegularExpression', value: regex } }], backendRefs: [{ name: 'api', port: 80 }] }]);
    assert.equal(conditions.Accepted.status, 'False', regex);
    assert.match(conditions.Accepted.message, why, regex);
  }
});

test('a retry whose attempts need a timeout past the longest Duration, and weights past a uint32, make the rule invalid', () => {
  const slow = hostile([{ backendRefs: [{ name: 'api', port: 80 }], timeouts: { request: '0s', backendRequest: '99999h' }, retry: { attempts: 1000 } }]);
  assert.match(slow.conditions.PartiallyInvalid?.message ?? slow.conditions.Accepted.message, /longer than the longest Envoy can express/);
  const heavy = hostile([{ backendRefs: Array.from({ length: 5000 }, () => ({ name: 'api', port: 80, weight: 1_000_000 })) }]);
  assert.match(heavy.conditions.PartiallyInvalid?.message ?? heavy.conditions.Accepted.message, /weights sum to 5000000000, more than Envoy can add up/);
});

test('hostnames Envoy cannot serve: an empty one, a NUL, a partial wildcard; a redirect port out of range', () => {
  const r1 = hostile([{ backendRefs: [{ name: 'api', port: 80 }] }], { hostnames: ['', 'a\u0000.example.com', 'ok2.example.com'] });
  assert.equal(r1.conditions.Accepted.status, 'True', 'the usable hostname is still served');
  assert.match(r1.conditions.PartiallyInvalid?.message ?? '', /spec\.hostnames\[0\].*spec\.hostnames\[1\]/s);
  assert.doesNotMatch(r1.json, /\\u0000|"domains":\[""\]/);
  assert.match(r1.json, /"domains":\["ok2\.example\.com"\]/);
  const r2 = hostile([{ filters: [{ type: 'RequestRedirect', requestRedirect: { port: 70000 } }] }]);
  assert.match(r2.conditions.PartiallyInvalid?.message ?? '', /requestRedirect\.port: must be an integer between 1 and 65535/);
  assert.doesNotMatch(r2.json, /70000/);
  const partial = convert([gateway([{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*foo.example.com' }]), ...api], { now: NOW });
  loads(partial);
  const listener = ((partial.statuses[0] as Json).status.listeners as Json[])[0] as Json;
  assert.equal(listener.conditions.find((c: Json) => c.type === 'Accepted').status, 'False');
  assert.match(listener.conditions.find((c: Json) => c.type === 'Accepted').message, /not a hostname/);
  assert.doesNotMatch(JSON.stringify(partial.gateways), /\*foo/);
});

test('selectors never fail open: __proto__ is a label key like any other', () => {
  const pool = {
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'BackendPool',
    metadata: { name: 'p', namespace: 'default' },
    spec: { selector: { matchLabels: JSON.parse('{"app":"api","__proto__":"never"}') }, targetPorts: [{ number: 8000 }] },
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p-0', namespace: 'default', labels: { app: 'api' } },
    status: { phase: 'Running', podIP: '10.0.0.9' },
  };
  const r = convert([gateway(), route({ rules: [{ backendRefs: [{ group: 'extlb.dev', kind: 'BackendPool', name: 'p' }] }] }), pool, pod], { now: NOW });
  assert.doesNotMatch(JSON.stringify(r.gateways), /10\.0\.0\.9/, 'a Pod without the __proto__ label is not selected');
  const listener = {
    name: 'http',
    port: 80,
    protocol: 'HTTP',
    allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: JSON.parse('{"__proto__":"x"}') } } },
  };
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } };
  const r2 = convert([gateway([listener]), route({ rules: [{ backendRefs: [{ name: 'api', port: 80 }] }] }, 'r', 'other'), ns, ...api], { now: NOW });
  assert.equal(routeConditions(r2, 'r').Accepted.status, 'False', 'a namespace without the label is not admitted');
});

test('convert() does not throw on deep nesting, huge or deeply nested Lists, or many copies, and stays linear', () => {
  let deep: Json = { leaf: true };
  for (let i = 0; i < 20_000; i++) deep = { a: deep };
  const nested = convert([{ ...route({ rules: [{ backendRefs: [{ name: 'api', port: 80 }] }] }), extra: deep }, gateway(), ...api], { now: NOW });
  loads(nested);
  let list: Json = gateway();
  for (let i = 0; i < 20_000; i++) list = { apiVersion: 'v1', kind: 'List', items: [list] };
  assert.equal(Object.keys(convert([list], { now: NOW }).gateways).length, 1);
  // 150k items: more than a call can take as spread arguments; every one is reported, none dropped.
  const many = Array.from({ length: 150_000 }, (_, i) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w${i}`, namespace: 'default' } }));
  assert.equal(convert([{ apiVersion: 'v1', kind: 'List', items: many }], { now: NOW }).diagnostics.filter((d) => d.code === 'IgnoredKind').length, 150_000);
  // Copies of one object: duplicate detection is linear (work is counted, not timed).
  const copies = (n: number) =>
    convert(
      Array.from({ length: n }, () => healthy),
      { now: NOW },
    ).diagnostics.find((d) => d.code === 'Duplicate')?.message;
  assert.match(copies(20_000) ?? '', /appears 20000 times/);
});

/** Bytes of the bootstrap per Envoy route × weighted cluster, for an estate of that size. */
function bytesPerPair(size: PickerEstateSize): number {
  const r = convert(pickerEstate(size), { now: NOW });
  const config = r.gateways['default/gw'] as EnvoyConfig;
  loads(r);
  return JSON.stringify(toBootstrap(config)).length / routeBackendPairs(size);
}

test('output grows linearly with the input: one route of 16 rules × 8 matches × 16 External pools', () => {
  // Each weighted cluster carries its own picker's config (and at most the route level's turned
  // off), not one entry per picker filter of the route: twice the pools or the matches, twice the bytes.
  const base = bytesPerPair({ routes: 1, rules: 16, matches: 8, pools: 8 });
  const pools = bytesPerPair({ routes: 1, rules: 16, matches: 8, pools: 16 });
  const matches = bytesPerPair({ routes: 1, rules: 16, matches: 16, pools: 8 });
  for (const [what, perPair] of [
    ['16 pools', pools],
    ['16 matches', matches],
  ] as const) {
    assert.ok(perPair / base > 0.8 && perPair / base < 1.25, `${what}: ${perPair.toFixed(0)} bytes per route × backend, against ${base.toFixed(0)} with 8`);
  }
});

test('past maxOutputBytes a Gateway gets OutputTooLarge and no configuration; the size is counted exactly, without writing it', () => {
  const size = { routes: 1, rules: 16, matches: 8, pools: 16 };
  const whole = convert(pickerEstate(size), { now: NOW });
  const config = whole.gateways['default/gw'] as EnvoyConfig;
  const bytes = JSON.stringify(config).length;
  assert.equal(jsonSize(config, Number.POSITIVE_INFINITY), bytes);
  assert.ok(jsonSize(config, 1000) < 2000, 'counting stops soon after the limit');
  assert.ok(bytes < DEFAULT_MAX_OUTPUT_BYTES);
  const bounded = convert(pickerEstate(size), { now: NOW, maxOutputBytes: bytes - 1 });
  assert.deepEqual(Object.keys(bounded.gateways), []);
  const [error] = bounded.diagnostics.filter((d) => d.severity === 'error');
  assert.deepEqual([error?.code, error?.object], ['OutputTooLarge', { kind: 'Gateway', namespace: 'default', name: 'gw' }]);
  assert.match(error?.message ?? '', new RegExp(`more than ${bytes - 1} bytes`));
  assert.deepEqual(Object.keys(convert(pickerEstate(size), { now: NOW, maxOutputBytes: bytes }).gateways), ['default/gw']);
});

test('fuzz: arbitrary objects never make convert() throw, and whatever it emits loads in Envoy', () => {
  const value = fc.letrec((tie) => ({
    any: fc.oneof(
      { depthSize: 'small' },
      fc.string({ maxLength: 8 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('any'), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie('any'), { maxKeys: 3 }),
    ),
  })).any;
  const kinds = [
    'Gateway',
    'HTTPRoute',
    'Service',
    'EndpointSlice',
    'BackendPool',
    'LoadBalancerPolicy',
    'InferencePool',
    'ReferenceGrant',
    'Namespace',
    'List',
  ];
  const apiVersion: Record<string, string> = {
    Gateway: 'gateway.networking.k8s.io/v1',
    HTTPRoute: 'gateway.networking.k8s.io/v1',
    ReferenceGrant: 'gateway.networking.k8s.io/v1beta1',
    Service: 'v1',
    Namespace: 'v1',
    List: 'v1',
    EndpointSlice: 'discovery.k8s.io/v1',
    BackendPool: 'extlb.dev/v1alpha1',
    LoadBalancerPolicy: 'extlb.dev/v1alpha1',
    InferencePool: 'inference.networking.k8s.io/v1',
  };
  const object = fc.record({ kind: fc.constantFrom(...kinds), name: fc.constantFrom('a', 'gw', 'api', '__proto__'), spec: value, items: value });
  fc.assert(
    fc.property(fc.array(object, { maxLength: 6 }), (objs) => {
      const input = [
        gateway(),
        healthy,
        ...api,
        ...objs.map((o) => ({ apiVersion: apiVersion[o.kind], kind: o.kind, metadata: { name: o.name, namespace: 'default' }, spec: o.spec, items: o.items })),
      ];
      const r = convert(input, { now: NOW });
      loads(r);
      // Output stays proportional to input: a small world gives a small configuration.
      assert.ok(JSON.stringify(r.gateways).length < 200_000 + 50 * JSON.stringify(input).length);
    }),
    { numRuns: 150, interruptAfterTimeLimit: 30_000 },
  );
});

test('fuzz: hostile values in the fields Envoy checks at load never reach the output, and the healthy route keeps working', () => {
  // Strings built from the characters the load rules are about: %, *, NUL, CR, LF, braces, colons.
  const nasty = fc.string({
    unit: fc.constantFrom('a', '%', '*', '.', '\u0000', '\r', '\n', '{', '1', '0', '}', '(', '?', '<', ':', 'H', 'o', 's', 't'),
    maxLength: 12,
  });
  const hostnames = fc.array(fc.oneof(nasty, fc.constantFrom('', '*', '*.a.com', 'a.*.com', 'ok.example.com', 'ok.example.com')), { maxLength: 3 });
  const rule = fc.record({
    regex: fc.oneof(nasty, fc.constantFrom('/a{1001}', '/a{100}', '/(a|b)*', '/x{2,3}')),
    header: fc.record({ name: fc.constantFrom('Host', 'host', 'x-a', 'X-B'), value: nasty }),
    remove: fc.constantFrom('host', 'x-a'),
    port: fc.integer({ min: -5, max: 70_000 }),
    weight: fc.integer({ min: 0, max: 2 ** 33 }),
    backendRequest: fc.constantFrom('1s', '99999h', '0s', '1ms'),
    attempts: fc.integer({ min: 0, max: 2000 }),
  });
  fc.assert(
    fc.property(hostnames, fc.array(rule, { minLength: 1, maxLength: 3 }), (hosts, rules) => {
      const spec = rules.map((x, i) =>
        i % 2 === 0
          ? {
              matches: [{ path: { type: 'RegularExpression', value: x.regex } }],
              filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [x.header], remove: [x.remove] } }],
              backendRefs: [
                { name: 'api', port: 80, weight: x.weight },
                { name: 'api', port: 80, weight: x.weight },
              ],
              timeouts: { request: '0s', backendRequest: x.backendRequest },
              retry: { attempts: x.attempts },
            }
          : { filters: [{ type: 'RequestRedirect', requestRedirect: { port: x.port } }] },
      );
      // hostile() asserts that every Gateway loads in Envoy and the healthy route stays Accepted.
      const { r } = hostile(spec, { hostnames: hosts });
      assert.ok(r.statuses.length > 0);
    }),
    { numRuns: 200, interruptAfterTimeLimit: 30_000 },
  );
});

test('a kind or apiVersion nested 10,000 deep is a diagnostic on its field, not a RangeError', () => {
  let deep: unknown = 'Service';
  for (let i = 0; i < 10_000; i++) deep = [deep];
  for (const field of ['kind', 'apiVersion']) {
    const r = convert([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'default' }, [field]: deep }], { now: NOW });
    const d = r.diagnostics.find((x) => x.path === field);
    assert.equal(d?.severity, 'error', field);
    assert.equal(d?.message, `${field} must be a string, not a <list>; the manifest is ignored`);
  }
});
