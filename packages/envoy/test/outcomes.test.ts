// What the status stage reports about policies, pools and the objects routes point at.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validate } from '@extlb/validate';
import { convert } from '../src/index.js';
import { readObjects } from './golden.js';

type Json = Record<string, any>;
const NOW = '2026-01-01T00:00:00Z';
const scenario = (name: string) => readObjects(fileURLToPath(new URL(`./scenarios/${name}/input.yaml`, import.meta.url)));

function status(r: ReturnType<typeof convert>, kind: string, name: string): Json {
  const s = r.statuses.find((x) => x.kind === kind && (x.metadata as Json).name === name);
  assert.ok(s, `no status for ${kind} ${name}`);
  return s as Json;
}
const conditionsOf = (entry: Json): Record<string, any> => Object.fromEntries(entry.conditions.map((c: Json) => [c.type, c]));

const policy = (name: string, created: string, target: Json) => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'LoadBalancerPolicy',
  metadata: { name, namespace: 'default', creationTimestamp: created },
  spec: { targetRefs: [target], loadBalancer: { type: 'Random' } },
});

/** service-policy-external, with its External policy on the whole Service api rather than its port. */
function wholeServicePolicy(): Json[] {
  return scenario('service-policy-external').map((o: any) =>
    o.kind === 'LoadBalancerPolicy' ? { ...o, spec: { ...o.spec, targetRefs: [{ group: '', kind: 'Service', name: 'api' }] } } : o,
  );
}

test('a whole-Service policy beaten on every port by one that names the port is Conflicted, naming the winner', () => {
  const base = wholeServicePolicy();
  const r = convert([...base, policy('api-http', '2026-06-01T00:00:00Z', { group: '', kind: 'Service', name: 'api', sectionName: 'http' })], { now: NOW });
  const whole = base.find((o: any) => o.kind === 'LoadBalancerPolicy') as Json;
  const accepted = conditionsOf(status(r, 'LoadBalancerPolicy', whole.metadata.name).status.ancestors[0]).Accepted;
  assert.equal(accepted.status, 'False');
  assert.equal(accepted.reason, 'Conflicted');
  assert.match(accepted.message, /LoadBalancerPolicy default\/api-http \(port http\)/);
  assert.equal(conditionsOf(status(r, 'LoadBalancerPolicy', 'api-http').status.ancestors[0]).Accepted.status, 'True');
  const d = r.diagnostics.find((x) => x.code === 'Conflicted' && x.object?.name === whole.metadata.name);
  assert.match(d?.message ?? '', /every port of Service default\/api is targeted by a policy that names the port/);
});

test('a whole-Service policy beaten on some ports stays Accepted, and says where it does not apply', () => {
  const base = wholeServicePolicy().map((o: any) =>
    o.kind === 'Service' && o.metadata.name === 'api'
      ? {
          ...o,
          spec: {
            ...o.spec,
            ports: [...o.spec.ports, { name: 'admin', port: 9000, targetPort: 9000 }],
          },
        }
      : o,
  );
  const r = convert([...base, policy('api-http', '2026-06-01T00:00:00Z', { group: '', kind: 'Service', name: 'api', sectionName: 'http' })], { now: NOW });
  const whole = base.find((o: any) => o.kind === 'LoadBalancerPolicy') as Json;
  const accepted = conditionsOf(status(r, 'LoadBalancerPolicy', whole.metadata.name).status.ancestors[0]).Accepted;
  assert.equal(accepted.status, 'True');
  assert.match(accepted.message, /on some ports a policy that names the port applies instead: LoadBalancerPolicy default\/api-http \(port http\)/);
});

test('a pool no route uses gets a status with no parents, so deleting the last route clears its entry', () => {
  const objects = scenario('backendpool-picker');
  const used = convert(objects, { now: NOW });
  assert.equal(status(used, 'BackendPool', 'llm').status.parents.length, 1);
  const unused = convert(
    objects.filter((o: any) => o.kind !== 'HTTPRoute'),
    { now: NOW },
  );
  assert.deepEqual(status(unused, 'BackendPool', 'llm').status, { parents: [] });
});

test('a route to an invalid pool reports the validator message, not "not found"', () => {
  const objects = scenario('backendpool-picker').map((o: any) =>
    o.kind === 'BackendPool' ? { ...o, spec: { ...o.spec, targetPorts: [{ number: 8000 }, { number: 8000 }] } } : o,
  );
  const r = convert(objects, { now: NOW });
  const resolved = conditionsOf(status(r, 'HTTPRoute', 'chat').status.parents[0]).ResolvedRefs;
  assert.equal(resolved.status, 'False');
  assert.equal(resolved.reason, 'InvalidBackend');
  const pool = objects.find((o: any) => o.kind === 'BackendPool');
  const message = validate(pool).errors[0]?.message ?? '';
  assert.ok(message.includes('port number must be unique'), message);
  assert.ok(resolved.message.includes(message), `${resolved.message} should carry ${message}`);
  assert.doesNotMatch(resolved.message, /not found/);
});

test('extlb validate and the converter agree about an InferencePool without a picker: it is load-balanced round robin', () => {
  const pool = {
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: { name: 'p', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'p' } }, targetPorts: [{ number: 8000 }] },
  };
  const warning = validate(pool).warnings.find((w) => w.field === 'spec.endpointPickerRef');
  assert.match(warning?.message ?? '', /round robin/);
  const r = convert(
    [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'default' },
        spec: { gatewayClassName: 'x', listeners: [{ name: 'h', port: 80, protocol: 'HTTP' }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r', namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'p' }] }] },
      },
      pool,
    ],
    { now: NOW },
  );
  assert.match(r.diagnostics.find((d) => d.code === 'NoEndpointPicker')?.message ?? '', /round robin/);
  assert.equal(r.ir.gateways[0]?.backends['infpool/default/p']?.lb.type, 'RoundRobin');
});
