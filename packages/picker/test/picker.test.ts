import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EndpointPicker, restrictToSubset } from '../src/picker.js';
import { endpointsFromSlices, fileEndpoints, staticEndpoints } from '../src/pool-members.js';
import { createStrategy, isStrategyName } from '../src/strategies.js';

const noHeaders = new Map<string, string[]>();
const addressesOf = (picker: EndpointPicker, headers: ReadonlyMap<string, readonly string[]> = noHeaders, subset?: string[]) => {
  const p = picker.pick(subset ? { headers, subset } : { headers });
  p.finish();
  return p.decision.kind === 'endpoints' ? p.decision.endpoints.map((e) => e.address) : `${p.decision.status} ${p.decision.reason}`;
};

const THREE = '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80';

test('round robin rotates the primary and answers up to maxEndpoints distinct endpoints', () => {
  const picker = new EndpointPicker({ pool: staticEndpoints(THREE), maxEndpoints: 2 });
  assert.deepEqual(addressesOf(picker), ['10.0.0.1:80', '10.0.0.2:80']);
  assert.deepEqual(addressesOf(picker), ['10.0.0.2:80', '10.0.0.3:80']);
  assert.deepEqual(addressesOf(picker), ['10.0.0.3:80', '10.0.0.1:80']);
  const wide = new EndpointPicker({ pool: staticEndpoints(THREE), maxEndpoints: 10 });
  assert.equal((addressesOf(wide) as string[]).length, 3);
});

test('least request prefers endpoints with fewer requests in flight', () => {
  const picker = new EndpointPicker({ pool: staticEndpoints(THREE), strategy: 'least-request', maxEndpoints: 3 });
  const a = picker.pick({ headers: noHeaders });
  const b = picker.pick({ headers: noHeaders });
  assert.equal(a.decision.kind, 'endpoints');
  const busy = [a, b].map((p) => (p.decision.kind === 'endpoints' ? p.decision.endpoints[0]?.address : ''));
  assert.notEqual(busy[0], busy[1]);
  const next = addressesOf(picker) as string[];
  assert.ok(!busy.includes(next[0]), `the idle endpoint comes first, got ${next.join(',')}`);
  assert.deepEqual(next.slice(1).sort(), [...busy].sort() as string[]);
  a.finish();
  b.finish();
  a.finish(); // finishing twice must not drive the count negative
  assert.equal(picker.stats().inFlight, 0);
});

test('consistent hash keeps a key on the same ordered list and spreads different keys', () => {
  const eight = Array.from({ length: 8 }, (_, i) => `10.0.1.${i + 1}:80`).join(',');
  const picker = new EndpointPicker({ pool: staticEndpoints(eight), strategy: 'consistent-hash', hashHeader: 'X-User', maxEndpoints: 3 });
  const forKey = (k: string) => addressesOf(picker, new Map([['x-user', [k]]])) as string[];
  assert.deepEqual(forKey('alice'), forKey('alice'));
  const primaries = new Set(Array.from({ length: 64 }, (_, i) => forKey(`user-${i}`)[0]));
  assert.ok(primaries.size >= 5, `64 keys should use most of 8 endpoints, used ${primaries.size}`);
  // Removing an endpoint moves only the keys it was first for.
  const smaller = new EndpointPicker({ pool: staticEndpoints(eight.split(',').slice(1).join(',')), strategy: 'consistent-hash', hashHeader: 'x-user' });
  for (let i = 0; i < 64; i++) {
    const before = forKey(`user-${i}`)[0];
    const afterRemoval = (addressesOf(smaller, new Map([['x-user', [`user-${i}`]]])) as string[])[0];
    if (before !== '10.0.1.1:80') assert.equal(afterRemoval, before);
  }
  // Without the header it falls back to round robin rather than sending everything to one endpoint.
  assert.notDeepEqual(addressesOf(picker)[0], addressesOf(picker)[0]);
});

test('random is reproducible with a seed and never repeats an endpoint in one answer', () => {
  const make = () => new EndpointPicker({ pool: staticEndpoints(THREE), strategy: 'random', seed: 42, maxEndpoints: 3 });
  const a = make();
  const b = make();
  for (let i = 0; i < 20; i++) {
    const list = addressesOf(a) as string[];
    assert.deepEqual(list, addressesOf(b));
    assert.equal(new Set(list).size, 3);
  }
});

test('subset hint: exact endpoints, bare IPs for every port, 503 when empty or ineligible', () => {
  const pool = staticEndpoints('10.0.0.1:80,10.0.0.1:81,10.0.0.2:80,[2001:db8::7]:80');
  const picker = new EndpointPicker({ pool, maxEndpoints: 4 });
  assert.deepEqual(addressesOf(picker, noHeaders, ['10.0.0.2:80']), ['10.0.0.2:80']);
  assert.deepEqual((addressesOf(picker, noHeaders, ['10.0.0.1']) as string[]).sort(), ['10.0.0.1:80', '10.0.0.1:81']);
  assert.deepEqual(addressesOf(picker, noHeaders, ['[2001:DB8:0::7]:80']), ['[2001:db8::7]:80']);
  assert.deepEqual(addressesOf(picker, noHeaders, ['2001:db8::7']), ['[2001:db8::7]:80']);
  assert.equal(addressesOf(picker, noHeaders, []), '503 the subset hint is empty');
  assert.equal(addressesOf(picker, noHeaders, ['192.0.2.1:80', 'garbage']), '503 no endpoint in the subset hint is eligible');
  assert.deepEqual(
    restrictToSubset(pool.endpoints(), [' 10.0.0.2:80 ']).map((e) => e.address),
    ['10.0.0.2:80'],
  );
});

test('503 with no endpoints, 429 when shedding load', () => {
  const empty = new EndpointPicker({ pool: staticEndpoints([]) });
  assert.equal(addressesOf(empty), '503 no ready endpoints');
  const picker = new EndpointPicker({ pool: staticEndpoints(THREE), maxInFlight: 1 });
  const first = picker.pick({ headers: noHeaders });
  assert.equal(first.decision.kind, 'endpoints');
  const shed = picker.pick({ headers: noHeaders });
  assert.deepEqual(shed.decision.kind === 'reject' ? shed.decision.status : undefined, 429);
  first.finish();
  assert.equal(picker.pick({ headers: noHeaders }).decision.kind, 'endpoints');
});

test('bad options and endpoints are refused with clear errors', () => {
  assert.throws(() => new EndpointPicker({ pool: staticEndpoints(THREE), maxEndpoints: 0 }), /maxEndpoints must be an integer in 1\.\.64, got 0/);
  assert.throws(() => new EndpointPicker({ pool: staticEndpoints(THREE), maxInFlight: 0 }), /maxInFlight must be at least 1/);
  assert.throws(
    () => staticEndpoints('10.0.0.1:80,nope,10.0.0.1:80'),
    /--endpoints: entry 1 "nope": missing ":port"; entry 2 "10.0.0.1:80": duplicate of entry 0/,
  );
  assert.equal(isStrategyName('round-robin'), true);
  assert.equal(isStrategyName('fastest'), false);
  assert.equal(createStrategy('round-robin').order([], { header: () => undefined, outstanding: () => 0 }, 3).length, 0);
});

const dir = mkdtempSync(join(tmpdir(), 'extlb-picker-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('file members: comments and commas, reloads on change, keeps the last good list on a bad edit', async () => {
  const file = join(dir, 'endpoints.txt');
  writeFileSync(file, '# pool A\n10.0.0.1:80, 10.0.0.2:80\n\n[::1]:80 # local\n');
  const pool = fileEndpoints(file);
  try {
    assert.deepEqual(
      pool.endpoints().map((e) => e.address),
      ['10.0.0.1:80', '10.0.0.2:80', '[::1]:80'],
    );
    assert.equal(pool.ready(), true);
    const changed = new Promise<string[]>((resolve) => pool.onChange((e) => resolve(e.map((x) => x.address))));
    writeFileSync(file, '10.0.0.9:80\n');
    assert.deepEqual(await changed, ['10.0.0.9:80']);
    const failed = new Promise<Error>((resolve) => pool.onError(resolve));
    writeFileSync(file, '10.0.0.9\n');
    assert.match((await failed).message, /endpoints\.txt: entry 0 "10\.0\.0\.9": missing ":port"/);
    assert.deepEqual(
      pool.endpoints().map((e) => e.address),
      ['10.0.0.9:80'],
    );
  } finally {
    await pool.close();
  }
  assert.throws(() => fileEndpoints(join(dir, 'missing.txt')), /ENOENT/);
});

test('EndpointSlices: ready addresses × matching ports, IPv6 bracketed, FQDN slices and unready endpoints skipped', () => {
  const slices = [
    {
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.1.0.1'], conditions: { ready: true } },
        { addresses: ['10.1.0.2'], conditions: {} },
        { addresses: ['10.1.0.3'], conditions: { ready: false } },
      ],
      ports: [
        { name: 'http', port: 8000 },
        { name: 'metrics', port: 9090 },
      ],
    },
    { addressType: 'IPv6', endpoints: [{ addresses: ['2001:db8:0::1'] }], ports: [{ name: 'http', port: 8000 }] },
    { addressType: 'FQDN', endpoints: [{ addresses: ['example.com'] }], ports: [{ name: 'http', port: 8000 }] },
    { addressType: 'IPv4', endpoints: null, ports: null },
  ];
  assert.deepEqual(
    endpointsFromSlices(slices, 'http').map((e) => e.address),
    ['10.1.0.1:8000', '10.1.0.2:8000', '[2001:db8::1]:8000'],
  );
  assert.deepEqual(
    endpointsFromSlices(slices, 9090).map((e) => e.address),
    ['10.1.0.1:9090', '10.1.0.2:9090'],
  );
  assert.equal(endpointsFromSlices(slices).length, 5);
});

test('served counts are kept for pool members only, and leave with a member that leaves the pool', async () => {
  const file = join(dir, 'served.txt');
  writeFileSync(file, '10.0.0.1:80,10.0.0.2:80\n');
  const pool = fileEndpoints(file);
  try {
    const picker = new EndpointPicker({ pool });
    for (const served of ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.2:80', '10.0.0.9:80', '10.0.0.02:80']) picker.recordServed(served);
    assert.deepEqual(picker.stats().served, { '10.0.0.1:80': 1, '10.0.0.2:80': 2 });
    assert.equal(picker.stats().ignoredServed, 2, 'a stranger, and a member spelt otherwise than Envoy spells hosts');
    const changed = new Promise<void>((resolve) => pool.onChange(() => resolve()));
    writeFileSync(file, '10.0.0.2:80\n');
    await changed;
    picker.recordServed('10.0.0.1:80');
    assert.deepEqual(picker.stats().served, { '10.0.0.2:80': 2 });
    assert.equal(picker.stats().ignoredServed, 3);
  } finally {
    await pool.close();
  }
});

test('a change of pool members is seen by the next pick', async () => {
  const file = join(dir, 'live.txt');
  writeFileSync(file, '10.0.0.1:80\n');
  const pool = fileEndpoints(file);
  try {
    const picker = new EndpointPicker({ pool });
    assert.deepEqual(addressesOf(picker), ['10.0.0.1:80']);
    const changed = new Promise<void>((resolve) => pool.onChange(() => resolve()));
    writeFileSync(file, '10.0.0.2:80\n');
    await changed;
    assert.deepEqual(addressesOf(picker), ['10.0.0.2:80']);
  } finally {
    await pool.close();
  }
});
