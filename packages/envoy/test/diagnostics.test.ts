// Diagnostics are a closed set: every code the converter can emit is named in DIAGNOSTIC_CODES, and
// each one has a case here that makes it happen and asserts its exact words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ConvertOptions, DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode, convert } from '../src/index.js';

type Obj = Record<string, unknown>;
const NOW = '2026-01-01T00:00:00Z';

const gateway = (listeners: Obj[] = [{ name: 'http', port: 80, protocol: 'HTTP' }], extra: Obj = {}): Obj => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'extlb', listeners, ...extra },
});
const gw = { kind: 'Gateway', namespace: 'default', name: 'gw' };
const https = (certificateRefs: Obj[]): Obj => ({ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs } });
const caRef = (name: string): Obj => ({ group: '', kind: 'ConfigMap', name });
const route = (spec: Obj, name = 'r', namespace = 'default'): Obj => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace },
  spec: { parentRefs: [{ name: 'gw', namespace: 'default' }], ...spec },
});
const service = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: name }, ...extra },
});
const slice = (svc: string, port = 8080, portName = 'http'): Obj => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${svc}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
  ports: [{ name: portName, port }],
  endpoints: [{ addresses: ['10.0.0.1'] }],
});
const picker = [service('epp', { ports: [{ name: 'grpc', port: 9002 }] }), slice('epp', 9002, 'grpc')];
const pool = (name: string, lb?: Obj, kind = 'BackendPool'): Obj => ({
  apiVersion: kind === 'BackendPool' ? 'extlb.dev/v1alpha1' : 'inference.networking.k8s.io/v1',
  kind,
  metadata: { name, namespace: 'default' },
  spec: { selector: { matchLabels: { app: name } }, targetPorts: [{ number: 8000 }], ...(lb ? { loadBalancer: lb } : {}) },
});
const policy = (name: string, created: string, target: Obj, lb: Obj = { type: 'Random' }): Obj => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'LoadBalancerPolicy',
  metadata: { name, namespace: 'default', creationTimestamp: created },
  spec: { targetRefs: [target], loadBalancer: lb },
});
const external = (extra: Obj = {}): Obj => ({ type: 'External', external: { refs: [{ name: 'epp', port: { number: 9002 } }], ...extra } });
const tlsPolicy = (validation: Obj): Obj => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name: 'tls', namespace: 'default' },
  spec: { targetRefs: [{ group: '', kind: 'Service', name: 'api' }], validation: { hostname: 'api.example.com', ...validation } },
});
const missingCa = tlsPolicy({ caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'missing' }] });
const toPool = (name: string) => [{ backendRefs: [{ group: 'extlb.dev', kind: 'BackendPool', name }] }];
const toService = (name = 'api', port = 80) => [{ backendRefs: [{ name, port }] }];
const api = [service('api'), slice('api')];

interface Case {
  objects: Obj[];
  options?: ConvertOptions;
  expect: Omit<Diagnostic, 'code'>;
}

/** A case per code; a code raised in more than one place has a case for each. */
const CASES: Record<DiagnosticCode, Case | Case[]> = {
  Invalid: {
    objects: [
      gateway(),
      route({ rules: [{ matches: [{ path: { type: 'RegularExpression', value: '/(?=x)' } }], backendRefs: [{ name: 'api', port: 80 }] }] }),
      ...api,
    ],
    expect: {
      severity: 'error',
      message: '"/(?=x)" is not a valid RE2 regular expression: invalid or unsupported Perl syntax: `(?=`',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].matches[0].path.value',
    },
  },
  Duplicate: {
    objects: [service('api'), service('api', { type: 'NodePort' })],
    expect: {
      severity: 'error',
      message: 'Service default/api (v1) appears 2 times; one copy is used',
      object: { kind: 'Service', namespace: 'default', name: 'api' },
    },
  },
  IgnoredKind: {
    objects: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'c', namespace: 'default' } }],
    expect: {
      severity: 'info',
      message: 'v1 ServiceAccount is not an input of the converter and is ignored',
      object: { kind: 'ServiceAccount', namespace: 'default', name: 'c' },
    },
  },
  UnownedEndpointSlice: {
    objects: [{ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's', namespace: 'default' }, endpoints: [] }],
    expect: {
      severity: 'warning',
      message: 'the EndpointSlice has no kubernetes.io/service-name label, so no Service uses its endpoints',
      object: { kind: 'EndpointSlice', namespace: 'default', name: 's' },
      path: 'metadata.labels',
    },
  },
  InvalidOption: {
    objects: [],
    options: { connectTimeout: '5 seconds' },
    expect: { severity: 'error', message: 'option connectTimeout is not a Gateway API duration such as 5s or 1m30s: "5 seconds"' },
  },
  InvalidParameters: {
    objects: [gateway(undefined, { infrastructure: { parametersRef: { group: 'example.com', kind: 'Params', name: 'p' } } })],
    expect: {
      severity: 'error',
      message: 'extlb\'s parameters are a GatewayParameters of group extlb.dev, so Params p (group "example.com") cannot be used',
      object: gw,
      path: 'spec.infrastructure.parametersRef',
    },
  },
  UnsupportedAddress: {
    objects: [gateway(undefined, { addresses: [{ type: 'NamedAddress', value: 'pool-a' }] })],
    expect: {
      severity: 'error',
      message: 'address type NamedAddress is not supported; extlb supports IPAddress and Hostname',
      object: gw,
      path: 'spec.addresses[0]',
    },
  },
  InvalidClientCertificateRef: {
    objects: [gateway(undefined, { tls: { backend: { clientCertificateRef: { name: 'client' } } } })],
    expect: { severity: 'error', message: 'Secret default/client not found', object: gw, path: 'spec.tls.backend.clientCertificateRef' },
  },
  InsecureFrontendValidation: {
    objects: [gateway(undefined, { tls: { frontend: { default: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [caRef('ca')] } } } } })],
    expect: {
      severity: 'warning',
      message: 'AllowInsecureFallback lets clients without a valid certificate in: authorizing them is left to the backends',
      object: gw,
      path: 'spec.tls.frontend.default.validation.mode',
    },
  },
  InvalidRouteKinds: {
    objects: [gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'TCPRoute' }, { kind: 'HTTPRoute' }] } }])],
    expect: {
      severity: 'warning',
      message:
        'extlb serves only HTTPRoute (gateway.networking.k8s.io) and GRPCRoute (gateway.networking.k8s.io) on this listener; not supported: TCPRoute (gateway.networking.k8s.io)',
      object: gw,
      path: 'spec.listeners[0].allowedRoutes.kinds',
    },
  },
  InvalidCertificateRef: {
    objects: [gateway([https([{ name: 'missing' }])])],
    expect: { severity: 'error', message: 'Secret default/missing not found', object: gw, path: 'spec.listeners[0].tls.certificateRefs[0]' },
  },
  // A listener's client validation, and a BackendTLSPolicy.
  InvalidCACertificateRef: [
    {
      objects: [gateway([https([{ name: 'c' }])], { tls: { frontend: { default: { validation: { caCertificateRefs: [caRef('ca')] } } } } })],
      expect: { severity: 'error', message: 'ConfigMap default/ca not found', object: gw, path: 'spec.tls.frontend.default.validation.caCertificateRefs[0]' },
    },
    {
      objects: [gateway(), route({ rules: toService() }), ...api, missingCa],
      expect: {
        severity: 'error',
        message: 'ConfigMap default/missing not found',
        object: { kind: 'BackendTLSPolicy', namespace: 'default', name: 'tls' },
        path: 'spec.validation.caCertificateRefs[0]',
      },
    },
  ],
  InvalidCACertificateKind: {
    objects: [
      gateway([https([{ name: 'c' }])], { tls: { frontend: { default: { validation: { caCertificateRefs: [{ group: '', kind: 'Secret', name: 'ca' }] } } } } }),
    ],
    expect: {
      severity: 'error',
      message: 'refers to a Secret; only ConfigMaps are supported',
      object: gw,
      path: 'spec.tls.frontend.default.validation.caCertificateRefs[0]',
    },
  },
  UnsupportedProtocol: [
    {
      objects: [gateway([{ name: 'sctp', port: 9000, protocol: 'SCTP' }])],
      expect: {
        severity: 'warning',
        message: 'listener "sctp" uses protocol SCTP, which extlb does not convert; only HTTP, HTTPS, TLS, TCP, UDP listeners are',
        object: { kind: 'Gateway', namespace: 'default', name: 'gw' },
        path: 'spec.listeners[0].protocol',
      },
    },
    {
      objects: [
        gateway([{ name: 'tcp', port: 9000, protocol: 'TCP' }]),
        { ...route({ rules: toService() }), kind: 'TCPRoute' },
        ...api,
        ...picker,
        policy('ext', '2026-01-01T00:00:00Z', { group: '', kind: 'Service', name: 'api' }, external()),
      ],
      expect: {
        severity: 'error',
        message:
          'Service default/api is load-balanced External by LoadBalancerPolicy default/ext, which needs HTTP (the picker is asked by an HTTP filter, ext_proc); a TCPRoute forwards connections whole and cannot use it: give the backend a proxy algorithm (RoundRobin, LeastRequest, RingHash, Maglev, Random) for TCPRoutes',
        object: { kind: 'TCPRoute', namespace: 'default', name: 'r' },
        path: 'spec.rules[0].backendRefs[0]',
      },
    },
  ],
  UnsupportedValue: {
    objects: [gateway([{ name: 'tls', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }])],
    expect: {
      severity: 'warning',
      message: 'listener "tls": TLS mode Passthrough is not supported; only Terminate is',
      object: { kind: 'Gateway', namespace: 'default', name: 'gw' },
      path: 'spec.listeners[0].tls.mode',
    },
  },
  ProtocolConflict: {
    objects: [
      gateway([
        { name: 'a', port: 80, protocol: 'HTTP' },
        { name: 'b', port: 80, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }] } },
      ]),
    ],
    expect: {
      severity: 'error',
      message: 'listener "b" mixes HTTPS with another protocol on port 80; it is not converted',
      object: { kind: 'Gateway', namespace: 'default', name: 'gw' },
      path: 'spec.listeners[1].protocol',
    },
  },
  HostnameConflict: {
    objects: [
      gateway([
        { name: 'a', port: 80, protocol: 'HTTP', hostname: 'x.example.com' },
        { name: 'b', port: 80, protocol: 'HTTP', hostname: 'x.example.com' },
      ]),
    ],
    expect: {
      severity: 'error',
      message: 'listener "b" has the same hostname as another HTTP listener on port 80; it is not converted',
      object: { kind: 'Gateway', namespace: 'default', name: 'gw' },
      path: 'spec.listeners[1].hostname',
    },
  },
  RouteShadowed: {
    objects: [
      gateway([{ name: 'tcp', port: 5432, protocol: 'TCP' }]),
      { ...route({ rules: toService() }, 'old'), kind: 'TCPRoute', metadata: { name: 'old', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' } },
      { ...route({ rules: toService() }, 'new'), kind: 'TCPRoute', metadata: { name: 'new', namespace: 'default', creationTimestamp: '2026-01-02T00:00:00Z' } },
      ...api,
    ],
    expect: {
      severity: 'warning',
      message: 'listener "tcp" forwards every connection to TCPRoute default/old, which is older (or first by name); this route is attached but gets none',
      object: { kind: 'TCPRoute', namespace: 'default', name: 'new' },
      path: 'spec.parentRefs',
    },
  },
  ListenerSetNotAllowed: {
    objects: [
      gateway(),
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'ListenerSet',
        metadata: { name: 'team', namespace: 'apps' },
        spec: { parentRef: { name: 'gw', namespace: 'default' }, listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
      },
    ],
    expect: {
      severity: 'warning',
      message: 'Gateway default/gw allows no ListenerSets (spec.allowedListeners.namespaces.from is None, the default), not this one of namespace apps',
      object: { kind: 'ListenerSet', namespace: 'apps', name: 'team' },
      path: 'spec.parentRef',
    },
  },
  UnsupportedParent: {
    objects: [gateway(), route({ parentRefs: [{ group: '', kind: 'Service', name: 'api' }], rules: toService() }), ...api],
    expect: {
      severity: 'warning',
      message: 'a parent of kind Service is not supported; only Gateways and ListenerSets are',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.parentRefs[0]',
    },
  },
  OtherGatewayClass: {
    objects: [gateway(), route({ rules: toService() }), ...api],
    options: { gatewayClassNames: ['other'] },
    expect: {
      severity: 'info',
      message: 'Gateway default/gw is of class extlb, which is not converted',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.parentRefs[0]',
    },
  },
  ParentNotFound: {
    objects: [route({ rules: toService() }), ...api],
    expect: {
      severity: 'error',
      message: 'Gateway default/gw not found',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.parentRefs[0]',
    },
  },
  NoMatchingParent: {
    objects: [gateway(), route({ parentRefs: [{ name: 'gw', port: 8080 }], rules: toService() }), ...api],
    expect: {
      severity: 'error',
      message: 'Gateway default/gw has no listener on port 8080',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.parentRefs[0]',
    },
  },
  NotAllowedByListeners: {
    objects: [gateway(), route({ rules: toService() }, 'r', 'other'), ...api],
    expect: {
      severity: 'warning',
      message: 'no listener of Gateway default/gw takes the route: listener "http" allows routes from namespace default only, not from namespace other',
      object: { kind: 'HTTPRoute', namespace: 'other', name: 'r' },
      path: 'spec.parentRefs[0]',
    },
  },
  NoMatchingListenerHostname: {
    objects: [
      gateway([{ name: 'http', port: 80, protocol: 'HTTP', hostname: 'a.example.com' }]),
      route({ hostnames: ['b.example.com'], rules: toService() }),
      ...api,
    ],
    expect: {
      severity: 'warning',
      message: 'no hostname of the route matches a listener of Gateway default/gw',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.hostnames',
    },
  },
  UnsupportedFilter: {
    objects: [gateway(), route({ rules: [{ filters: [{ type: 'ExternalAuth', externalAuth: {} }], backendRefs: [{ name: 'api', port: 80 }] }] }), ...api],
    expect: {
      severity: 'warning',
      message: 'filter type ExternalAuth is not supported by extlb; requests matching this rule get 500',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].filters[0].type',
    },
  },
  IncompatibleFilters: {
    objects: [
      gateway(),
      route({ rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }], backendRefs: [{ name: 'api', port: 80 }] }] }),
      ...api,
    ],
    expect: {
      severity: 'warning',
      message: 'a rule with a RequestRedirect filter must not have backendRefs; the redirect is used',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].backendRefs',
    },
  },
  InvalidKind: {
    objects: [gateway(), route({ rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'b' }] }] })],
    expect: {
      severity: 'error',
      message:
        'backendRef kind Bucket.example.com is not supported; extlb converts Service, BackendPool.extlb.dev and InferencePool.inference.networking.k8s.io',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].backendRefs[0]',
    },
  },
  BackendNotFound: {
    objects: [gateway(), route({ rules: toService('missing') })],
    expect: {
      severity: 'error',
      message: 'Service default/missing not found',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].backendRefs[0]',
    },
  },
  InvalidBackend: {
    objects: [
      gateway(),
      route({ rules: toPool('p') }),
      { ...pool('p'), spec: { selector: { matchLabels: { app: 'p' } }, targetPorts: [{ number: 80 }, { number: 80 }] } },
    ],
    expect: {
      severity: 'error',
      message: 'BackendPool.extlb.dev default/p is invalid: spec.targetPorts: Invalid value: "array": port number must be unique',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].backendRefs[0]',
    },
  },
  RefNotPermitted: {
    objects: [
      gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]),
      route({ rules: [{ backendRefs: [{ name: 'api', namespace: 'default', port: 80 }] }] }, 'r', 'other'),
      ...api,
    ],
    expect: {
      severity: 'error',
      message: 'backendRef to Service default/api is not permitted: no ReferenceGrant in namespace default allows HTTPRoutes from namespace other',
      object: { kind: 'HTTPRoute', namespace: 'other', name: 'r' },
      path: 'spec.rules[0].backendRefs[0]',
    },
  },
  InvalidBackendTLS: {
    objects: [gateway(), route({ rules: toService() }), ...api, missingCa],
    expect: {
      severity: 'error',
      message:
        'BackendTLSPolicy default/tls cannot be honoured (no CA certificate reference is valid: spec.validation.caCertificateRefs[0]: ConfigMap default/missing not found), so connections to it fail rather than go unencrypted',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].backendRefs[0]',
    },
  },
  TargetNotFound: {
    objects: [policy('p', NOW, { group: '', kind: 'Service', name: 'gone' })],
    expect: {
      severity: 'error',
      message: 'Service default/gone not found',
      object: { kind: 'LoadBalancerPolicy', namespace: 'default', name: 'p' },
      path: 'spec.targetRefs[0]',
    },
  },
  Conflicted: {
    objects: [
      ...api,
      policy('old', '2026-01-01T00:00:00Z', { group: '', kind: 'Service', name: 'api' }),
      policy('new', '2026-02-01T00:00:00Z', { group: '', kind: 'Service', name: 'api' }),
    ],
    expect: {
      severity: 'warning',
      message: 'Service default/api is already targeted by LoadBalancerPolicy default/old, which is older (or first by name); this policy is not applied to it',
      object: { kind: 'LoadBalancerPolicy', namespace: 'default', name: 'new' },
      path: 'spec.targetRefs',
    },
  },
  PickerNotFound: {
    objects: [gateway(), route({ rules: toPool('p') }), pool('p', { type: 'External', external: { refs: [{ name: 'nope', port: { number: 9002 } }] } })],
    expect: {
      severity: 'error',
      message: 'picker Service default/nope not found',
      object: { kind: 'BackendPool', namespace: 'default', name: 'p' },
      path: 'spec.loadBalancer.external.refs[0]',
    },
  },
  NoEndpointPicker: {
    objects: [
      gateway(),
      route({ rules: [{ backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'p' }] }] }),
      pool('p', undefined, 'InferencePool'),
    ],
    expect: {
      severity: 'warning',
      message: 'the InferencePool has no endpointPickerRef and no LoadBalancerPolicy gives it one, so its endpoints are load-balanced round robin',
      object: { kind: 'InferencePool', namespace: 'default', name: 'p' },
      path: 'spec.endpointPickerRef',
    },
  },
  NoEndpoints: {
    objects: [gateway(), route({ rules: toService() }), service('api')],
    expect: {
      severity: 'warning',
      message: 'svc/default/api/80 has no ready endpoints in the input; Envoy answers 503 for it',
      object: { kind: 'Service', namespace: 'default', name: 'api' },
    },
  },
  StaticEndpoints: {
    objects: [gateway(), route({ rules: toService() }), ...api],
    options: { endpoints: 'dns' },
    expect: {
      severity: 'info',
      message: 'dns mode: svc/default/api/80 is not headless, so its endpoints are listed statically',
      object: { kind: 'Service', namespace: 'default', name: 'api' },
    },
  },
  LegacyNoFallback: {
    objects: [gateway(), route({ rules: toPool('p') }), pool('p', external()), ...picker],
    options: { envoy: 'legacy' },
    expect: {
      severity: 'warning',
      message:
        'legacy mode: bpool/default/p is an ORIGINAL_DST cluster that reads one endpoint; it has no fallback list (retries reuse the same endpoint), no fallback policy and no membership check',
      object: { kind: 'BackendPool', namespace: 'default', name: 'p' },
    },
  },
  ServedEndpointNeeds138: {
    objects: [gateway(), route({ rules: toPool('p') }), pool('p', external({ reportServedEndpoint: true })), ...picker],
    expect: {
      severity: 'warning',
      message: 'reportServedEndpoint needs Envoy 1.38 (selected_host_key); it is left out for target 1.35',
      object: { kind: 'BackendPool', namespace: 'default', name: 'p' },
    },
  },
  FailOpenStreaming: {
    objects: [gateway(), route({ rules: toPool('p') }), pool('p', external({ failureMode: 'FailOpen' })), ...picker],
    expect: {
      severity: 'info',
      message:
        'FailOpen with a FullDuplexStreamed request body needs Envoy 1.35.1 or newer (1.35.0 refuses it), and fails open only until the first body chunk reached the picker',
      object: { kind: 'BackendPool', namespace: 'default', name: 'p' },
    },
  },
  RetryBackoff: {
    objects: [gateway(), route({ rules: [{ backendRefs: [{ name: 'api', port: 80 }], retry: { attempts: 2, backoff: '0s' } }] }), ...api],
    expect: {
      severity: 'info',
      message: 'a zero retry backoff cannot be expressed in Envoy; its default (25ms) applies',
      object: { kind: 'HTTPRoute', namespace: 'default', name: 'r' },
      path: 'spec.rules[0].retry.backoff',
    },
  },
  OutputTooLarge: {
    objects: [gateway(), route({ rules: toService() }), ...api],
    options: { maxOutputBytes: 1000 },
    expect: {
      severity: 'error',
      message:
        'its Envoy configuration would be more than 1000 bytes (the limit, maxOutputBytes), so none is written: spread its routes over more Gateways, or use fewer rules, matches and backends per route',
      object: gw,
    },
  },
};

test('every diagnostic code has a case, and no case names a code that does not exist', () => {
  assert.deepEqual(Object.keys(CASES).sort(), [...DIAGNOSTIC_CODES].sort());
});

for (const code of DIAGNOSTIC_CODES) {
  test(`diagnostic ${code}`, () => {
    for (const c of [CASES[code]].flat()) {
      const found = convert(c.objects, { now: NOW, ...c.options }).diagnostics.filter((d) => d.code === code);
      assert.deepEqual(found, [{ code, ...c.expect }]);
      assert.doesNotMatch(c.expect.message, /undefined|\[object Object\]|\bno a\b/, 'messages read as sentences');
    }
  });
}
