// extlb's BackendPool and LoadBalancerPolicy, and GIE's InferencePool (an External pool).
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import { readLoadBalancer, readPickerRef } from './loadbalancer.js';
import type { Meta, Policy, PolicyTarget, Pool } from './model.js';
import type { Reader, Json } from './read.js';

function readPoolSelector(r: Reader, spec: Json): { selector: Record<string, string>; targetPorts: number[]; h2c: boolean } | undefined {
  const sel = r.object(spec.selector, 'spec.selector');
  const selector = r.labels(sel?.matchLabels, 'spec.selector.matchLabels');
  if (Object.keys(selector).length === 0) {
    r.invalid('spec.selector.matchLabels', 'must have at least 1 item');
    return undefined;
  }
  const targetPorts: number[] = [];
  r.array(spec.targetPorts, 'spec.targetPorts').forEach((p, i) => {
    const n = r.integer(r.object(p, `spec.targetPorts[${i}]`)?.number, `spec.targetPorts[${i}].number`, 1, 65535, true);
    if (n !== undefined) targetPorts.push(n);
  });
  if (targetPorts.length === 0) {
    r.invalid('spec.targetPorts', 'must have at least 1 item');
    return undefined;
  }
  if (new Set(targetPorts).size !== targetPorts.length) {
    r.invalid('spec.targetPorts', 'port number must be unique');
    return undefined;
  }
  const app = r.oneOf(spec.appProtocol, 'spec.appProtocol', ['http', 'kubernetes.io/h2c'] as const, 'http');
  return { selector, targetPorts, h2c: app === 'kubernetes.io/h2c' };
}

export function readBackendPool(r: Reader, spec: Json, meta: Meta): Pool | undefined {
  const base = readPoolSelector(r, spec);
  if (!base) return undefined;
  const pool: Pool = { ref: r.ref, meta, kind: 'BackendPool', ...base };
  if (spec.loadBalancer !== undefined) {
    const lb = readLoadBalancer(r, spec.loadBalancer, 'spec.loadBalancer');
    if (!lb) return undefined;
    pool.lb = lb;
  }
  return pool;
}

export function readInferencePool(r: Reader, spec: Json, meta: Meta): Pool | undefined {
  const base = readPoolSelector(r, spec);
  if (!base) return undefined;
  const pool: Pool = { ref: r.ref, meta, kind: 'InferencePool', ...base };
  if (spec.endpointPickerRef === undefined) {
    r.diags.warning(
      'NoEndpointPicker',
      'InferencePool has no endpointPickerRef; unless a LoadBalancerPolicy gives it one, its endpoints are load-balanced round robin',
      r.ref,
      'spec.endpointPickerRef',
    );
    return pool;
  }
  const ref = readPickerRef(r, spec.endpointPickerRef, 'spec.endpointPickerRef');
  const epr = r.object(spec.endpointPickerRef, 'spec.endpointPickerRef');
  const failureMode = r.oneOf(epr?.failureMode, 'spec.endpointPickerRef.failureMode', ['FailOpen', 'FailClose'] as const, 'FailClose');
  if (!ref || !failureMode) return undefined;
  // GIE's pool is an External pool with one picker and the protocol's defaults.
  pool.lb = {
    type: 'External',
    external: {
      refs: [ref],
      failureMode,
      fallback: 'RoundRobin',
      endpointSource: 'Metadata',
      messageTimeoutMs: 200,
      requestBodyMode: 'FullDuplexStreamed',
      responseBodyMode: 'None',
      reportServedEndpoint: false,
      maxEndpoints: 1,
    },
  };
  return pool;
}

export function readPolicy(r: Reader, spec: Json, meta: Meta): Policy | undefined {
  const targets: PolicyTarget[] = [];
  r.array(spec.targetRefs, 'spec.targetRefs').forEach((t, index) => {
    const p = `spec.targetRefs[${index}]`;
    const o = r.object(t, p);
    // group is required but may be empty: "" is the core group of a Service.
    const group = o?.group === undefined ? undefined : r.string(o.group, `${p}.group`);
    if (o?.group === undefined) r.invalid(`${p}.group`, 'Required value');
    const kind = r.string(o?.kind, `${p}.kind`, true);
    const name = r.string(o?.name, `${p}.name`, true);
    if (group === undefined || !kind || !name) return;
    const allowed =
      (group === '' && kind === 'Service') || (group === GROUP && kind === 'BackendPool') || (group === INFERENCE_GROUP && kind === 'InferencePool');
    if (!allowed) {
      r.invalid(p, `each targetRef must be a Service (group ""), a BackendPool (group extlb.dev) or an InferencePool (group inference.networking.k8s.io)`);
      return;
    }
    const target: PolicyTarget = { index, group, kind, name };
    const section = r.string(o?.sectionName, `${p}.sectionName`);
    if (section) {
      if (kind !== 'Service') {
        r.invalid(`${p}.sectionName`, `${p}: sectionName may only be set when the target is a Service`);
        return;
      }
      target.sectionName = section;
    }
    targets.push(target);
  });
  if (targets.length === 0) r.invalid('spec.targetRefs', 'must have at least 1 valid item');
  const policy: Policy = { ref: r.ref, meta, targets };
  const lb = readLoadBalancer(r, spec.loadBalancer, 'spec.loadBalancer');
  if (lb) policy.lb = lb;
  else if (spec.loadBalancer === undefined) r.invalid('spec.loadBalancer', 'Required value');
  return policy;
}
