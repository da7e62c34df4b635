// Gateway API conformance, BackendTLSPolicy tests (v1.6): each upstream test's expectations, on
// scenarios written for extlb (manifests/). Requests are connected to the TLS backends by the Envoy
// model, which runs the handshake's checks (CA chain, SAN) against the certificate they serve.
import assert from 'node:assert/strict';
import { type Expected, Scenario, conformance, manifests } from './harness.js';

type Json = Record<string, any>;
const POLICY = 'BackendTLSPolicy';
const HOST = 'abc.example.com';

/** BackendTLSPolicyMustHaveCondition for Accepted and ResolvedRefs on one ancestor Gateway. */
function policyConditions(s: Scenario, policy: string, gateway: string, accepted: string, resolvedRefs?: string): void {
  const c = s.ancestor(POLICY, policy, gateway);
  s.condition(c, 'Accepted', accepted === 'Accepted' ? 'True' : 'False', accepted);
  if (resolvedRefs !== undefined) s.condition(c, 'ResolvedRefs', resolvedRefs === 'ResolvedRefs' ? 'True' : 'False', resolvedRefs);
}

/** MakeRequestAndExpectFailure: any answer but 200. */
function expectFailure(s: Scenario, gateway: string, request: Expected['request']): void {
  const o = s.request(gateway, request);
  const ok = o.type === 'forward' && o.upstreams.every((u) => u.failure === undefined);
  assert.ok(!ok, `${JSON.stringify(request)} on ${gateway} must fail, but reached ${JSON.stringify(o)}`);
}

conformance('BackendTLSPolicy', { status: 'pass' }, () => {
  const s = new Scenario('backendtlspolicy.yaml');
  const https = 'same-namespace-with-https-listener';
  // Re-encrypt: TLS from the client to an HTTPS listener, and again from the Gateway to the backend.
  s.mustBeAccepted(https, ['backendtlspolicy-reencrypt']);
  s.condition(s.routeParent('HTTPRoute', 'backendtlspolicy-reencrypt', https), 'ResolvedRefs', 'True', 'ResolvedRefs');
  policyConditions(s, 'normative-test', https, 'Accepted', 'ResolvedRefs');
  s.expect(https, {
    request: { port: 443, scheme: 'https', sni: 'https-listener.org', host: 'https-listener.org', path: '/backendtlspolicy' },
    backend: 'backendtlspolicy-test',
    upstream: { path: '/backendtlspolicy', sni: HOST },
  });

  const gw = 'same-namespace';
  s.mustBeAccepted(gw, ['backendtlspolicy']);
  s.condition(s.routeParent('HTTPRoute', 'backendtlspolicy', gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  for (const policy of ['normative-test', 'host-mismatch', 'cert-mismatch', 'reconcile-test']) policyConditions(s, policy, gw, 'Accepted', 'ResolvedRefs');
  s.expect(gw, { request: { host: HOST, sni: HOST, path: '/backendtlspolicy' }, backend: 'backendtlspolicy-test', upstream: { sni: HOST } });
  // The suite's request for the hostname mismatch names a Host the route does not serve; the one
  // after it reaches the Service, whose certificate does not carry mismatch.example.com.
  expectFailure(s, gw, { host: 'abc.example.org', sni: HOST, path: '/backendtlspolicy-host-mismatch' });
  s.expect(gw, { request: { host: HOST, path: '/backendtlspolicy-host-mismatch' }, status: 503 });
  // cert-mismatch trusts a CA that did not issue the backend's certificate.
  expectFailure(s, gw, { host: HOST, sni: HOST, path: '/backendtlspolicy-cert-mismatch' });

  // The CA ConfigMap is followed: missing, then present, emptied and restored.
  const base = manifests('manifests/backendtlspolicy.yaml') as Json[];
  const original = (manifests('base.yaml') as Json[]).find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'tls-checks-ca-certificate');
  const reconcile = (caData?: string) => {
    const objects = base.map((o) =>
      o.kind === POLICY && o.metadata.name === 'reconcile-test'
        ? {
            ...o,
            spec: {
              ...o.spec,
              validation: { ...o.spec.validation, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'tls-checks-ca-certificate-reconcile-test' }] },
            },
          }
        : o,
    );
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'tls-checks-ca-certificate-reconcile-test', namespace: 'gateway-conformance-infra' },
    };
    return new Scenario(undefined, {}, [...objects, ...(caData === undefined ? [] : [{ ...configMap, data: { 'ca.crt': caData } }])]);
  };
  const caData = original?.data['ca.crt'] as string;
  for (const [step, data, valid] of [
    ['ConfigMap missing', undefined, false],
    ['ConfigMap created', caData, true],
    ['ca.crt emptied', '', false],
    ['ca.crt restored', caData, true],
  ] as const) {
    const r = reconcile(data);
    if (valid) {
      policyConditions(r, 'reconcile-test', gw, 'Accepted', 'ResolvedRefs');
      r.expect(gw, { request: { host: HOST, path: '/backendtlspolicy-reconcile-test' }, backend: 'backendtlspolicy-reconcile-test', upstream: { sni: HOST } });
    } else {
      policyConditions(r, 'reconcile-test', gw, 'NoValidCACertificate', 'InvalidCACertificateRef');
      r.expect(gw, { request: { host: HOST, path: '/backendtlspolicy-reconcile-test' }, status: 500 });
    }
    assert.ok(r.result.diagnostics.length > 0 || valid, step);
  }
});

conformance('BackendTLSPolicySANValidation', { status: 'pass' }, () => {
  const s = new Scenario('backendtlspolicy-san.yaml');
  const gw = 'same-namespace';
  s.mustBeAccepted(gw, ['backendtlspolicy-san-test']);
  s.condition(s.routeParent('HTTPRoute', 'backendtlspolicy-san-test', gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  for (const [policy, matches] of [
    ['san-dns', true],
    ['san-dns-mismatch', false],
    ['san-uri', true],
    ['san-uri-mismatch', false],
    ['multiple-sans', true],
    ['multiple-mismatch-sans', false],
  ] as const) {
    policyConditions(s, policy, gw, 'Accepted');
    const request = { host: HOST, sni: HOST, path: `/backendtlspolicy-${policy}` };
    if (matches) s.expect(gw, { request, backend: `backendtlspolicy-${policy}-test`, upstream: { sni: HOST } });
    else s.expect(gw, { request, status: 503 });
  }
});

conformance('BackendTLSPolicyConflictResolution', { status: 'pass' }, () => {
  const s = new Scenario('backendtlspolicy-conflict-resolution.yaml');
  const gw = 'same-namespace';
  s.mustBeAccepted(gw, ['backendtlspolicy-conflict-resolution']);
  s.condition(s.routeParent('HTTPRoute', 'backendtlspolicy-conflict-resolution', gw), 'ResolvedRefs', 'True', 'ResolvedRefs');
  for (const [winner, loser] of [
    ['conflicted-without-section-name-1', 'conflicted-without-section-name-2'],
    ['conflicted-with-section-name-1', 'conflicted-with-section-name-2'],
  ]) {
    policyConditions(s, winner as string, gw, 'Accepted');
    policyConditions(s, loser as string, gw, 'Conflicted');
  }
  policyConditions(s, 'not-conflicted-with-section-name', gw, 'Accepted');
  policyConditions(s, 'not-conflicted-without-section-name', gw, 'Accepted');
  // The SNI the backend sees tells which policy applied: the winners', and on the port a policy
  // names, that policy's.
  for (const [path, backend, sni] of [
    ['/backendtlspolicy-conflicted-without-section-name', 'backendtlspolicy-conflicted-without-section-name-test', 'other.example.com'],
    ['/backendtlspolicy-conflicted-with-section-name', 'backendtlspolicy-conflicted-with-section-name-test', 'other.example.com'],
    ['/backendtlspolicy-not-conflicted-with-section-name', 'backendtlspolicy-not-conflicted-test', 'other.example.com'],
    ['/backendtlspolicy-not-conflicted-without-section-name', 'backendtlspolicy-not-conflicted-test', HOST],
  ] as const) {
    s.expect(gw, { request: { host: HOST, sni, path }, backend, upstream: { sni } });
  }
});

conformance('BackendTLSPolicyInvalidCACertificateRef', { status: 'pass' }, () => {
  const s = new Scenario('backendtlspolicy-invalid-ca-certificate-ref.yaml');
  const gw = 'same-namespace';
  s.mustBeAccepted(gw, ['backendtlspolicy-invalid-ca-certificate-ref']);
  for (const policy of ['nonexistent-ca-certificate-ref', 'malformed-ca-certificate-ref']) {
    policyConditions(s, policy, gw, 'NoValidCACertificate', 'InvalidCACertificateRef');
    // The route reports why its backend is unusable; the request gets a 5xx, never plaintext.
    s.condition(s.routeParent('HTTPRoute', 'backendtlspolicy-invalid-ca-certificate-ref', gw), 'ResolvedRefs', 'False', 'InvalidBackendTLS');
    s.expect(gw, { request: { host: HOST, path: `/backendtlspolicy-${policy}` }, status: 500 });
  }
});

conformance('BackendTLSPolicyInvalidKind', { status: 'pass' }, () => {
  const s = new Scenario('backendtlspolicy-invalid-kind.yaml');
  const gw = 'same-namespace';
  s.mustBeAccepted(gw, ['backendtlspolicy-invalid-kind-test']);
  policyConditions(s, 'invalid-kind', gw, 'NoValidCACertificate', 'InvalidKind');
  s.expect(gw, { request: { host: HOST, path: '/backendtlspolicy-invalid-kind' }, status: 500 });
});

conformance('BackendTLSPolicyObservedGenerationBump', { status: 'pass' }, () => {
  const objects = manifests('manifests/backendtlspolicy-observed-generation-bump.yaml') as Json[];
  const bumped = objects.map((o) =>
    o.kind === POLICY
      ? { ...o, metadata: { ...o.metadata, generation: 2 }, spec: { ...o.spec, validation: { ...o.spec.validation, hostname: 'foo.example.com' } } }
      : o,
  );
  for (const [generation, world] of [
    [1, objects],
    [2, bumped],
  ] as const) {
    const s = new Scenario(undefined, {}, [...world]);
    const ancestors = s.status(POLICY, 'observed-generation-bump').ancestors as Json[];
    assert.ok(ancestors.length > 0);
    // BackendTLSPolicyMustHaveLatestConditions: every condition of every ancestor is at the new generation.
    for (const a of ancestors) for (const c of a.conditions) assert.equal(c.observedGeneration, generation, JSON.stringify(c));
    s.condition(s.ancestor(POLICY, 'observed-generation-bump', 'same-namespace'), 'Accepted', 'True');
  }
});
