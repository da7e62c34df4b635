// Picker clusters and ext_proc filters: pickers are reached the way backends are (each pod health
// checked), and every backend's picker settings are honoured, even those Envoy sets per filter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { envoyOptions } from '../src/converter/index.js';
import { Diagnostics } from '../src/diagnostics.js';
import { endpointAssignments, toEnvoy } from '../src/envoy/index.js';
import { type EndpointMode, convert, toBootstrap } from '../src/index.js';
import { readInputs } from '../src/read/index.js';
import { InputEndpoints } from '../src/resolve/endpoints.js';
import { InputCertificates, resolve } from '../src/resolve/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { envoyOf, readObjects } from './golden.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const scenario = (name: string) => readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url)));

function pickerCluster(mode: EndpointMode, objects = scenario('picker-failover')): { cluster: Json; result: ReturnType<typeof convert> } {
  const result = convert(objects, { now: NOW, endpoints: mode });
  const cluster = envoyOf(result).clusters.find((c) => String(c.name).startsWith('picker/')) as Json;
  return { cluster, result };
}

test('static mode: a picker cluster lists the ready picker pods from EndpointSlices, one priority per ref', () => {
  const { cluster } = pickerCluster('static');
  assert.equal(cluster.type, 'STATIC');
  const priorities = cluster.load_assignment.endpoints.map((e: Json) => [
    e.priority,
    e.lb_endpoints.map((l: Json) => `${l.endpoint.address.socket_address.address}:${l.endpoint.address.socket_address.port_value}`),
  ]);
  // picker-c's Service port is 9003; the pods listen on its targetPort, 9002, as its slice says.
  assert.deepEqual(priorities, [
    [0, ['10.9.10.1:9002', '10.9.10.2:9002']],
    [1, ['10.9.11.1:9002', '10.9.11.2:9002']],
    [2, ['10.9.12.1:9002', '10.9.12.2:9002']],
  ]);
  assert.equal(cluster.health_checks[0].grpc_health_check.service_name, 'envoy.service.ext_proc.v3.ExternalProcessor', 'each picker pod is health-checked');
});

test('eds mode: a picker cluster is an EDS cluster with its own ClusterLoadAssignment', () => {
  const { cluster, result } = pickerCluster('eds');
  assert.equal(cluster.type, 'EDS');
  const cla = envoyOf(result).endpoints.find((e) => e.cluster_name === cluster.name) as Json;
  assert.deepEqual(
    cla.endpoints.map((e: Json) => [e.priority, e.lb_endpoints.length]),
    [
      [0, 2],
      [1, 2],
      [2, 2],
    ],
  );
  assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(toBootstrap(envoyOf(result), { xdsServer: 'xds:18000' })), []);
});

test('dns mode: a picker cluster resolves a headless Service, made for pickers whose Service is not headless', () => {
  const { cluster, result } = pickerCluster('dns', scenario('dns-endpoints'));
  assert.equal(cluster.type, 'STRICT_DNS');
  assert.equal(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, 'extlb-picker-picker.default.svc.cluster.local');
  const shadow = envoyOf(result).manifests.find((m) => (m.metadata as Json).name === 'extlb-picker-picker') as Json;
  assert.equal(shadow.spec.clusterIP, 'None');
  assert.deepEqual(shadow.spec.selector, { app: 'picker' });
  assert.deepEqual(shadow.spec.ports, [{ name: 'grpc', port: 9002, targetPort: 9002, protocol: 'TCP' }]);
  // A picker Service that is headless already is resolved as it is.
  const headless = scenario('dns-endpoints').map((o: any) =>
    o.kind === 'Service' && o.metadata.name === 'picker' ? { ...o, spec: { ...o.spec, clusterIP: 'None' } } : o,
  );
  const direct = pickerCluster('dns', headless).cluster;
  assert.equal(direct.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, 'picker.default.svc.cluster.local');
});

/** Two pools split one route, with pickers that ask for different message timeouts. */
function twoTimeouts(envoy: '1.35' | 'legacy', failureModes: [string, string] = ['FailClose', 'FailClose']) {
  const objects = scenario('weighted-70-30').map((o: any) => {
    if (o.kind !== 'BackendPool') return o;
    const blue = o.metadata.name === 'blue';
    const ext = { ...o.spec.loadBalancer.external, messageTimeout: blue ? '1s' : '300ms', requestBodyMode: 'None', failureMode: failureModes[blue ? 0 : 1] };
    return { ...o, spec: { ...o.spec, loadBalancer: { ...o.spec.loadBalancer, external: ext } } };
  });
  return envoyOf(convert(objects, { now: NOW, envoy }));
}

test('each distinct messageTimeout gets its own ext_proc filter; a weighted entry enables its own and disables only the one the route level enables', () => {
  const config = twoTimeouts('1.35');
  const listener = config.listeners[0] as Json;
  const filters = listener.filter_chains[0].filters[0].typed_config.http_filters as Json[];
  const extProc = filters.filter((f) => f.typed_config['@type'].endsWith('ExternalProcessor'));
  assert.deepEqual(
    extProc.map((f) => [f.name, f.typed_config.message_timeout, f.disabled]),
    [
      ['envoy.filters.http.ext_proc/1s', '1s', true],
      ['envoy.filters.http.ext_proc/300ms', '0.300s', true],
    ],
  );
  const route = (config.routes[0] as Json).virtual_hosts[0].routes[0];
  const [blue, green] = route.route.weighted_clusters.clusters as [Json, Json];
  assert.equal(blue.typed_per_filter_config['envoy.filters.http.ext_proc/1s'].overrides.grpc_service.envoy_grpc.cluster_name, 'picker/default/picker:9002');
  // The route level enables blue's filter; green's stays disabled by default unless green's entry enables it.
  assert.equal(route.typed_per_filter_config['envoy.filters.http.ext_proc/1s'].overrides.grpc_service.envoy_grpc.cluster_name, 'picker/default/picker:9002');
  assert.deepEqual(Object.keys(blue.typed_per_filter_config), ['envoy.filters.http.ext_proc/1s']);
  assert.equal(
    green.typed_per_filter_config['envoy.filters.http.ext_proc/300ms'].overrides.grpc_service.envoy_grpc.cluster_name,
    'picker/default/picker-green:9002',
  );
  assert.equal(green.typed_per_filter_config['envoy.filters.http.ext_proc/1s'].disabled, true);
  assert.deepEqual(loadEnvoyValidator('1.35').validateBootstrap(toBootstrap(config)), []);
});

test('legacy mode: FailOpen and FailClose pickers get separate filters, since Envoy before 1.35 sets failure_mode_allow per filter', () => {
  const config = twoTimeouts('legacy', ['FailOpen', 'FailClose']);
  const filters = ((config.listeners[0] as Json).filter_chains[0].filters[0].typed_config.http_filters as Json[]).filter((f) =>
    f.typed_config['@type'].endsWith('ExternalProcessor'),
  );
  assert.deepEqual(
    filters.map((f) => [f.name, f.typed_config.failure_mode_allow]),
    [
      ['envoy.filters.http.ext_proc/1s/fail-open', true],
      ['envoy.filters.http.ext_proc/300ms', false],
    ],
  );
  assert.deepEqual(loadEnvoyValidator('legacy').validateBootstrap(toBootstrap(config)), []);
});

test('endpointAssignments gives exactly the ClusterLoadAssignments toEnvoy lists in eds mode', () => {
  for (const name of ['picker-failover', 'mixed-pool-and-service', 'route-features', 'weighted-70-30']) {
    const diags = new Diagnostics();
    const inputs = readInputs(scenario(name), diags);
    const { ir } = resolve(inputs, {}, diags);
    const options = envoyOptions({ endpoints: 'eds' }, diags);
    const endpoints = new InputEndpoints(inputs);
    for (const gateway of ir.gateways) {
      assert.deepEqual(
        endpointAssignments(gateway, endpoints, options),
        toEnvoy(gateway, endpoints, new InputCertificates(inputs), options, diags).endpoints,
        `${name}/${gateway.name}`,
      );
    }
  }
});
