// Every x-kubernetes-validations rule of every kind, allowed and denied, with the API server's
// message: `<path>: Invalid value: "<schema type>": <rule message>`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KINDS } from '../src/generated/structures.js';
import { validate } from '../src/index.js';
import type { StructuralSchema } from '../src/structural.js';
import { backendPool, inferencePool, loadBalancerPolicy, REMOVE, withField } from './fixtures.js';

type Kind = 'BackendPool' | 'LoadBalancerPolicy' | 'InferencePool' | 'GatewayParameters';
interface Case {
  kind: Kind;
  name: string;
  object: unknown;
  /** The exact errors; [] for an allowed object. */
  errors: string[];
}

const LB = 'spec.loadBalancer';
const gp = (spec: object) => ({ apiVersion: 'extlb.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'p', namespace: 'ns' }, spec });
const GP = (field: string, type: string, message: string) => `${field}: Invalid value: "${type}": ${message}`;
const ext = (o: object = {}) => ({ refs: [{ name: 'picker', port: { number: 9002 } }], ...o });
const bpLB = (lb: unknown) => withField(backendPool(), LB, lb);
const lbpLB = (lb: unknown) => withField(loadBalancerPolicy(), LB, lb);
const refs = (list: unknown[]) => withField(backendPool(), `${LB}.external.refs`, list);
const targetRefs = (list: unknown[]) => withField(loadBalancerPolicy(), 'spec.targetRefs', list);
const svc = (name: string, sectionName?: string) => ({ group: '', kind: 'Service', name, ...(sectionName === undefined ? {} : { sectionName }) });

const TARGET_KINDS =
  'spec.targetRefs: Invalid value: "array": each targetRef must be a Service (group "") , a BackendPool (group extlb.dev) or an InferencePool (group inference.networking.k8s.io)'.replace(
    ' ,',
    ',',
  );

const cases: Case[] = [
  // targetPorts unique (BackendPool and InferencePool)
  { kind: 'BackendPool', name: 'distinct ports', object: withField(backendPool(), 'spec.targetPorts', [{ number: 80 }, { number: 81 }]), errors: [] },
  {
    kind: 'BackendPool',
    name: 'repeated port',
    object: withField(backendPool(), 'spec.targetPorts', [{ number: 80 }, { number: 81 }, { number: 80 }]),
    errors: ['spec.targetPorts: Invalid value: "array": port number must be unique'],
  },
  { kind: 'InferencePool', name: 'distinct ports', object: withField(inferencePool(), 'spec.targetPorts', [{ number: 80 }, { number: 81 }]), errors: [] },
  {
    kind: 'InferencePool',
    name: 'repeated port',
    object: withField(inferencePool(), 'spec.targetPorts', [{ number: 80 }, { number: 80 }]),
    errors: ['spec.targetPorts: Invalid value: "array": port number must be unique'],
  },
  // ExternalLoadBalancer.refs unique
  {
    kind: 'BackendPool',
    name: 'same picker on two ports',
    object: refs([
      { name: 'p', port: { number: 1 } },
      { name: 'p', port: { number: 2 } },
    ]),
    errors: [],
  },
  {
    kind: 'BackendPool',
    name: 'same picker twice',
    object: refs([
      { name: 'p', port: { number: 1 } },
      { name: 'p', port: { number: 1 } },
    ]),
    errors: [`${LB}.external.refs: Invalid value: "array": each picker reference must be unique`],
  },
  {
    kind: 'BackendPool',
    name: 'same portless non-Service picker twice',
    object: refs([
      { group: 'x.io', kind: 'Picker', name: 'p' },
      { group: 'x.io', kind: 'Picker', name: 'p' },
    ]),
    errors: [`${LB}.external.refs: Invalid value: "array": each picker reference must be unique`],
  },
  // PickerRef port
  { kind: 'BackendPool', name: 'non-Service picker without port', object: refs([{ group: 'x.io', kind: 'Picker', name: 'p' }]), errors: [] },
  {
    kind: 'BackendPool',
    name: 'Service picker without port',
    object: refs([{ name: 'p' }]),
    errors: [`${LB}.external.refs[0]: Invalid value: "object": port is required when the picker is a Service (kind Service in the core group, the default)`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Service picker without port',
    object: lbpLB({
      type: 'External',
      external: {
        refs: [
          { name: 'a', port: { number: 1 } },
          { kind: 'Service', name: 'b' },
        ],
      },
    }),
    errors: [`${LB}.external.refs[1]: Invalid value: "object": port is required when the picker is a Service (kind Service in the core group, the default)`],
  },
  // messageTimeout range
  { kind: 'BackendPool', name: 'messageTimeout 1ms', object: bpLB({ type: 'External', external: ext({ messageTimeout: '1ms' }) }), errors: [] },
  { kind: 'BackendPool', name: 'messageTimeout 1h', object: bpLB({ type: 'External', external: ext({ messageTimeout: '1h' }) }), errors: [] },
  {
    kind: 'BackendPool',
    name: 'messageTimeout 0s',
    object: bpLB({ type: 'External', external: ext({ messageTimeout: '0s' }) }),
    errors: [`${LB}.external.messageTimeout: Invalid value: "string": messageTimeout must be between 1ms and 1h`],
  },
  {
    kind: 'BackendPool',
    name: 'messageTimeout 1h1s',
    object: bpLB({ type: 'External', external: ext({ messageTimeout: '1h1s' }) }),
    errors: [`${LB}.external.messageTimeout: Invalid value: "string": messageTimeout must be between 1ms and 1h`],
  },
  // ConsistentHash unions
  {
    kind: 'BackendPool',
    name: 'Header hash with header',
    object: bpLB({ type: 'RingHash', consistentHash: { type: 'Header', header: { name: 'x-user' } } }),
    errors: [],
  },
  {
    kind: 'BackendPool',
    name: 'Header hash without header',
    object: bpLB({ type: 'RingHash', consistentHash: { type: 'Header' } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": header must be set when type is Header, and only then`],
  },
  {
    kind: 'BackendPool',
    name: 'SourceIP hash with header',
    object: bpLB({ type: 'Maglev', consistentHash: { type: 'SourceIP', header: { name: 'x' } } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": header must be set when type is Header, and only then`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Cookie hash with cookie',
    object: lbpLB({ type: 'Maglev', consistentHash: { type: 'Cookie', cookie: { name: 's', ttl: '10m' } } }),
    errors: [],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Cookie hash without cookie',
    object: lbpLB({ type: 'Maglev', consistentHash: { type: 'Cookie' } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": cookie must be set when type is Cookie, and only then`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Header hash with cookie',
    object: lbpLB({ type: 'RingHash', consistentHash: { type: 'Header', header: { name: 'h' }, cookie: { name: 's' } } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": cookie must be set when type is Cookie, and only then`],
  },
  {
    kind: 'BackendPool',
    name: 'Cookie hash without cookie',
    object: bpLB({ type: 'RingHash', consistentHash: { type: 'Cookie' } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": cookie must be set when type is Cookie, and only then`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Header hash without header',
    object: lbpLB({ type: 'RingHash', consistentHash: { type: 'Header' } }),
    errors: [`${LB}.consistentHash: Invalid value: "object": header must be set when type is Header, and only then`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'same picker twice',
    object: lbpLB({
      type: 'External',
      external: ext({
        refs: [
          { name: 'p', port: { number: 1 } },
          { name: 'p', port: { number: 1 } },
        ],
      }),
    }),
    errors: [`${LB}.external.refs: Invalid value: "array": each picker reference must be unique`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'messageTimeout 2h',
    object: lbpLB({ type: 'External', external: ext({ messageTimeout: '2h' }) }),
    errors: [`${LB}.external.messageTimeout: Invalid value: "string": messageTimeout must be between 1ms and 1h`],
  },
  // SlowStart window
  { kind: 'LoadBalancerPolicy', name: 'window 1s', object: lbpLB({ type: 'LeastRequest', slowStart: { window: '1s' } }), errors: [] },
  {
    kind: 'LoadBalancerPolicy',
    name: 'window 500ms',
    object: lbpLB({ type: 'LeastRequest', slowStart: { window: '500ms' } }),
    errors: [`${LB}.slowStart.window: Invalid value: "string": slowStart window must be between 1s and 1h`],
  },
  {
    kind: 'BackendPool',
    name: 'window 2h',
    object: bpLB({ type: 'RoundRobin', slowStart: { window: '2h' } }),
    errors: [`${LB}.slowStart.window: Invalid value: "string": slowStart window must be between 1s and 1h`],
  },
  // LoadBalancer union
  { kind: 'BackendPool', name: 'External with external', object: bpLB({ type: 'External', external: ext() }), errors: [] },
  {
    kind: 'BackendPool',
    name: 'External without external',
    object: bpLB({ type: 'External' }),
    errors: [`${LB}: Invalid value: "object": external must be set when type is External`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'External without external',
    object: lbpLB({ type: 'External' }),
    errors: [`${LB}: Invalid value: "object": external must be set when type is External`],
  },
  {
    kind: 'BackendPool',
    name: 'Random with external',
    object: bpLB({ type: 'Random', external: ext() }),
    errors: [`${LB}: Invalid value: "object": external must not be set unless type is External`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Random with external',
    object: lbpLB({ type: 'Random', external: ext() }),
    errors: [`${LB}: Invalid value: "object": external must not be set unless type is External`],
  },
  {
    kind: 'BackendPool',
    name: 'RingHash without consistentHash',
    object: bpLB({ type: 'RingHash' }),
    errors: [`${LB}: Invalid value: "object": consistentHash must be set when type is RingHash or Maglev`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Maglev without consistentHash',
    object: lbpLB({ type: 'Maglev' }),
    errors: [`${LB}: Invalid value: "object": consistentHash must be set when type is RingHash or Maglev`],
  },
  {
    kind: 'BackendPool',
    name: 'RoundRobin with consistentHash',
    object: bpLB({ type: 'RoundRobin', consistentHash: { type: 'SourceIP' } }),
    errors: [`${LB}: Invalid value: "object": consistentHash must not be set unless type is RingHash or Maglev`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'LeastRequest with consistentHash',
    object: lbpLB({ type: 'LeastRequest', consistentHash: { type: 'SourceIP' } }),
    errors: [`${LB}: Invalid value: "object": consistentHash must not be set unless type is RingHash or Maglev`],
  },
  {
    kind: 'BackendPool',
    name: 'Random with slowStart',
    object: bpLB({ type: 'Random', slowStart: { window: '10s' } }),
    errors: [`${LB}: Invalid value: "object": slowStart is only supported when type is RoundRobin or LeastRequest`],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'Maglev with slowStart',
    object: lbpLB({ type: 'Maglev', consistentHash: { type: 'SourceIP' }, slowStart: { window: '10s' } }),
    errors: [`${LB}: Invalid value: "object": slowStart is only supported when type is RoundRobin or LeastRequest`],
  },
  // LoadBalancerPolicy.targetRefs
  {
    kind: 'LoadBalancerPolicy',
    name: 'Service, BackendPool and InferencePool targets',
    object: targetRefs([
      svc('a'),
      { group: 'extlb.dev', kind: 'BackendPool', name: 'b' },
      { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'c' },
    ]),
    errors: [],
  },
  { kind: 'LoadBalancerPolicy', name: 'Deployment target', object: targetRefs([{ group: 'apps', kind: 'Deployment', name: 'd' }]), errors: [TARGET_KINDS] },
  {
    kind: 'LoadBalancerPolicy',
    name: 'BackendPool in the core group',
    object: targetRefs([{ group: '', kind: 'BackendPool', name: 'd' }]),
    errors: [TARGET_KINDS],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'sectionName on a BackendPool',
    object: targetRefs([{ group: 'extlb.dev', kind: 'BackendPool', name: 'b', sectionName: 'http' }]),
    errors: ['spec.targetRefs: Invalid value: "array": sectionName may only be set when the target is a Service'],
  },
  { kind: 'LoadBalancerPolicy', name: 'one Service, two ports', object: targetRefs([svc('a', 'http'), svc('a', 'grpc')]), errors: [] },
  {
    kind: 'LoadBalancerPolicy',
    name: 'one Service whole and by port',
    object: targetRefs([svc('a'), svc('a', 'grpc')]),
    errors: ['spec.targetRefs: Invalid value: "array": sectionName must be specified when targetRefs includes 2 or more references to the same target'],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'one Service port twice',
    object: targetRefs([svc('a', 'http'), svc('a', 'http')]),
    errors: ['spec.targetRefs: Invalid value: "array": sectionName must be unique when targetRefs includes 2 or more references to the same target'],
  },
  {
    kind: 'LoadBalancerPolicy',
    name: 'one Service twice without sectionName',
    object: targetRefs([svc('a'), svc('a')]),
    errors: ['spec.targetRefs: Invalid value: "array": sectionName must be unique when targetRefs includes 2 or more references to the same target'],
  },
  // InferencePool.endpointPickerRef port
  {
    kind: 'InferencePool',
    name: 'non-Service picker without port',
    object: withField(inferencePool(), 'spec.endpointPickerRef', { group: 'x.io', kind: 'Picker', name: 'p' }),
    errors: [],
  },
  {
    kind: 'InferencePool',
    name: 'picker without kind or port',
    object: withField(inferencePool(), 'spec.endpointPickerRef.port', REMOVE),
    errors: ["spec.endpointPickerRef: Invalid value: \"object\": port is required when kind is 'Service' or unspecified (defaults to 'Service')"],
  },
  // GatewayParameters
  { kind: 'GatewayParameters', name: 'replicas alone', object: gp({ replicas: 3 }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'replicas and autoscaling',
    object: gp({ replicas: 3, autoscaling: { maxReplicas: 5 } }),
    errors: [GP('spec', 'object', 'set replicas or autoscaling, not both')],
  },
  { kind: 'GatewayParameters', name: 'opt-out alone', object: gp({ provision: false }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'opt-out with settings',
    object: gp({ provision: false, replicas: 2 }),
    errors: [GP('spec', 'object', 'when provision is false no other field may be set, since nothing is provisioned')],
  },
  { kind: 'GatewayParameters', name: 'drainTime 45s', object: gp({ envoy: { drainTime: '45s' } }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'drainTime 2h',
    object: gp({ envoy: { drainTime: '2h' } }),
    errors: [GP('spec.envoy.drainTime', 'string', 'drainTime must be between 1s and 1h')],
  },
  { kind: 'GatewayParameters', name: 'min 2 max 5', object: gp({ autoscaling: { minReplicas: 2, maxReplicas: 5 } }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'min above max',
    object: gp({ autoscaling: { minReplicas: 6, maxReplicas: 5 } }),
    errors: [GP('spec.autoscaling', 'object', 'minReplicas must not be greater than maxReplicas')],
  },
  {
    kind: 'GatewayParameters',
    name: 'Exists toleration with a value',
    object: gp({ pod: { tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] } }),
    errors: [GP('spec.pod.tolerations[0]', 'object', 'value must be empty when operator is Exists')],
  },
  { kind: 'GatewayParameters', name: 'Local on LoadBalancer', object: gp({ service: { externalTrafficPolicy: 'Local' } }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'Local on ClusterIP',
    object: gp({ service: { type: 'ClusterIP', externalTrafficPolicy: 'Local' } }),
    errors: [GP('spec.service', 'object', 'externalTrafficPolicy needs a Service of type NodePort or LoadBalancer')],
  },
  {
    kind: 'GatewayParameters',
    name: 'loadBalancerClass on NodePort',
    object: gp({ service: { type: 'NodePort', loadBalancerClass: 'example.com/lb' } }),
    errors: [GP('spec.service', 'object', 'loadBalancerClass needs a Service of type LoadBalancer')],
  },
  { kind: 'GatewayParameters', name: 'PDB maxUnavailable', object: gp({ podDisruptionBudget: { maxUnavailable: 1 } }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'PDB with both',
    object: gp({ podDisruptionBudget: { minAvailable: 1, maxUnavailable: 1 } }),
    errors: [GP('spec.podDisruptionBudget', 'object', 'set exactly one of minAvailable and maxUnavailable')],
  },
  { kind: 'GatewayParameters', name: 'Text with text', object: gp({ accessLog: { format: 'Text', text: '%RESPONSE_CODE%\n' } }), errors: [] },
  {
    kind: 'GatewayParameters',
    name: 'JSON with text',
    object: gp({ accessLog: { format: 'JSON', text: '%RESPONSE_CODE%' } }),
    errors: [GP('spec.accessLog', 'object', 'text must be set when format is Text, and only then')],
  },
];

describe('CEL rules', () => {
  for (const c of cases) {
    it(`${c.kind}: ${c.name} → ${c.errors.length ? 'denied' : 'allowed'}`, () => {
      const result = validate(c.object);
      assert.equal(result.kind, c.kind);
      assert.deepEqual(
        result.errors.map((e) => e.message),
        c.errors,
      );
    });
  }

  it('has a denied case for every rule of every kind', () => {
    const missing: string[] = [];
    const visit = (kind: string, s: StructuralSchema) => {
      for (const r of s.rules ?? []) {
        if (!cases.some((c) => c.kind === kind && c.errors.some((e) => e.endsWith(`: ${r.message}`)))) missing.push(`${kind}: ${r.message}`);
      }
      for (const child of [...Object.values(s.properties ?? {}), s.additionalProperties, s.items]) if (child) visit(kind, child);
    };
    for (const { kind, structure } of Object.values(KINDS)) visit(kind, structure);
    assert.deepEqual(missing, []);
  });
});
