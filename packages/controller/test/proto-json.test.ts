// Proto3 JSON to google.protobuf.Any and back, on the converter's real output and on each proto3
// JSON rule, with protobufjs' own decoder as the independent reader of the bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProtoDuration } from '@extlb/envoy/proto';
import protobuf from 'protobufjs';
import { ProtoJson, ProtoJsonError, TYPE_URL } from '../src/index.js';
import { scenarioNames, scenarioXds, testCodec } from './helpers.js';

/**
 * Proto3 JSON has more than one spelling of a value: an empty list and an absent one are the
 * same, and a duration may be written with any number of fractional digits.
 */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => !(Array.isArray(x) && x.length === 0))
        .map(([k, x]) => [k, canonical(x)]),
    );
  }
  const d = parseProtoDuration(v);
  if (d && !('range' in d)) return `${d.totalNanos}ns`;
  return v;
}

test('every resource the converter emits for the scenarios survives the trip to Any bytes and back', () => {
  const codec = testCodec();
  let count = 0;
  for (const name of scenarioNames) {
    const xds = scenarioXds(name);
    for (const [kind, list] of Object.entries(xds)) {
      for (const resource of list) {
        const bytes = codec.encodeAny(resource);
        const back = codec.decodeAny(bytes);
        assert.deepEqual(canonical(back), canonical(resource), `${name} ${kind} ${String(resource.name ?? resource.cluster_name)}`);
        assert.deepEqual(codec.encodeAny(back), bytes, 'decoding then encoding gives the same bytes');
        count++;
      }
    }
  }
  assert.ok(count >= 50, `only ${count} resources`);
});

function protobufjsView(json: Record<string, unknown>): Record<string, any> {
  const codec = testCodec();
  const any = codec.root.lookupType('google.protobuf.Any').decode(codec.encodeAny(json)) as unknown as { type_url: string; value: Uint8Array };
  const type = codec.typeOf(any.type_url);
  return type.toObject(type.decode(any.value), { longs: String, enums: String, bytes: String });
}

test('proto3 JSON forms become the binary fields protobufjs reads back', () => {
  const cluster = protobufjsView({
    '@type': TYPE_URL.cluster,
    name: 'c',
    connectTimeout: '1.5s', // lowerCamelCase names are proto3 JSON too
    type: 'STRICT_DNS',
    lb_policy: 'LEAST_REQUEST',
    per_connection_buffer_limit_bytes: 32768, // google.protobuf.UInt32Value written bare
    respect_dns_ttl: true,
    dns_refresh_rate: '-0.000000001s',
    metadata: { filter_metadata: { 'extlb.dev': { pool: 'p', weight: 2, tags: ['a', null], nested: { on: false } } } },
    common_lb_config: { healthy_panic_threshold: { value: 50.5 } },
    upstream_bind_config: { source_address: { address: '10.0.0.1', port_value: 0 } },
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        explicit_http_config: { http2_protocol_options: { max_concurrent_streams: 100 } },
      },
    },
    max_requests_per_connection: null, // null is the default: the field is left out
  });
  assert.deepEqual(cluster.connect_timeout, { seconds: '1', nanos: 500_000_000 });
  assert.deepEqual(cluster.dns_refresh_rate, { seconds: '0', nanos: -1 });
  assert.equal(cluster.type, 'STRICT_DNS');
  assert.equal(cluster.lb_policy, 'LEAST_REQUEST');
  assert.deepEqual(cluster.per_connection_buffer_limit_bytes, { value: 32768 });
  assert.equal(cluster.respect_dns_ttl, true);
  assert.equal(cluster.max_requests_per_connection, undefined);
  const fields = cluster.metadata.filter_metadata['extlb.dev'].fields;
  assert.deepEqual(fields.pool, { stringValue: 'p' });
  assert.deepEqual(fields.weight, { numberValue: 2 });
  assert.deepEqual(fields.tags.listValue.values, [{ stringValue: 'a' }, { nullValue: 'NULL_VALUE' }]);
  assert.deepEqual(fields.nested.structValue.fields.on, { boolValue: false });
  assert.deepEqual(cluster.common_lb_config.healthy_panic_threshold, { value: 50.5 });
  const options = cluster.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
  assert.equal(options.type_url, 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions');
  const inner = testCodec().decode(options.type_url, Buffer.from(options.value, 'base64'));
  assert.deepEqual(inner.explicit_http_config, { http2_protocol_options: { max_concurrent_streams: 100 } });

  const secret = protobufjsView({
    '@type': TYPE_URL.secret,
    name: 's',
    session_ticket_keys: { keys: [{ inline_bytes: Buffer.from('0123456789abcdef').toString('base64') }] },
  });
  assert.equal(Buffer.from(secret.session_ticket_keys.keys[0].inline_bytes, 'base64').toString(), '0123456789abcdef');

  const route = protobufjsView({
    '@type': TYPE_URL.route,
    name: 'r',
    virtual_hosts: [
      {
        name: 'v',
        domains: ['*'],
        routes: [{ match: { prefix: '/' }, route: { cluster: 'c', max_stream_duration: { max_stream_duration: '3600s' } } }],
        typed_per_filter_config: {
          // A well-known type inside an Any keeps its JSON form under "value".
          'envoy.filters.http.test': { '@type': 'type.googleapis.com/google.protobuf.Duration', value: '2s' },
        },
      },
    ],
  });
  assert.deepEqual(route.virtual_hosts[0].routes[0].route.max_stream_duration.max_stream_duration, { seconds: '3600', nanos: 0 });
  const wrapped = route.virtual_hosts[0].typed_per_filter_config['envoy.filters.http.test'];
  assert.deepEqual(testCodec().decode(wrapped.type_url, Buffer.from(wrapped.value, 'base64')), {
    '@type': 'type.googleapis.com/google.protobuf.Duration',
    value: '2s',
  });

  const endpoint = protobufjsView({
    '@type': TYPE_URL.endpoint,
    cluster_name: 'e',
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '::1', port_value: 8080 } } }, load_balancing_weight: 3 }] }],
    policy: { overprovisioning_factor: 140, endpoint_stale_after: '30s' },
  });
  assert.equal(endpoint.endpoints[0].lb_endpoints[0].load_balancing_weight.value, 3);
  assert.deepEqual(endpoint.policy.endpoint_stale_after, { seconds: '30', nanos: 0 });
});

test('64-bit integers, timestamps and field masks take their proto3 JSON forms both ways', () => {
  const codec = testCodec();
  const listener = {
    '@type': TYPE_URL.listener,
    name: 'l',
    address: { socket_address: { address: '0.0.0.0', port_value: 80 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: 'l',
              route_config: { name: 'inline' },
              http_filters: [
                { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
              ],
              stream_idle_timeout: '300.000000001s',
              request_id_extension: { typed_config: { '@type': 'type.googleapis.com/google.protobuf.Timestamp', value: '2026-01-02T03:04:05.120Z' } },
            },
          },
        ],
      },
    ],
    metadata: { filter_metadata: { x: { big: 1e21 } } },
  };
  const back = codec.decodeAny(codec.encodeAny(listener)) as any;
  const hcm = back.filter_chains[0].filters[0].typed_config;
  assert.equal(hcm.stream_idle_timeout, '300.000000001s');
  assert.deepEqual(hcm.request_id_extension.typed_config, { '@type': 'type.googleapis.com/google.protobuf.Timestamp', value: '2026-01-02T03:04:05.120Z' });
  assert.equal(back.metadata.filter_metadata.x.big, 1e21);

  // Envoy's resources hold no FieldMask; a root with protobufjs' own copy checks its JSON form.
  const masks = new protobuf.Root();
  for (const file of ['google/protobuf/any.proto', 'google/protobuf/field_mask.proto']) masks.addJSON(protobuf.common.get(file)?.nested ?? {});
  masks.resolveAll();
  const maskCodec = new ProtoJson(masks);
  const fieldMask = maskCodec.decodeMessage(
    'google.protobuf.FieldMask',
    maskCodec.encodeMessage('google.protobuf.FieldMask', 'connectTimeout,loadAssignment.clusterName'),
  );
  assert.equal(fieldMask, 'connectTimeout,loadAssignment.clusterName');
  const maskBytes = (masks.lookupType('google.protobuf.FieldMask').decode(maskCodec.encodeMessage('google.protobuf.FieldMask', 'a.bC')) as any).paths;
  assert.deepEqual(maskBytes, ['a.b_c']);
  const fraction = { default_value: { numerator: 5, denominator: 'TEN_THOUSAND' }, runtime_key: 'k' };
  const fractionType = 'envoy.config.core.v3.RuntimeFractionalPercent';
  assert.deepEqual(codec.decodeMessage(fractionType, codec.encodeMessage(fractionType, fraction)), fraction);
  // int64 keeps its sign and every digit; so does uint64 past 2^53.
  const range = codec.encodeMessage('envoy.type.v3.Int64Range', { start: '-9223372036854775808', end: '9223372036854775807' });
  assert.deepEqual(codec.decodeMessage('envoy.type.v3.Int64Range', range), { start: '-9223372036854775808', end: '9223372036854775807' });
  const uint64 = codec.encodeMessage('google.protobuf.UInt64Value', '18446744073709551615');
  assert.equal(codec.decodeMessage('google.protobuf.UInt64Value', uint64), '18446744073709551615');
});

test('input that is not the message fails with the field path, never silently', () => {
  const codec = testCodec();
  const cluster = (extra: Record<string, unknown>) => ({ '@type': TYPE_URL.cluster, name: 'c', ...extra });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [cluster({ conect_timeout: '1s' }), 'conect_timeout', /unknown field "conect_timeout" in envoy\.config\.cluster\.v3\.Cluster/],
    [cluster({ lb_policy: 'FASTEST' }), 'lb_policy', /"FASTEST" is not a value of enum envoy\.config\.cluster\.v3\.Cluster\.LbPolicy/],
    [cluster({ connect_timeout: '5' }), 'connect_timeout', /expected a duration such as "1\.5s", got "5"/],
    [cluster({ connect_timeout: '5s', connectTimeout: '6s' }), 'connectTimeout', /set twice/],
    [cluster({ type: 'STATIC', cluster_type: { name: 'x' } }), 'cluster_type', /only one of type and cluster_type may be set/],
    [cluster({ per_connection_buffer_limit_bytes: -1 }), 'per_connection_buffer_limit_bytes', /expected an integer \(uint32\), got -1/],
    [cluster({ respect_dns_ttl: 'yes' }), 'respect_dns_ttl', /expected a boolean/],
    [cluster({ load_assignment: { cluster_name: 'c', endpoints: {} } }), 'load_assignment.endpoints', /expected a list/],
    [cluster({ typed_extension_protocol_options: { x: { explicit_http_config: {} } } }), 'typed_extension_protocol_options["x"]', /an Any needs "@type"/],
    [
      cluster({ typed_extension_protocol_options: { x: { '@type': 'type.googleapis.com/envoy.extensions.NoSuchThing' } } }),
      'typed_extension_protocol_options["x"].@type',
      /unknown type "type\.googleapis\.com\/envoy\.extensions\.NoSuchThing"/,
    ],
    [cluster({ metadata: { filter_metadata: { x: 'flat' } } }), 'metadata.filter_metadata["x"]', /expected an object \(Struct\)/],
    [cluster({ outlier_detection: { consecutive_5xx: 1.5 } }), 'outlier_detection.consecutive_5xx', /expected an integer \(uint32\), got 1\.5/],
  ];
  for (const [input, path, message] of cases) {
    assert.throws(
      () => codec.encodeAny(input),
      (err: unknown) => {
        assert.ok(err instanceof ProtoJsonError, String(err));
        assert.equal(err.path, path);
        assert.match(err.detail, message);
        return true;
      },
      path,
    );
  }
  assert.throws(() => codec.encodeAny({ name: 'x' }), /an Any needs "@type"/);
});
