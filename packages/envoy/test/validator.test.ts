// The validator must reject what Envoy rejects; each case breaks one rule of a known-good config.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { convert, toBootstrap, toXds } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { envoyOf, readObjects } from './golden.js';

type Json = Record<string, any>;
const input = readObjects(fileURLToPath(new URL('./scenarios/backendpool-picker/input.yaml', import.meta.url)));

function good(envoy: '1.35' | '1.38' = '1.35'): Json {
  return structuredClone(toBootstrap(envoyOf(convert(input, { envoy, now: '2026-01-01T00:00:00Z' })))) as Json;
}

const hcm = (b: Json) => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
const extProc = (b: Json) => hcm(b).http_filters.find((f: Json) => f.typed_config['@type'].endsWith('.ExternalProcessor')).typed_config;
/** The route's per-filter config of its picker's ext_proc filter. */
const perRoute = (b: Json) => Object.values(route(b).typed_per_filter_config)[0] as Json;
const route = (b: Json) => hcm(b).route_config.virtual_hosts[0].routes[0];
const pool = (b: Json) => b.static_resources.clusters.find((c: Json) => c.name === 'bpool/default/llm');
const overrideHost = (b: Json) => pool(b).load_balancing_policy.policies[0].typed_extension_config.typed_config;

function issues(b: Json, envoy: '1.35' | '1.38' | 'legacy' = '1.35'): string[] {
  return loadEnvoyValidator(envoy)
    .validateBootstrap(b)
    .map((i) => `${i.path}: ${i.message}`);
}

function expectIssue(b: Json, pattern: RegExp, envoy: '1.35' | '1.38' | 'legacy' = '1.35'): void {
  const found = issues(b, envoy);
  assert.ok(
    found.some((i) => pattern.test(i)),
    `expected an issue matching ${pattern}, got ${JSON.stringify(found)}`,
  );
}

test('the unmodified config is valid', () => {
  assert.deepEqual(issues(good()), []);
});

test('unknown fields fail, with their path', () => {
  const b = good();
  pool(b).load_balancing_policy.policies[0].typed_extension_config.typed_config.fallback = 'x';
  expectIssue(b, /clusters\[0\]\.load_balancing_policy\.policies\[0\]\.typed_extension_config\.typed_config\.fallback: unknown field "fallback"/);
});

test('wrong types fail: a number for a string, a string for a uint32, a bad duration', () => {
  const b = good();
  const c = pool(b);
  c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 'eighty';
  c.connect_timeout = '5 seconds';
  c.name = 42;
  expectIssue(b, /name: expected a string, got 42/);
  expectIssue(b, /port_value: expected an integer \(uint32\)/);
  expectIssue(b, /connect_timeout: expected a duration/);
});

test('an unknown @type fails', () => {
  const b = good();
  hcm(b).http_filters[0].typed_config['@type'] = 'type.googleapis.com/envoy.extensions.filters.http.nope.v3.Nope';
  expectIssue(b, /@type: unknown type/);
});

test('unknown enum values fail', () => {
  const b = good();
  perRoute(b).overrides.processing_mode.request_body_mode = 'HALF_DUPLEX';
  expectIssue(b, /"HALF_DUPLEX" is not a value of enum/);
});

test('FULL_DUPLEX_STREAMED needs trailer mode SEND, on the filter and per route', () => {
  const b = good();
  perRoute(b).overrides.processing_mode.request_trailer_mode = 'SKIP';
  expectIssue(b, /request_body_mode set to FULL_DUPLEX_STREAMED, then the request_trailer_mode has to be set to SEND/);
  const c = good();
  extProc(c).processing_mode = { response_body_mode: 'FULL_DUPLEX_STREAMED' };
  expectIssue(c, /response_trailer_mode has to be set to SEND/);
});

test('override_host needs a fallback policy and at least one source, each with exactly one of header and metadata', () => {
  const b = good();
  delete overrideHost(b).fallback_policy;
  expectIssue(b, /fallback_policy: value is required/);
  const c = good();
  overrideHost(c).override_host_sources = [];
  expectIssue(c, /override_host_sources: value must contain at least 1 item/);
  const d = good();
  overrideHost(d).override_host_sources = [{}, { header: 'x-a', metadata: { key: 'envoy.lb', path: [{ key: 'k' }] } }];
  expectIssue(d, /override_host_sources\[0\]: Empty override source/);
  expectIssue(d, /override_host_sources\[1\]: Only one override source must be set/);
  const e = good();
  overrideHost(e).fallback_policy = { policies: [] };
  expectIssue(e, /didn't find a registered fallback load balancer factory/);
});

test('a metadata key needs a path of at least one segment', () => {
  const b = good();
  overrideHost(b).override_host_sources[0].metadata.path = [];
  expectIssue(b, /metadata\.path: value must contain at least 1 item/);
});

test('override_host is not combined with subset load balancing, nor used on ORIGINAL_DST', () => {
  const b = good();
  pool(b).lb_subset_config = { subset_selectors: [{ keys: ['x'] }] };
  expectIssue(b, /load_balancing_policy cannot be combined with lb_subset_config/);
  const c = good();
  pool(c).type = 'ORIGINAL_DST';
  pool(c).lb_policy = 'CLUSTER_PROVIDED';
  expectIssue(c, /ORIGINAL_DST clusters must have no load assignment configured/);
  expectIssue(c, /override_host needs a cluster with a host set/);
});

test('ORIGINAL_DST needs CLUSTER_PROVIDED, and http_header_name needs use_http_header', () => {
  const b = good();
  const c = pool(b);
  c.type = 'ORIGINAL_DST';
  delete c.load_assignment;
  delete c.load_balancing_policy;
  c.original_dst_lb_config = { http_header_name: 'x-gateway-destination-endpoint' };
  expectIssue(b, /Only 'CLUSTER_PROVIDED' is allowed with cluster type 'ORIGINAL_DST'/);
  expectIssue(b, /Set use_http_header to true if http_header_name is desired/);
});

test('fields newer than the target Envoy fail: selected_host_key needs 1.38, override_host needs 1.35', () => {
  const b = good('1.35');
  overrideHost(b).selected_host_key = { key: 'envoy.lb', path: [{ key: 'x-gateway-destination-endpoint-served' }] };
  assert.deepEqual(issues(b, '1.38'), []);
  expectIssue(b, /selected_host_key needs Envoy 1\.38 or newer/, '1.35');
  expectIssue(good(), /OverrideHost needs Envoy 1\.35 or newer \(target legacy\)/, 'legacy');
});

test('ExtProcPerRoute needs one of disabled and overrides; disabled must be true', () => {
  const b = good();
  route(b).typed_per_filter_config[Object.keys(route(b).typed_per_filter_config)[0] as string] = {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
  };
  expectIssue(b, /one of disabled, overrides is required/);
  perRoute(b).disabled = false;
  expectIssue(b, /disabled: value must equal true/);
});

test('ext_proc needs exactly one of grpc_service and http_service, and its gRPC cluster must speak HTTP/2', () => {
  const b = good();
  delete extProc(b).grpc_service;
  expectIssue(b, /One and only one of grpc_service or http_service must be configured/);
  const c = good();
  const picker = c.static_resources.clusters.find((x: Json) => x.name.startsWith('picker/'));
  delete picker.typed_extension_protocol_options;
  expectIssue(c, /gRPC service cluster picker\/default\/picker:9002 must use HTTP\/2/);
  expectIssue(c, /gRPC health checks need an HTTP\/2 cluster/);
});

test('the router must be the last HTTP filter; routes must name existing clusters', () => {
  const b = good();
  hcm(b).http_filters.reverse();
  expectIssue(b, /the router filter must be the last HTTP filter/);
  const c = good();
  route(c).route.cluster = 'nowhere';
  expectIssue(c, /route refers to cluster nowhere, which does not exist/);
});

test('PGV string rules apply: path_separated_prefix pattern, min_len', () => {
  const b = good();
  route(b).match = { path_separated_prefix: '/api/' };
  expectIssue(b, /value does not match regex pattern/);
  const c = good();
  hcm(c).stat_prefix = '';
  expectIssue(c, /stat_prefix: value length must be at least 1/);
});

test('a STATIC cluster lists IP addresses only', () => {
  const b = good();
  pool(b).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address = 'llm.default.svc';
  expectIssue(b, /STATIC cluster endpoint "llm.default.svc" is not an IP address/);
});

test('xDS lists: an EDS cluster needs its ClusterLoadAssignment, and rds names must exist', () => {
  const xds = structuredClone(toXds(envoyOf(convert(input, { endpoints: 'eds', now: '2026-01-01T00:00:00Z' })))) as Json;
  const v = loadEnvoyValidator('1.35');
  assert.deepEqual(v.validateXds(xds), []);
  xds.endpoints = [];
  xds.routes = [];
  const found = v.validateXds(xds).map((i) => i.message);
  assert.ok(
    found.some((m) => /EDS cluster bpool\/default\/llm has no ClusterLoadAssignment/.test(m)),
    JSON.stringify(found),
  );
  assert.ok(
    found.some((m) => /route configuration default\/gw\/8080 does not exist/.test(m)),
    JSON.stringify(found),
  );
});

// Load rules the converter's read stage also checks (src/limits.ts): a route the API server
// accepts must never reach Envoy in a form it refuses, so the validator knows each rule too.

test('safe_regex is checked with RE2: at most 1000 repetitions, a program no larger than Envoy allows, no lookaround', () => {
  const b = good();
  route(b).match = { safe_regex: { regex: '/a{1001}' } };
  expectIssue(b, /routes\[0\]\.match\.safe_regex\.regex: .*invalid repeat count/);
  const c = good();
  route(c).match = { prefix: '/', headers: [{ name: 'x-a', string_match: { safe_regex: { regex: 'a{100}' } } }] };
  expectIssue(c, /headers\[0\]\.string_match\.safe_regex\.regex: .*RE2 program of size \d+, over Envoy's limit of 100/);
  const d = good();
  route(d).route.regex_rewrite = { pattern: { regex: '(?<=x)y' }, substitution: '/' };
  expectIssue(d, /regex_rewrite\.pattern\.regex: .*not a valid RE2 regular expression/);
});

test('header changes may not touch host or pseudo-headers, at any level', () => {
  const b = good();
  route(b).request_headers_to_add = [{ header: { key: 'Host', value: 'evil.example.com' } }];
  route(b).request_headers_to_remove = [':authority'];
  expectIssue(b, /routes\[0\]\.request_headers_to_add\[0\]\.header\.key: :-prefixed or host headers may not be modified/);
  expectIssue(b, /routes\[0\]\.request_headers_to_remove\[0\]: :-prefixed or host headers may not be removed/);
  const c = good();
  hcm(c).route_config.virtual_hosts[0].request_headers_to_add = [{ header: { key: ':path', value: '/x' } }];
  expectIssue(c, /virtual_hosts\[0\]\.request_headers_to_add\[0\]\.header\.key: :-prefixed or host headers may not be modified/);
});

test("a header value is a format string: a lone '%' is refused, '%%' and commands are not; NUL, CR and LF are refused", () => {
  const b = good();
  route(b).request_headers_to_add = [
    { header: { key: 'x-share', value: '50%' } },
    { header: { key: 'x-ok', value: '50%% of %DOWNSTREAM_REMOTE_ADDRESS% and %REQ(x-a):10%' } },
  ];
  expectIssue(b, /request_headers_to_add\[0\]\.header\.value: "50%" has a '%' at position 2 that starts no format command/);
  assert.ok(!issues(b).some((i) => i.includes('request_headers_to_add[1]')), JSON.stringify(issues(b)));
  const c = good();
  route(c).response_headers_to_add = [{ header: { key: 'x-split', value: 'a\r\nx-injected: 1' } }];
  expectIssue(c, /response_headers_to_add\[0\]\.header\.value: value is not a valid HTTP header value/);
});

test('virtual host domains: not empty, no NUL, one wildcard at the start or the end, unique across virtual hosts', () => {
  const b = good();
  const vhs = hcm(b).route_config.virtual_hosts;
  vhs[0].domains = ['', 'a\u0000.example.com', 'a.*.example.com', '*.example.*', 'api.example.com'];
  vhs.push({ name: 'second', domains: ['api.example.com', 'example.*'], routes: [] });
  expectIssue(b, /domains\[0\]: a virtual host domain must not be empty/);
  expectIssue(b, /domains\[1\]: a virtual host domain must not contain NUL/);
  expectIssue(b, /domains\[2\]: "a\.\*\.example\.com": a wildcard may only be the first or the last character/);
  expectIssue(b, /domains\[3\]: .*a wildcard may only be/);
  expectIssue(b, /virtual_hosts\[1\]: Only unique values for domains are permitted. Duplicate entry of domain api\.example\.com/);
  assert.ok(!issues(b).some((i) => i.includes('virtual_hosts[1].domains[1]')), 'a trailing wildcard is allowed');
});

test('server_names of a filter chain match: an exact name or a whole-label leading wildcard only', () => {
  const b = good();
  b.static_resources.listeners[0].filter_chains[0].filter_chain_match = { server_names: ['*.example.com', '*foo.example.com', 'a.*.com'] };
  expectIssue(b, /filter_chain_match\.server_names\[1\]: partial wildcards are not supported in "server_names"/);
  expectIssue(b, /filter_chain_match\.server_names\[2\]: partial wildcards/);
  assert.ok(!issues(b).some((i) => i.includes('server_names[0]')), JSON.stringify(issues(b)));
});

test('a Duration past 10,000 years is out of protobuf range', () => {
  const b = good();
  route(b).route.timeout = '315576000001s';
  expectIssue(b, /route\.timeout: duration 315576000001s is out of the range of google\.protobuf\.Duration/);
  const c = good();
  route(c).route.timeout = '315576000000.999s';
  assert.ok(!issues(c).some((i) => i.includes('route.timeout')), JSON.stringify(issues(c)));
});

test('weighted_clusters weights sum to at most 2^32-1; a redirect port is 1-65535', () => {
  const b = good();
  const name = route(b).route.cluster;
  route(b).route = {
    weighted_clusters: {
      clusters: [
        { name, weight: 4294967295 },
        { name, weight: 1 },
      ],
    },
  };
  expectIssue(b, /route\.weighted_clusters: the sum of weights 4294967296 exceeds 4294967295/);
  for (const port of [0, 70000]) {
    const c = good();
    delete route(c).route;
    delete route(c).typed_per_filter_config;
    route(c).redirect = { port_redirect: port };
    expectIssue(c, new RegExp(`redirect\\.port_redirect: port_redirect ${port} is not a port \\(1-65535\\)`));
  }
});
