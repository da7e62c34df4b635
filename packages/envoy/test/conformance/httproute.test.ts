// Gateway API conformance, HTTPRoute tests (v1.6): each upstream test's expectations, on scenarios
// written for extlb (manifests/), checked against the converted configuration.
import assert from 'node:assert/strict';
import { APP, INFRA, Scenario, WEB, conformance } from './harness.js';

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

conformance('HTTPRouteCrossNamespace', { status: 'pass' }, () => {
  const s = new Scenario('httproute-cross-namespace.yaml');
  const route = `${WEB}/cross-namespace`;
  s.mustBeAccepted('backend-namespaces', [route]);
  s.condition(s.routeParent('HTTPRoute', route, 'backend-namespaces'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('backend-namespaces', { request: { path: '/' }, backend: 'web-backend', namespace: WEB });
});

conformance('HTTPRouteDisallowedKind', { status: 'pass' }, () => {
  const s = new Scenario('httproute-disallowed-kind.yaml');
  const parent = s.routeParent('HTTPRoute', 'disallowed-kind', 'tlsroutes-only');
  s.condition(parent, 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.condition(parent, 'Accepted', 'False', 'NotAllowedByListeners');
  // Both say which kind the listener takes instead.
  assert.match(parent.Accepted?.message, /listener "tls" allows only TLSRoute/);
  assert.match(s.diagnostic('NotAllowedByListeners', 'HTTPRoute', 'disallowed-kind').message, /allows only TLSRoute/);
  s.mustNotAttach('disallowed-kind', 'tlsroutes-only');
});

conformance('HTTPRouteHTTPSListener', { status: 'pass' }, () => {
  const s = new Scenario('httproute-https-listener.yaml');
  const gw = 'same-namespace-with-https-listener';
  const routes = ['httproute-https-test', 'httproute-https-test-no-hostname'];
  s.mustBeAccepted(gw, routes);
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  // The client names the host in TLS SNI and in the Host header alike.
  const https = (host: string) => ({ port: 443, scheme: 'https' as const, sni: host, host, path: '/' });
  s.expect(gw, { request: https('example.org'), backend: 'infra-backend-v1' });
  s.expect(gw, { request: https('unknown-example.org'), status: 404 });
  s.expect(gw, { request: https('second-example.org'), backend: 'infra-backend-v2' });
});

conformance('HTTPRouteHeaderMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-header-matching.yaml');
  s.mustBeAccepted('same-namespace', ['header-matching']);
  s.condition(s.routeParent('HTTPRoute', 'header-matching', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const cases: [Record<string, string>, string | 404][] = [
    [{ Version: 'one' }, 'infra-backend-v1'],
    [{ Version: 'two' }, 'infra-backend-v2'],
    [{ Version: 'two', Color: 'orange' }, 'infra-backend-v1'],
    [{ Version: 'two', Color: 'blue' }, 'infra-backend-v2'],
    [{ Color: 'orange' }, 404],
    [{ 'Some-Other-Header': 'one' }, 404],
    [{ Color: 'blue' }, 'infra-backend-v1'],
    [{ Color: 'green' }, 'infra-backend-v1'],
    [{ Color: 'red' }, 'infra-backend-v2'],
    [{ Color: 'yellow' }, 'infra-backend-v2'],
    [{ Color: 'purple' }, 404],
  ];
  for (const [headers, to] of cases) {
    const request = { path: '/', headers };
    s.expect('same-namespace', to === 404 ? { request, status: 404 } : { request, backend: to });
  }
});

/** A route Accepted by same-namespace whose one backendRef cannot be used: ResolvedRefs False, and 500. */
function invalidBackend(file: string, route: string, reason: string, path: string): void {
  const s = new Scenario(file);
  s.mustBeAccepted('same-namespace', [route]);
  s.condition(s.routeParent('HTTPRoute', route, 'same-namespace'), 'ResolvedRefs', 'False', reason);
  s.expect('same-namespace', { request: { path }, status: 500 });
}

conformance('HTTPRouteInvalidBackendRefUnknownKind', { status: 'pass' }, () =>
  invalidBackend('httproute-invalid-backendref-unknown-kind.yaml', 'invalid-backend-ref-unknown-kind', 'InvalidKind', '/v2'),
);

conformance('HTTPRouteInvalidCrossNamespaceBackendRef', { status: 'pass' }, () =>
  invalidBackend('httproute-invalid-cross-namespace-backend-ref.yaml', 'invalid-cross-namespace-backend-ref', 'RefNotPermitted', '/'),
);

conformance('HTTPRouteInvalidNonExistentBackendRef', { status: 'pass' }, () =>
  invalidBackend('httproute-invalid-nonexistent-backendref.yaml', 'invalid-nonexistent-backend-ref', 'BackendNotFound', '/'),
);

conformance('HTTPRouteInvalidReferenceGrant', { status: 'pass' }, () =>
  invalidBackend('httproute-invalid-reference-grant.yaml', 'reference-grant', 'RefNotPermitted', '/'),
);

conformance('HTTPRouteInvalidCrossNamespaceParentRef', { status: 'pass' }, () => {
  const s = new Scenario('httproute-invalid-cross-namespace-parent-ref.yaml');
  const route = `${WEB}/invalid-cross-namespace-parent-ref`;
  const parent = s.routeParent('HTTPRoute', route, 'same-namespace');
  s.condition(parent, 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.condition(parent, 'Accepted', 'False', 'NotAllowedByListeners');
  assert.match(s.diagnostic('NotAllowedByListeners', 'HTTPRoute', route).message, new RegExp(`from namespace ${INFRA} only`));
  s.mustNotAttach(route, 'same-namespace');
});

/** A route whose parentRef matches no listener of the Gateway: Accepted False, NoMatchingParent. */
function noMatchingParent(file: string, route: string, gateway: string, resolvedRefs: boolean): void {
  const s = new Scenario(file);
  const parent = s.routeParent('HTTPRoute', route, gateway);
  if (resolvedRefs) s.condition(parent, 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.condition(parent, 'Accepted', 'False', 'NoMatchingParent');
  s.diagnostic('NoMatchingParent', 'HTTPRoute', route);
  s.mustNotAttach(route, gateway);
}

conformance('HTTPRouteInvalidParentRefNotMatchingListenerPort', { status: 'pass' }, () =>
  noMatchingParent('httproute-invalid-parentref-not-matching-listener-port.yaml', 'httproute-listener-not-matching-route-port', 'same-namespace', true),
);

conformance('HTTPRouteInvalidParentRefNotMatchingSectionName', { status: 'pass' }, () =>
  noMatchingParent('httproute-invalid-parentref-not-matching-section-name.yaml', 'httproute-listener-not-matching-section-name', 'same-namespace', false),
);

conformance('HTTPRouteInvalidParentRefSectionNameNotMatchingPort', { status: 'pass' }, () =>
  noMatchingParent(
    'httproute-invalid-parentref-section-name-not-matching-port.yaml',
    'httproute-listener-section-name-not-matching-port',
    'gateway-with-one-not-matching-port-and-section-name-route',
    false,
  ),
);

conformance('HTTPRouteListenerHostnameMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-listener-hostname-matching.yaml');
  const gw = 'httproute-listener-hostname-matching';
  const routes: [string, string[]][] = [
    ['backend-v1', ['listener-1']],
    ['backend-v2', ['listener-2']],
    ['backend-v3', ['listener-3', 'listener-4']],
  ];
  for (const [route, listeners] of routes) {
    s.mustBeAccepted(gw, [route]);
    for (const l of listeners) s.condition(s.routeParent('HTTPRoute', route, gw, l), 'Accepted', 'True', 'Accepted');
    s.condition(s.routeParent('HTTPRoute', route, gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  }
  const cases: [string, string | 404][] = [
    ['bar.com', 'infra-backend-v1'],
    ['foo.bar.com', 'infra-backend-v2'],
    ['baz.bar.com', 'infra-backend-v3'],
    ['boo.bar.com', 'infra-backend-v3'],
    ['multiple.prefixes.bar.com', 'infra-backend-v3'],
    ['multiple.prefixes.foo.com', 'infra-backend-v3'],
    ['foo.com', 404],
    ['no.matching.host', 404],
  ];
  for (const [host, to] of cases) {
    const request = { host, path: '/' };
    s.expect(gw, to === 404 ? { request, status: 404 } : { request, backend: to });
  }
});

conformance('HTTPRouteListenerPortMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-listener-port-matching.yaml');
  const gw = 'httproute-listener-port-matching';
  for (const [route, listener] of [
    ['backend-v1', 'listener-1'],
    ['backend-v2', 'listener-2'],
    ['backend-v3', 'listener-4'],
  ] as const) {
    s.mustBeAccepted(gw, [route]);
    s.condition(s.routeParent('HTTPRoute', route, gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
    // The route counts on the listener it was meant for.
    assert.ok(s.listener(gw, listener).attachedRoutes >= 1, `${route} on ${listener}`);
  }
  // The request goes to the port its Host names (80 when none), as the test dials it.
  const cases: [string, string | 404][] = [
    ['foo.com', 'infra-backend-v1'],
    ['foo.com:8080', 'infra-backend-v2'],
    ['bar.com:8080', 'infra-backend-v2'],
    ['foo.com:8090', 'infra-backend-v3'],
    ['bar.com:8090', 404],
  ];
  for (const [host, to] of cases) {
    const request = { host, port: Number(host.split(':')[1] ?? 80), path: '/' };
    s.expect(gw, to === 404 ? { request, status: 404 } : { request, backend: to });
  }
});

conformance('HTTPRouteMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-matching.yaml');
  s.mustBeAccepted('same-namespace', ['matching']);
  s.condition(s.routeParent('HTTPRoute', 'matching', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const cases: [string, Record<string, string>, string][] = [
    ['/', {}, 'infra-backend-v1'],
    ['/example', {}, 'infra-backend-v1'],
    ['/', { Version: 'one' }, 'infra-backend-v1'],
    ['/v2', {}, 'infra-backend-v2'],
    ['/v2/example', {}, 'infra-backend-v2'],
    ['/', { Version: 'two' }, 'infra-backend-v2'],
    ['/v2/', {}, 'infra-backend-v2'],
    // Not a path-segment prefix of /v2.
    ['/v2example', {}, 'infra-backend-v1'],
    ['/foo/v2/example', {}, 'infra-backend-v1'],
  ];
  for (const [path, headers, backend] of cases) s.expect('same-namespace', { request: { path, headers }, backend });
});

conformance('HTTPRouteMatchingAcrossRoutes', { status: 'pass' }, () => {
  const s = new Scenario('httproute-matching-across-routes.yaml');
  const routes = ['matching-part1', 'matching-part2'];
  s.mustBeAccepted('same-namespace', routes);
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const cases: [string, string, Record<string, string>, string][] = [
    ['example.com', '/', {}, 'infra-backend-v1'],
    ['example.com', '/example', {}, 'infra-backend-v1'],
    ['example.net', '/example', {}, 'infra-backend-v1'],
    ['example.com', '/example', { Version: 'one' }, 'infra-backend-v1'],
    ['example.com', '/v2', {}, 'infra-backend-v2'],
    // The /v2 matches are limited to example.com.
    ['example.net', '/v2', {}, 'infra-backend-v1'],
    ['example.com', '/v2/example', {}, 'infra-backend-v2'],
    ['example.com', '/', { Version: 'two' }, 'infra-backend-v2'],
  ];
  for (const [host, path, headers, backend] of cases) s.expect('same-namespace', { request: { host, path, headers }, backend });
});

conformance('HTTPRouteMethodMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-method-matching.yaml');
  s.mustBeAccepted('same-namespace', ['method-matching']);
  s.condition(s.routeParent('HTTPRoute', 'method-matching', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const cases: [string, string, Record<string, string>, string | 404][] = [
    ['POST', '/', {}, 'infra-backend-v1'],
    ['GET', '/', {}, 'infra-backend-v2'],
    ['HEAD', '/', {}, 404],
    // With other match types.
    ['GET', '/path1', {}, 'infra-backend-v1'],
    ['PUT', '/', { version: 'one' }, 'infra-backend-v2'],
    ['POST', '/path2', { version: 'two' }, 'infra-backend-v3'],
    // Either of two ORed matches.
    ['PATCH', '/path3', {}, 'infra-backend-v1'],
    ['DELETE', '/path4', { version: 'three' }, 'infra-backend-v1'],
    // Only part of an ANDed match.
    ['PUT', '/', {}, 404],
    ['DELETE', '/path4', {}, 404],
    // Precedence: a longer path beats a method, a method beats headers.
    ['PATCH', '/path5', {}, 'infra-backend-v1'],
    ['PATCH', '/', { version: 'four' }, 'infra-backend-v2'],
  ];
  for (const [method, path, headers, to] of cases) {
    const request = { method, path, headers };
    s.expect('same-namespace', to === 404 ? { request, status: 404 } : { request, backend: to });
  }
});

conformance('HTTPRouteMultipleGateways', { status: 'pass' }, () => {
  const s = new Scenario('httproute-multiple-gateways.yaml');
  for (const [gw, dedicated, backend] of [
    ['same-namespace', 'same-namespace-dedicated-route', 'infra-backend-v2'],
    ['all-namespaces', 'all-namespaces-dedicated-route', 'infra-backend-v3'],
  ] as const) {
    s.mustBeAccepted(gw, ['multiple-gateways-shared-route', dedicated]);
    s.expect(gw, { request: { path: '/shared' }, backend: 'infra-backend-v1' });
    s.expect(gw, { request: { path: '/' }, backend });
  }
});

conformance('HTTPRouteNamedRule', { status: 'pass' }, () => {
  const s = new Scenario('httproute-named-rule.yaml');
  s.mustBeAccepted('same-namespace', ['http-named-rules']);
  s.condition(s.routeParent('HTTPRoute', 'http-named-rules', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('same-namespace', { request: { path: '/named' }, backend: 'infra-backend-v1' });
  s.expect('same-namespace', { request: { path: '/unnamed' }, backend: 'infra-backend-v2' });
});

conformance('HTTPRouteNoBackendRefs', { status: 'pass' }, () => {
  const s = new Scenario('httproute-omitted-backendrefs.yaml');
  s.mustBeAccepted('same-namespace', ['omitted-backendrefs']);
  s.condition(s.routeParent('HTTPRoute', 'omitted-backendrefs', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('same-namespace', { request: { path: '/forward' }, backend: 'infra-backend-v1' });
  s.expect('same-namespace', { request: { path: '/omitted-no-forward' }, status: 500 });
  s.expect('same-namespace', { request: { path: '/empty-no-forward' }, status: 500 });
});

conformance('HTTPRouteObservedGenerationBump', { status: 'pass' }, () => {
  const route = 'observed-generation-bump';
  const before = new Scenario('httproute-observed-generation-bump.yaml');
  // routeParent checks every condition's observedGeneration against metadata.generation.
  before.condition(before.routeParent('HTTPRoute', route, 'same-namespace'), 'Accepted', 'True');
  // The test's patch: another backend; the API server bumps the generation.
  const after = before.after((objects) => {
    const r = objects.find((o) => o.kind === 'HTTPRoute' && o.metadata.name === route) as Record<string, any>;
    r.spec.rules[0].backendRefs[0].name = 'infra-backend-v2';
    r.metadata.generation += 1;
    return objects;
  });
  const parent = after.routeParent('HTTPRoute', route, 'same-namespace');
  after.condition(parent, 'Accepted', 'True');
  after.condition(parent, 'ResolvedRefs', 'True', 'ResolvedRefs');
  assert.equal(parent.Accepted?.observedGeneration, 2);
  after.expect('same-namespace', { request: { path: '/' }, backend: 'infra-backend-v2' });
});

conformance('HTTPRoutePartiallyInvalidViaInvalidReferenceGrant', { status: 'pass' }, () => {
  const s = new Scenario('httproute-partially-invalid-via-invalid-reference-grant.yaml');
  s.mustBeAccepted('same-namespace', ['invalid-reference-grant']);
  s.condition(s.routeParent('HTTPRoute', 'invalid-reference-grant', 'same-namespace'), 'ResolvedRefs', 'False', 'RefNotPermitted');
  s.expect('same-namespace', { request: { path: '/v2' }, status: 500 });
  s.expect('same-namespace', { request: { path: '/' }, backend: 'app-backend-v1', namespace: APP });
});

conformance('HTTPRoutePathMatchOrder', { status: 'pass' }, () => {
  const s = new Scenario('httproute-path-match-order.yaml');
  s.mustBeAccepted('same-namespace', ['path-matching-order']);
  s.condition(s.routeParent('HTTPRoute', 'path-matching-order', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  for (const [path, backend] of [
    ['/match/exact/one', 'infra-backend-v3'],
    ['/match/exact', 'infra-backend-v2'],
    ['/match', 'infra-backend-v1'],
    ['/match/prefix/one/any', 'infra-backend-v2'],
    ['/match/prefix/any', 'infra-backend-v1'],
    ['/match/any', 'infra-backend-v3'],
  ] as const)
    s.expect('same-namespace', { request: { path }, backend });
});

conformance('HTTPRouteQueryParamMatching', { status: 'pass' }, () => {
  const s = new Scenario('httproute-query-param-matching.yaml');
  s.mustBeAccepted('same-namespace', ['query-param-matching']);
  s.condition(s.routeParent('HTTPRoute', 'query-param-matching', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const cases: [string, Record<string, string>, string | 404][] = [
    ['/?animal=whale', {}, 'infra-backend-v1'],
    ['/?animal=dolphin', {}, 'infra-backend-v2'],
    ['/?animal=dolphin&color=blue', {}, 'infra-backend-v3'],
    ['/?ANIMAL=Whale', {}, 'infra-backend-v3'],
    ['/?animal=whale&otherparam=irrelevant', {}, 'infra-backend-v1'],
    ['/?animal=dolphin&color=yellow', {}, 'infra-backend-v2'],
    ['/?color=blue', {}, 404],
    ['/?animal=dog', {}, 404],
    ['/?animal=whaledolphin', {}, 404],
    ['/', {}, 404],
    // With other match types.
    ['/path1?animal=whale', {}, 'infra-backend-v1'],
    ['/?animal=whale', { version: 'one' }, 'infra-backend-v2'],
    ['/path2?animal=whale', { version: 'two' }, 'infra-backend-v3'],
    // Either of two ORed matches.
    ['/path3?animal=shark', {}, 'infra-backend-v1'],
    ['/path4?animal=kraken', { version: 'three' }, 'infra-backend-v1'],
    // Only part of an ANDed match.
    ['/?animal=shark', {}, 404],
    ['/path4?animal=kraken', {}, 404],
    // Precedence: a longer path beats query parameters, headers beat query parameters.
    ['/path5?animal=hydra', {}, 'infra-backend-v1'],
    ['/?animal=hydra', { version: 'four' }, 'infra-backend-v3'],
  ];
  for (const [path, headers, to] of cases) {
    const request = { path, headers };
    s.expect('same-namespace', to === 404 ? { request, status: 404 } : { request, backend: to });
  }
});

conformance('HTTPRouteReferenceGrant', { status: 'pass' }, () => {
  const s = new Scenario('httproute-reference-grant.yaml');
  s.mustBeAccepted('same-namespace', ['reference-grant']);
  s.condition(s.routeParent('HTTPRoute', 'reference-grant', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('same-namespace', { request: { path: '/' }, backend: 'web-backend', namespace: WEB });
  // The test deletes the ReferenceGrant: the backend is no longer permitted.
  const deleted = s.after((objects) => objects.filter((o) => !(o.kind === 'ReferenceGrant' && o.metadata.name === 'reference-grant')));
  deleted.expect('same-namespace', { request: { path: '/' }, status: 500 });
  deleted.condition(deleted.routeParent('HTTPRoute', 'reference-grant', 'same-namespace'), 'ResolvedRefs', 'False', 'RefNotPermitted');
});

conformance('HTTPRouteServiceTypes', { status: 'pass' }, () => {
  // Endpoints listed in the clusters, and served over EDS.
  for (const endpoints of ['static', 'eds'] as const) {
    const s = new Scenario('httproute-service-types.yaml', { endpoints });
    s.mustBeAccepted('same-namespace', ['service-types']);
    s.condition(s.routeParent('HTTPRoute', 'service-types', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
    // Each Service type leads to the infra-backend-v1 Pods.
    for (const service of ['manual-endpointslices', 'headless-manual-endpointslices', 'headless'])
      s.expect('same-namespace', { request: { path: `/${service}` }, backend: service, pods: 'infra-backend-v1' });
  }
});

conformance('HTTPRouteWeight', { status: 'pass' }, () => {
  const s = new Scenario('httproute-weight.yaml');
  s.mustBeAccepted('same-namespace', ['weighted-backends']);
  s.condition(s.routeParent('HTTPRoute', 'weighted-backends', 'same-namespace'), 'ResolvedRefs', 'True', 'ResolvedRefs');
  s.expect('same-namespace', {
    request: { path: '/' },
    weights: { 'infra-backend-v1': 0.7, 'infra-backend-v2': 0.3, 'infra-backend-v3': 0 },
  });
});
