// The upstream ListenerSet tests (Gateway API v1.6): which ListenerSets a Gateway takes, their
// listeners merged into the Gateway's (conflicts, ReferenceGrants from ListenerSets), routes
// attaching through a ListenerSet parentRef, and the statuses of both — requests checked with the
// Envoy model as the HTTPRoute scenarios are.
import assert from 'node:assert/strict';
import { INFRA, Scenario, WEB, certificate, conformance } from './harness.js';

type Json = Record<string, any>;
const V1 = 'gateway.networking.k8s.io/v1';

const http = (name: string, hostname: string, from = 'All', port = 80): Json => ({
  name,
  port,
  protocol: 'HTTP',
  hostname,
  allowedRoutes: { namespaces: { from } },
});
function gateway(name: string, listeners: Json[], allowed?: Json): Json {
  const spec: Json = { gatewayClassName: 'extlb', listeners };
  if (allowed) spec.allowedListeners = { namespaces: allowed };
  return { apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: INFRA, generation: 1 }, spec };
}
function listenerSet(name: string, gw: string, listeners: Json[], namespace = INFRA, created?: string): Json {
  const metadata: Json = { name, namespace, generation: 1 };
  if (created) metadata.creationTimestamp = created;
  return { apiVersion: V1, kind: 'ListenerSet', metadata, spec: { parentRef: { name: gw, namespace: INFRA }, listeners } };
}
const namespace = (name: string, labels: Json = {}): Json => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const toSet = (name: string, sectionName?: string): Json => ({
  group: 'gateway.networking.k8s.io',
  kind: 'ListenerSet',
  name,
  namespace: INFRA,
  ...(sectionName ? { sectionName } : {}),
});
function httpRoute(name: string, parentRefs: Json[], path: string, backend: string, ns = INFRA): Json {
  return {
    apiVersion: V1,
    kind: 'HTTPRoute',
    metadata: { name, namespace: ns, generation: 1 },
    spec: { parentRefs, rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: backend, namespace: INFRA, port: 8080 }] }] },
  };
}
/** Grants for routes of other namespaces to the infra backends. */
const backendGrant = (from: string): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1',
  kind: 'ReferenceGrant',
  metadata: { name: `backends-for-${from}`, namespace: INFRA },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: from }], to: [{ group: '', kind: 'Service' }] },
});

function conditions(s: Scenario, name: string, ns = INFRA): Record<string, Json> {
  return Object.fromEntries((s.status('ListenerSet', `${ns}/${name}`).conditions as Json[]).map((c) => [c.type, c]));
}
function setListener(s: Scenario, set: string, listener: string, ns = INFRA): Json {
  const l = (s.status('ListenerSet', `${ns}/${set}`).listeners as Json[]).find((x) => x.name === listener);
  assert.ok(l, `ListenerSet ${set} has no listener status ${listener}`);
  return { ...l, conditions: Object.fromEntries((l.conditions as Json[]).map((c) => [c.type, c])) };
}
function attachedSets(s: Scenario, gw: string): number {
  return s.status('Gateway', gw).attachedListenerSets ?? 0;
}
/** ListenerSetMustHaveCondition for Accepted and Programmed at once. */
function setIs(s: Scenario, set: string, status: 'True' | 'False', reason: string | undefined, ns = INFRA): void {
  const c = conditions(s, set, ns);
  s.condition(c, 'Accepted', status, reason);
  s.condition(c, 'Programmed', status, status === 'True' ? 'Programmed' : reason);
}
function listenerAccepted(s: Scenario, set: string, listener: string): void {
  const l = setListener(s, set, listener);
  for (const type of ['Accepted', 'Programmed', 'ResolvedRefs']) s.condition(l.conditions, type, 'True');
}
function listenerConflicted(s: Scenario, set: string, listener: string, reason: 'HostnameConflict' | 'ProtocolConflict'): void {
  const l = setListener(s, set, listener);
  s.condition(l.conditions, 'Accepted', 'False', reason);
  s.condition(l.conditions, 'Programmed', 'False', reason);
  s.condition(l.conditions, 'Conflicted', 'True', reason);
}
const get = (host: string, path = '/') => ({ request: { host, path } });

conformance('ListenerSetDefaultNotAllowed', { status: 'pass' }, () => {
  const gw = 'gateway-default-does-not-allow-listenerset';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')]),
    listenerSet('listenerset-default-not-allowed', gw, [http('listenerset-default-not-allowed-listener', 'listenerset-default-not-allowed-listener.com')]),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  assert.equal(attachedSets(s, gw), 0);
  setIs(s, 'listenerset-default-not-allowed', 'False', 'NotAllowed');
});

conformance('ListenerSetAllowedNamespaceNone', { status: 'pass' }, () => {
  const gw = 'gateway-does-not-allow-listenerset';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'None' }),
    listenerSet('listenerset-not-allowed', gw, [http('listener-set-listener', 'listener-set-listener.com')]),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  assert.equal(attachedSets(s, gw), 0);
  setIs(s, 'listenerset-not-allowed', 'False', 'NotAllowed');
});

conformance('ListenerSetAllowedNamespaceSame', { status: 'pass' }, () => {
  const gw = 'gateway-allows-listenerset-in-same-namespace';
  const other = 'gateway-api-listenerset-not-allowed-ns';
  const s = new Scenario(undefined, {}, [
    namespace(other),
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'Same' }),
    listenerSet('listenerset-in-same-namespace', gw, [http('listenerset-in-same-namespace-listener', 'listenerset-in-same-namespace-listener.com')]),
    listenerSet(
      'listenerset-in-different-namespace',
      gw,
      [http('listenerset-in-different-namespace-listener', 'listenerset-in-different-namespace-listener')],
      other,
    ),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  assert.equal(attachedSets(s, gw), 1);
  setIs(s, 'listenerset-in-same-namespace', 'True', 'Accepted');
  listenerAccepted(s, 'listenerset-in-same-namespace', 'listenerset-in-same-namespace-listener');
  setIs(s, 'listenerset-in-different-namespace', 'False', 'NotAllowed', other);
});

conformance('ListenerSetAllowedNamespaceSelector', { status: 'pass' }, () => {
  const gw = 'gateway-allows-listenerset-in-selected-namespace';
  const yes = 'gateway-api-listenerset-selector-allowed-ns';
  const no = 'gateway-api-listenerset-selector-not-allowed-ns';
  const s = new Scenario(undefined, {}, [
    namespace(yes, { 'listenerset-allowed': 'true' }),
    namespace(no),
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'Selector', selector: { matchLabels: { 'listenerset-allowed': 'true' } } }),
    listenerSet(
      'listenerset-in-selected-namespace',
      gw,
      [http('listenerset-in-selected-namespace-listener', 'listenerset-in-selected-namespace-listener.com')],
      yes,
    ),
    listenerSet(
      'listenerset-not-in-selected-namespace',
      gw,
      [http('listenerset-not-in-selected-namespace-listener', 'listenerset-not-in-selected-namespace-listener.com')],
      no,
    ),
  ]);
  assert.equal(attachedSets(s, gw), 1);
  setIs(s, 'listenerset-in-selected-namespace', 'True', 'Accepted', yes);
  setIs(s, 'listenerset-not-in-selected-namespace', 'False', 'NotAllowed', no);
});

conformance('ListenerSetAllowedRoutesSupportedKinds', { status: 'pass' }, () => {
  const gw = 'gateway-with-listener-sets-test-supported-route-kinds';
  const set = 'listenerset-test-allowed-routes-supported-kinds';
  const tlsOnly = {
    name: 'listener-set-listener-allowed-routes-tls-only',
    port: 443,
    protocol: 'TLS',
    hostname: 'listener-set-listener-allowed-routes-tls-only.com',
    allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'HTTPRoute' }] },
    tls: { mode: 'Passthrough' },
  };
  const s = new Scenario(undefined, {}, [gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'All' }), listenerSet(set, gw, [tlsOnly])]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  const l = setListener(s, set, 'listener-set-listener-allowed-routes-tls-only');
  s.condition(l.conditions, 'ResolvedRefs', 'False', 'InvalidRouteKinds');
  assert.deepEqual(l.supportedKinds, [], 'HTTPRoute is not a kind a TLS listener takes');
});

conformance('ListenerSetHTTPRouting', { status: 'pass' }, () => {
  const gw = 'gateway-with-listener-sets-http-routing';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gateway-listener-1', 'gateway-listener-1.com'), http('gateway-listener-2', 'gateway-listener-2.com')], { from: 'All' }),
    listenerSet('listener-set-http-routing-1', gw, [
      http('listener-set-http-routing-1-listener-1', 'listener-set-http-routing-1-listener-1.com'),
      http('listener-set-http-routing-1-listener-2', 'listener-set-http-routing-1-listener-2.com'),
    ]),
    listenerSet('listener-set-http-routing-2', gw, [
      http('listener-set-http-routing-2-listener-1', 'listener-set-http-routing-2-listener-1.com'),
      http('listener-set-http-routing-2-listener-2', 'listener-set-http-routing-2-listener-2.com'),
    ]),
    httpRoute(
      'attaches-to-all-listeners',
      [{ name: gw }, toSet('listener-set-http-routing-1'), toSet('listener-set-http-routing-2')],
      '/route',
      'infra-backend-v1',
    ),
    httpRoute('attaches-to-one-set-listener', [toSet('listener-set-http-routing-1', 'listener-set-http-routing-1-listener-1')], '/one', 'infra-backend-v2'),
  ]);
  assert.equal(attachedSets(s, gw), 2);
  assert.equal(setListener(s, 'listener-set-http-routing-1', 'listener-set-http-routing-1-listener-1').attachedRoutes, 2);
  assert.equal(setListener(s, 'listener-set-http-routing-1', 'listener-set-http-routing-1-listener-2').attachedRoutes, 1);
  assert.equal(setListener(s, 'listener-set-http-routing-2', 'listener-set-http-routing-2-listener-1').attachedRoutes, 1);
  for (const host of [
    'gateway-listener-1.com',
    'gateway-listener-2.com',
    'listener-set-http-routing-1-listener-1.com',
    'listener-set-http-routing-2-listener-2.com',
  ])
    s.expect(gw, { ...get(host, '/route'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get('listener-set-http-routing-1-listener-1.com', '/one'), backend: 'infra-backend-v2' });
  s.expect(gw, { ...get('listener-set-http-routing-1-listener-2.com', '/one'), status: 404 });
});

conformance('ListenerSetAllowedRoutesNamespaces', { status: 'pass' }, () => {
  const gw = 'gateway-with-listener-sets-test-allowed-routes';
  const set = 'listenerset-test-allowed-routes-namespaces';
  const allowedNs = 'gateway-api-routes-allowed-ns';
  const otherNs = 'gateway-api-routes-not-allowed-ns';
  const selector = { ...http('listener-set-listener-allowed-routes-selector', 'listener-set-listener-allowed-routes-selector.com', 'Selector') };
  selector.allowedRoutes.namespaces.selector = { matchLabels: { 'routes-allowed': 'true' } };
  const s = new Scenario(undefined, {}, [
    namespace(allowedNs, { 'routes-allowed': 'true' }),
    namespace(otherNs),
    backendGrant(allowedNs),
    backendGrant(otherNs),
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'All' }),
    listenerSet(set, gw, [
      http('listener-set-listener-allowed-routes-all', 'listener-set-listener-allowed-routes-all.com'),
      http('listener-set-listener-allowed-routes-same', 'listener-set-listener-allowed-routes-same.com', 'Same'),
      selector,
    ]),
    httpRoute('route-in-same-namespace', [toSet(set)], '/route-in-same-namespace', 'infra-backend-v1'),
    httpRoute('route-in-selected-namespace', [toSet(set)], '/route-in-selected-namespace', 'infra-backend-v2', allowedNs),
    httpRoute('route-not-in-selected-namespace', [toSet(set)], '/route-not-in-selected-namespace', 'infra-backend-v3', otherNs),
  ]);
  assert.equal(setListener(s, set, 'listener-set-listener-allowed-routes-all').attachedRoutes, 3);
  assert.equal(setListener(s, set, 'listener-set-listener-allowed-routes-same').attachedRoutes, 1);
  assert.equal(setListener(s, set, 'listener-set-listener-allowed-routes-selector').attachedRoutes, 1);
  const all = 'listener-set-listener-allowed-routes-all.com';
  s.expect(gw, { ...get(all, '/route-in-same-namespace'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get(all, '/route-in-selected-namespace'), backend: 'infra-backend-v2' });
  s.expect(gw, { ...get(all, '/route-not-in-selected-namespace'), backend: 'infra-backend-v3' });
  const same = 'listener-set-listener-allowed-routes-same.com';
  s.expect(gw, { ...get(same, '/route-in-same-namespace'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get(same, '/route-in-selected-namespace'), status: 404 });
  s.expect(gw, { ...get(same, '/route-not-in-selected-namespace'), status: 404 });
  const sel = 'listener-set-listener-allowed-routes-selector.com';
  s.expect(gw, { ...get(sel, '/route-in-same-namespace'), status: 404 });
  s.expect(gw, { ...get(sel, '/route-in-selected-namespace'), backend: 'infra-backend-v2' });
  s.expect(gw, { ...get(sel, '/route-not-in-selected-namespace'), status: 404 });

  // Cross-namespace: `Same` on a ListenerSet's listener is the ListenerSet's namespace, not the Gateway's.
  const lsNs = 'gateway-api-listenerset-cross-ns';
  const cross = new Scenario(undefined, {}, [
    namespace(lsNs),
    backendGrant(lsNs),
    gateway(gw, [http('gateway-listener', 'gateway-listener.com')], { from: 'All' }),
    listenerSet(
      'listenerset-cross-namespace',
      gw,
      [http('listener-set-listener-allowed-routes-cross-ns-same', 'listener-set-listener-allowed-routes-cross-ns-same.com', 'Same')],
      lsNs,
    ),
    httpRoute(
      'route-in-listenerset-namespace',
      [{ ...toSet('listenerset-cross-namespace'), namespace: lsNs }],
      '/route-in-listenerset-namespace',
      'infra-backend-v1',
      lsNs,
    ),
    httpRoute('route-in-gateway-namespace', [{ ...toSet('listenerset-cross-namespace'), namespace: lsNs }], '/route-in-gateway-namespace', 'infra-backend-v2'),
  ]);
  const parents = cross.status('HTTPRoute', 'route-in-gateway-namespace').parents as Json[];
  const accepted = ((parents[0]?.conditions ?? []) as Json[]).find((c) => c.type === 'Accepted');
  assert.equal(accepted?.status, 'False');
  assert.equal(accepted?.reason, 'NotAllowedByListeners');
  assert.equal(setListener(cross, 'listenerset-cross-namespace', 'listener-set-listener-allowed-routes-cross-ns-same', lsNs).attachedRoutes, 1);
  const host = 'listener-set-listener-allowed-routes-cross-ns-same.com';
  cross.expect(gw, { ...get(host, '/route-in-listenerset-namespace'), backend: 'infra-backend-v1' });
  cross.expect(gw, { ...get(host, '/route-in-gateway-namespace'), status: 404 });
});

conformance('ListenerSetDualParentRefIndependence', { status: 'pass' }, () => {
  const gw = 'gateway-dual-parentref';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gw-dual-parentref-listener', 'gw-dual.com', 'Same')], { from: 'Same' }),
    listenerSet('ls-dual-parentref', gw, [http('ls-dual-parentref-listener', 'ls-dual.com', 'Same')]),
    httpRoute('route-dual-parentref-both', [{ name: gw }, toSet('ls-dual-parentref')], '/dualboth', 'infra-backend-v1'),
    // Its Gateway parentRef names a listener of the ListenerSet: that parent has no such listener.
    httpRoute(
      'route-dual-parentref-one',
      [{ name: gw, sectionName: 'ls-dual-parentref-listener' }, toSet('ls-dual-parentref', 'ls-dual-parentref-listener')],
      '/dualone',
      'infra-backend-v2',
    ),
  ]);
  assert.equal(attachedSets(s, gw), 1);
  assert.equal(setListener(s, 'ls-dual-parentref', 'ls-dual-parentref-listener').attachedRoutes, 2);
  const byParent = (route: string, kind: string) =>
    Object.fromEntries(
      (((s.status('HTTPRoute', route).parents as Json[]).find((p) => p.parentRef.kind === kind)?.conditions ?? []) as Json[]).map((c) => [c.type, c]),
    );
  s.condition(byParent('route-dual-parentref-both', 'Gateway'), 'Accepted', 'True');
  s.condition(byParent('route-dual-parentref-both', 'ListenerSet'), 'Accepted', 'True');
  s.expect(gw, { ...get('gw-dual.com', '/dualboth'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get('ls-dual.com', '/dualboth'), backend: 'infra-backend-v1' });
  s.condition(byParent('route-dual-parentref-one', 'Gateway'), 'Accepted', 'False', 'NoMatchingParent');
  s.condition(byParent('route-dual-parentref-one', 'ListenerSet'), 'Accepted', 'True');
  s.expect(gw, { ...get('ls-dual.com', '/dualone'), backend: 'infra-backend-v2' });
  s.expect(gw, { ...get('gw-dual.com', '/dualone'), status: 404 });
});

conformance('ListenerSetGatewayParentSectionNameNotFound', { status: 'pass' }, () => {
  const gw = 'gateway-section-name';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gw-listener', 'gw-section.com', 'Same')], { from: 'Same' }),
    listenerSet('listenerset-section-name', gw, [http('ls-only-listener', 'ls-section-name.com', 'Same')]),
    httpRoute('route-via-listenerset', [toSet('listenerset-section-name', 'ls-only-listener')], '/goodsection', 'infra-backend-v1'),
    httpRoute('route-via-gateway', [{ name: gw, sectionName: 'ls-only-listener' }], '/badsection', 'infra-backend-v2'),
  ]);
  assert.equal(attachedSets(s, gw), 1);
  s.condition(s.routeParent('HTTPRoute', 'route-via-gateway', gw), 'Accepted', 'False', 'NoMatchingParent');
  s.expect(gw, { ...get('ls-section-name.com', '/goodsection'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get('gw-section.com', '/badsection'), status: 404 });
  s.expect(gw, { ...get('ls-section-name.com', '/badsection'), status: 404 });
});

conformance('ListenerSetRouteStatusScopedToParentRef', { status: 'pass' }, () => {
  const gw = 'gateway-parentref';
  const s = new Scenario(undefined, {}, [
    gateway(gw, [http('gw-parentref-listener', 'gw-parentref.com', 'Same')], { from: 'Same' }),
    listenerSet('listenerset-parentref', gw, [http('listenerset-parentref-listener', 'listenerset-parentref.com', 'Same')]),
    httpRoute('route-parentref-gwonly', [{ name: gw }], '/gwonly', 'infra-backend-v1'),
    httpRoute('route-parentref-lsonly', [toSet('listenerset-parentref')], '/lsonly', 'infra-backend-v2'),
  ]);
  // Each route's status names its own parent only.
  const parents = (route: string) => (s.status('HTTPRoute', route).parents as Json[]).map((p) => `${p.parentRef.kind}/${p.parentRef.name}`);
  assert.deepEqual(parents('route-parentref-gwonly'), [`Gateway/${gw}`]);
  assert.deepEqual(parents('route-parentref-lsonly'), ['ListenerSet/listenerset-parentref']);
  assert.equal(s.listener(gw, 'gw-parentref-listener').attachedRoutes, 1);
  assert.equal(setListener(s, 'listenerset-parentref', 'listenerset-parentref-listener').attachedRoutes, 1);
  s.expect(gw, { ...get('gw-parentref.com', '/gwonly'), backend: 'infra-backend-v1' });
  s.expect(gw, { ...get('listenerset-parentref.com', '/lsonly'), backend: 'infra-backend-v2' });
  s.expect(gw, { ...get('gw-parentref.com', '/lsonly'), status: 404 });
  s.expect(gw, { ...get('listenerset-parentref.com', '/gwonly'), status: 404 });
});

conformance('ListenerSetHostnameConflict', { status: 'pass' }, () => {
  const gw = 'gateway-with-listenerset-hostname-conflict';
  const s = new Scenario(undefined, {}, [
    gateway(
      gw,
      [http('gateway-listener', 'gateway-listener.com'), http('hostname-conflict-with-gateway-listener', 'hostname-conflict-with-gateway-listener.com')],
      {
        from: 'Same',
      },
    ),
    listenerSet(
      'listenerset-with-hostname-conflict-with-gateway-1',
      gw,
      [
        http('listener-set-1-listener', 'listener-set-1-listener.com'),
        http('hostname-conflict-with-gateway-listener', 'hostname-conflict-with-gateway-listener.com'),
        http('hostname-conflict-with-listener-set-listener', 'hostname-conflict-with-listener-set-listener.com'),
      ],
      INFRA,
      '2026-01-01T00:00:00Z',
    ),
    listenerSet(
      'listenerset-with-hostname-conflict-with-gateway-2',
      gw,
      [http('hostname-conflict-with-gateway-listener', 'hostname-conflict-with-gateway-listener.com')],
      INFRA,
      '2026-01-01T00:00:01Z',
    ),
    listenerSet(
      'listenerset-with-hostname-conflict-with-listener-set-1',
      gw,
      [http('hostname-conflict-with-listener-set-listener', 'hostname-conflict-with-listener-set-listener.com')],
      INFRA,
      '2026-01-01T00:00:02Z',
    ),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  for (const l of ['gateway-listener', 'hostname-conflict-with-gateway-listener']) {
    const c = s.listener(gw, l).conditions;
    for (const type of ['Accepted', 'Programmed', 'ResolvedRefs']) s.condition(c, type, 'True');
  }
  assert.equal(attachedSets(s, gw), 3);
  const one = 'listenerset-with-hostname-conflict-with-gateway-1';
  setIs(s, one, 'True', undefined);
  listenerAccepted(s, one, 'listener-set-1-listener');
  listenerConflicted(s, one, 'hostname-conflict-with-gateway-listener', 'HostnameConflict');
  listenerAccepted(s, one, 'hostname-conflict-with-listener-set-listener');
  setIs(s, 'listenerset-with-hostname-conflict-with-gateway-2', 'False', 'ListenersNotValid');
  listenerConflicted(s, 'listenerset-with-hostname-conflict-with-gateway-2', 'hostname-conflict-with-gateway-listener', 'HostnameConflict');
  setIs(s, 'listenerset-with-hostname-conflict-with-listener-set-1', 'False', 'ListenersNotValid');
  listenerConflicted(s, 'listenerset-with-hostname-conflict-with-listener-set-1', 'hostname-conflict-with-listener-set-listener', 'HostnameConflict');
});

conformance('ListenerSetProtocolConflict', { status: 'pass' }, () => {
  const gw = 'gateway-with-listenerset-protocol-conflict';
  const tcp = (name: string): Json => ({ name, port: 80, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } });
  const s = new Scenario(undefined, {}, [
    gateway(
      gw,
      [http('gateway-listener', 'gateway-listener.com'), http('protocol-conflict-with-gateway-listener', 'protocol-conflict-with-gateway-listener.com')],
      {
        from: 'Same',
      },
    ),
    listenerSet(
      'listenerset-with-protocol-conflict-with-gateway-1',
      gw,
      [
        http('listener-set-1-listener', 'listener-set-1-listener.com'),
        tcp('protocol-conflict-with-gateway-listener'),
        http('protocol-conflict-with-listener-set-listener', 'protocol-conflict-with-listener-set-listener.com'),
      ],
      INFRA,
      '2026-01-01T00:00:00Z',
    ),
    listenerSet('listenerset-with-protocol-conflict-with-gateway-2', gw, [tcp('protocol-conflict-with-gateway-listener')], INFRA, '2026-01-01T00:00:01Z'),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  for (const l of ['gateway-listener', 'protocol-conflict-with-gateway-listener']) {
    const c = s.listener(gw, l).conditions;
    for (const type of ['Accepted', 'Programmed', 'ResolvedRefs']) s.condition(c, type, 'True');
  }
  assert.equal(attachedSets(s, gw), 2);
  const one = 'listenerset-with-protocol-conflict-with-gateway-1';
  setIs(s, one, 'True', undefined);
  listenerAccepted(s, one, 'listener-set-1-listener');
  listenerConflicted(s, one, 'protocol-conflict-with-gateway-listener', 'ProtocolConflict');
  listenerAccepted(s, one, 'protocol-conflict-with-listener-set-listener');
  setIs(s, 'listenerset-with-protocol-conflict-with-gateway-2', 'False', 'ListenersNotValid');
  listenerConflicted(s, 'listenerset-with-protocol-conflict-with-gateway-2', 'protocol-conflict-with-gateway-listener', 'ProtocolConflict');
});

conformance('ListenerSetReferenceGrant', { status: 'pass' }, () => {
  const gw = 'gateway-with-listener-sets-test-reference-grant';
  const otherNs = 'gateway-api-listener-sets-test-reference-grant-ns';
  const c = certificate('listenerset-reference-grant', ['gateway-listener.com', '*.com']);
  const https = (name: string, hostname: string): Json => ({
    name,
    port: 443,
    protocol: 'HTTPS',
    hostname,
    allowedRoutes: { namespaces: { from: 'All' } },
    tls: { certificateRefs: [{ kind: 'Secret', name: 'listenerset-certificate', namespace: WEB }] },
  });
  const grant = (name: string, kind: string, ns: string): Json => ({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace: WEB },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind, namespace: ns }], to: [{ group: '', kind: 'Secret' }] },
  });
  const s = new Scenario(undefined, {}, [
    namespace(otherNs),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'listenerset-certificate', namespace: WEB },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': c.crt, 'tls.key': c.key },
    },
    grant('reference-grant-for-gateway', 'Gateway', INFRA),
    grant('reference-grant-for-listener-set', 'ListenerSet', INFRA),
    gateway(gw, [https('gateway-listener', 'gateway-listener.com')], { from: 'All' }),
    listenerSet('listenerset-with-reference-grant', gw, [https('listenerset-with-reference-grant-listener', 'listenerset-with-reference-grant-listener.com')]),
    listenerSet(
      'listenerset-without-reference-grant',
      gw,
      [https('listenerset-without-reference-grant-listener', 'listenerset-without-reference-grant-listener-1.com')],
      otherNs,
    ),
  ]);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  assert.equal(attachedSets(s, gw), 2);
  setIs(s, 'listenerset-with-reference-grant', 'True', 'Accepted');
  listenerAccepted(s, 'listenerset-with-reference-grant', 'listenerset-with-reference-grant-listener');
  // The grant lets ListenerSets of the infra namespace refer to the Secret, not this one's.
  const denied = setListener(s, 'listenerset-without-reference-grant', 'listenerset-without-reference-grant-listener', otherNs);
  s.condition(denied.conditions, 'ResolvedRefs', 'False', 'RefNotPermitted');
  s.condition(denied.conditions, 'Programmed', 'False');
});
