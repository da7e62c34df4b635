// Gateway API conformance, Gateway tests (v1.6): each upstream test's expectations, on scenarios
// written for extlb (manifests/), checked against the converted configuration.
import assert from 'node:assert/strict';
import {
  type ExpectedListener,
  INFRA,
  Scenario,
  WEB,
  baseWorld,
  caCertificate,
  certificate,
  conformance,
  signedCertificate,
  tlsBackendCertificate,
} from './harness.js';

type Json = Record<string, any>;

conformance('GatewayHTTPListenerIsolation', { status: 'pass' }, () => {
  const s = new Scenario('gateway-http-listener-isolation.yaml');
  const listeners = ['empty-hostname', 'wildcard-example-com', 'wildcard-foo-example-com', 'abc-foo-example-com'];
  // Which listener's route serves each Host; the others answer 404 there.
  const owner: Record<string, string> = {
    'bar.com': 'empty-hostname',
    'bar.example.com': 'wildcard-example-com',
    'bar.foo.example.com': 'wildcard-foo-example-com',
    'abc.foo.example.com': 'abc-foo-example-com',
  };
  for (const [gw, suffix] of [
    ['http-listener-isolation', ''],
    ['http-listener-isolation-with-hostname-intersection', '-with-hostname-intersection'],
  ] as const) {
    s.mustBeAccepted(
      gw,
      listeners.map((l) => `attaches-to-${l}${suffix}`),
    );
    for (const [host, served] of Object.entries(owner)) {
      for (const l of listeners) {
        const request = { host, path: `/${l}` };
        s.expect(gw, l === served ? { request, backend: 'infra-backend-v1' } : { request, status: 404 });
      }
    }
  }
});

const HTTP_ROUTE = ['HTTPRoute'];
/** Accepted and ResolvedRefs True, whatever the reason: what most listener expectations say. */
const READY = { Accepted: ['True'], ResolvedRefs: ['True'] } as const satisfies ExpectedListener['conditions'];

conformance('GatewayClassObservedGenerationBump', { status: 'pass' }, () => {
  const name = 'gatewayclass-observed-generation-bump';
  const before = new Scenario('gatewayclass-observed-generation-bump.yaml');
  const after = new Scenario('gatewayclass-observed-generation-bump.yaml', {}, [], {
    changes: [{ kind: 'GatewayClass', name, apply: (gc) => (gc.spec.description = 'new') }],
  });
  for (const s of [before, after]) {
    s.condition(s.gatewayClassConditions(name), 'Accepted', 'True');
    s.latestConditions('GatewayClass', name);
  }
  assert.equal(after.gatewayClassConditions(name).Accepted?.observedGeneration, 2, 'the generation changed');
});

conformance('GatewayObservedGenerationBump', { status: 'pass' }, () => {
  const gw = 'gateway-observed-generation-bump';
  const before = new Scenario('gateway-observed-generation-bump.yaml');
  const after = new Scenario('gateway-observed-generation-bump.yaml', {}, [], {
    changes: [
      {
        kind: 'Gateway',
        name: gw,
        apply: (g) =>
          g.spec.listeners.push({ name: 'alternate', hostname: 'foo.com', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }),
      },
    ],
  });
  for (const s of [before, after]) {
    s.mustBeAccepted(gw, []);
    s.latestConditions('Gateway', gw);
  }
  assert.equal(after.gatewayConditions(gw).Accepted?.observedGeneration, 2, 'the generation changed');
});

conformance('GatewayModifyListeners', { status: 'pass' }, () => {
  // Adding a listener: the route without sectionName attaches to both.
  const add = 'gateway-add-listener';
  const http = { name: 'http', port: 80, protocol: 'HTTP', hostname: 'data.test.com', allowedRoutes: { namespaces: { from: 'All' } } };
  const added = new Scenario('gateway-modify-listeners.yaml', {}, [], { changes: [{ kind: 'Gateway', name: add, apply: (g) => g.spec.listeners.push(http) }] });
  added.mustBeAccepted(add, []);
  added.mustHaveListeners(add, [
    { name: 'https', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: READY },
    { name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: READY },
  ]);
  added.latestConditions('Gateway', add);
  added.expect(add, { request: { host: 'data.test.com', path: '/' }, backend: 'infra-backend-v1' });
  // Removing one: only the HTTP listener is left, and nothing listens on 443 any more.
  const remove = 'gateway-remove-listener';
  const before = new Scenario('gateway-modify-listeners.yaml');
  before.expect(remove, { request: { port: 443, scheme: 'https', sni: 'secure.test.com', host: 'secure.test.com', path: '/' }, backend: 'infra-backend-v1' });
  const removed = new Scenario('gateway-modify-listeners.yaml', {}, [], {
    changes: [{ kind: 'Gateway', name: remove, apply: (g) => (g.spec.listeners = g.spec.listeners.filter((l: { name: string }) => l.name === 'http')) }],
  });
  removed.mustHaveListeners(remove, [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: READY }]);
  removed.latestConditions('Gateway', remove);
  removed.expectTlsFailure(remove, { port: 443, sni: 'secure.test.com', host: 'secure.test.com', path: '/' });
});

// The controller puts the infrastructure labels and annotations on the objects it provisions (packages/controller/test/provision.test.ts).
conformance('GatewayInfrastructure', { status: 'pass' }, () => {
  const gw = 'gateway-with-infrastructure-metadata';
  const s = new Scenario('gateway-infrastructure.yaml');
  s.latestConditions('Gateway', gw);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'True');
  for (const field of ['labels', 'annotations']) {
    assert.ok(
      !s.result.diagnostics.some((d) => d.object?.name === gw && d.path === `spec.infrastructure.${field}`),
      `infrastructure ${field} draw no warning: they are applied to the provisioned objects`,
    );
  }
});

conformance('GatewayInvalidParametersRef', { status: 'pass' }, () => {
  const gw = 'gateway-invalid-parameters-ref';
  const s = new Scenario('gateway-invalid-parameters-ref.yaml');
  s.latestConditions('Gateway', gw);
  s.condition(s.gatewayConditions(gw), 'Accepted', 'False', 'InvalidParameters');
  assert.equal(s.result.gateways[`${INFRA}/${gw}`], undefined, 'a Gateway that is not accepted is not served');
});

conformance('GatewayInvalidRouteKind', { status: 'pass' }, () => {
  const s = new Scenario('gateway-invalid-route-kind.yaml');
  const invalid = { ResolvedRefs: ['False', 'InvalidRouteKinds'] } as const;
  s.mustHaveListeners('gateway-only-invalid-route-kind', [{ name: 'http', supportedKinds: [], attachedRoutes: 0, conditions: invalid }]);
  s.mustHaveListeners('gateway-supported-and-invalid-route-kind', [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: invalid }]);
});

conformance('GatewayListenerUnsupportedProtocol', { status: 'pass' }, () => {
  const s = new Scenario('gateway-invalid-listeners-unsupported-protocol.yaml');
  const unsupported = { name: 'invalid', supportedKinds: [], attachedRoutes: 0, conditions: { Accepted: ['False', 'UnsupportedProtocol'] } } as const;
  const only = 'gateway-only-unsupported-protocols';
  s.latestConditions('Gateway', only);
  s.condition(s.gatewayConditions(only), 'Accepted', 'False', 'ListenersNotValid');
  s.mustHaveListeners(only, [unsupported]);
  const mixed = 'gateway-supported-and-unsupported-protocols';
  s.latestConditions('Gateway', mixed);
  s.condition(s.gatewayConditions(mixed), 'Accepted', 'True', 'ListenersNotValid');
  s.mustHaveListeners(mixed, [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: { Accepted: ['True', 'Accepted'] } }, unsupported]);
});

conformance('GatewayWithAttachedRoutes', { status: 'pass' }, () => {
  const s = new Scenario('gateway-with-attached-routes.yaml');
  s.mustHaveListeners('gateway-with-one-attached-route', [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: READY }]);
  const two = 'gateway-with-two-attached-routes';
  s.mustHaveListeners(two, [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 2, conditions: READY }]);
  s.condition(s.routeParent('HTTPRoute', 'http-route-not-accepted', two), 'Accepted', 'False', 'NoMatchingListenerHostname');
  // A listener whose certificate does not exist still counts the routes attached to it.
  const unresolved = 'unresolved-gateway-with-one-attached-unresolved-route';
  s.mustHaveListeners(unresolved, [
    { name: 'tls', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: { Programmed: ['False'], ResolvedRefs: ['False'] } },
  ]);
  s.condition(s.routeParent('HTTPRoute', 'http-route-4', unresolved), 'ResolvedRefs', 'False');
});

conformance('GatewayWithAttachedRoutesWithPort8080', { status: 'pass' }, () => {
  const s = new Scenario('gateway-with-attached-routes-with-port-8080.yaml');
  const gw = 'gateway-with-two-listeners-and-one-attached-route';
  s.mustHaveListeners(gw, [
    { name: 'http-unattached', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: READY },
    { name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 1, conditions: READY },
  ]);
  s.expect(gw, { request: { path: '/' }, backend: 'infra-backend-v1' });
  assert.equal(s.request(gw, { port: 8080, path: '/' }).type, 'not-found', 'the route is attached to port 80 only');
});

/** A secret the listener's filter chain serves, and that the configuration holds. */
function servesCertificate(s: Scenario, gateway: string, secret: string): void {
  const config = s.gateway(gateway);
  const chains = (config.listeners as Json[]).flatMap((l) => l.filter_chains as Json[]);
  const named = chains.flatMap((c) => c.transport_socket?.typed_config.common_tls_context.tls_certificate_sds_secret_configs ?? []);
  assert.deepEqual(
    named.map((c: Json) => c.name),
    [secret],
  );
  assert.ok(
    config.secrets.some((x) => x.name === secret),
    `${secret} is an SDS secret of the configuration`,
  );
}

/** A Gateway whose listeners are all unserved has no Envoy listener and carries no certificate. */
function servesNothing(s: Scenario, gateway: string): void {
  const config = s.result.gateways[`${INFRA}/${gateway}`];
  assert.deepEqual(config?.listeners ?? [], [], `${gateway}: no listener is served`);
  assert.deepEqual(config?.secrets ?? [], [], `${gateway}: no certificate is in the output`);
}

conformance('GatewayInvalidTLSConfiguration', { status: 'pass' }, () => {
  const s = new Scenario('gateway-invalid-tls-configuration.yaml');
  for (const gw of [
    'gateway-certificate-nonexistent-secret',
    'gateway-certificate-unsupported-group',
    'gateway-certificate-unsupported-kind',
    'gateway-certificate-malformed-secret',
  ]) {
    s.mustHaveListeners(gw, [
      { name: 'https', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: { ResolvedRefs: ['False', 'InvalidCertificateRef'] } },
    ]);
    servesNothing(s, gw);
  }
});

conformance('GatewaySecretMissingReferenceGrant', { status: 'pass' }, () => {
  const s = new Scenario('gateway-secret-missing-reference-grant.yaml');
  const gw = 'gateway-secret-missing-reference-grant';
  s.mustHaveListeners(gw, [{ name: 'https', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: { ResolvedRefs: ['False', 'RefNotPermitted'] } }]);
  servesNothing(s, gw);
});

conformance('GatewaySecretInvalidReferenceGrant', { status: 'pass' }, () => {
  const s = new Scenario('gateway-secret-invalid-reference-grant.yaml');
  const gw = 'gateway-secret-invalid-reference-grant';
  s.mustHaveListeners(gw, [{ name: 'https', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: { ResolvedRefs: ['False', 'RefNotPermitted'] } }]);
  servesNothing(s, gw);
});

/** A ReferenceGrant lets the Gateway (named as its file) serve the certificate from another namespace. */
function servesGrantedCertificate(gw: string): void {
  const s = new Scenario(`${gw}.yaml`);
  s.mustHaveListeners(gw, [
    { name: 'https', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: { Programmed: ['True', 'Programmed'], ResolvedRefs: ['True'] } },
  ]);
  servesCertificate(s, gw, `${WEB}/certificate`);
}

conformance('GatewaySecretReferenceGrantAllInNamespace', { status: 'pass' }, () => servesGrantedCertificate('gateway-secret-reference-grant-all-in-namespace'));

conformance('GatewaySecretReferenceGrantSpecific', { status: 'pass' }, () => servesGrantedCertificate('gateway-secret-reference-grant-specific'));

/** The client certificates of the suite's CAs, PEM. */
const clientCertificate = signedCertificate('tls-validity-checks-client-certificate', 'tls-validity-checks-ca-certificate').crt;
const perPortClientCertificate = signedCertificate('tls-validity-checks-per-port-client-certificate', 'tls-validity-checks-per-port-ca-certificate').crt;

conformance('GatewayFrontendClientCertificateValidation', { status: 'pass' }, () => {
  const s = new Scenario('gateway-with-clientcertificate-validation.yaml');
  const gw = 'client-validation-default';
  const routes = ['client-certificate-validation-https-test', 'client-certificate-validation-https-test-no-hostname'];
  s.mustBeAccepted(gw, routes);
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, gw), 'ResolvedRefs', 'True');
  // The default validation on 443, the per-port one on 8443: each takes its own CA's clients only.
  for (const [port, host, backend, good, other] of [
    [443, 'example.org', 'infra-backend-v1', clientCertificate, perPortClientCertificate],
    [8443, 'second-example.org', 'infra-backend-v2', perPortClientCertificate, clientCertificate],
  ] as const) {
    const request = { port, scheme: 'https' as const, sni: host, host, path: '/' };
    s.expect(gw, { request: { ...request, clientCertificate: good }, backend });
    s.expectTlsFailure(gw, { ...request, clientCertificate: other });
    s.expectTlsFailure(gw, request);
  }
});

conformance('GatewayFrontendClientCertificateValidationInsecureFallback', { status: 'pass' }, () => {
  const s = new Scenario('gateway-with-clientcertificate-validation-insecure-fallback.yaml');
  const gw = 'client-validation-insecure-fallback';
  const routes = ['client-cert-validation-insecure-fallback-test', 'client-cert-validation-insecure-fallback-test-no-hostname'];
  s.mustBeAccepted(gw, routes);
  for (const r of routes) s.condition(s.routeParent('HTTPRoute', r, gw), 'ResolvedRefs', 'True');
  s.condition(s.gatewayConditions(gw), 'InsecureFrontendValidationMode', 'True', 'ConfigurationChanged');
  // Every client gets through: with its CA's certificate, another CA's, or none.
  for (const [port, host, backend] of [
    [443, 'example.org', 'infra-backend-v1'],
    [8443, 'second-example.org', 'infra-backend-v2'],
  ] as const) {
    for (const presented of [clientCertificate, perPortClientCertificate, undefined]) {
      const request = { port, scheme: 'https' as const, sni: host, host, path: '/' };
      s.expect(gw, { request: presented === undefined ? request : { ...request, clientCertificate: presented }, backend });
    }
  }
});

conformance('GatewayInvalidFrontendClientCertificateValidation', { status: 'pass' }, () => {
  const s = new Scenario('gateway-with-invalid-clientcertificate-validation.yaml');
  const gw = 'gateway-with-invalid-client-cert-validation';
  const listener = (name: string) => s.listener(gw, name).conditions;
  for (const type of ['ResolvedRefs', 'Accepted', 'Programmed']) s.condition(listener('https'), type, 'True');
  for (const [name, reason] of [
    ['https-unresolved', 'InvalidCACertificateRef'],
    ['https-invalid-kind', 'InvalidCACertificateKind'],
    ['https-grant-missing', 'RefNotPermitted'],
  ] as const) {
    s.condition(listener(name), 'ResolvedRefs', 'False', reason);
    s.condition(listener(name), 'Accepted', 'False', 'NoValidCACertificate');
    s.condition(listener(name), 'Programmed', 'False');
  }
  // Only the listener whose validation resolves is served, and it enforces it.
  assert.deepEqual(
    (s.gateway(gw).listeners as Json[]).map((l) => l.address.socket_address.port_value),
    [443],
  );
  const request = { port: 443, scheme: 'https' as const, sni: 'example.org', host: 'example.org', path: '/' };
  // No route is attached (the test's route names another Gateway): a trusted client gets 404.
  s.expect(gw, { request: { ...request, clientCertificate }, status: 404 });
  s.expectTlsFailure(gw, request);
});

conformance('GatewayFrontendInvalidDefaultClientCertificateValidation', { status: 'pass' }, () => {
  const s = new Scenario('gateway-invalid-default-frontend-client-certificate-validation.yaml');
  const gw = 'invalid-default-client-validation-config';
  const http = s.listener(gw, 'http').conditions;
  for (const type of ['ResolvedRefs', 'Accepted', 'Programmed']) s.condition(http, type, 'True');
  s.expect(gw, { request: { host: 'example.org', path: '/' }, backend: 'infra-backend-v1' });
  const https = s.listener(gw, 'https').conditions;
  s.condition(https, 'ResolvedRefs', 'False', 'InvalidCACertificateRef');
  s.condition(https, 'Accepted', 'False', 'NoValidCACertificate');
  s.condition(https, 'Programmed', 'False');
  s.expectTlsFailure(gw, { port: 443, sni: 'example.org', host: 'example.org', path: '/' });
});

conformance('GatewayInvalidTLSBackendConfiguration', { status: 'pass' }, () => {
  const s = new Scenario('gateway-invalid-tls-backend-configuration.yaml');
  for (const [gw, reason] of [
    ['gateway-client-certificate-nonexistent-secret', 'InvalidClientCertificateRef'],
    ['gateway-client-certificate-unsupported-group', 'InvalidClientCertificateRef'],
    ['gateway-client-certificate-unsupported-kind', 'InvalidClientCertificateRef'],
    ['gateway-client-certificate-malformed-secret', 'InvalidClientCertificateRef'],
    ['gateway-client-certificate-missing-reference-grant', 'RefNotPermitted'],
  ] as const) {
    s.latestConditions('Gateway', gw);
    s.condition(s.gatewayConditions(gw), 'ResolvedRefs', 'False', reason);
    s.condition(s.gatewayConditions(gw), 'Accepted', 'True', 'Accepted');
  }
});

/** The suite's backend that verifies a client certificate (if given) against tls-checks-ca-certificate. */
const CLIENT_CHECKING_BACKEND = '10.244.13.10:8443';

conformance('GatewayTLSBackendClientCertificate', { status: 'pass' }, () => {
  const s = new Scenario('gateway-tls-backend-client-certificate.yaml');
  const gw = 'gateway-tls-backend-client-certificate';
  s.mustBeAccepted(gw, [gw]);
  s.condition(s.routeParent('HTTPRoute', gw, gw), 'ResolvedRefs', 'True');
  s.condition(s.ancestor('BackendTLSPolicy', 'gateway-tls-backend-client-certificate-test', gw), 'Accepted', 'True');
  s.condition(s.gatewayConditions(gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  const clients = { ca: caCertificate('tls-checks-ca-certificate').crt };
  s.world = {
    ...baseWorld(),
    endpoints: { ...baseWorld().endpoints, [CLIENT_CHECKING_BACKEND]: { tls: { certificate: tlsBackendCertificate().crt, clients } } },
  };
  const secret = s.object('Secret', 'tls-checks-client-certificate');
  const presented = Buffer.from(secret.data['tls.crt'], 'base64').toString();
  const request = { host: 'abc.example.com', sni: 'abc.example.com', path: '/' };
  s.expect(gw, { request, backend: 'tls-backend-with-client-cert-validation', upstream: { sni: 'abc.example.com', clientCertificate: presented } });
  // A certificate no CA of the backend's issued fails its handshake.
  const another = certificate('another-client');
  const other = s.after((objects) =>
    objects.map((o) =>
      o.kind === 'Secret' && o.metadata.name === 'tls-checks-client-certificate' ? { ...o, data: { 'tls.crt': another.crt, 'tls.key': another.key } } : o,
    ),
  );
  other.world = s.world;
  other.expect(gw, { request, status: 503 });
});

conformance(
  'GatewayOptionalAddressValue',
  {
    status: 'unsupported',
    why: 'the converter assigns no addresses (the proxy listens on every address of its host; the address clients use is the one routed to it), so status.addresses stays empty; the Gateway is Accepted and Programmed and a warning says no address is assigned',
  },
  () => {
    const s = new Scenario('gateway-optional-address-value.yaml');
    const gw = 'gateway-without-address-value';
    s.latestConditions('Gateway', gw);
    s.mustBeAccepted(gw, []);
    assert.equal(s.status('Gateway', gw).addresses, undefined);
    assert.ok(
      s.result.diagnostics.some((d) => d.code === 'UnsupportedValue' && d.object?.name === gw && d.path === 'spec.addresses[0]'),
      'a warning says no address is assigned',
    );
  },
);

conformance(
  'GatewayStaticAddresses',
  {
    status: 'partial',
    missing:
      'an address that does not reach the proxy cannot be told from one that does by a converter, so the unusable address gets no Programmed=False/AddressNotUsable; unsupported address types (UnsupportedAddress) and the usable address in status.addresses hold',
  },
  () => {
    const gw = 'gateway-static-addresses';
    const without = (value: string) => ({
      kind: 'Gateway',
      name: gw,
      apply: (g: Json) => (g.spec.addresses = g.spec.addresses.filter((a: Json) => a.value !== value)),
    });
    const invalid = new Scenario('gateway-static-addresses.yaml');
    invalid.latestConditions('Gateway', gw);
    invalid.condition(invalid.gatewayConditions(gw), 'Accepted', 'False', 'UnsupportedAddress');
    // The unusable address, 192.0.2.10, would need Programmed=False/AddressNotUsable here: not checked.
    const usable = new Scenario('gateway-static-addresses.yaml', {}, [], { changes: [without('fake address teehee!'), without('192.0.2.10')] });
    usable.latestConditions('Gateway', gw);
    usable.condition(usable.gatewayConditions(gw), 'Accepted', 'True', 'Accepted');
    usable.condition(usable.gatewayConditions(gw), 'Programmed', 'True', 'Programmed');
    usable.mustHaveListeners(gw, [{ name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: READY }]);
    assert.deepEqual(usable.status('Gateway', gw).addresses, [{ type: 'IPAddress', value: '198.51.100.10' }]);
  },
);
