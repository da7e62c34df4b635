// Every scenario of Envoy's own override_host tests (envoy.md §6) as a simulator case, plus the
// protocol-level behaviours the picker kit relies on.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  OverrideHostConfigError,
  OverrideHostSimulator,
  protocolSources,
  simulateOverrideHost,
  validateOverrideHostConfig,
  type OverrideHostSource,
  type SimulationInput,
} from '../src/simulator.js';

// Envoy's fixture uses a fallback LB that always returns the first host; `First` models it.
const HOSTS = ['1.2.3.4:80', '5.6.7.8:80', '[::2]:80', '127.0.0.1:80', '3.5.8.13:80'];
const header = (name = 'x-gateway-destination-endpoint'): OverrideHostSource => ({ header: name });
const metadata = (path = 'x-gateway-destination-endpoint'): OverrideHostSource => ({ metadata: { key: 'envoy.lb', path: [path] } });
const lb = (value: unknown, path = 'x-gateway-destination-endpoint') => ({ 'envoy.lb': { [path]: value } });

/** Envoy's test fixture: sources [header, metadata], the `First` fallback, HOSTS; `input` overrides. */
function simulate(input: Partial<SimulationInput>) {
  return simulateOverrideHost({ sources: [header(), metadata()], fallback: 'First', hosts: HOSTS, ...input });
}
function run(input: Partial<SimulationInput>): Array<string | null> {
  return simulate(input).attempts.map((a) => a.host);
}

describe('load_balancer_test.cc scenarios', () => {
  test('NoMetadataOrHeaders: nothing set ⇒ fallback host', () => {
    const r = simulate({});
    assert.equal(r.attempts[0]?.host, '1.2.3.4:80');
    assert.equal(r.attempts[0]?.by, 'fallback');
    assert.match(r.attempts[0]?.reason ?? '', /no override source present/);
  });

  test('FindHostTraceLogsCandidateAddresses: the host-map keys are available for diagnosis', () => {
    const sim = new OverrideHostSimulator({ sources: [metadata()], fallback: 'First', hosts: ['[0:0::2]:80', '5.6.7.8:80'] });
    assert.deepEqual(sim.hostSet(), ['[::2]:80', '5.6.7.8:80']);
    const r = sim.request({ metadata: lb('9.9.9.9:80') });
    assert.equal(r.attempts[0]?.skipped[0]?.reason, "not in the cluster's host set; skipped");
  });

  test('NullptrHeaders: no header map ⇒ fallback, no crash', () => {
    assert.deepEqual(run({ headers: null }), ['1.2.3.4:80']);
  });

  test('NullptrCrossPriorityHostMap: no host map ⇒ no host at all', () => {
    const r = simulateOverrideHost({ sources: [metadata()], fallback: 'First', hosts: null, metadata: lb('1.2.3.4:80'), attempts: 2 });
    assert.deepEqual(
      r.attempts.map((a) => [a.host, a.by]),
      [
        [null, 'none'],
        [null, 'none'],
      ],
    );
  });

  test('PrimaryAddressDoesNotExist: unknown address ⇒ fallback', () => {
    const r = simulateOverrideHost({
      sources: [header()],
      fallback: 'First',
      hosts: ['5.6.7.8:80'],
      headers: { 'x-gateway-destination-endpoint': '1.2.3.4:80' },
    });
    assert.equal(r.attempts[0]?.host, '5.6.7.8:80');
    assert.equal(r.attempts[0]?.by, 'fallback');
    assert.deepEqual(
      r.attempts[0]?.skipped.map((s) => s.value),
      ['1.2.3.4:80'],
    );
  });

  test('HeaderIsPreferredOverMetadata: header host, then metadata host, then fallback', () => {
    assert.deepEqual(run({ headers: { 'x-gateway-destination-endpoint': '5.6.7.8:80' }, metadata: lb('127.0.0.1:80'), attempts: 3 }), [
      '5.6.7.8:80',
      '127.0.0.1:80',
      '1.2.3.4:80',
    ]);
  });

  test('HeaderWithMultipleValueIsPreferredOverMetadata: a,b then c then fallback', () => {
    const r = simulate({
      headers: { 'x-gateway-destination-endpoint': '5.6.7.8:80, [::2]:80' },
      metadata: lb('127.0.0.1:80'),
      attempts: 4,
    });
    assert.deepEqual(
      r.attempts.map((a) => a.host),
      ['5.6.7.8:80', '[::2]:80', '127.0.0.1:80', '1.2.3.4:80'],
    );
    assert.deepEqual(
      r.attempts.map((a) => a.entry),
      [0, 1, 2, undefined],
    );
    assert.deepEqual(
      r.overrideList.map((e) => e.source),
      [0, 0, 1],
    );
    assert.match(r.attempts[3]?.reason ?? '', /exhausted/);
  });

  test('MetadataIsPreferredOverHeaders: sources [metadata, header] ⇒ metadata first', () => {
    assert.deepEqual(
      run({ sources: [metadata(), header()], headers: { 'x-gateway-destination-endpoint': '5.6.7.8:80' }, metadata: lb('127.0.0.1:80'), attempts: 2 }),
      ['127.0.0.1:80', '5.6.7.8:80'],
    );
  });

  test('UnparseableHeaderValueUsesFallback: garbage header skipped ⇒ metadata host, then fallback', () => {
    const r = simulate({
      headers: { 'x-gateway-destination-endpoint': 'fff-bar-.bats@just.Wrong' },
      metadata: lb('5.6.7.8:80'),
      attempts: 2,
    });
    assert.deepEqual(
      r.attempts.map((a) => a.host),
      ['5.6.7.8:80', '1.2.3.4:80'],
    );
    assert.match(r.attempts[0]?.skipped[0]?.reason ?? '', /not an address/);
  });

  test('SelectIpv4EndpointWithHeader / SelectIpv6EndpointWithHeader: custom header names', () => {
    assert.deepEqual(run({ sources: [header('x-foo')], headers: { 'x-foo': '5.6.7.8:80' } }), ['5.6.7.8:80']);
    assert.deepEqual(run({ sources: [header('X-Bar')], headers: { 'x-bar': '[::2]:80' } }), ['[::2]:80']);
  });

  test('WrongHeaderName: another header present ⇒ metadata used', () => {
    assert.deepEqual(run({ headers: { 'x-other': '5.6.7.8:80' }, metadata: lb('127.0.0.1:80') }), ['127.0.0.1:80']);
  });

  test('NullptrFromFallbackLb: empty cluster ⇒ no host, no crash', () => {
    const r = simulateOverrideHost({ sources: [metadata()], fallback: 'First', hosts: [], metadata: lb('1.2.3.4:80') });
    assert.equal(r.attempts[0]?.host, null);
    assert.equal(r.attempts[0]?.by, 'none');
    assert.match(r.attempts[0]?.reason ?? '', /cluster is empty/);
  });

  test('SelectIpv4EndpointUsingMetadata', () => {
    assert.deepEqual(run({ sources: [metadata()], metadata: lb('127.0.0.1:80') }), ['127.0.0.1:80']);
  });

  test('SelectEndpointUsingMetadataMissingEndpoint: unknown address ⇒ a fallback host', () => {
    const [host] = run({ sources: [metadata()], metadata: lb('10.10.10.10:80') });
    assert.equal(host, '1.2.3.4:80');
  });

  test('SelectIPv6UsingMetadata: an UNHEALTHY host is still selected', () => {
    const r = simulateOverrideHost({
      sources: [metadata()],
      fallback: 'First',
      hosts: [{ address: '[::2]:80', health: 'UNHEALTHY' }, '1.2.3.4:80'],
      metadata: lb('[::2]:80'),
    });
    assert.equal(r.attempts[0]?.host, '[::2]:80');
    assert.match(r.attempts[0]?.reason ?? '', /UNHEALTHY: override_host does not check health/);
  });

  test('SelectEndpointBadMetadata: bad-host@address ⇒ fallback', () => {
    const r = simulate({ sources: [metadata()], metadata: lb('bad-host@address') });
    assert.equal(r.attempts[0]?.by, 'fallback');
  });

  test('SelectEndpointBadMetadataType: a number (or a list) is treated as absent', () => {
    for (const value of [123, ['5.6.7.8:80'], { nested: '5.6.7.8:80' }]) {
      const r = simulate({ sources: [metadata()], metadata: lb(value) });
      assert.equal(r.overrideList.length, 0);
      assert.equal(r.attempts[0]?.host, '1.2.3.4:80');
    }
  });

  test('HeaderOnlySourceWithNoHeader: header-only config ignores metadata', () => {
    assert.deepEqual(run({ sources: [header()], metadata: lb('5.6.7.8:80') }), ['1.2.3.4:80']);
  });

  test('NullDownstreamHeaders: header-only config, no headers ⇒ fallback', () => {
    assert.deepEqual(run({ sources: [header()], headers: null }), ['1.2.3.4:80']);
  });

  test('SelectedHostStoredInMetadata', () => {
    const r = simulate({
      sources: [metadata()],
      metadata: lb('1.2.3.4:80'),
      selectedHostKey: { key: 'envoy.lb', path: ['x-gateway-destination-endpoint-served'] },
    });
    assert.equal((r.metadata['envoy.lb'] as Record<string, unknown>)['x-gateway-destination-endpoint-served'], '1.2.3.4:80');
  });

  test('SelectedHostMetadataMultipleHostsChosen: both picked in order, the served key holds the last', () => {
    const r = simulateOverrideHost({
      sources: [metadata()],
      fallback: 'First',
      hosts: [{ address: '3.5.8.13:80', health: 'DEGRADED' }, '5.6.7.8:80'],
      metadata: lb('3.5.8.13:80,5.6.7.8:80'),
      selectedHostKey: { key: 'envoy.lb', path: ['x-gateway-destination-endpoint-served'] },
      attempts: 2,
    });
    assert.deepEqual(
      r.attempts.map((a) => a.host),
      ['3.5.8.13:80', '5.6.7.8:80'],
    );
    assert.equal((r.metadata['envoy.lb'] as Record<string, unknown>)['x-gateway-destination-endpoint-served'], '5.6.7.8:80');
  });

  test('SelectedEndpointMetadataDoesNotOverwriteEnvoyLb: other envoy.lb keys survive', () => {
    const input = { 'envoy.lb': { 'x-gateway-destination-endpoint': '1.2.3.4:80', canary: 'true' } };
    const r = simulate({
      sources: [metadata()],
      metadata: input,
      selectedHostKey: { key: 'envoy.lb', path: ['x-gateway-destination-endpoint-served'] },
    });
    assert.deepEqual(r.metadata['envoy.lb'], {
      'x-gateway-destination-endpoint': '1.2.3.4:80',
      canary: 'true',
      'x-gateway-destination-endpoint-served': '1.2.3.4:80',
    });
    assert.equal(Object.keys(input['envoy.lb']).length, 2, "the caller's metadata is not mutated");
  });

  test('FallbackRecreatedOnHostChange: after a host-set change the fallback picks from the new hosts', () => {
    const sim = new OverrideHostSimulator({ sources: [metadata()], fallback: 'RoundRobin', hosts: ['1.2.3.4:80', '5.6.7.8:80'] });
    assert.deepEqual([sim.request().attempts[0]?.host, sim.request().attempts[0]?.host], ['1.2.3.4:80', '5.6.7.8:80']);
    sim.setHosts(['9.9.9.9:80']);
    assert.equal(sim.request().attempts[0]?.host, '9.9.9.9:80');
    assert.equal(sim.request({ metadata: lb('1.2.3.4:80') }).attempts[0]?.by, 'fallback', 'a removed host is no longer found');
  });
});

describe('config_test.cc scenarios (load-time errors, Envoy messages)', () => {
  const check = (config: Parameters<typeof validateOverrideHostConfig>[0]) => validateOverrideHostConfig(config);
  test('NoFallbackLb', () => {
    assert.deepEqual(check({ sources: [metadata()], fallback: undefined }).errors, ['fallback_policy: value is required']);
  });
  test('NoFallbackPolicies', () => {
    assert.deepEqual(check({ sources: [metadata()], fallback: [] }).errors, [
      "dynamic forwarding LB: didn't find a registered fallback load balancer factory with names from ",
    ]);
    assert.match(
      check({ sources: [metadata()], fallback: ['envoy.load_balancing_policies.maglev'] }).errors[0] ?? '',
      /names from envoy\.load_balancing_policies\.maglev/,
    );
  });
  test('NoPrimaryOverideSources', () => {
    assert.deepEqual(check({ sources: [], fallback: 'RoundRobin' }).errors, ['override_host_sources: value must contain at least 1 item']);
  });
  test('FirstValidFallbackPolicyIsUsed', () => {
    assert.deepEqual(check({ sources: [metadata()], fallback: ['com.example.unknown', 'envoy.load_balancing_policies.random', 'RoundRobin'] }), {
      errors: [],
      fallback: 'Random',
    });
  });
  test('EmptyPrimaryOverrideSource', () => {
    assert.deepEqual(check({ sources: [{}], fallback: 'RoundRobin' }).errors, ['override_host_sources[0]: Empty override source']);
  });
  test('HeaderAndMetadataInTheSameOverrideSource', () => {
    assert.deepEqual(check({ sources: [{ header: 'x', metadata: { key: 'envoy.lb', path: ['x'] } }], fallback: 'RoundRobin' }).errors, [
      'override_host_sources[0]: Only one override source must be set',
    ]);
  });
  test('FallbackLbCalledToChooseHost', () => {
    const r = simulateOverrideHost({ sources: [metadata()], fallback: 'envoy.load_balancing_policies.round_robin', hosts: HOSTS, attempts: 3 });
    assert.deepEqual(
      r.attempts.map((a) => [a.by, a.host]),
      [
        ['fallback', '1.2.3.4:80'],
        ['fallback', '5.6.7.8:80'],
        ['fallback', '[::2]:80'],
      ],
    );
  });
  test('simulate refuses a config Envoy would refuse, listing every error', () => {
    assert.throws(
      () => simulateOverrideHost({ sources: [{}, { metadata: { key: '', path: [] } }], fallback: 'Nope', hosts: ['10.0.0.1'], attempts: 0 }),
      (err: unknown) =>
        err instanceof OverrideHostConfigError &&
        err.errors.length === 4 &&
        /Empty override source/.test(err.message) &&
        /metadata\.key/.test(err.message) &&
        /metadata\.path/.test(err.message),
    );
    assert.throws(() => new OverrideHostSimulator({ sources: [metadata()], fallback: 'First', hosts: ['10.0.0.1'] }), /hosts\[0\]: missing ":port"/);
    assert.throws(() => simulate({ sources: [metadata()], attempts: 0 }), /attempts: 0/);
  });
});

describe('integration_test.cc scenarios (3 upstreams, 8 requests)', () => {
  const upstreams = ['127.0.0.1:10001', '127.0.0.1:10002', '127.0.0.1:10003'];
  test('WithoutMetadataOrHeaderFallbackLbIsUsed: round robin spreads', () => {
    const sim = new OverrideHostSimulator({ sources: [metadata()], fallback: 'RoundRobin', hosts: upstreams });
    const hits = Array.from({ length: 8 }, () => sim.request().attempts[0]?.host);
    for (const u of upstreams) assert.ok(hits.includes(u), `${u} got traffic`);
  });
  test('UseFirstEndpoint: metadata names upstream 0 ⇒ always upstream 0', () => {
    const sim = new OverrideHostSimulator({ sources: [metadata()], fallback: 'RoundRobin', hosts: upstreams });
    const hits = Array.from({ length: 8 }, () => sim.request({ metadata: lb(upstreams[0]) }).attempts[0]?.host);
    assert.deepEqual(new Set(hits), new Set([upstreams[0]]));
  });
  test('RetriesUseFallbackLb: one endpoint in metadata; the retry goes to the fallback', () => {
    const sim = new OverrideHostSimulator({ sources: [metadata()], fallback: 'RoundRobin', hosts: upstreams });
    const r = sim.request({ metadata: lb(upstreams[1]), attempts: 2 });
    assert.deepEqual(
      r.attempts.map((a) => a.by),
      ['override', 'fallback'],
    );
    assert.equal(r.attempts[0]?.host, upstreams[1]);
  });
  test('UseFirstEndpointFromHeaders: the header beats metadata', () => {
    const sim = new OverrideHostSimulator({ sources: protocolSources(['header', 'metadata']), fallback: 'RoundRobin', hosts: upstreams });
    const r = sim.request({ headers: { 'x-gateway-destination-endpoint': upstreams[2] as string }, metadata: lb(upstreams[0]) });
    assert.equal(r.attempts[0]?.host, upstreams[2]);
  });
});

describe('protocol behaviours', () => {
  test('only the first value of a repeated header counts', () => {
    assert.deepEqual(run({ sources: [header()], headers: { 'x-gateway-destination-endpoint': ['5.6.7.8:80', '127.0.0.1:80'] }, attempts: 2 }), [
      '5.6.7.8:80',
      '1.2.3.4:80',
    ]);
  });
  test('the list is consumed across retries, unknown entries skipped, duplicates not removed', () => {
    const r = simulate({
      sources: [metadata()],
      metadata: lb('5.6.7.8:80,9.9.9.9:80, ,5.6.7.8:80,[::2]:80'),
      attempts: 4,
    });
    assert.deepEqual(
      r.attempts.map((a) => a.host),
      ['5.6.7.8:80', '5.6.7.8:80', '[::2]:80', '1.2.3.4:80'],
    );
    assert.deepEqual(
      r.attempts[1]?.skipped.map((s) => s.value),
      ['9.9.9.9:80'],
    );
    assert.equal(r.overrideList.length, 4, 'whitespace-only pieces are skipped as Envoy does');
  });
  test('a non-canonical spelling is skipped, and the reason says why', () => {
    const r = simulateOverrideHost({
      sources: [metadata()],
      fallback: 'First',
      hosts: ['[2001:db8::1]:80', '10.0.0.1:80'],
      metadata: lb('[2001:db8:0::1]:80'),
    });
    assert.equal(r.attempts[0]?.by, 'fallback');
    assert.match(r.attempts[0]?.skipped[0]?.reason ?? '', /spelt differently from the host \[2001:db8::1\]:80/);
  });
  test('fallback policies: LeastRequest spreads, Random is reproducible with a seed, unhealthy hosts avoided', () => {
    const hosts = ['10.0.0.1:80', '10.0.0.2:80', { address: '10.0.0.3:80', health: 'UNHEALTHY' as const }];
    const lr = simulateOverrideHost({ sources: [metadata()], fallback: 'LeastRequest', hosts, attempts: 4 });
    assert.deepEqual(
      lr.attempts.map((a) => a.host),
      ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.1:80', '10.0.0.2:80'],
    );
    const a = simulateOverrideHost({ sources: [metadata()], fallback: 'Random', hosts, attempts: 20, seed: 7 }).attempts.map((x) => x.host);
    const b = simulateOverrideHost({ sources: [metadata()], fallback: 'Random', hosts, attempts: 20, seed: 7 }).attempts.map((x) => x.host);
    assert.deepEqual(a, b);
    assert.ok(!a.includes('10.0.0.3:80'));
    const panic = simulateOverrideHost({ sources: [metadata()], fallback: 'First', hosts: [{ address: '10.0.0.9:80', health: 'UNHEALTHY' }] });
    assert.equal(panic.attempts[0]?.host, '10.0.0.9:80', 'with nothing healthy the fallback uses every host');
  });
});
