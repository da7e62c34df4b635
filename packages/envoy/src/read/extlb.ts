// extlb's BackendPool and LoadBalancerPolicy, and GIE's InferencePool. These go through
// @extlb/validate first — pruning, defaults, schema and CEL rules — so the API server's rules and
// messages exist once; what passes is mapped as it is, with its defaults already in place.
import type {
  BackendPoolSpec,
  ExternalLoadBalancer,
  InferencePoolSpec,
  LoadBalancer as ApiLoadBalancer,
  GatewayParametersSpec,
  LoadBalancerPolicySpec,
  PickerRef as ApiPickerRef,
} from '@extlb/types';
import { validate } from '@extlb/validate';
import { parseDuration } from '../gateway-duration.js';
import { type JsonObject, isObject } from '../json.js';
import type { Reader } from './reader.js';
import type { External, GatewayParametersRecord, LoadBalancer, Meta, PickerRef, Policy, Pool } from './records.js';

/** How many of an object's errors its `invalid` summary names; the diagnostics list them all. */
const SUMMARY_ERRORS = 3;

/**
 * Validates an extlb object as the API server would. Returns its pruned and defaulted spec, or
 * undefined when the API server would refuse it, with every error reported and a summary for
 * the references to it.
 */
function validated<T>(r: Reader, raw: JsonObject): { spec: T } | { invalid: string } {
  const result = validate(raw);
  if (result.valid && isObject(result.object) && isObject(result.object.spec)) return { spec: result.object.spec as T };
  for (const e of result.errors) {
    // The validator's message starts with the field path (`<nil>` for the object itself), which a
    // diagnostic carries apart.
    const prefix = `${e.field === '' ? '<nil>' : e.field}: `;
    const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    if (e.field === '') r.diags.error('Invalid', message, r.ref);
    else r.invalid(e.field, message);
  }
  const shown = result.errors.slice(0, SUMMARY_ERRORS).map((e) => e.message);
  const more = result.errors.length - shown.length;
  return { invalid: `${shown.join('; ')}${more > 0 ? `; and ${more} more error(s)` : ''}` || 'the object is not valid' };
}

function pickerRef(ref: ApiPickerRef, path: string): PickerRef {
  const out: PickerRef = { group: ref.group ?? '', kind: ref.kind ?? 'Service', name: ref.name, path };
  if (ref.port) out.port = ref.port.number;
  return out;
}

function milliseconds(duration: string | undefined, fallback: number): number {
  return parseDuration(duration) ?? fallback;
}

function external(e: ExternalLoadBalancer, path: string): External {
  return {
    refs: e.refs.map((ref, i) => pickerRef(ref, `${path}.refs[${i}]`)),
    failureMode: e.failureMode ?? 'FailClose',
    fallback: e.fallback ?? 'RoundRobin',
    endpointSource: e.endpointSource ?? 'Metadata',
    messageTimeoutMs: milliseconds(e.messageTimeout, 200),
    requestBodyMode: e.requestBodyMode ?? 'FullDuplexStreamed',
    responseBodyMode: e.responseBodyMode ?? 'None',
    reportServedEndpoint: e.reportServedEndpoint ?? false,
    maxEndpoints: e.maxEndpoints ?? 1,
  };
}

function loadBalancer(lb: ApiLoadBalancer, path: string): LoadBalancer {
  const out: LoadBalancer = { type: lb.type };
  if (lb.external) out.external = external(lb.external, `${path}.external`);
  const ch = lb.consistentHash;
  if (ch) {
    out.consistentHash = { type: ch.type };
    if (ch.header) out.consistentHash.header = ch.header.name;
    if (ch.cookie) {
      out.consistentHash.cookie = { name: ch.cookie.name };
      if (ch.cookie.ttl !== undefined) out.consistentHash.cookie.ttlMs = milliseconds(ch.cookie.ttl, 0);
    }
  }
  if (lb.slowStart) out.slowStart = { windowMs: milliseconds(lb.slowStart.window, 0), minWeightPercent: lb.slowStart.minWeightPercent ?? 10 };
  return out;
}

const apiVersionOf = (raw: JsonObject) => (typeof raw.apiVersion === 'string' ? raw.apiVersion : '');

function invalidPool(r: Reader, raw: JsonObject, meta: Meta, kind: Pool['kind'], invalid: string): Pool {
  return { ref: r.ref, meta, kind, apiVersion: apiVersionOf(raw), selector: {}, targetPorts: [], h2c: false, invalid };
}

function poolBase(r: Reader, raw: JsonObject, meta: Meta, kind: Pool['kind'], spec: BackendPoolSpec | InferencePoolSpec): Pool {
  // Object.entries/fromEntries keep a `__proto__` key as data.
  const selector = Object.fromEntries(Object.entries(spec.selector.matchLabels));
  const targetPorts = spec.targetPorts.map((p) => p.number);
  return { ref: r.ref, meta, kind, apiVersion: apiVersionOf(raw), selector, targetPorts, h2c: spec.appProtocol === 'kubernetes.io/h2c' };
}

export function readBackendPool(r: Reader, raw: JsonObject, meta: Meta): Pool {
  const v = validated<BackendPoolSpec>(r, raw);
  if ('invalid' in v) return invalidPool(r, raw, meta, 'BackendPool', v.invalid);
  const pool = poolBase(r, raw, meta, 'BackendPool', v.spec);
  if (v.spec.loadBalancer) pool.lb = loadBalancer(v.spec.loadBalancer, 'spec.loadBalancer');
  return pool;
}

/**
 * GIE's pool is an External pool with one picker and the protocol's defaults; the protocol asks
 * the proxy to tell the picker which endpoint served each request, so that is on (the Envoy stage
 * emits it where the target Envoy can). Without endpointPickerRef (optional since GIE v1.6) the
 * pool has no load balancer of its own: a LoadBalancerPolicy, or round robin, balances it.
 */
export function readInferencePool(r: Reader, raw: JsonObject, meta: Meta): Pool {
  const v = validated<InferencePoolSpec>(r, raw);
  if ('invalid' in v) return invalidPool(r, raw, meta, 'InferencePool', v.invalid);
  const pool = poolBase(r, raw, meta, 'InferencePool', v.spec);
  const epr = v.spec.endpointPickerRef;
  if (epr) {
    pool.lb = {
      type: 'External',
      external: {
        refs: [pickerRef(epr, 'spec.endpointPickerRef')],
        failureMode: epr.failureMode ?? 'FailClose',
        fallback: 'RoundRobin',
        endpointSource: 'Metadata',
        messageTimeoutMs: 200,
        requestBodyMode: 'FullDuplexStreamed',
        responseBodyMode: 'None',
        reportServedEndpoint: true,
        maxEndpoints: 1,
      },
    };
  }
  return pool;
}

export function readPolicy(r: Reader, raw: JsonObject, meta: Meta): Policy {
  const v = validated<LoadBalancerPolicySpec>(r, raw);
  if ('invalid' in v) return { ref: r.ref, meta, targets: [], invalid: v.invalid };
  return {
    ref: r.ref,
    meta,
    targets: v.spec.targetRefs.map((t, index) => ({
      index,
      group: t.group,
      kind: t.kind,
      name: t.name,
      ...(t.sectionName ? { sectionName: t.sectionName } : {}),
    })),
    lb: loadBalancer(v.spec.loadBalancer, 'spec.loadBalancer'),
  };
}

/** A GatewayParameters, validated as the API server would (no defaults: the provisioner has them). */
export function readGatewayParameters(r: Reader, raw: JsonObject, meta: Meta): GatewayParametersRecord {
  const v = validated<GatewayParametersSpec>(r, raw);
  return 'spec' in v ? { meta, spec: v.spec } : { meta, invalid: v.invalid };
}
