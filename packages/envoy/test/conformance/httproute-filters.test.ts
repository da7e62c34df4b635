// Gateway API conformance, HTTPRoute filters, redirects, rewrites, mirrors, timeouts, retries and
// backend protocols (v1.6.1; four tests from its main branch after v1.6.1, marked so): each upstream
// test's expectations, on scenarios written for extlb (manifests/), checked against the converted
// configuration with the Envoy model and the suite's echo backend (echo.ts).
import { type Expected, type ExpectedHeaders, INFRA, Scenario, conformance } from './harness.js';

const GW = 'same-namespace';

/** GatewayAndHTTPRoutesMustBeAccepted and HTTPRouteMustHaveResolvedRefsConditionsTrue. */
function accepted(s: Scenario, routes: string[], gateway = GW): void {
  s.mustBeAccepted(gateway, routes);
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, gateway), 'ResolvedRefs', 'True', 'ResolvedRefs');
}

/** The header changes the suite's "…-and-modify-headers" rules make, and what reaches the backend. */
const MODIFY_HEADERS = {
  sent: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
  expected: {
    headers: { 'X-Header-Add': 'header-val-1', 'X-Header-Add-Append': 'append-val-1,header-val-2', 'X-Header-Set': 'set-overwrites-values' },
    absentHeaders: ['X-Header-Remove'],
  },
};

/**
 * The suite's set, add and remove cases, which its request and response header tests share: the
 * headers sent (in the request, or in the backend's response) and the headers that result.
 */
const SET_ADD_REMOVE: Record<string, [Record<string, string>, ExpectedHeaders][]> = {
  '/set': [
    [{ 'Some-Other-Header': 'val' }, { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } }],
    [{ 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' }, { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } }],
  ],
  '/add': [
    [{ 'Some-Other-Header': 'val' }, { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'add-appends-values' } }],
    [
      { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value' },
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value,add-appends-values' } },
    ],
  ],
  '/remove': [[{ 'X-Header-Remove': 'val' }, { absentHeaders: ['X-Header-Remove'] }]],
  '/multiple': [
    [
      { 'X-Header-Set-2': 'set-val-2', 'X-Header-Add-2': 'add-val-2', 'X-Header-Remove-2': 'remove-val-2', 'Another-Header': 'another-header-val' },
      {
        headers: {
          'X-Header-Set-1': 'header-set-1',
          'X-Header-Set-2': 'header-set-2',
          'X-Header-Add-1': 'header-add-1',
          'X-Header-Add-2': 'add-val-2,header-add-2',
          'X-Header-Add-3': 'header-add-3',
          'Another-Header': 'another-header-val',
        },
        absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
      },
    ],
  ],
  // Lower-case names sent, the filter's names in another case.
  '/case-insensitivity': [
    [
      {
        'x-header-set': 'original-val-set',
        'x-header-add': 'original-val-add',
        'x-header-remove': 'original-val-remove',
        'Another-Header': 'another-header-val',
      },
      {
        headers: { 'X-Header-Set': 'header-set', 'X-Header-Add': 'original-val-add,header-add', 'Another-Header': 'another-header-val' },
        absentHeaders: ['x-header-remove', 'X-Header-Remove'],
      },
    ],
  ],
};

/** Each SET_ADD_REMOVE case, with what a test adds to the headers sent or expected on a path. */
function setAddRemove(
  check: (path: string, sent: Record<string, string>, expected: ExpectedHeaders) => void,
  more: Record<string, { sent?: Record<string, string>; headers?: Record<string, string> }> = {},
): void {
  for (const [path, cases] of Object.entries(SET_ADD_REMOVE)) {
    for (const [sent, expected] of cases) {
      check(path, { ...sent, ...more[path]?.sent }, { ...expected, headers: { ...expected.headers, ...more[path]?.headers } });
    }
  }
}

// ---- Redirects ---------------------------------------------------------------------------------

/** The 30x tests: one rule redirecting with its status code, the path kept. */
function redirectsWith(status: number, route: string, path: string, method?: string): () => void {
  return () => {
    const s = new Scenario(`httproute-${status}-redirect.yaml`);
    accepted(s, [route]);
    s.expect(GW, { request: { path, ...(method ? { method } : {}) }, status, redirect: { path } });
  };
}

conformance('HTTPRoute303Redirect', { status: 'pass' }, redirectsWith(303, '303-redirect', '/see-other', 'POST'));
conformance('HTTPRoute307Redirect', { status: 'pass' }, redirectsWith(307, '307-redirect', '/temporary'));
conformance('HTTPRoute308Redirect', { status: 'pass' }, redirectsWith(308, '308-redirect', '/permanent'));

conformance('HTTPRouteRedirectHostAndStatus', { status: 'pass' }, () => {
  const s = new Scenario('httproute-redirect-host-and-status.yaml');
  accepted(s, ['redirect-host-and-status']);
  s.expect(GW, { request: { path: '/hostname-redirect' }, status: 302, redirect: { host: 'example.org' } });
  s.expect(GW, { request: { path: '/host-and-status' }, status: 301, redirect: { host: 'example.org' } });
});

conformance('HTTPRouteRedirectPath', { status: 'pass' }, () => {
  const s = new Scenario('httproute-redirect-path.yaml');
  accepted(s, ['redirect-path']);
  s.expect(GW, { request: { path: '/original-prefix/lemon' }, status: 302, redirect: { path: '/replacement-prefix/lemon' } });
  s.expect(GW, { request: { path: '/full/path/original' }, status: 302, redirect: { path: '/full-path-replacement' } });
  s.expect(GW, { request: { path: '/path-and-host' }, status: 302, redirect: { host: 'example.org', path: '/replacement-prefix' } });
  s.expect(GW, { request: { path: '/path-and-status' }, status: 301, redirect: { path: '/replacement-prefix' } });
  s.expect(GW, { request: { path: '/full-path-and-host' }, status: 302, redirect: { host: 'example.org', path: '/replacement-full' } });
  s.expect(GW, { request: { path: '/full-path-and-status' }, status: 301, redirect: { path: '/replacement-full' } });
});

conformance('HTTPRouteRedirectScheme', { status: 'pass' }, () => {
  const s = new Scenario('httproute-redirect-scheme.yaml');
  accepted(s, ['redirect-scheme']);
  s.expect(GW, { request: { path: '/scheme' }, status: 302, redirect: { scheme: 'https' } });
  s.expect(GW, { request: { path: '/scheme-and-host' }, status: 302, redirect: { scheme: 'https', host: 'example.org' } });
  s.expect(GW, { request: { path: '/scheme-and-status' }, status: 301, redirect: { scheme: 'https' } });
  s.expect(GW, { request: { path: '/scheme-and-host-and-status' }, status: 302, redirect: { scheme: 'https', host: 'example.org' } });
});

conformance('HTTPRouteRedirectPortAndScheme', { status: 'pass' }, () => {
  const s = new Scenario('httproute-redirect-port-and-scheme.yaml');
  const gw8080 = 'same-namespace-with-http-listener-on-8080';
  const https = 'same-namespace-with-https-listener';
  accepted(s, ['http-route-for-listener-on-port-80']);
  accepted(s, ['http-route-for-listener-on-port-8080'], gw8080);
  accepted(s, ['http-route-for-listener-on-port-443'], https);
  const to = (scheme: string, port?: string) => ({ scheme, host: 'example.org', ...(port ? { port } : {}) });
  // The suite sends requests to the Gateway's address, so the Host carries the port when it is not 80.
  const cases: [string, Partial<Expected['request']>, string, ReturnType<typeof to>][] = [
    [GW, {}, '/scheme-nil-and-port-nil', to('http')],
    [GW, {}, '/scheme-nil-and-port-80', to('http')],
    [GW, {}, '/scheme-nil-and-port-8080', to('http', '8080')],
    [GW, {}, '/scheme-https-and-port-nil', to('https')],
    [GW, {}, '/scheme-https-and-port-443', to('https')],
    [GW, {}, '/scheme-https-and-port-8443', to('https', '8443')],
    [gw8080, { port: 8080, host: 'example.com:8080' }, '/scheme-nil-and-port-nil', to('http', '8080')],
    [gw8080, { port: 8080, host: 'example.com' }, '/scheme-nil-and-port-nil', to('http', '8080')],
    [gw8080, { port: 8080, host: 'example.com:8080' }, '/scheme-nil-and-port-80', to('http')],
    [gw8080, { port: 8080, host: 'example.com:8080' }, '/scheme-https-and-port-nil', to('https')],
  ];
  const tls = { port: 443, scheme: 'https' as const, sni: 'example.org', host: 'example.org' };
  for (const [path, redirect] of [
    ['/scheme-nil-and-port-nil', to('https')],
    ['/scheme-nil-and-port-443', to('https')],
    ['/scheme-nil-and-port-8443', to('https', '8443')],
    ['/scheme-http-and-port-nil', to('http')],
    ['/scheme-http-and-port-80', to('http')],
    ['/scheme-http-and-port-8080', to('http', '8080')],
  ] as const)
    cases.push([https, tls, path, redirect]);
  for (const [gw, request, path, redirect] of cases) s.expect(gw, { request: { ...request, path }, status: 302, redirect });
});

// ---- Header modifiers --------------------------------------------------------------------------

/** HTTPRouteRequestHeaderModifier's cases, which HTTPRouteBackendRequestHeaderModifier reuses. */
function requestHeaderModifierCases(s: Scenario): void {
  setAddRemove((path, sent, expected) => s.expect(GW, { request: { path, headers: sent }, backend: 'infra-backend-v1', upstream: { path, ...expected } }));
}

conformance('HTTPRouteRequestHeaderModifier', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-header-modifier.yaml');
  accepted(s, ['request-header-modifier']);
  requestHeaderModifierCases(s);
});

conformance('HTTPRouteBackendRequestHeaderModifier', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-header-modifier-backend.yaml');
  accepted(s, ['request-header-modifier']);
  requestHeaderModifierCases(s);
});

conformance('HTTPRouteRequestHeaderModifierBackendWeights', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-header-modifier-backend-weights.yaml');
  accepted(s, ['request-header-modifier-backend-weights']);
  const o = s.request(GW, { path: '/' });
  if (o.type !== 'forward') throw new Error(`expected the request to be forwarded, got ${JSON.stringify(o)}`);
  // Whichever backend the split picks, the Backend header names it, and only once.
  const seen = o.upstreams.map((u) => {
    const name = u.cluster.split('/')[2];
    if (u.headers.backend !== name || u.response.status !== 200) throw new Error(`${u.cluster} got Backend: ${u.headers.backend}, status ${u.response.status}`);
    return `${name}:${u.weight}`;
  });
  if (seen.sort().join() !== 'infra-backend-v1:10,infra-backend-v2:10') throw new Error(`the split is ${seen.join()}`);
});

conformance('HTTPRouteResponseHeaderModifier', { status: 'pass' }, () => {
  const s = new Scenario('httproute-response-header-modifier.yaml');
  accepted(s, ['response-header-modifier']);
  const at = (path: string, backendSets: Record<string, string>, response: ExpectedHeaders, request: Partial<Expected> = {}) =>
    s.expect(GW, { request: { path }, backend: 'infra-backend-v1', backendSets, response, ...request });
  setAddRemove(at, {
    '/multiple': { sent: { 'X-Header-Remove-1': 'val' } },
    '/case-insensitivity': {
      headers: {
        'X-Lowercase-Add': 'lowercase-add',
        'X-Mixedcase-Add-1': 'mixedcase-add-1',
        'X-Mixedcase-Add-2': 'mixedcase-add-2',
        'X-Uppercase-Add': 'uppercase-add',
      },
    },
  });
  const path = '/response-and-request-header-modifiers';
  at(
    path,
    {
      'X-Header-Set-2': 'set-val-2',
      'X-Header-Add-2': 'add-val-2',
      'X-Header-Remove-2': 'remove-val-2',
      'Another-Header': 'another-header-val',
      'X-Header-Remove-1': 'remove-val-1',
      'X-Header-Echo': 'echo',
    },
    {
      headers: {
        'X-Header-Set-1': 'header-set-1',
        'X-Header-Set-2': 'header-set-2',
        'X-Header-Add-1': 'header-add-1',
        'X-Header-Add-2': 'add-val-2,header-add-2',
        'Another-Header': 'another-header-val',
        'X-Header-Echo': 'echo',
      },
      absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
    },
    {
      request: { path, headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1', 'X-Header-Echo': 'echo' } },
      upstream: {
        path,
        headers: {
          'X-Header-Add': 'header-val-1',
          'X-Header-Set': 'set-overwrites-values',
          'X-Header-Add-Append': 'append-val-1,header-val-2',
          'X-Header-Echo': 'echo',
        },
        absentHeaders: ['X-Header-Remove'],
      },
    },
  );
});

// ---- Mirrors -----------------------------------------------------------------------------------

conformance('HTTPRouteRequestMirror', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-mirror.yaml');
  s.mustBeAccepted(GW, ['request-mirror']);
  const mirroredTo = [{ backend: 'infra-backend-v2' }];
  s.expect(GW, { request: { path: '/mirror' }, backend: 'infra-backend-v1', upstream: { path: '/mirror' }, mirroredTo });
  const path = '/mirror-and-modify-headers';
  s.expect(GW, { request: { path, headers: MODIFY_HEADERS.sent }, backend: 'infra-backend-v1', upstream: { path, ...MODIFY_HEADERS.expected }, mirroredTo });
});

conformance('HTTPRouteRequestMultipleMirrors', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-multiple-mirrors.yaml');
  s.mustBeAccepted(GW, ['request-multiple-mirrors']);
  const mirroredTo = [{ backend: 'infra-backend-v2' }, { backend: 'infra-backend-v3' }];
  s.expect(GW, { request: { path: '/multi-mirror' }, backend: 'infra-backend-v1', upstream: { path: '/multi-mirror' }, mirroredTo });
  const path = '/multi-mirror-and-modify-request-headers';
  s.expect(GW, { request: { path, headers: MODIFY_HEADERS.sent }, backend: 'infra-backend-v1', upstream: { path, ...MODIFY_HEADERS.expected }, mirroredTo });
});

conformance('HTTPRouteRequestPercentageMirror', { status: 'pass' }, () => {
  const s = new Scenario('httproute-request-percentage-mirror.yaml');
  accepted(s, ['request-percentage-mirror']);
  const to = (percent: number) => [{ backend: 'infra-backend-v2', percent }];
  s.expect(GW, { request: { path: '/percent-mirror' }, backend: 'infra-backend-v1', upstream: { path: '/percent-mirror' }, mirroredTo: to(20) });
  s.expect(GW, {
    request: { path: '/percent-mirror-fraction' },
    backend: 'infra-backend-v1',
    upstream: { path: '/percent-mirror-fraction' },
    mirroredTo: to(50),
  });
  const path = '/percent-mirror-and-modify-headers';
  s.expect(GW, {
    request: { path, headers: MODIFY_HEADERS.sent },
    backend: 'infra-backend-v1',
    upstream: { path, ...MODIFY_HEADERS.expected },
    mirroredTo: to(35),
  });
});

// ---- Rewrites ----------------------------------------------------------------------------------

conformance('HTTPRouteRewriteHost', { status: 'pass' }, () => {
  const s = new Scenario('httproute-rewrite-host.yaml');
  accepted(s, ['rewrite-host']);
  const host = 'rewrite.example';
  s.expect(GW, { request: { host, path: '/one' }, backend: 'infra-backend-v1', upstream: { path: '/one', host: 'one.example.org' } });
  s.expect(GW, { request: { host, path: '/two' }, backend: 'infra-backend-v2', upstream: { path: '/two', host: 'example.org' } });
  const path = '/rewrite-host-and-modify-headers';
  s.expect(GW, {
    request: { host, path, headers: MODIFY_HEADERS.sent },
    backend: 'infra-backend-v2',
    upstream: { path, host: 'test.example.org', ...MODIFY_HEADERS.expected },
  });
});

conformance('HTTPRouteRewritePath', { status: 'pass' }, () => {
  const s = new Scenario('httproute-rewrite-path.yaml');
  accepted(s, ['rewrite-path']);
  for (const [path, rewritten] of [
    ['/prefix/one/two', '/one/two'],
    ['/strip-prefix/three', '/three'],
    ['/strip-prefix', '/'],
    ['/full/one/two', '/one'],
  ] as const)
    s.expect(GW, { request: { path }, backend: 'infra-backend-v1', upstream: { path: rewritten } });
  const sent = { ...MODIFY_HEADERS.sent, 'X-Header-Set': 'set-val' };
  s.expect(GW, {
    request: { path: '/full/rewrite-path-and-modify-headers/test', headers: sent },
    backend: 'infra-backend-v1',
    upstream: { path: '/test', ...MODIFY_HEADERS.expected },
  });
  s.expect(GW, {
    request: { path: '/prefix/rewrite-path-and-modify-headers/one', headers: sent },
    backend: 'infra-backend-v1',
    upstream: { path: '/prefix/one', ...MODIFY_HEADERS.expected },
  });
});

conformance('HTTPRouteBackendURLRewrite', { status: 'pass' }, () => {
  const s = new Scenario('httproute-backend-url-rewrite.yaml');
  accepted(s, ['backend-url-rewrite']);
  s.expect(GW, { request: { path: '/full/original' }, backend: 'infra-backend-v1', upstream: { path: '/rewritten-full' } });
  s.expect(GW, { request: { path: '/prefix/original' }, backend: 'infra-backend-v1', upstream: { path: '/rewritten-prefix/original' } });
});

conformance('HTTPRouteBackendRequestRedirect', { status: 'pass' }, () => {
  const s = new Scenario('httproute-backend-request-redirect.yaml');
  accepted(s, ['backend-request-redirect']);
  s.expect(GW, { request: { path: '/full/original' }, status: 302, redirect: { path: '/redirected-full' } });
  s.expect(GW, { request: { path: '/prefix/original' }, status: 302, redirect: { path: '/redirected-prefix/original' } });
});

// ---- Timeouts and retries ----------------------------------------------------------------------

conformance('HTTPRouteTimeoutRequest', { status: 'pass' }, () => {
  const s = new Scenario('httproute-timeout-request.yaml');
  accepted(s, ['request-timeout']);
  s.expect(GW, { request: { path: '/request-timeout' }, namespace: INFRA });
  s.expect(GW, { request: { path: '/request-timeout?delay=1s' }, status: 504 });
  s.expect(GW, { request: { path: '/disable-request-timeout?delay=1s' } });
});

conformance('HTTPRouteTimeoutBackendRequest', { status: 'pass' }, () => {
  const s = new Scenario('httproute-timeout-backend-request.yaml');
  accepted(s, ['backend-request-timeout']);
  s.expect(GW, { request: { path: '/backend-timeout' } });
  s.expect(GW, { request: { path: '/backend-timeout?delay=1s' }, status: 504 });
  s.expect(GW, { request: { path: '/disable-backend-timeout?delay=1s' } });
});

/** assertConsistentRetryBehaviour: a /retry/ request the echo backend fails as told, answered by infra-backend-v3. */
function retryCase(s: Scenario, path: string, config: Record<string, string>, status: number | number[]): void {
  const query = new URLSearchParams({ ...config, uuid: '5f0c8a1e-2b7d-4e59-9a43-1c6e0d2f8b17' });
  s.expect(GW, { request: { path: `${path}?${query}` }, status, ...(status === 200 ? { backend: 'infra-backend-v3' } : {}) });
}

conformance('HTTPRouteRetry', { status: 'pass' }, () => {
  const s = new Scenario('httproute-retry.yaml');
  accepted(s, ['retries']);
  const p500 = '/retry/code-500-attempts-3';
  retryCase(s, p500, { responseCode: '500', succeedAfter: '2' }, 200);
  retryCase(s, p500, { responseCode: '500', succeedAfter: '4' }, 500);
  retryCase(s, p500, { responseCode: '503', succeedAfter: '2' }, 503);
  const all = '/retry/code-all-attempts-2';
  for (const code of [500, 502, 503, 504]) {
    retryCase(s, all, { responseCode: String(code), succeedAfter: '1' }, 200);
    retryCase(s, all, { responseCode: String(code), succeedAfter: '3' }, code);
  }
});

conformance('HTTPRouteRetryConnectionError', { status: 'pass' }, () => {
  const s = new Scenario('httproute-retry-connection-error.yaml');
  accepted(s, ['retries-connection-error']);
  const path = '/retry/no-status-code-attempts-3';
  retryCase(s, path, { succeedAfter: '2' }, 200);
  retryCase(s, path, { succeedAfter: '4' }, [500, 503]);
});

conformance('HTTPRouteRetryWithTimeouts', { status: 'pass' }, () => {
  const s = new Scenario('httproute-retry-with-timeouts.yaml');
  accepted(s, ['retries-with-timeouts']);
  const perTry = '/retry/backend-request-timeout-200ms';
  retryCase(s, perTry, { responseCode: '500', succeedAfter: '2', delayRetry: '300ms' }, 200);
  retryCase(s, perTry, { responseCode: '500', succeedAfter: '3', delayRetry: '300ms' }, 504);
  const whole = '/retry/request-timeout-200ms';
  retryCase(s, whole, { responseCode: '500', succeedAfter: '1' }, 200);
  retryCase(s, whole, { responseCode: '500', succeedAfter: '4', delayRetry: '100ms' }, 504);
});

// ---- Backend protocols -------------------------------------------------------------------------

conformance('HTTPRouteBackendProtocolH2C', { status: 'pass' }, () => {
  const s = new Scenario('httproute-backend-protocol-h2c.yaml');
  s.mustBeAccepted(GW, ['backend-protocol-h2c']);
  // HTTP/2 with prior knowledge from the client, and HTTP/2 on to the h2c-only backend port.
  s.expect(GW, { request: { path: '/', protocol: 'HTTP/2' }, backend: 'infra-backend-v1', upstream: { protocol: 'HTTP/2' } });
});

conformance('HTTPRouteBackendProtocolWebSocket', { status: 'pass' }, () => {
  const s = new Scenario('httproute-backend-protocol-websocket.yaml');
  s.mustBeAccepted(GW, ['backend-protocol-ws']);
  // The upgrade reaches the backend over HTTP/1.1, and the backend switches protocols.
  s.expect(GW, { request: { path: '/ws', upgrade: 'websocket' }, status: 101, backend: 'infra-backend-v1', upstream: { protocol: 'HTTP/1.1' } });
});

// ---- CORS --------------------------------------------------------------------------------------

conformance('HTTPRouteCORS', { status: 'pass' }, () => {
  const s = new Scenario('httproute-cors.yaml');
  const routes = ['cors-multiple-origins-methods-headers', 'cors-wildcard-methods', 'cors-wildcard-origin', 'cors-wildcard-methods-headers'];
  s.mustBeAccepted(GW, routes.slice(0, 2));
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, GW), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const preflight = (path: string, origin: string, method: string, headers?: string) => ({
    path,
    method: 'OPTIONS',
    headers: { Origin: origin, 'access-control-request-method': method, ...(headers ? { 'access-control-request-headers': headers } : {}) },
  });
  const simple = (path: string, method: string, origin: string, more: Record<string, string> = {}) => ({ path, method, headers: { Origin: origin, ...more } });
  const ok = [200, 204];
  const cors1 = (origin: string) => ({
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ['GET, OPTIONS', 'OPTIONS, GET'],
    'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1'],
    'access-control-expose-headers': ['x-header-3, x-header-4', 'x-header-4, x-header-3'],
    'access-control-max-age': '3600',
    'access-control-allow-credentials': 'true',
  });
  const requested = 'x-header-1, x-header-2';
  for (const origin of ['https://www.foo.com', 'https://www.bar.com', 'https://xpto.www.bar.com']) {
    s.expect(GW, { request: preflight('/cors-1', origin, 'GET', requested), status: ok, response: { headers: cors1(origin), ignoreWhitespace: true } });
  }
  s.expect(GW, {
    request: preflight('/cors-1', 'https://foobar.com', 'GET'),
    status: [200, 204, 403],
    response: { absentHeaders: ['access-control-allow-origin'] },
  });
  const asked = { 'access-control-request-method': 'GET', 'access-control-request-headers': requested };
  for (const origin of ['https://www.foo.com', 'https://www.bar.com']) {
    s.expect(GW, {
      request: simple('/cors-1', 'GET', origin, asked),
      namespace: INFRA,
      response: { headers: { 'access-control-allow-origin': origin } },
    });
  }
  s.expect(GW, {
    request: simple('/cors-1', 'GET', 'https://foobar.com', { 'access-control-request-method': 'GET' }),
    response: { absentHeaders: ['access-control-allow-origin'] },
  });
  s.expect(GW, {
    request: preflight('/cors-2', 'https://www.foo.com', 'POST'),
    status: ok,
    response: {
      headers: { 'access-control-allow-methods': ['POST', '*'], 'access-control-allow-origin': 'https://www.foo.com' },
      absentHeaders: ['access-control-allow-credentials'],
    },
  });
  for (const origin of ['https://foobar.com', 'https://foobar.com:12345']) {
    s.expect(GW, {
      request: preflight('/cors-wildcard-origin', origin, 'PUT'),
      status: ok,
      response: {
        headers: { 'access-control-allow-origin': [origin, '*'], 'access-control-allow-methods': 'PUT' },
        absentHeaders: ['Access-Control-Allow-Credentials'],
      },
    });
    s.expect(GW, {
      request: simple('/cors-wildcard-origin', 'PUT', origin),
      response: { headers: { 'access-control-allow-origin': [origin, '*'] }, absentHeaders: ['Access-Control-Allow-Credentials'] },
    });
  }
  const other = 'https://other.foo.com';
  s.expect(GW, {
    request: preflight('/cors-wildcard-methods-headers', other, 'PUT', requested),
    status: ok,
    response: {
      headers: {
        'access-control-allow-origin': other,
        'access-control-allow-methods': 'PUT',
        'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1'],
        'access-control-allow-credentials': 'true',
      },
      ignoreWhitespace: true,
    },
  });
  s.expect(GW, {
    request: preflight('/cors-wildcard-methods-headers-unauth', other, 'PUT', requested),
    status: ok,
    response: {
      headers: {
        'access-control-allow-origin': [other, '*'],
        'access-control-allow-methods': ['PUT', '*'],
        'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1', '*'],
      },
      absentHeaders: ['access-control-allow-credentials'],
      ignoreWhitespace: true,
    },
  });
  s.expect(GW, {
    request: simple('/cors-wildcard-methods-headers', 'GET', other),
    namespace: INFRA,
    response: { headers: { 'access-control-allow-origin': other, 'access-control-allow-credentials': 'true' } },
  });
  s.expect(GW, {
    request: simple('/cors-wildcard-methods-headers-unauth', 'GET', other),
    namespace: INFRA,
    response: { headers: { 'access-control-allow-origin': [other, '*'] }, absentHeaders: ['access-control-allow-credentials'] },
  });
});
