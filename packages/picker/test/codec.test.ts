import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EndpointListError, formatEndpoint, formatEndpointList, parseEndpoint, parseEndpointList } from '../src/codec.js';

const addresses = (value: string, strict = false) => parseEndpointList(value, { strict }).endpoints.map((e) => e.address);
const reasons = (value: string, options = {}) => parseEndpointList(value, options).errors.map((e) => `${e.index}: ${e.reason}`);

test('parses IPv4 and IPv6 entries in order, tolerating whitespace as Envoy does', () => {
  assert.deepEqual(addresses(' 10.0.0.1:8000 ,\t[2001:db8::1]:80 , 127.0.0.1:1 '), ['10.0.0.1:8000', '[2001:db8::1]:80', '127.0.0.1:1']);
  const [v6] = parseEndpointList('[2001:db8::1]:80').endpoints;
  assert.equal(v6?.family, 6);
  assert.equal(v6?.ip, '2001:db8::1');
  assert.equal(v6?.port, 80);
  assert.equal(v6?.index, 0);
  assert.equal(v6?.canonical, true);
});

test('canonical IPv6 is what inet_ntop prints: lower case, no leading zeros, longest zero run compressed', () => {
  const cases: Array<[string, string]> = [
    ['[2001:DB8:0:0:0:0:0:1]:80', '[2001:db8::1]:80'],
    ['[2001:0db8:0000:0000:0001:0000:0000:0001]:80', '[2001:db8::1:0:0:1]:80'],
    ['[2001:db8:0:1:1:1:1:1]:80', '[2001:db8:0:1:1:1:1:1]:80'], // a single zero group stays
    ['[0:0:0:0:0:0:0:0]:1', '[::]:1'],
    ['[0:0:0:0:0:0:0:1]:1', '[::1]:1'],
    ['[1:0:0:2:0:0:0:3]:1', '[1:0:0:2::3]:1'], // the longer run wins
    ['[1:0:0:2:0:0:3:4]:1', '[1::2:0:0:3:4]:1'], // on a tie the first run wins
    ['[fe80:0:0:0:0:0:0:0]:1', '[fe80::]:1'],
    ['[::ffff:10.0.0.1]:80', '[::ffff:10.0.0.1]:80'],
    ['[0:0:0:0:0:ffff:a00:1]:80', '[::ffff:10.0.0.1]:80'],
    ['[::10.0.0.1]:80', '[::10.0.0.1]:80'],
  ];
  for (const [input, want] of cases) {
    const got = parseEndpoint(input);
    assert.equal(typeof got === 'string' ? got : got.address, want, input);
  }
  const spelt = parseEndpointList('[2001:db8:0::1]:80').endpoints[0];
  assert.equal(spelt?.canonical, false, 'a non-canonical spelling is flagged');
});

test('strict mode rejects spellings Envoy would silently skip, naming the canonical form', () => {
  const { endpoints, errors } = parseEndpointList('[2001:db8:0::1]:80,10.0.0.1:080', { strict: true });
  assert.equal(endpoints.length, 0);
  assert.equal(errors.length, 2);
  assert.match(errors[0]?.reason ?? '', /write \[2001:db8::1\]:80/);
  assert.match(errors[1]?.reason ?? '', /write 10\.0\.0\.1:80/);
});

test('every bad entry is reported with its index and reason, and the good ones survive', () => {
  const value =
    '10.0.0.1:80,,10.0.0.2,10.0.0.3:0,10.0.0.4:65536,[::1:80,::1:80,300.0.0.1:1,10.0.0.01:1,[fe80::1%eth0]:1,10.0.0.1:80,host.example:80, :1,10.0.0.5:65535,10.0.0.6:';
  assert.deepEqual(addresses(value), ['10.0.0.1:80', '10.0.0.5:65535']);
  assert.deepEqual(reasons(value), [
    '1: empty entry',
    '2: missing ":port"',
    '3: port 0 is out of range 1..65535',
    '4: port 65536 is out of range 1..65535',
    '5: missing "]" after the IPv6 address',
    '6: an IPv6 address must be written in brackets: [addr]:port',
    '7: "300.0.0.1" has an IPv4 part above 255',
    '8: "10.0.0.01" has an IPv4 part with a leading zero',
    '9: "fe80::1%eth0" has a zone index; Envoy host addresses never carry one',
    '10: duplicate of entry 0',
    '11: "host.example" is not an IPv4 address (four decimal numbers separated by dots)',
    '12: missing IP address before the port',
    '14: missing port number',
  ]);
});

test('more IPv6 mistakes are caught', () => {
  for (const bad of [
    '[1::2::3]:1',
    '[1:2:3:4:5:6:7:8:9]:1',
    '[1:2:3]:1',
    '[12345::]:1',
    '[::g]:1',
    '[1:2:3:4:5:6:7::8]:1',
    '[1.2.3.4::]:1',
    '[::1]80',
    '[]:1',
  ]) {
    assert.equal(typeof parseEndpoint(bad), 'string', bad);
  }
  assert.equal(typeof parseEndpoint('[1:2:3:4:5:6:7::]:1'), 'object', '"::" may stand for one group');
});

test('duplicates are reported even when spelt differently', () => {
  assert.deepEqual(reasons('[2001:db8::1]:80,[2001:DB8:0::1]:80'), ['1: duplicate of entry 0']);
});

test('limits: entry count and total length', () => {
  const many = Array.from({ length: 70 }, (_, i) => `10.0.${i >> 8}.${i & 255}:80`).join(',');
  const res = parseEndpointList(many);
  assert.equal(res.endpoints.length, 64);
  assert.deepEqual(res.errors, [{ index: 64, text: '', reason: 'more than 64 entries; the rest are ignored' }]);
  assert.equal(parseEndpointList(many, { maxEntries: 100 }).errors.length, 0);
  const long = parseEndpointList('10.0.0.1:80,'.repeat(1000));
  assert.equal(long.endpoints.length, 0);
  assert.match(long.errors[0]?.reason ?? '', /characters long; the limit is 8192/);
  assert.deepEqual(reasons('  '), ['-1: no endpoint: the value is empty']);
  assert.deepEqual(reasons(123 as unknown as string), ['-1: expected a string, got a number']);
});

test('formatEndpointList writes the canonical value and refuses anything Envoy would skip', () => {
  assert.equal(formatEndpointList(['10.0.0.1:80', ' [2001:DB8::0:1]:443', { ip: '::1', port: 9 }]), '10.0.0.1:80,[2001:db8::1]:443,[::1]:9');
  assert.equal(formatEndpoint('2001:0db8::0001', 80), '[2001:db8::1]:80');
  assert.throws(() => formatEndpointList([]), /the list is empty/);
  const err = (() => {
    try {
      formatEndpointList(['10.0.0.1:80', 'nope', '10.0.0.1:80', { ip: '10.0.0.2', port: 1.5 }]);
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.ok(err instanceof EndpointListError);
  assert.deepEqual(
    err.errors.map((e) => e.index),
    [1, 2, 3],
  );
  assert.match(err.message, /entry 1 "nope": missing ":port"; entry 2 "10.0.0.1:80": duplicate of entry 0; entry 3 "10.0.0.2:1.5": port must be an integer/);
  assert.throws(() => formatEndpointList(Array.from({ length: 65 }, (_, i) => `10.0.0.${i + 1}:80`)), /65 entries; the limit is 64/);
  assert.throws(() => formatEndpointList(['10.0.0.1:80', '10.0.0.2:80'], { maxLength: 15 }), /the limit is 15/);
  assert.throws(() => formatEndpoint('10.0.0.1', 0), /out of range/);
});

// --- properties -------------------------------------------------------------------------------

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
const hexGroup = fc.nat(0xffff).chain((n) => fc.constantFrom(n.toString(16), n.toString(16).toUpperCase(), n.toString(16).padStart(4, '0')));
const ipv6 = fc.array(hexGroup, { minLength: 8, maxLength: 8 }).chain((groups) =>
  fc.nat(8).chain((start) =>
    fc.nat(8 - start).map((len) => {
      // Optionally replace a run of groups with "::" (only valid when it stands for at least one group).
      if (len === 0) return groups.join(':');
      const zeroed = groups.map((g, i) => (i >= start && i < start + len ? '0' : g));
      return `${zeroed.slice(0, start).join(':')}::${zeroed.slice(start + len).join(':')}`;
    }),
  ),
);
const endpointText = fc.oneof(
  fc.tuple(ipv4, fc.integer({ min: 1, max: 65535 })).map(([ip, p]) => `${ip}:${p}`),
  fc.tuple(ipv6, fc.integer({ min: 1, max: 65535 })).map(([ip, p]) => `[${ip}]:${p}`),
);
const whitespace = fc.constantFrom('', ' ', '\t', '  ');
const listValue = fc
  .array(
    fc.tuple(whitespace, endpointText, whitespace).map((t) => t.join('')),
    { minLength: 1, maxLength: 10 },
  )
  .map((l) => l.join(','));

test('property: parsing never throws, whatever the input', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        listValue,
        fc.array(fc.constantFrom('[', ']', ':', ',', '.', '0', 'f', ' ', '%')).map((a) => a.join('')),
      ),
      (text) => {
        const res = parseEndpointList(text);
        assert.ok(Array.isArray(res.endpoints) && Array.isArray(res.errors));
        for (const e of res.errors) assert.equal(typeof e.reason, 'string');
      },
    ),
    { numRuns: 2000 },
  );
});

test('property: format(parse(x)) is stable and canonical', () => {
  fc.assert(
    fc.property(listValue, (value) => {
      const { endpoints, errors } = parseEndpointList(value);
      assert.ok(
        errors.every((e) => e.reason.startsWith('duplicate')),
        JSON.stringify(errors),
      );
      const once = formatEndpointList(endpoints.map((e) => e.address));
      const again = formatEndpointList(parseEndpointList(once, { strict: true }).endpoints.map((e) => e.address));
      assert.equal(again, once);
      assert.deepEqual(parseEndpointList(once, { strict: true }).errors, []);
    }),
    { numRuns: 1000 },
  );
});

test('property: canonical IPv6 round-trips through node:net-free parsing for random words', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(0, 0, 0, 1, 0xffff, 0xdb8, 0xabcd), { minLength: 8, maxLength: 8 }), (words) => {
      const full = words.map((w) => w.toString(16)).join(':');
      const first = parseEndpoint(`[${full}]:1`);
      assert.equal(typeof first, 'object');
      if (typeof first === 'string') return;
      const second = parseEndpoint(first.address);
      assert.equal(typeof second === 'string' ? second : second.address, first.address);
    }),
  );
});
