import { deepStrictEqual, equal } from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, KINDS, isBackendPool, isInferencePool, isLoadBalancerPolicy, kindOf, type BackendPool } from '../src/index.js';

const examples = join(import.meta.dirname, '../../../examples');

function documents(file: string): unknown[] {
  return parseAllDocuments(readFileSync(join(examples, file), 'utf8')).map((d) => (d as { toJS(): unknown }).toJS());
}

describe('kind guards', () => {
  it('recognise the example objects by apiVersion and kind', () => {
    const [pool] = documents('quickstart/backendpool.yaml');
    equal(isBackendPool(pool), true);
    equal(isLoadBalancerPolicy(pool), false);
    // Narrowing gives typed access to the spec.
    if (isBackendPool(pool)) {
      const p: BackendPool = pool;
      equal(p.spec.loadBalancer?.external?.refs[0]?.name, 'api-picker');
    }
    deepStrictEqual(documents('policy-on-service/policy.yaml').map(kindOf), ['LoadBalancerPolicy']);
    deepStrictEqual(documents('inferencepool/inferencepool.yaml').map(kindOf), ['InferencePool', undefined, undefined]);
  });

  it('refuse a kind under another apiVersion, and non-objects', () => {
    equal(isBackendPool({ apiVersion: 'extlb.dev/v1', kind: 'BackendPool' }), false);
    equal(isInferencePool({ apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferencePool' }), false);
    for (const v of [null, undefined, 'BackendPool', 42, []]) equal(kindOf(v), undefined);
  });

  it('name each kind under its group and version', () => {
    deepStrictEqual(
      Object.values(KINDS).map((k) => `${k.apiVersion}/${k.kind}`),
      [`${API_VERSION}/BackendPool`, `${API_VERSION}/LoadBalancerPolicy`, `${API_VERSION}/GatewayParameters`, 'inference.networking.k8s.io/v1/InferencePool'],
    );
  });
});
