// GIE's conformance world for the scenarios of inferencepool.test.ts: its base (gie-base.yaml),
// status assertions in the suite's terms (InferencePoolMustHaveCondition and friends), and the
// requests it sends "through the Gateway to the pod the EPP picked", made here of three real
// parts: the converted configuration (routing by envoy-model.ts, filters and load balancing by
// endpoint-model.ts), a reference picker (@extlb/picker) serving ext_proc over gRPC on loopback
// for every picker endpoint the Kubernetes world has, and the model-server Pods of that world.
//
// GIE's test picker (LWEPP) restricts its candidates to the addresses of the test header
// `test-epp-endpoint-selection` (IPs, meaning every port, or ip:port). The reference picker has
// no test header; it takes the same list as its subset hint instead. That is the one liberty
// taken, on the picker's side of the wire: what Envoy sends and what it does with the answer are
// unchanged.
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  EPP,
  ExtProcSession,
  type ProcessingRequest,
  type RunningPicker,
  SERVING_STATUS,
  fromStruct,
  headerText,
  loadProtos,
  startPicker,
  staticEndpoints,
  toValue,
} from '@extlb/picker';
import type { ConvertOptions } from '../../src/index.js';
import { type PickerAnswer, type Plan, ProxyModel, type Served, clusterHosts } from './endpoint-model.js';
import type { Request } from './envoy-model.js';
import { Scenario } from './harness.js';

type Json = Record<string, any>;

export const GIE_INFRA = 'inference-conformance-infra';
export const GIE_APP = 'inference-conformance-app-backend';
export const PRIMARY_GATEWAY = `${GIE_INFRA}/conformance-primary`;
export const SECONDARY_GATEWAY = `${GIE_INFRA}/conformance-secondary`;
/** GIE's test header: the addresses its test picker may choose from. */
export const SELECTION_HEADER = 'test-epp-endpoint-selection';

/** A scenario on GIE's base, with objects the upstream test deletes left out. */
export function gieScenario(file: string, options: ConvertOptions = {}, removed: string[] = []): Scenario {
  return new Scenario(file, options, [], { base: 'gie-base.yaml', removed });
}

export interface Pod {
  name: string;
  ip: string;
}

/** The Pods of a model-server Deployment (label `app`), as GetPodsWithLabel lists them. */
export function podsOf(s: Scenario, app: string): Pod[] {
  return (s.objects as Json[])
    .filter((o) => o.kind === 'Pod' && o.metadata.namespace === GIE_APP && o.metadata.labels?.app === app)
    .map((o) => ({ name: o.metadata.name, ip: o.status.podIP }));
}

/** InferencePoolMustHaveOneOfConditions: the pool's entry for the Gateway has one of the conditions. */
export function poolMustHaveOneOf(s: Scenario, pool: string, gateway: string, allowed: { type: string; status: 'True' | 'False'; reason?: string }[]): void {
  const entry = poolParent(s, pool, gateway);
  const conditions = entry.conditions as Json[];
  const ok = allowed.some((a) => conditions.some((c) => c.type === a.type && c.status === a.status && (a.reason === undefined || c.reason === a.reason)));
  assert.ok(ok, `InferencePool ${pool} for Gateway ${gateway}: none of ${JSON.stringify(allowed)} in ${JSON.stringify(conditions)}`);
}

/** InferencePoolMustBeAcceptedByParent: Accepted=True with reason Accepted. */
export function poolMustBeAccepted(s: Scenario, pool: string, gateway: string): void {
  poolMustHaveOneOf(s, pool, gateway, [{ type: 'Accepted', status: 'True', reason: 'Accepted' }]);
}

function poolParent(s: Scenario, pool: string, gateway: string): Json {
  const [gns, gn] = gateway.split('/');
  const parents = (s.status('InferencePool', `${GIE_APP}/${pool}`).parents ?? []) as Json[];
  const entry = parents.filter((p) => p.parentRef.name === gn && p.parentRef.namespace === gns);
  assert.equal(entry.length, 1, `InferencePool ${pool} must have exactly one parent entry for Gateway ${gateway}: ${JSON.stringify(parents)}`);
  assert.equal(entry[0]?.controllerName, 'extlb.dev/gateway-controller');
  return entry[0] as Json;
}

/** InferencePoolMustHaveNoParents. */
export function poolMustHaveNoParents(s: Scenario, pool: string): void {
  assert.deepEqual(s.status('InferencePool', `${GIE_APP}/${pool}`).parents, [], `InferencePool ${pool} must have no parents`);
}

/** HTTPRouteMustBeAcceptedAndResolved. */
export function routeMustBeAcceptedAndResolved(s: Scenario, route: string, gateway: string): void {
  const c = s.routeParent('HTTPRoute', `${GIE_APP}/${route}`, gateway);
  s.condition(c, 'Accepted', 'True', 'Accepted');
  s.condition(c, 'ResolvedRefs', 'True', 'ResolvedRefs');
}

/** What one request went through, end to end. */
export interface Delivery {
  plan: Plan;
  /** The picker endpoint asked, when a picker was asked. */
  pickerEndpoint?: string;
  answer?: PickerAnswer;
  served: Served;
  /** The model-server Pod the request reached. */
  pod?: Pod;
}

/**
 * The pickers of the Kubernetes world: for every InferencePool, a reference picker whose members
 * are the pool's Pods on its target ports (as the pool's own picker would list them), standing in
 * for each ready address of the pool's picker Service.
 */
export class PickerFleet {
  private readonly byEndpoint = new Map<string, { pool: string; running: RunningPicker }>();
  private readonly protos = loadProtos();
  private readonly clients = new Map<string, grpc.Client>();
  private readonly models = new Map<string, ProxyModel>();

  private constructor(private readonly scenario: Scenario) {}

  /** `maxEndpoints`: how many endpoints, in order, each picker names (GIE's test picker names one). */
  static async start(s: Scenario, options: { maxEndpoints?: number } = {}): Promise<PickerFleet> {
    const fleet = new PickerFleet(s);
    const objects = s.objects as Json[];
    for (const pool of objects.filter((o) => o.kind === 'InferencePool' && o.spec.endpointPickerRef)) {
      const ns = pool.metadata.namespace;
      const labels = Object.entries(pool.spec.selector.matchLabels as Record<string, string>);
      const members = objects
        .filter((o) => o.kind === 'Pod' && o.metadata.namespace === ns && labels.every(([k, v]) => o.metadata.labels?.[k] === v))
        .flatMap((p) => (pool.spec.targetPorts as Json[]).map((t) => `${p.status.podIP}:${t.number}`));
      const ref = pool.spec.endpointPickerRef;
      const service = objects.find((o) => o.kind === 'Service' && o.metadata.namespace === ns && o.metadata.name === ref.name);
      const port = (service?.spec.ports as Json[] | undefined)?.find((p) => p.port === ref.port.number);
      const slices = objects.filter((o) => o.kind === 'EndpointSlice' && o.metadata.labels?.['kubernetes.io/service-name'] === ref.name);
      for (const address of slices.flatMap((sl) => (sl.endpoints as Json[]).flatMap((e) => e.addresses as string[]))) {
        const running = await startPicker({ pool: staticEndpoints(members.join(',')), maxEndpoints: options.maxEndpoints ?? 1 });
        fleet.byEndpoint.set(`${address}:${port?.targetPort ?? ref.port.number}`, { pool: pool.metadata.name, running });
      }
    }
    return fleet;
  }

  /** The pool whose picker serves at an endpoint of a picker cluster. */
  poolAt(endpoint: string): string | undefined {
    return this.byEndpoint.get(endpoint)?.pool;
  }

  served(pool: string): Record<string, number> {
    const all: Record<string, number> = {};
    for (const p of this.byEndpoint.values()) if (p.pool === pool) Object.assign(all, p.running.picker.stats().served);
    return all;
  }

  model(gateway: string): ProxyModel {
    let m = this.models.get(gateway);
    if (!m) {
      m = new ProxyModel(this.scenario.gateway(gateway));
      this.models.set(gateway, m);
    }
    return m;
  }

  private client(endpoint: string, kind: 'ExtProcClient' | 'HealthClient'): grpc.Client {
    const key = `${kind}/${endpoint}`;
    let c = this.clients.get(key);
    if (!c) {
      const address = this.byEndpoint.get(endpoint)?.running.address as string;
      c = new this.protos[kind](address, grpc.credentials.createInsecure());
      this.clients.set(key, c);
    }
    return c;
  }

  /** The gRPC health status a picker endpoint gives for a service name, as Envoy's health check asks it. */
  health(endpoint: string, service: string): Promise<number> {
    const client = this.client(endpoint, 'HealthClient') as unknown as Record<string, (...a: unknown[]) => void>;
    return new Promise((resolve, reject) => {
      client.Check?.call(client, { service }, { deadline: Date.now() + 5000 }, (err: Error | null, res?: { status?: number }) =>
        err ? reject(err) : resolve(Number(res?.status ?? SERVING_STATUS.UNKNOWN)),
      );
    });
  }

  /**
   * One request through a Gateway: routed, its picker asked over gRPC (at the first endpoint of
   * the picker cluster Envoy has; none, or none running a picker, is an unreachable picker), the
   * answer applied by the cluster's load balancer, and the served endpoint reported back on the
   * same stream when Envoy would.
   */
  async send(
    gateway: string,
    req: Partial<Request> & { path: string },
    options: { random?: number; failing?: ReadonlyMap<string, number> } = {},
  ): Promise<Delivery> {
    const model = this.model(gateway);
    const plan = model.plan({ port: 80, host: 'example.com', ...req }, options.random ?? 0);
    assert.ok('upstream' in plan, `${req.host ?? 'example.com'}${req.path} on ${gateway} is not forwarded: ${JSON.stringify(plan)}`);
    const delivery: Partial<Delivery> = { plan };
    let session: ExtProcSession | undefined;
    if (plan.picker) {
      const endpoint = clusterHosts(model.config, plan.picker.cluster).find((e) => this.byEndpoint.has(e));
      if (endpoint === undefined) delivery.answer = 'unreachable';
      else {
        delivery.pickerEndpoint = endpoint;
        session = new ExtProcSession(this.client(endpoint, 'ExtProcClient'), 5000);
        session.send(requestHeaders(plan, req));
        delivery.answer = await readAnswer(session);
      }
    }
    const served = model.serve(plan, delivery.answer, options.failing);
    delivery.served = served;
    if (session) {
      if (served.reportedToPicker && served.served !== undefined) {
        session.send({
          response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from(String(served.status)) }] }, end_of_stream: true },
          metadata_context: { filter_metadata: { [EPP.namespace]: { fields: { [EPP.servedKey]: toValue(served.served) } } } },
        });
        const r = await session.next();
        assert.equal(r.kind, 'message', `the picker must answer the response headers: ${JSON.stringify(r)}`);
      }
      session.finish();
      await session.drain();
    }
    const host = served.host;
    const pod = host === undefined ? undefined : (this.scenario.objects as Json[]).find((o) => o.kind === 'Pod' && host.startsWith(`${o.status?.podIP}:`));
    if (pod) delivery.pod = { name: pod.metadata.name, ip: pod.status.podIP };
    return delivery as Delivery;
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) c.close();
    await Promise.all([...this.byEndpoint.values()].map((p) => p.running.close()));
  }
}

/** The request headers Envoy sends the picker, with the test header's list as the subset hint. */
function requestHeaders(plan: Plan, req: Partial<Request> & { path: string }): ProcessingRequest {
  const headers: Record<string, string> = {
    ':method': req.method ?? 'GET',
    ':path': plan.upstream.path,
    ':authority': plan.upstream.host,
    ':scheme': 'http',
    ...plan.headers,
  };
  const message: ProcessingRequest = {
    request_headers: { headers: { headers: Object.entries(headers).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) }, end_of_stream: true },
  };
  const selection = plan.headers[SELECTION_HEADER];
  if (selection !== undefined) {
    const subset = selection.split(',').map((x) => x.trim());
    message.metadata_context = { filter_metadata: { [EPP.subsetNamespace]: { fields: { [EPP.subsetKey]: toValue(subset) } } } };
  }
  return message;
}

async function readAnswer(session: ExtProcSession): Promise<PickerAnswer> {
  const r = await session.next();
  if (r.kind !== 'message') return 'unreachable';
  const m = r.message;
  if (m.immediate_response) return { immediate: m.immediate_response.status?.code ?? 500 };
  const answer: { metadata?: string; header?: string } = {};
  const meta = fromStruct(m.dynamic_metadata)[EPP.namespace] as Json | undefined;
  if (typeof meta?.[EPP.endpointKey] === 'string') answer.metadata = meta[EPP.endpointKey];
  const set = m.request_headers?.response?.header_mutation?.set_headers?.find((h) => h.header.key?.toLowerCase() === EPP.header);
  if (set) answer.header = headerText(set.header);
  return answer;
}
