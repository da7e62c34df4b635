// The shortcuts that keep pushes cheap give the same answers as the long way round: the hand-read
// DiscoveryRequest, and a stream's diff in step with the previous version.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import { envoyProtos, SnapshotCache, TYPE_URL, type TypeResources } from '../src/index.js';
import { resourceNames, sotwRequestDecoder } from '../src/xds/sotw-request.js';
import { TypeState } from '../src/xds/stream.js';
import { Subscription } from '../src/xds/subscription.js';
import { gatewaySnapshot } from './helpers.js';

test('a DiscoveryRequest read by hand has the fields protobufjs reads, its names kept as bytes', () => {
  const root = envoyProtos();
  const type = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
  const decode = sotwRequestDecoder(root);
  const message = {
    version_info: 'v1',
    node: { id: 'envoy-1', cluster: 'default/gw' },
    resource_names: ['a', 'b', 'ünïcode'],
    resource_locators: [{ name: 'xdstp://x' }],
    type_url: TYPE_URL.endpoint,
    response_nonce: '7',
    error_detail: { code: 3, message: 'bad' },
  };
  const bytes = Buffer.from(type.encode(type.fromObject(message)).finish());
  const req = decode(bytes);
  assert.equal(req.version_info, 'v1');
  assert.equal(req.type_url, TYPE_URL.endpoint);
  assert.equal(req.response_nonce, '7');
  assert.deepEqual({ code: req.error_detail?.code, message: req.error_detail?.message }, { code: 3, message: 'bad' });
  assert.equal((req.node as { cluster: string }).cluster, 'default/gw');
  assert.deepEqual(resourceNames(req.namesBytes), ['a', 'b', 'ünïcode']);
  const again = decode(Buffer.from(type.encode(type.fromObject({ ...message, response_nonce: '8', version_info: 'v2' })).finish()));
  assert.ok(again.namesBytes.equals(req.namesBytes), 'an ACK repeating the names has the same name bytes');
  assert.ok(!decode(Buffer.from(type.encode(type.fromObject({ ...message, resource_names: ['a', 'b'] })).finish())).namesBytes.equals(req.namesBytes));

  // Names split by another field (legal protobuf, if unusual) are gathered.
  const w = protobuf.Writer.create();
  w.uint32(0x1a).string('x');
  w.uint32(0x22).string(TYPE_URL.route);
  w.uint32(0x1a).string('y');
  w.uint32(0x1a).string('z');
  w.uint32(0x38).uint32(5); // an unknown varint field is skipped
  const split = decode(Buffer.from(w.finish()));
  assert.equal(split.type_url, TYPE_URL.route);
  assert.deepEqual(resourceNames(split.namesBytes), ['x', 'y', 'z']);
  assert.deepEqual(resourceNames(decode(Buffer.alloc(0)).namesBytes), []);
});

test('long runs of names repeated by many proxies are matched whole, and read as protobufjs reads every request', () => {
  const root = envoyProtos();
  const type = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
  const decode = sotwRequestDecoder(root);
  const names = Array.from({ length: 120 }, (_, i) => `bpool/tenant-${i % 7}/pool-${i}`);
  // Lists that share a run of bytes with the one before: the same, one more, one less, one other,
  // a prefix; each sent with its names before or after the other fields, or split by one.
  const lists = [names, [...names, 'bpool/extra/one'], names.slice(0, -1), names.map((n, i) => (i === 60 ? 'other' : n)), names.slice(0, 30), names];
  let seed = 11;
  const random = (m: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % m;
  };
  for (let step = 0; step < 300; step++) {
    const list = lists[random(lists.length)] ?? names;
    const w = protobuf.Writer.create();
    const layout = random(3);
    const header = () => {
      w.uint32(0x0a).string(`v${step}`);
      w.uint32(0x22).string(TYPE_URL.endpoint);
      w.uint32(0x2a).string(String(step));
    };
    if (layout === 1) header();
    const cut = layout === 2 ? random(list.length) : list.length;
    for (const n of list.slice(0, cut)) w.uint32(0x1a).string(n);
    if (layout !== 1) header();
    for (const n of list.slice(cut)) w.uint32(0x1a).string(n);
    const bytes = Buffer.from(w.finish());
    const req = decode(bytes);
    const expected = type.decode(bytes) as unknown as { resource_names: string[]; version_info: string; response_nonce: string };
    assert.deepEqual(resourceNames(req.namesBytes), expected.resource_names, `step ${step}, layout ${layout}`);
    assert.equal(req.version_info, expected.version_info);
    assert.equal(req.response_nonce, expected.response_nonce);
    assert.equal(req.type_url, TYPE_URL.endpoint);
  }
  // A hundred proxies' ACKs of one list: after the first, each is that run, not bytes of its own.
  const ack = (nonce: string) =>
    decode(Buffer.from(type.encode(type.fromObject({ resource_names: names, type_url: TYPE_URL.endpoint, response_nonce: nonce })).finish()));
  ack('0');
  const kept = ack('1').namesBytes;
  assert.ok(Array.from({ length: 100 }, (_, i) => ack(String(i + 2)).namesBytes).every((b) => b === kept));
});

/** What a stream sends for `resources`, then records as held, as the streams do. */
function apply(state: TypeState, resources: TypeResources) {
  const result = state.diff(resources);
  for (const r of result.changed) state.known.set(r.name, r.version);
  for (const name of result.removed) state.known.delete(name);
  state.syncedWith = resources;
  return { changed: result.changed.map((r) => r.name).sort(), removed: result.removed.sort() };
}

/** The long way: every covered resource compared. */
function fullDiff(state: TypeState, resources: TypeResources) {
  const fresh = new TypeState(state.sub);
  for (const [k, v] of state.known) fresh.known.set(k, v);
  return apply(fresh, resources);
}

test('a stream in step with the previous version diffs only the changed names, and gets what a full comparison gets', () => {
  const cache = new SnapshotCache();
  const backends = (ports: number[]) => Object.fromEntries(ports.map((p, i) => [`default/gw/b${i}`, [`10.0.0.${i + 1}:${p}`]]));
  const endpoints = () => cache.getSnapshot('default/gw')?.types.get(TYPE_URL.endpoint) as TypeResources;
  cache.setSnapshot('default/gw', gatewaySnapshot('default/gw', { backends: backends([80, 80, 80, 80]) }));
  const named = new TypeState(Subscription.delta(['default/gw/b0', 'default/gw/b1', 'default/gw/b3'], [], false));
  const wildcard = new TypeState(Subscription.delta(['*'], [], false));
  assert.deepEqual(apply(named, endpoints()), { changed: ['default/gw/b0', 'default/gw/b1', 'default/gw/b3'], removed: [] });
  assert.deepEqual(apply(wildcard, endpoints()).changed.length, 4);

  // b1 changes, b2 (not subscribed by `named`) changes, b3 goes.
  cache.setSnapshot('default/gw', gatewaySnapshot('default/gw', { backends: backends([80, 81, 81]) }));
  const next = endpoints();
  assert.deepEqual([...(next.changes ?? [])].sort(), ['default/gw/b1', 'default/gw/b2', 'default/gw/b3']);
  for (const state of [named, wildcard]) {
    const expected = fullDiff(state, next);
    assert.equal(state.syncedWith, next.previous, 'in step: the short way is taken');
    assert.deepEqual(apply(state, next), expected);
  }
  assert.deepEqual(named.known.size, 2);

  // A stream that missed a version (it was blocked) compares everything, and still gets it right.
  const behind = new TypeState(Subscription.delta(['*'], [], false));
  apply(behind, next);
  cache.setSnapshot('default/gw', gatewaySnapshot('default/gw', { backends: backends([82, 81, 81]) }));
  cache.setSnapshot('default/gw', gatewaySnapshot('default/gw', { backends: backends([82, 81, 83, 84]) }));
  const latest = endpoints();
  assert.notEqual(behind.syncedWith, latest.previous);
  assert.deepEqual(apply(behind, latest), { changed: ['default/gw/b0', 'default/gw/b2', 'default/gw/b3'], removed: [] });
  assert.equal(next.previous, undefined, 'only one step back is kept');
});

test('what a proxy answered for is known name by name, and answering small responses never walks the large one every proxy shares', () => {
  /** A name set shared between streams, counting the walks over it. */
  class Shared extends Set<string> {
    walks = 0;
    override [Symbol.iterator]() {
      this.walks++;
      return super[Symbol.iterator]();
    }
    override values() {
      this.walks++;
      return super.values();
    }
  }
  const state = new TypeState(Subscription.delta(['*'], [], false));
  const first = new Shared(Array.from({ length: 2000 }, (_, i) => `c${i}`));
  /** The long way: every answered response's names, and what the stream still knows. */
  const answered: Set<string>[] = [];
  const reference = (name: string) => state.known.has(name) && answered.some((names) => names.has(name));
  let nonce = 0;
  const respond = (names: ReadonlySet<string>, answer = true) => {
    for (const name of names) state.known.set(name, `v${nonce}`);
    const n = String(++nonce);
    state.track(n, { version: `v${nonce}`, since: 0, names });
    if (answer) {
      state.answer(n);
      answered.push(new Set(names));
    }
    return n;
  };
  respond(first);
  first.walks = 0; // the walks above were this test's own
  for (let step = 0; step < 40; step++) {
    const names = new Set([`c${(step * 37) % 2000}`, `new${step}`]);
    const unanswered = step % 7 === 3 ? respond(new Set([`late${step}`]), false) : undefined;
    respond(names);
    if (step % 10 === 9) state.drop(`c${step}`);
    for (const name of ['c0', `c${step}`, `c${(step * 37) % 2000}`, `new${step}`, `new${step - 1}`, `late${step}`, 'c1999', 'none'])
      assert.equal(state.holds(name), reference(name), `step ${step}: ${name}`);
    if (unanswered) {
      state.answer(unanswered);
      answered.push(new Set([`late${step}`]));
      assert.equal(state.holds(`late${step}`), true);
    }
    if (step === 8) assert.equal(first.walks, 0, 'the first response, answered by every proxy, was not copied for this one');
  }
});
