// Pruning (unknown fields, disallowed nulls) and defaulting, as the API server applies them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validate } from '../src/index.js';
import { backendPool, inferencePool, loadBalancerPolicy, withField } from './fixtures.js';

const minimalPool = () => ({
  apiVersion: 'extlb.dev/v1alpha1',
  kind: 'BackendPool',
  metadata: { name: 'p' },
  spec: {
    selector: { matchLabels: { app: 'a' } },
    targetPorts: [{ number: 80 }],
    loadBalancer: { type: 'External', external: { refs: [{ name: 'epp', port: { number: 9002 } }] } },
  },
});

describe('pruning', () => {
  it('drops unknown fields at any depth and warns as kubectl shows it', () => {
    const input = withField(withField(withField(minimalPool(), 'spec.foo', 1), 'spec.targetPorts[0].name', 'http'), 'metadata.bogus', true);
    const r = validate(input);
    assert.deepEqual(
      r.warnings.filter((w) => w.message.startsWith('unknown')),
      [
        { field: 'metadata.bogus', message: 'unknown field "metadata.bogus"' },
        { field: 'spec.foo', message: 'unknown field "spec.foo"' },
        { field: 'spec.targetPorts[0].name', message: 'unknown field "spec.targetPorts[0].name"' },
      ],
    );
    const spec = (r.object as any).spec;
    assert.equal('foo' in spec, false);
    assert.deepEqual(spec.targetPorts, [{ number: 80 }]);
    assert.equal(r.valid, true);
  });
  it('keeps ObjectMeta fields', () => {
    const meta = { name: 'p', namespace: 'n', labels: { a: 'b' }, annotations: { x: 'y' }, uid: 'u', resourceVersion: '1', generation: 2, finalizers: ['f'] };
    assert.deepEqual((validate({ ...minimalPool(), metadata: meta }).object as any).metadata, meta);
  });
  it('drops nulls where the schema does not allow them, then defaults', () => {
    const r = validate(withField(minimalPool(), 'spec.appProtocol', null));
    assert.equal((r.object as any).spec.appProtocol, 'http');
    assert.equal(r.valid, true);
  });
  it('a null required field is pruned and then required', () => {
    assert.deepEqual(validate(withField(minimalPool(), 'spec.selector', null)).errors[0]?.message, 'spec.selector: Required value');
  });
});

describe('defaulting', () => {
  it('fills every default of the external stanza and its refs', () => {
    const lb = (validate(minimalPool()).object as any).spec.loadBalancer;
    assert.deepEqual(lb.external, {
      refs: [{ name: 'epp', port: { number: 9002 }, group: '', kind: 'Service' }],
      failureMode: 'FailClose',
      fallback: 'RoundRobin',
      endpointSource: 'Metadata',
      messageTimeout: '200ms',
      requestBodyMode: 'FullDuplexStreamed',
      responseBodyMode: 'None',
      reportServedEndpoint: false,
      maxEndpoints: 1,
    });
  });
  it('never overrides a value the user set', () => {
    const input = withField(minimalPool(), 'spec.loadBalancer.external.failureMode', 'FailOpen');
    assert.equal((validate(input).object as any).spec.loadBalancer.external.failureMode, 'FailOpen');
  });
  it('defaults slowStart.minWeightPercent, parentRef group/kind and InferencePool picker fields', () => {
    const lbp = validate(withField(loadBalancerPolicy(), 'spec.loadBalancer.slowStart', { window: '5s' })).object as any;
    assert.equal(lbp.spec.loadBalancer.slowStart.minWeightPercent, 10);
    const pool = validate(withField(backendPool(), 'status.parents[0].parentRef', { name: 'gw' })).object as any;
    assert.deepEqual(pool.status.parents[0].parentRef, { name: 'gw', group: 'gateway.networking.k8s.io', kind: 'Gateway' });
    const ip = validate(withField(inferencePool(), 'spec.endpointPickerRef', { name: 'epp', port: { number: 9002 } })).object as any;
    assert.deepEqual(ip.spec.endpointPickerRef, { name: 'epp', port: { number: 9002 }, group: '', kind: 'Service', failureMode: 'FailClose' });
  });
  it('the defaults make a rule pass that the raw object would fail (PickerRef kind defaults to Service)', () => {
    const r = validate(withField(minimalPool(), 'spec.loadBalancer.external.refs', [{ name: 'epp' }]));
    assert.deepEqual(
      r.errors.map((e) => e.message),
      [
        'spec.loadBalancer.external.refs[0]: Invalid value: "object": port is required when the picker is a Service (kind Service in the core group, the default)',
      ],
    );
  });
  it('never mutates its input, and gives objects that share nothing with it', () => {
    const input = withField(withField(minimalPool(), 'spec.foo', { deep: [1] }), 'metadata.labels', { a: 'b' });
    const before = structuredClone(input);
    const r = validate(input);
    assert.deepEqual(input, before);
    (r.object as any).metadata.name = 'changed';
    (r.object as any).metadata.labels.x = 'changed';
    (r.object as any).spec.targetPorts[0].number = 1;
    assert.deepEqual(input, before);
  });
  it('gives each result its own copy of a default', () => {
    const a = validate(minimalPool()).object as any;
    a.spec.loadBalancer.external.refs[0].kind = 'X';
    assert.equal((validate(minimalPool()).object as any).spec.loadBalancer.external.refs[0].kind, 'Service');
  });
});

describe('shareInput', () => {
  it('keeps the input’s own values where nothing changed, copies only what pruning or defaulting changed', () => {
    const labels = { team: 'ml' };
    const managedFields = [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }];
    const input = withField(withField(withField(minimalPool(), 'metadata.labels', labels), 'metadata.managedFields', managedFields), 'spec.foo', 1);
    const before = structuredClone(input);
    const r = validate(input, { shareInput: true });
    const object = r.object as any;
    assert.deepEqual(r, validate(input));
    assert.equal(object.metadata, (input as any).metadata);
    assert.equal(object.spec.selector, (input as any).spec.selector);
    assert.equal(object.spec.targetPorts, (input as any).spec.targetPorts);
    // spec lost an unknown field and gained defaults: new objects, the input's left as they were.
    assert.notEqual(object.spec, (input as any).spec);
    assert.notEqual(object.spec.loadBalancer.external.refs[0], (input as any).spec.loadBalancer.external.refs[0]);
    assert.deepEqual(input, before);
  });

  it('shares nothing without it', () => {
    const input = withField(minimalPool(), 'metadata.labels', { team: 'ml' });
    const object = validate(input).object as any;
    assert.notEqual(object.metadata.labels, (input as any).metadata.labels);
    assert.notEqual(object.spec.selector, (input as any).spec.selector);
  });
});

describe('warnings', () => {
  it('warns once about two unknown fields with one path, as kubectl shows it once', () => {
    // "selector.foo" under spec and "foo" under spec.selector are both spec.selector.foo.
    const input = withField(withField(minimalPool(), 'spec.selector.foo', 1), 'spec', {
      ...(withField(minimalPool(), 'spec.selector.foo', 1) as any).spec,
      'selector.foo': 2,
    });
    assert.deepEqual(validate(input).warnings, [{ field: 'spec.selector.foo', message: 'unknown field "spec.selector.foo"' }]);
  });
});
