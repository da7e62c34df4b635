// The Envoy stage is typed by the types generated from Envoy's protos (src/generated): a misspelt
// field or a wrong shape is a compile error, which `npm run lint` (tsc over the tests) proves with
// the @ts-expect-error lines below; and what the types accept, the protos accept too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert, toXds } from '../src/index.js';
import { TYPE } from '../src/envoy/names.js';
import type { AnyOf, ClusterV3, HcmV3, RouteV3 } from '../src/envoy/types.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { envoyOf, readObjects } from './golden.js';

const validator = loadEnvoyValidator('1.38');
const problems = (type: string, value: unknown) => validator.validateMessage(type, value).map((i) => `${i.path}: ${i.message}`);

test('a value of the generated types is one the protos accept', () => {
  const cluster: ClusterV3.Cluster = {
    name: 'c',
    type: 'STATIC',
    connect_timeout: '0.250s',
    load_assignment: {
      cluster_name: 'c',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 80 } } } }] }],
    },
    load_balancing_policy: {
      policies: [{ typed_extension_config: { name: 'envoy.load_balancing_policies.round_robin', typed_config: { '@type': TYPE.roundRobin } } }],
    },
  };
  assert.deepEqual(problems('envoy.config.cluster.v3.Cluster', cluster), []);
  const route: RouteV3.Route = {
    match: { prefix: '/' },
    route: { cluster: 'c', timeout: '5s', retry_policy: { retry_on: '5xx', num_retries: 2, host_selection_retry_max_attempts: '5' } },
  };
  assert.deepEqual(problems('envoy.config.route.v3.Route', route), []);
});

test('what the types refuse, the protos refuse too', () => {
  // @ts-expect-error a misspelt field
  const misspelt: ClusterV3.Cluster = { name: 'c', conect_timeout: '1s' };
  assert.match(problems('envoy.config.cluster.v3.Cluster', misspelt).join('\n'), /unknown field "conect_timeout"/);
  // @ts-expect-error a Duration is seconds with an "s", not a number
  const seconds: ClusterV3.Cluster = { name: 'c', connect_timeout: 5 };
  assert.match(problems('envoy.config.cluster.v3.Cluster', seconds).join('\n'), /expected a duration/);
  // @ts-expect-error an enum takes its names only
  const discovery: ClusterV3.Cluster = { name: 'c', type: 'STATIK' };
  assert.match(problems('envoy.config.cluster.v3.Cluster', discovery).join('\n'), /is not a value of enum/);
  // @ts-expect-error two members of one oneof (cluster_specifier)
  const both: RouteV3.RouteAction = { cluster: 'a', cluster_header: 'x-cluster' };
  assert.match(problems('envoy.config.route.v3.RouteAction', both).join('\n'), /only one of cluster and cluster_header/);
  // @ts-expect-error a required oneof (the route's action) needs a member
  const noAction: RouteV3.Route = { match: { prefix: '/' } };
  assert.match(problems('envoy.config.route.v3.Route', noAction).join('\n'), /one of route, redirect, direct_response.* is required/);
  // @ts-expect-error a typed_config's fields are those of its "@type"
  const wrongConfig: HcmV3.HttpFilter = { name: 'envoy.filters.http.router', typed_config: { '@type': TYPE.router, stat_prefix: 'x' } };
  assert.match(problems('envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter', wrongConfig).join('\n'), /unknown field "stat_prefix"/);
  // @ts-expect-error an "@type" outside the converter's messages
  const unknownType: AnyOf<typeof TYPE.router> = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.nothing.v3.Nothing' };
  assert.match(problems('google.protobuf.Any', unknownType).join('\n'), /unknown type/);
});

test("the converter's output is typed: reading a field it does not have is a compile error", () => {
  const input = readObjects(fileURLToPath(new URL('./scenarios/backendpool-picker/input.yaml', import.meta.url)));
  const xds = toXds(envoyOf(convert(input, { now: '2026-01-01T00:00:00Z' })));
  const cluster = xds.clusters.find((c) => c.name === 'bpool/default/llm');
  assert.equal(cluster?.connect_timeout, '5s');
  // @ts-expect-error a misspelt field of the typed output
  assert.equal(cluster?.conect_timeout, undefined);
  const policy = cluster?.load_balancing_policy?.policies?.[0]?.typed_extension_config?.typed_config;
  assert.equal(policy?.['@type'], TYPE.overrideHost);
  if (policy?.['@type'] === TYPE.overrideHost) assert.ok(policy.fallback_policy.policies?.length, 'the "@type" narrows the Any to OverrideHost');
});
