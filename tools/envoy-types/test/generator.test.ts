// Golden tests of the generator on a small fixture proto set that uses every path: nested messages
// and enums, a type from another package, oneofs (required and not), maps, 64-bit integers, bytes,
// proto3 optional, deprecated fields, protoc-gen-validate rules and the well-known types. The
// goldens are type-checked with uses that must compile and misuses that must not.
import { deepStrictEqual, equal, ok } from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { protoRoots } from '@extlb/envoy/proto';
import protobuf from 'protobufjs';
import { matchGolden } from '../../codegen/test/golden.js';
import { typeErrors } from '../../codegen/test/typecheck.js';
import { TYPE_URL_PREFIX, generateTypes } from '../src/generate.js';
import { envoyTypes } from '../src/main.js';
import { ROOTS } from '../src/roots.js';

const fixture = join(import.meta.dirname, 'fixtures/shop');

function fixtureRoot(): protobuf.Root {
  const dirs = [join(fixture, 'protos'), ...protoRoots()];
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => dirs.map((d) => join(d, target)).find((p) => existsSync(p)) ?? target;
  root.loadSync(['shop/v1/shop.proto'], { keepCase: true });
  root.resolveAll();
  return root;
}

const generated = generateTypes(fixtureRoot(), ['shop.v1.Order', 'shop.v1.Receipt'], 'Code generated for the shop fixture. DO NOT EDIT.');

/** Compiles `use` beside the generated fixture modules; the errors it has. */
function compile(use: string): string[] {
  const files: Record<string, string> = { '/t/package.json': '{"type":"module"}', '/t/use.ts': use };
  for (const [path, content] of generated.files) files[`/t/gen/${path}`] = content;
  return typeErrors(files);
}

describe('the generator on the shop fixture', () => {
  it('writes one module per package reached, the well-known types and an index', () => {
    deepStrictEqual([...generated.files.keys()], ['google/protobuf.ts', 'index.ts', 'shop/common/v1.ts', 'shop/v1.ts']);
    equal(generated.types, 7, 'Order, Order.Line, Order.State, Delivery, Receipt, Money, Region and nothing unreached');
  });

  for (const [path, content] of generated.files) {
    it(`matches the golden ${path}`, () => matchGolden(join(fixture, 'golden', path), content));
  }

  it('leaves out what no root reaches and the deprecated fields', () => {
    const all = [...generated.files.values()].join('\n');
    equal(all.includes('Unused'), false);
    equal(all.includes('old_note'), false);
  });

  it('generates types that accept proto3 JSON and refuse misspelt fields and wrong shapes', () => {
    const use = `import type { Any, shop_v1 } from './gen/index.js';
const order: shop_v1.Order = {
  id: 'o-1',
  lines: [{ sku: 'tea', quantity: 2, price: { currency: 'EUR', units: '12', nanos: 500 } }],
  state: 'PLACED',
  labels: { channel: 'web' },
  hold: '1.5s',
  priority: 3,
  extra: { any: ['json', 1, null, { deep: true }] },
  attachments: [{ '@type': 'type.googleapis.com/shop.v1.Receipt' }],
  signature: 'AAEC',
  region: 'EU',
  gift: true,
  delivery: { pickup: {}, tracking: 7, fees: { post: { units: 3 } } },
  card: '4111',
};
const any: Any = { '@type': 'type.googleapis.com/shop.v1.Order', ...order };
const minimal: shop_v1.Order = { id: 'o-2', lines: [{ sku: 'x', quantity: 1 }], delivery: { address: 'here', fees: {} } };
// @ts-expect-error a misspelt field
const misspelt: shop_v1.Order = { ...minimal, lables: {} };
// @ts-expect-error a Duration is a string with an "s"
const duration: shop_v1.Order = { ...minimal, hold: 5 };
// @ts-expect-error an enum takes its names
const state: shop_v1.Order = { ...minimal, state: 'LOST' };
// @ts-expect-error two members of one oneof
const twoPayments: shop_v1.Order = { ...minimal, card: '4111', voucher: 'v' };
// @ts-expect-error a required oneof needs one member
const nowhere: shop_v1.Delivery = { fees: {} };
// @ts-expect-error protoc-gen-validate's required fields are required
const noId: shop_v1.Order = { lines: [], delivery: { address: 'a' } };
// @ts-expect-error an Any needs a known "@type"
const unknown: Any = { '@type': 'type.googleapis.com/shop.v1.Nothing' };
// @ts-expect-error an empty message's Any has nothing but "@type"
const extraKey: Any = { '@type': 'type.googleapis.com/shop.v1.Receipt', id: 'x' };
// @ts-expect-error deprecated fields are left out
const old: shop_v1.Order = { ...minimal, old_note: 'n' };
export { order, any, misspelt, duration, state, twoPayments, nowhere, noId, unknown, extraKey, old };
`;
    deepStrictEqual(compile(use), []);
  });

  it('is deterministic', () => {
    deepStrictEqual(generateTypes(fixtureRoot(), ['shop.v1.Order', 'shop.v1.Receipt'], 'Code generated for the shop fixture. DO NOT EDIT.'), generated);
  });
});

describe("the generator on Envoy's protos", () => {
  const envoy = envoyTypes();
  const any = envoy.files.get('google/protobuf.ts') ?? '';

  it('puts every root in the Any union, the L4, access-log and stats messages included', () => {
    for (const root of ROOTS) ok(any.includes(`'@type': '${TYPE_URL_PREFIX}${root}'`), root);
    for (const l4 of ['envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', 'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig'])
      ok(ROOTS.includes(l4), l4);
  });

  it("types every '@type' the converter writes", () => {
    const names = readFileSync(join(import.meta.dirname, '../../../packages/envoy/src/envoy/names.ts'), 'utf8');
    const urls = [...names.matchAll(/\$\{T\}([\w.]+)`/g)].map((m) => m[1]);
    ok(urls.length >= 20, `only ${urls.length} type URLs in names.ts`);
    for (const url of urls) ok(any.includes(`'@type': '${TYPE_URL_PREFIX}${url}'`), `${url} is not in the Any union`);
  });
});
