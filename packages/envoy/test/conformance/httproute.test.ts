// Gateway API conformance, HTTPRoute tests (v1.6): each upstream test's expectations, on scenarios
// written for extlb (manifests/), checked against the converted configuration.
import { INFRA, Scenario, conformance } from './harness.js';

conformance('HTTPRouteSimpleSameNamespace', { status: 'pass' }, () => {
  const s = new Scenario('httproute-simple-same-namespace.yaml');
  s.mustBeAccepted('same-namespace', ['gateway-conformance-infra-test']);
  s.condition(s.routeParent('HTTPRoute', 'gateway-conformance-infra-test', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('same-namespace', { request: { path: '/' }, backend: 'infra-backend-v1', namespace: INFRA });
});

conformance('HTTPRouteExactPathMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-exact-path-matching.yaml');
  s.mustBeAccepted('same-namespace', ['exact-matching']);
  s.expect('same-namespace', { request: { path: '/one' }, backend: 'infra-backend-v1' });
  s.expect('same-namespace', { request: { path: '/two' }, backend: 'infra-backend-v2' });
  for (const path of ['/', '/one/example', '/two/', '/Two']) s.expect('same-namespace', { request: { path }, status: 404 });
});

conformance('HTTPRouteRedirectPort', { status: 'pass' }, () => {
  const s = new Scenario('httproute-redirect-port.yaml');
  s.mustBeAccepted('same-namespace', ['redirect-port']);
  s.expect('same-namespace', { request: { path: '/port' }, status: 302, redirect: { port: '8083' } });
  s.expect('same-namespace', { request: { path: '/port-and-host' }, status: 302, redirect: { host: 'example.org', port: '8083' } });
  s.expect('same-namespace', { request: { path: '/port-and-status' }, status: 301, redirect: { port: '8083' } });
  s.expect('same-namespace', { request: { path: '/port-and-host-and-status' }, status: 302, redirect: { host: 'example.org', port: '8083' } });
});

conformance('HTTPRouteHostnameIntersection', { status: 'pass' }, () => {
  const s = new Scenario('httproute-hostname-intersection.yaml');
  const gw = 'httproute-hostname-intersection';
  s.mustBeAccepted(gw, [
    'specific-host-matches-listener-specific-host',
    'specific-host-matches-listener-wildcard-host',
    'wildcard-host-matches-listener-specific-host',
    'wildcard-host-matches-listener-wildcard-host',
  ]);
  const ok = (host: string, path: string, backend: string) => s.expect(gw, { request: { host, path }, backend, upstream: { host } });
  const notFound = (host: string, path: string) => s.expect(gw, { request: { host, path }, status: 404 });
  ok('very.specific.com', '/s1', 'infra-backend-v1');
  // The Host's port is ignored for matching, and reaches the backend as sent.
  ok('very.specific.com:1234', '/s1', 'infra-backend-v1');
  for (const [host, path] of [
    ['non.matching.com', '/s1'],
    ['foo.nonmatchingwildcard.io', '/s1'],
    ['foo.wildcard.io', '/s1'],
    ['very.specific.com', '/non-matching-prefix'],
  ])
    notFound(host as string, path as string);
  for (const host of ['foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io']) ok(host, '/s2', 'infra-backend-v2');
  for (const [host, path] of [
    ['non.matching.com', '/s2'],
    ['wildcard.io', '/s2'],
    ['very.specific.com', '/s2'],
    ['foo.wildcard.io', '/non-matching-prefix'],
  ])
    notFound(host as string, path as string);
  ok('very.specific.com', '/s3', 'infra-backend-v3');
  for (const [host, path] of [
    ['non.matching.com', '/s3'],
    ['foo.specific.com', '/s3'],
    ['foo.wildcard.io', '/s3'],
    ['very.specific.com', '/non-matching-prefix'],
  ])
    notFound(host as string, path as string);
  for (const host of ['foo.anotherwildcard.io', 'bar.anotherwildcard.io', 'foo.bar.anotherwildcard.io']) ok(host, '/s4', 'infra-backend-v1');
  for (const [host, path] of [
    ['anotherwildcard.io', '/s4'],
    ['foo.wildcard.io', '/s4'],
    ['very.specific.com', '/s4'],
    ['foo.anotherwildcard.io', '/non-matching-prefix'],
  ])
    notFound(host as string, path as string);
  // A route none of whose hostnames intersects a listener is not accepted.
  s.condition(s.routeParent('HTTPRoute', 'no-intersecting-hosts', gw), 'Accepted', 'False', 'NoMatchingListenerHostname');
  for (const host of ['specific.but.wrong.com', 'wildcard.io']) notFound(host, '/s5');
  const all = 'httproute-hostname-intersection-all';
  s.mustBeAccepted(all, ['httproute-hostname-intersection-all']);
  for (const host of ['first.com', 'sub.first.com', 'second.com', 'sub.second.com'])
    s.expect(all, { request: { host, path: '/' }, backend: 'infra-backend-v2' });
  for (const host of ['third.com', 'sub.third.com']) s.expect(all, { request: { host, path: '/' }, status: 404 });
});

conformance('HTTPRouteHTTPSListenerDetectMisdirectedRequests', { status: 'pass' }, () => {
  const s = new Scenario('httproute-https-listener-detect-misdirected-requests.yaml');
  const gw = 'same-namespace-with-https-listener';
  s.mustBeAccepted(
    gw,
    [1, 2, 3, 4].map((i) => `https-listener-detect-misdirected-requests-test-${i}`),
  );
  const cases: [string, string, number, string?][] = [
    ['example.org', 'example.org', 200, 'infra-backend-v1'],
    ['example.org', 'second-example.org', 421],
    ['example.org', 'unknown-example.org', 404],
    ['second-example.org', 'second-example.org', 200, 'infra-backend-v2'],
    ['second-example.org', 'example.org', 421],
    ['second-example.org', 'unknown-example.org', 421],
    ['third-example.wildcard.org', 'third-example.wildcard.org', 200, 'infra-backend-v3'],
    ['third-example.wildcard.org', 'fith-example.wildcard.org', 200, 'infra-backend-v3'],
    ['third-example.wildcard.org', 'fourth-example.wildcard.org', 421],
    ['third-example.wildcard.org', 'second-example.org', 421],
    ['third-example.wildcard.org', 'unknown-example.org', 421],
    ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 200, 'infra-backend-v1'],
    ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 421],
    ['unknown-example.org', 'example.org', 200, 'infra-backend-v1'],
    ['unknown-example.org', 'unknown-example.org', 404],
  ];
  for (const [sni, host, status, backend] of cases) {
    const request = { port: 443, scheme: 'https' as const, sni, host, path: '/detect-misdirected-requests' };
    s.expect(gw, backend ? { request, backend } : { request, status });
  }
});
