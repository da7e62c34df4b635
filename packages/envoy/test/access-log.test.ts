// Access logs: every HTTP connection manager and tcp_proxy writes to Envoy's stdout logger, in the
// format the Gateway's GatewayParameters ask (JSON by default, a text format, or none), and the
// output passes Envoy's protos. The model of Envoy's formatter below is what Envoy documents
// (docs/root/configuration/observability/access_log/usage.rst and the ext_proc filter's "Access Log
// Fields"), not what the converter writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Converter, convert, type EnvoyConfig, toBootstrap } from '../src/index.js';
import { loadEnvoyValidator } from '../src/validator/index.js';
import { envoyOf, readObjects } from './golden.js';

type Json = Record<string, any>;
const scenario = (name: string) => readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url)));

/**
 * Envoy's documented command operators, and where each is implemented: `http` for HTTP
 * connection managers, `tcp` for tcp_proxy ("Not implemented" in the docs means absent here).
 * `since` marks operators newer than Envoy 1.35 (which rejects a format naming an unknown one).
 */
const OPERATORS: Record<string, { http: boolean; tcp: boolean; since?: '1.38' }> = {
  START_TIME: { http: true, tcp: true },
  REQ: { http: true, tcp: false },
  RESP: { http: true, tcp: false },
  PROTOCOL: { http: true, tcp: false },
  RESPONSE_CODE: { http: true, tcp: false },
  RESPONSE_CODE_DETAILS: { http: true, tcp: false },
  RESPONSE_FLAGS: { http: true, tcp: true },
  DURATION: { http: true, tcp: true },
  REQUEST_DURATION: { http: true, tcp: false },
  RESPONSE_DURATION: { http: true, tcp: false },
  BYTES_RECEIVED: { http: true, tcp: true },
  BYTES_SENT: { http: true, tcp: true },
  DOWNSTREAM_REMOTE_ADDRESS: { http: true, tcp: true },
  REQUESTED_SERVER_NAME: { http: true, tcp: true },
  ROUTE_NAME: { http: true, tcp: true },
  UPSTREAM_CLUSTER: { http: true, tcp: true },
  UPSTREAM_HOST: { http: true, tcp: true },
  UPSTREAM_REQUEST_ATTEMPT_COUNT: { http: true, tcp: true },
  UPSTREAM_HOSTS_ATTEMPTED: { http: true, tcp: true, since: '1.38' },
  CONNECTION_TERMINATION_DETAILS: { http: true, tcp: true },
  DYNAMIC_METADATA: { http: true, tcp: false },
  CLUSTER_METADATA: { http: true, tcp: false },
  FILTER_STATE: { http: true, tcp: true },
};

/** Operators taking arguments, and the shape Envoy documents for them. */
const ARGUMENTS: Record<string, RegExp> = {
  REQ: /^[A-Za-z0-9:-]+(\?[A-Za-z0-9:-]+)?$/, // X?Y: a header, then its alternative
  RESP: /^[A-Za-z0-9:-]+(\?[A-Za-z0-9:-]+)?$/,
  DYNAMIC_METADATA: /^[^:]+(:[^:]+)*$/, // NAMESPACE:KEY*
  CLUSTER_METADATA: /^[^:]+(:[^:]+)*$/,
  FILTER_STATE: /^[^:]+(:(PLAIN|TYPED))?$/, // KEY:F
};

/** Every command operator in a format string, checked against the model; returns the names. */
function operators(format: string, kind: 'http' | 'tcp', envoy: '1.35' | '1.38'): string[] {
  const names: string[] = [];
  // What is left once the operators are cut out must hold no stray `%` (Envoy rejects it).
  const rest = format.replace(/%([A-Z_]+)(?:\(([^)]*)\))?(?::(\d+))?%/g, (_, name: string, args: string | undefined) => {
    const op = OPERATORS[name];
    assert.ok(op, `${name} is not one of Envoy's documented command operators`);
    assert.ok(op[kind], `${name} is not implemented for ${kind} access logs`);
    if (op.since) assert.equal(envoy, op.since, `${name} needs Envoy ${op.since}`);
    const shape = ARGUMENTS[name];
    if (shape) assert.match(args ?? '', shape, `${name}(${args}) is not the documented form`);
    else assert.equal(args, undefined, `${name} takes no argument`);
    names.push(name);
    return '';
  });
  assert.ok(!rest.includes('%'), `a stray % in ${JSON.stringify(format)}`);
  return names;
}

/** Each string of a json_format, nested objects included. */
function values(format: Json): string[] {
  return Object.values(format).flatMap((v) => (typeof v === 'string' ? [v] : values(v as Json)));
}

const hcms = (c: EnvoyConfig): Json[] =>
  c.listeners.flatMap((l: Json) => (l.filter_chains ?? []).flatMap((fc: Json) => fc.filters.filter((f: Json) => f.name.endsWith('http_connection_manager'))));
const tcpProxies = (c: EnvoyConfig): Json[] =>
  c.listeners.flatMap((l: Json) => (l.filter_chains ?? []).flatMap((fc: Json) => fc.filters.filter((f: Json) => f.name.endsWith('tcp_proxy'))));

function valid(c: EnvoyConfig, envoy: '1.35' | '1.38'): void {
  assert.deepEqual(loadEnvoyValidator(envoy).validateBootstrap(toBootstrap(c)), []);
}

/** An extlb GatewayClass naming class parameters, and the GatewayParameters objects. */
function withParameters(objects: unknown[], classLog: Json | undefined, gatewayLog: Json | undefined): unknown[] {
  const out = objects.map((o) => structuredClone(o) as Json);
  const gw = out.find((o) => o.kind === 'Gateway') as Json;
  out.push({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: gw.spec.gatewayClassName },
    spec: {
      controllerName: 'extlb.dev/gateway-controller',
      ...(classLog ? { parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'class-params', namespace: 'default' } } : {}),
    },
  });
  const params = (name: string, accessLog: Json) => ({
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'GatewayParameters',
    metadata: { name, namespace: 'default' },
    spec: { accessLog },
  });
  if (classLog) out.push(params('class-params', classLog));
  if (gatewayLog) {
    out.push(params('gw-params', gatewayLog));
    gw.spec.infrastructure = { parametersRef: { group: 'extlb.dev', kind: 'GatewayParameters', name: 'gw-params' } };
  }
  return out;
}

for (const envoy of ['1.35', '1.38'] as const) {
  test(`by default each HTTP connection manager logs one JSON object per request to stdout (Envoy ${envoy})`, () => {
    const c = envoyOf(convert(scenario('backendpool-picker'), { envoy, now: '2026-01-01T00:00:00Z' }));
    const managers = hcms(c);
    assert.ok(managers.length > 0);
    for (const m of managers) {
      const [log, ...more] = m.typed_config.access_log as Json[];
      assert.equal(more.length, 0);
      assert.equal(log?.name, 'envoy.access_loggers.stdout');
      assert.equal(log?.typed_config['@type'], 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog');
      const line = log?.typed_config.log_format.json_format as Json;
      const used = values(line).flatMap((v) => operators(v, 'http', envoy));
      for (const op of ['REQ', 'RESPONSE_CODE', 'RESPONSE_FLAGS', 'DURATION', 'UPSTREAM_HOST', 'ROUTE_NAME'])
        assert.ok(used.includes(op), `the line names ${op}`);
      assert.equal(line.gateway, 'default/gw');
      assert.equal(line.method, '%REQ(:METHOD)%');
      // What the picker chose, as dynamic metadata and as the header, and how its call went.
      assert.equal(line.picker_endpoints, '%DYNAMIC_METADATA(envoy.lb:x-gateway-destination-endpoint)%');
      assert.equal(line.picker_endpoints_header, '%REQ(x-gateway-destination-endpoint)%');
      assert.equal(line.picker_failure_mode, '%CLUSTER_METADATA(extlb.dev:picker_failure_mode)%');
      // ext_proc keeps each call's record in filter state under the filter's own name.
      const extProcs = (m.typed_config.http_filters as Json[]).filter((f) => f.name.startsWith('envoy.filters.http.ext_proc')).map((f) => f.name);
      assert.deepEqual(Object.keys(line.picker_calls), extProcs);
      for (const f of extProcs) assert.equal(line.picker_calls[f], `%FILTER_STATE(${f}:TYPED)%`);
      assert.equal('upstream_hosts_attempted' in line, envoy === '1.38');
    }
    // The failure mode the line reads is the backend's.
    const pool = c.clusters.find((cl) => cl.name === 'bpool/default/llm') as Json;
    assert.deepEqual(pool.metadata, { filter_metadata: { 'extlb.dev': { picker_failure_mode: 'FailClose' } } });
    valid(c, envoy);
  });
}

test('the served endpoint is logged where Envoy reports it (1.38, reportServedEndpoint)', () => {
  const c = envoyOf(convert(scenario('served-endpoint-1.38'), { envoy: '1.38', now: '2026-01-01T00:00:00Z' }));
  const jsonLine = (config: EnvoyConfig): Json => (hcms(config)[0] as Json).typed_config.access_log[0].typed_config.log_format.json_format;
  const line = jsonLine(c);
  assert.equal(line.served_endpoint, '%DYNAMIC_METADATA(envoy.lb:x-gateway-destination-endpoint-served)%');
  const plain = envoyOf(convert(scenario('backendpool-picker'), { envoy: '1.38', now: '2026-01-01T00:00:00Z' }));
  assert.ok(!('served_endpoint' in jsonLine(plain)));
});

test('a server with no picker logs no picker fields; a FailOpen backend says so in its cluster metadata', () => {
  const c = envoyOf(convert(scenario('inferencepool-failure-modes'), { envoy: '1.38', now: '2026-01-01T00:00:00Z' }));
  const modes = c.clusters.flatMap((cl: Json) => (cl.metadata ? [cl.metadata.filter_metadata['extlb.dev'].picker_failure_mode] : []));
  assert.ok(modes.includes('FailOpen') && modes.includes('FailClose'), JSON.stringify(modes));
  const route = envoyOf(convert(scenario('route-features'), { now: '2026-01-01T00:00:00Z' }));
  for (const m of hcms(route)) assert.ok(!('picker_endpoints' in m.typed_config.access_log[0].typed_config.log_format.json_format));
});

test('TCP and TLS streams log one JSON object per connection, with TCP operators only', () => {
  const c = envoyOf(convert(scenario('l4-listeners'), { now: '2026-01-01T00:00:00Z' }));
  const proxies = tcpProxies(c);
  assert.ok(proxies.length > 0);
  for (const p of proxies) {
    const line = p.typed_config.access_log[0].typed_config.log_format.json_format as Json;
    for (const v of values(line)) operators(v, 'tcp', '1.35');
    assert.equal(line.gateway, c.gateway.namespace ? `${c.gateway.namespace}/${c.gateway.name}` : c.gateway.name);
    assert.equal(typeof line.route, 'string');
  }
  valid(c, '1.35');
});

test("GatewayParameters choose the format: the class's Text, the Gateway's own over it, Off for none", () => {
  const input = scenario('backendpool-picker');
  const text = '[%START_TIME%] %REQ(:METHOD)% %REQ(:PATH)% %RESPONSE_CODE% %UPSTREAM_HOST%';
  const classText = envoyOf(convert(withParameters(input, { format: 'Text', text }, undefined), { now: '2026-01-01T00:00:00Z' }));
  for (const m of hcms(classText)) {
    const fmt = m.typed_config.access_log[0].typed_config.log_format;
    assert.deepEqual(fmt, { text_format_source: { inline_string: `${text}\n` } });
    operators(fmt.text_format_source.inline_string, 'http', '1.35');
  }
  // Only the JSON line reads the failure mode, so a text log leaves the clusters as they were.
  assert.ok(classText.clusters.every((cl: Json) => cl.metadata === undefined));
  valid(classText, '1.35');

  const gatewayOff = envoyOf(convert(withParameters(input, { format: 'Text', text }, { format: 'Off' }), { now: '2026-01-01T00:00:00Z' }));
  for (const m of hcms(gatewayOff)) assert.equal(m.typed_config.access_log, undefined);
  valid(gatewayOff, '1.35');

  const gatewayJson = envoyOf(convert(withParameters(input, { format: 'Off' }, { format: 'JSON' }), { now: '2026-01-01T00:00:00Z' }));
  for (const m of hcms(gatewayJson)) assert.ok(m.typed_config.access_log[0].typed_config.log_format.json_format);
});

test('a Converter given a new access log format rebuilds the listeners and clusters that write it', () => {
  const before = withParameters(scenario('backendpool-picker'), { format: 'JSON' }, undefined) as Json[];
  const params = before.find((o) => o.kind === 'GatewayParameters') as Json;
  const off = { ...params, spec: { accessLog: { format: 'Off' } } };
  const after = before.map((o) => (o === params ? off : o));
  const options = { now: '2026-01-01T00:00:00Z', endpoints: 'eds' } as const;
  const converter = new Converter(options);
  converter.update({ objects: before });
  const u = converter.update({ updated: [off] });
  assert.deepEqual(Object.fromEntries(u.gateways), Object.fromEntries(new Converter(options).update({ objects: after }).gateways));
  const [config] = u.gateways.values();
  assert.ok(config && hcms(config).length > 0);
  for (const m of hcms(config)) assert.equal(m.typed_config.access_log, undefined);
  assert.ok(
    config.clusters.every((cl) => (cl as Json).metadata === undefined),
    'no cluster keeps the JSON log’s failure-mode metadata',
  );
});

test("Envoy's protos refuse an access log whose logger config is not the logger's message", () => {
  const b = structuredClone(toBootstrap(envoyOf(convert(scenario('backendpool-picker'), { now: '2026-01-01T00:00:00Z' })))) as Json;
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0].typed_config.log_fromat = {};
  const found = loadEnvoyValidator('1.35').validateBootstrap(b);
  assert.ok(
    found.some((i) => /log_fromat/.test(`${i.path}: ${i.message}`)),
    JSON.stringify(found),
  );
});
