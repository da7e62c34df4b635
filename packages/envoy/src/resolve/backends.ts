// backendRefs to backends: what a reference points at, whether it may, and how one endpoint of it
// is chosen — a LoadBalancerPolicy on the target, else the pool's own stanza, else round robin —
// including the pickers an External load balancer names.
import { createHash } from 'node:crypto';
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import { type Diagnostic, Diagnostics, type ObjectRef, describeRef } from '../diagnostics.js';
import { type BackendRef, GATEWAY_GROUP, type Inputs, type LoadBalancer, type Service, key } from '../read/index.js';
import { BackendTlsIndex } from './backend-tls.js';
import { permitted } from './grants.js';
import type { Backend, Picker, PickerSet } from './ir.js';
import type { PickerProblem, RefProblem } from './outcomes.js';
import { PolicyIndex } from './policies.js';

export const ROUND_ROBIN: LoadBalancer = { type: 'RoundRobin' };

export type Resolution = { ok: true; backend: Backend } | { ok: false; problem: Omit<RefProblem, 'path'> };

const SERVICE = 'Service';
/** Service appProtocols that mean HTTP/2 with prior knowledge. */
const HTTP2_APP_PROTOCOLS = ['kubernetes.io/h2c', 'grpc'];

function groupKind(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

const SHADOW_PREFIX = { BackendPool: 'extlb-bpool', InferencePool: 'extlb-infpool', Service: 'extlb-picker' } as const;

/**
 * The name of the headless Service extlb makes to find the Pods of a pool (or of a picker Service
 * that is not headless itself): `extlb-bpool-<name>`, `extlb-infpool-<name>`, `extlb-picker-<name>`,
 * so that a user can tell what it is, and pools of both kinds with one name never share it. A name
 * past the 63 characters of a DNS label keeps a hash of the whole in its last 8.
 */
export function shadowServiceName(kind: keyof typeof SHADOW_PREFIX, name: string): string {
  const full = `${SHADOW_PREFIX[kind]}-${name}`;
  if (full.length <= 63) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${hash}`;
}

/** The port a Service port leads to on its Pods; a named targetPort is taken from the EndpointSlices. */
function targetPortOf(port: Service['ports'][number]): number {
  return typeof port.targetPort === 'number' ? port.targetPort : port.port;
}

/**
 * The backends of a resolve. Across resolves where no object but EndpointSlices and routes (other
 * than GRPCRoutes) changed, one Backends is used again through `begin()` (see BackendsMemo): what a reference
 * resolves to reads only those objects, so each resolution is kept, and the state a resolve shares
 * between routes — first-seen findings, the backends and picker problems it reports — is made
 * from the references resolved since `begin()`, as a fresh Backends would make it.
 */
export class Backends {
  readonly policies: PolicyIndex;
  readonly tls: BackendTlsIndex;
  private readonly cache = new Map<string, Backend>();
  /** Every backend resolved, by its key. */
  private readonly byKey = new Map<string, Backend>();
  /** By owner (`describeRef`): the set its stanza names, the refs that did not resolve, and their findings. */
  private readonly pickerSets = new Map<string, { set?: PickerSet; problems: PickerProblem[]; diagnostics: Diagnostic[] }>();
  private readonly pickerSetsByKey = new Map<string, PickerSet>();
  /** Per reference record, per referring kind and namespace: what it resolved to. */
  private readonly resolutions = new WeakMap<BackendRef, Map<string, Resolution>>();
  /** Per backend key: what resolving it first reported, and the owner of its picker stanza. */
  private readonly firstSeen = new Map<string, { diagnostics: Diagnostic[]; pickerOwner?: string }>();
  /** The findings of the policy indexes, reported at every begin(). */
  private readonly indexDiagnostics: Diagnostic[];
  private diags!: Diagnostics;
  /** Backend keys and picker owners resolved since begin(). */
  private used = new Set<string>();
  private usedOwners = new Set<string>();

  constructor(
    private readonly inputs: Inputs,
    diags: Diagnostics,
  ) {
    const own = new Diagnostics();
    this.policies = new PolicyIndex(inputs.policies, inputs, own, { contends: (p) => p.lb !== undefined });
    this.tls = new BackendTlsIndex(inputs, own);
    this.indexDiagnostics = own.list;
    this.begin(diags);
  }

  /** Starts a resolve on the same objects but routes: nothing counts as resolved yet. */
  begin(diags: Diagnostics): void {
    this.diags = diags;
    this.used = new Set();
    this.usedOwners = new Set();
    for (const d of this.indexDiagnostics) diags.list.push(d);
  }

  /**
   * Resolves a backendRef written in `route` (an HTTPRoute or a GRPCRoute); diagnostics are the
   * caller's to report. A GRPCRoute's backend speaks HTTP/2, whatever else uses it: gRPC needs it.
   */
  resolve(route: ObjectRef, ref: BackendRef): Resolution {
    let byReferrer = this.resolutions.get(ref);
    if (!byReferrer) {
      byReferrer = new Map();
      this.resolutions.set(ref, byReferrer);
    }
    const referrer = `${route.kind}/${route.namespace ?? ''}`;
    let res = byReferrer.get(referrer);
    if (!res) {
      res = this.resolveGrpc(route, ref);
      byReferrer.set(referrer, res);
    }
    if (res.ok) this.use(res.backend);
    return res;
  }

  /**
   * Counts a backend resolved in this resolve, reporting what its first resolution found: for a
   * reference resolved on this Backends before, whose resolution it keeps.
   */
  use(backend: Backend): void {
    if (this.used.has(backend.key)) return;
    this.used.add(backend.key);
    const seen = this.firstSeen.get(backend.key);
    if (!seen) return;
    for (const d of seen.diagnostics) this.diags.list.push(d);
    const owner = seen.pickerOwner;
    if (owner === undefined || this.usedOwners.has(owner)) return;
    this.usedOwners.add(owner);
    for (const d of this.pickerSets.get(owner)?.diagnostics ?? []) this.diags.list.push(d);
  }

  private resolveGrpc(route: ObjectRef, ref: BackendRef): Resolution {
    const res = this.resolveRef(route, ref);
    if (!res.ok || route.kind !== 'GRPCRoute' || res.backend.h2c) return res;
    if (res.backend.kind !== SERVICE) {
      const message = `${res.backend.kind} ${ref.namespace}/${ref.name} speaks HTTP/1.1 (appProtocol http); gRPC needs HTTP/2: set appProtocol kubernetes.io/h2c`;
      return { ok: false, problem: { reason: 'UnsupportedProtocol', message } };
    }
    res.backend.h2c = true;
    return res;
  }

  private resolveRef(route: ObjectRef, ref: BackendRef): Resolution {
    const gk = groupKind(ref.group, ref.kind);
    const isService = ref.group === '' && ref.kind === SERVICE;
    const isPool = (ref.group === GROUP && ref.kind === 'BackendPool') || (ref.group === INFERENCE_GROUP && ref.kind === 'InferencePool');
    if (!isService && !isPool) {
      return {
        ok: false,
        problem: {
          reason: 'InvalidKind',
          message: `backendRef kind ${gk} is not supported; extlb converts Service, BackendPool.${GROUP} and InferencePool.${INFERENCE_GROUP}`,
        },
      };
    }
    const allowed = permitted(this.inputs, {
      from: { group: GATEWAY_GROUP, kind: route.kind, namespace: route.namespace ?? '' },
      to: { group: ref.group, kind: ref.kind, namespace: ref.namespace, name: ref.name },
    });
    if (!allowed) {
      return {
        ok: false,
        problem: {
          reason: 'RefNotPermitted',
          message: `backendRef to ${gk} ${ref.namespace}/${ref.name} is not permitted: no ReferenceGrant in namespace ${ref.namespace} allows ${route.kind}s from namespace ${route.namespace ?? ''}`,
        },
      };
    }
    return isService ? this.service(ref) : this.pool(ref, gk);
  }

  private pool(ref: BackendRef, gk: string): Resolution {
    const cacheKey = `${ref.kind}/${ref.namespace}/${ref.name}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return { ok: true, backend: cached };
    const pool = this.inputs.pools.get(`${ref.kind}/${key(ref.namespace, ref.name)}`);
    if (!pool) return { ok: false, problem: { reason: 'BackendNotFound', message: `${gk} ${ref.namespace}/${ref.name} not found` } };
    if (pool.invalid !== undefined)
      return { ok: false, problem: { reason: 'InvalidBackend', message: `${gk} ${ref.namespace}/${ref.name} is invalid: ${pool.invalid}` } };
    const policy = this.policies.policyFor(ref.kind, ref.namespace, ref.name);
    const lb = policy?.lb ?? pool.lb ?? ROUND_ROBIN;
    const found = new Diagnostics();
    if (!policy && !pool.lb && pool.kind === 'InferencePool') {
      found.warning(
        'NoEndpointPicker',
        'the InferencePool has no endpointPickerRef and no LoadBalancerPolicy gives it one, so its endpoints are load-balanced round robin',
        pool.ref,
        'spec.endpointPickerRef',
      );
    }
    const backend: Backend = {
      key: `${ref.kind === 'BackendPool' ? 'bpool' : 'infpool'}/${ref.namespace}/${ref.name}`,
      kind: pool.kind,
      ref: pool.ref,
      endpoints: {
        type: 'pool',
        namespace: pool.meta.namespace,
        selector: pool.selector,
        targetPorts: pool.targetPorts,
        shadowService: shadowServiceName(pool.kind, pool.meta.name),
      },
      h2c: pool.h2c,
      lb,
      lbFrom: policy ? policy.ref : pool.lb ? pool.ref : 'default',
    };
    this.known(backend, found.list, this.attachPickers(backend, policy?.ref ?? pool.ref));
    this.cache.set(cacheKey, backend);
    return { ok: true, backend };
  }

  private service(ref: BackendRef): Resolution {
    if (ref.port === undefined)
      return { ok: false, problem: { reason: 'BackendNotFound', message: `backendRef to Service ${ref.namespace}/${ref.name} needs a port` } };
    const cacheKey = `Service/${ref.namespace}/${ref.name}/${ref.port}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return { ok: true, backend: cached };
    const service = this.inputs.services.get(key(ref.namespace, ref.name));
    if (!service) return { ok: false, problem: { reason: 'BackendNotFound', message: `Service ${ref.namespace}/${ref.name} not found` } };
    if (service.type === 'ExternalName') {
      return {
        ok: false,
        problem: { reason: 'InvalidKind', message: `Service ${ref.namespace}/${ref.name} is of type ExternalName, which Gateway API backends do not support` },
      };
    }
    const servicePort = service.ports.find((p) => p.port === ref.port);
    if (!servicePort) return { ok: false, problem: { reason: 'BackendNotFound', message: `Service ${ref.namespace}/${ref.name} has no port ${ref.port}` } };
    const tls = this.tls.forServicePort(ref.namespace, ref.name, servicePort.name);
    if (tls && !tls.ok) return { ok: false, problem: { reason: 'InvalidBackendTLS', message: tls.message } };
    const policy = this.policies.policyFor(SERVICE, ref.namespace, ref.name, servicePort.name);
    const backend: Backend = {
      key: `svc/${ref.namespace}/${ref.name}/${ref.port}`,
      kind: 'Service',
      ref: service.ref,
      endpoints: {
        type: 'service',
        namespace: ref.namespace,
        service: ref.name,
        port: servicePort.port,
        portName: servicePort.name ?? '',
        targetPort: targetPortOf(servicePort),
        headless: service.headless,
      },
      h2c: HTTP2_APP_PROTOCOLS.includes(servicePort.appProtocol ?? ''),
      lb: policy?.lb ?? ROUND_ROBIN,
      lbFrom: policy ? policy.ref : 'default',
    };
    if (servicePort.appProtocol === 'kubernetes.io/ws') backend.websocket = true;
    if (tls) backend.tls = tls.tls;
    this.known(backend, [], policy ? this.attachPickers(backend, policy.ref) : undefined);
    this.cache.set(cacheKey, backend);
    return { ok: true, backend };
  }

  private known(backend: Backend, diagnostics: Diagnostic[], pickerOwner: string | undefined): void {
    this.byKey.set(backend.key, backend);
    this.firstSeen.set(backend.key, pickerOwner === undefined ? { diagnostics } : { diagnostics, pickerOwner });
  }

  /** Resolves the picker refs of an External load balancer, in the namespace of their owner; returns the owner's key. */
  private attachPickers(backend: Backend, owner: ObjectRef): string | undefined {
    const ext = backend.lb.external;
    if (!ext) return undefined;
    const ns = owner.namespace ?? '';
    const cacheKey = describeRef(owner);
    let entry = this.pickerSets.get(cacheKey);
    if (!entry) {
      const pickers: Picker[] = [];
      const problems: PickerProblem[] = [];
      for (const ref of ext.refs) {
        const problem = (message: string) => problems.push({ ref, message });
        if (ref.group !== '' || ref.kind !== SERVICE) {
          problem(`picker kind ${groupKind(ref.group, ref.kind)} is not supported; a picker must be a Service`);
          continue;
        }
        const service = this.inputs.services.get(key(ns, ref.name));
        const port = service?.ports.find((p) => p.port === ref.port);
        if (!service) problem(`picker Service ${ns}/${ref.name} not found`);
        else if (service.type === 'ExternalName') problem(`picker Service ${ns}/${ref.name} is of type ExternalName, which is not supported`);
        else if (!port) problem(`picker Service ${ns}/${ref.name} has no port ${ref.port ?? ''}`);
        else {
          const picker: Picker = {
            namespace: ns,
            service: ref.name,
            port: port.port,
            portName: port.name ?? '',
            targetPort: targetPortOf(port),
            headless: service.headless,
          };
          if (service.selector) picker.selector = service.selector;
          pickers.push(picker);
        }
      }
      const found = new Diagnostics();
      for (const p of problems) found.error('PickerNotFound', p.message, owner, p.ref.path);
      entry = { problems, diagnostics: found.list };
      if (pickers.length > 0) {
        const k = `picker/${ns}/${pickers.map((p) => `${p.service}:${p.port}`).join(',')}`;
        entry.set = this.pickerSetsByKey.get(k) ?? { key: k, owner, pickers };
        this.pickerSetsByKey.set(k, entry.set);
      }
      this.pickerSets.set(cacheKey, entry);
    }
    if (entry.set) backend.pickers = entry.set.key;
    return cacheKey;
  }

  /** The backend of this key, once some reference resolved to it. */
  backend(key: string): Backend | undefined {
    return this.used.has(key) ? this.byKey.get(key) : undefined;
  }

  /** The picker set a backend asks, once resolved. */
  pickerSet(key: string): PickerSet | undefined {
    return this.pickerSetsByKey.get(key);
  }

  /** Problems with the pickers an object's stanza names, once a backend using it was resolved. */
  pickerProblems(owner: ObjectRef): PickerProblem[] {
    const k = describeRef(owner);
    return this.usedOwners.has(k) ? (this.pickerSets.get(k)?.problems ?? []) : [];
  }
}

/**
 * One Backends across resolves while `epoch` stays: its owner bumps it on any change but to
 * EndpointSlices and to routes other than GRPCRoutes (those turn backends to HTTP/2), the changes
 * a resolution does not read.
 */
export class BackendsMemo {
  epoch = 0;
  private held?: { epoch: number; backends: Backends };

  for(inputs: Inputs, diags: Diagnostics): Backends {
    if (this.held?.epoch === this.epoch) {
      this.held.backends.begin(diags);
      return this.held.backends;
    }
    const backends = new Backends(inputs, diags);
    this.held = { epoch: this.epoch, backends };
    return backends;
  }
}

/** Whether a backend asks a picker on its routes: External, with at least one picker resolved. */
export function usesPicker(b: Backend): boolean {
  return b.lb.type === 'External' && b.pickers !== undefined;
}
