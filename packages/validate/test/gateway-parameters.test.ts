// GatewayParameters as the API server sees it: bounds and enums give its messages, and nothing is
// defaulted (an unset field must leave the class's value in force when a Gateway's parameters
// override the class's field by field).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validate } from '../src/index.js';

const gp = (spec: unknown) => ({ apiVersion: 'extlb.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'p', namespace: 'ns' }, spec });

describe('GatewayParameters', () => {
  it('adds no defaults, so a field left out never hides the class value', () => {
    const result = validate(gp({ envoy: { logLevel: 'debug' } }));
    assert.equal(result.valid, true);
    assert.deepEqual((result.object as { spec: unknown }).spec, { envoy: { logLevel: 'debug' } });
  });

  it('refuses values out of bounds with the API server messages', () => {
    const result = validate(
      gp({
        replicas: 5000,
        envoy: { version: '1.20', concurrency: 0, image: 'envoy proxy', resources: { requests: { cpu: 'lots' } } },
        service: { type: 'ExternalName' },
      }),
    );
    assert.equal(result.valid, false);
    assert.deepEqual(
      result.errors.map((e) => e.message),
      [
        `spec.envoy.image: Invalid value: "envoy proxy": spec.envoy.image in body should match '^[^\\s]+$'`,
        'spec.envoy.version: Unsupported value: "1.20": supported values: "1.35", "1.38"',
        'spec.envoy.concurrency: Invalid value: 0: spec.envoy.concurrency in body should be greater than or equal to 1',
        `spec.envoy.resources.requests.cpu: Invalid value: "lots": spec.envoy.resources.requests.cpu in body should match '^[0-9]+(\\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$'`,
        'spec.replicas: Invalid value: 5000: spec.replicas in body should be less than or equal to 1000',
        'spec.service.type: Unsupported value: "ExternalName": supported values: "ClusterIP", "NodePort", "LoadBalancer"',
        '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    );
  });

  it('prunes an unknown field of the spec, as the API server does', () => {
    const result = validate(gp({ replica: 3 }));
    assert.equal(result.kind, 'GatewayParameters');
    assert.deepEqual((result.object as { spec: unknown }).spec, {});
  });
});
