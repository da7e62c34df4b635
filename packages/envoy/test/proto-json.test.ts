// The one proto3 JSON walker: the xDS server encodes with it (throwing at the first fault) and the
// validator checks with it (collecting every fault), so the two can never disagree about a value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert, toXds } from '../src/index.js';
import { loadEnvoyProtos, parseProtoDuration, ProtoJson, ProtoJsonError } from '../src/proto/index.js';
import { envoyOf, readObjects } from './golden.js';

const json = new ProtoJson(loadEnvoyProtos());
const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

test('parseProtoDuration reads proto3 JSON Durations, and only those', () => {
  assert.deepEqual(parseProtoDuration('1.5s'), { seconds: 1, nanos: 500_000_000, totalNanos: 1_500_000_000n });
  assert.deepEqual(parseProtoDuration('-0.000000001s'), { seconds: -0, nanos: -1, totalNanos: -1n });
  assert.deepEqual(parseProtoDuration('315576000000.999999999s'), { seconds: 315_576_000_000, nanos: 999_999_999, totalNanos: 315_576_000_000_999_999_999n });
  assert.deepEqual(parseProtoDuration('315576000001s'), { range: false });
  for (const bad of ['5', '1.5', '1.0000000001s', '1e3s', ' 1s', '1ms', 5, null]) assert.equal(parseProtoDuration(bad), undefined, String(bad));
});

test('check collects every fault where encoding stops at the first, with the same path and words', () => {
  const bad = { '@type': CLUSTER, name: 42, conect_timeout: '1s', connect_timeout: '5', type: 'STATIK', per_connection_buffer_limit_bytes: -1 };
  const issues = json.check('google.protobuf.Any', bad);
  assert.deepEqual(
    issues.map((i) => i.path),
    ['name', 'conect_timeout', 'connect_timeout', 'type', 'per_connection_buffer_limit_bytes'],
  );
  assert.throws(
    () => json.encodeAny(bad),
    (err: unknown) => err instanceof ProtoJsonError && err.path === issues[0]?.path && err.detail === issues[0]?.message,
  );
});

test('rules see every field set and every value, and report at their paths', () => {
  const seen: string[] = [];
  const issues = json.check('envoy.config.core.v3.SocketAddress', { address: '10.0.0.1', port_value: 80 }, 'addr', {
    value: (field, value, path, report) => {
      seen.push(`${path}=${String(value)}`);
      if (field.name === 'port_value' && value === 80) report(path, 'port 80 is refused by this rule');
    },
  });
  assert.deepEqual(seen, ['addr.address=10.0.0.1', 'addr.port_value=80']);
  assert.deepEqual(issues, [{ path: 'addr.port_value', message: 'port 80 is refused by this rule' }]);
});

test('every resource the converter writes passes the check and encodes', () => {
  const input = readObjects(fileURLToPath(new URL('./scenarios/route-features/input.yaml', import.meta.url)));
  const xds = toXds(envoyOf(convert(input, { now: '2026-01-01T00:00:00Z' })));
  let count = 0;
  for (const list of Object.values(xds)) {
    for (const resource of list) {
      assert.deepEqual(json.check('google.protobuf.Any', resource), []);
      assert.ok(json.encodeAny(resource).length > 0);
      count++;
    }
  }
  assert.ok(count >= 5, `only ${count} resources`);
});
