// Gateway API conformance, Gateway tests (v1.6): each upstream test's expectations, on scenarios
// written for extlb (manifests/), checked against the converted configuration.
import { Scenario, conformance } from './harness.js';

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
