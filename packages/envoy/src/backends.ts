// Resolves HTTPRoute backendRefs to backends and decides each backend's effective load balancer:
// a LoadBalancerPolicy on the target (oldest wins), else the pool's own stanza, else round robin.
import { type Diagnostics, compare, describeRef, type ObjectRef } from './diagnostics.js';
import { GATEWAY_GROUP, byAge, groupKind, key, type BackendRef, type Inputs, type Policy, type Pool, type Service, type ServicePort } from './model.js';
import { GROUP, INFERENCE_GROUP } from '@extlb/types';
import { ROUND_ROBIN, type LoadBalancer, type PickerRef } from './loadbalancer.js';

export interface Picker {
  ref: PickerRef;
  service: Service;
  port: number;
}

export interface Pickers {
  /** The cluster that reaches the pickers, one priority per resolved ref; undefined when none resolved. */
  cluster?: string;
  resolved: Picker[];
  problems: { ref: PickerRef; message: string }[];
  /** The object whose stanza names the pickers. */
  owner: ObjectRef;
}

export interface Backend {
  /** Envoy cluster name; stable and unique per backend. */
  cluster: string;
  kind: 'Service' | 'BackendPool' | 'InferencePool';
  ref: ObjectRef;
  service?: Service;
  servicePort?: ServicePort;
  pool?: Pool;
  h2c: boolean;
  lb: LoadBalancer;
  /** Where the load balancer came from: a policy, the pool itself, or the default. */
  lbFrom: ObjectRef | 'default';
  pickers?: Pickers;
}

export type Resolution = { ok: true; backend: Backend } | { ok: false; reason: 'InvalidKind' | 'BackendNotFound' | 'RefNotPermitted'; message: string };

/** How one policy fared on one of its targets. */
export interface TargetOutcome {
  index: number;
  found: boolean;
  winner: boolean;
  /** The established policy when this one lost. */
  establishedBy?: ObjectRef;
}

const SERVICE = 'Service';

function targetKey(kind: string, namespace: string, name: string, section?: string): string {
  return `${kind}/${namespace}/${name}#${section ?? ''}`;
}

export class Backends {
  private readonly winners = new Map<string, Policy>();
  readonly outcomes = new Map<Policy, TargetOutcome[]>();
  private readonly cache = new Map<string, Backend>();
  private readonly pickerCache = new Map<string, Pickers>();

  constructor(
    private readonly inputs: Inputs,
    private readonly diags: Diagnostics,
    private readonly clusterDomain: string,
  ) {
    this.attachPolicies();
  }

  private attachPolicies(): void {
    const contenders = new Map<string, Policy[]>();
    for (const policy of this.inputs.policies) {
      const outcomes: TargetOutcome[] = [];
      for (const t of policy.targets) {
        const ns = policy.meta.namespace;
        let found: boolean;
        if (t.kind === SERVICE) {
          const svc = this.inputs.services.get(key(ns, t.name));
          found = svc !== undefined && (t.sectionName === undefined || svc.ports.some((p) => p.name === t.sectionName));
          if (svc && !found)
            this.diags.error(
              'TargetNotFound',
              `Service ${ns}/${t.name} has no port named "${t.sectionName}"`,
              policy.ref,
              `spec.targetRefs[${t.index}].sectionName`,
            );
        } else {
          found = this.inputs.pools.has(`${t.kind}/${key(ns, t.name)}`);
        }
        if (!found && !(t.kind === SERVICE && this.inputs.services.has(key(ns, t.name)))) {
          this.diags.error('TargetNotFound', `${groupKind(t.group, t.kind)} ${ns}/${t.name} not found`, policy.ref, `spec.targetRefs[${t.index}]`);
        }
        outcomes.push({ index: t.index, found, winner: false });
        if (found && policy.lb) {
          const k = targetKey(t.kind, ns, t.name, t.sectionName);
          const list = contenders.get(k) ?? [];
          if (!list.includes(policy)) list.push(policy);
          contenders.set(k, list);
        }
      }
      this.outcomes.set(policy, outcomes);
    }
    for (const [k, list] of [...contenders].sort(([a], [b]) => compare(a, b))) {
      const [winner, ...losers] = [...list].sort(byAge);
      if (!winner) continue;
      this.winners.set(k, winner);
      const [kind, ns, rest] = k.split('/') as [string, string, string];
      const [name, section] = rest.split('#') as [string, string];
      const matches = (p: Policy) => p.targets.filter((t) => t.kind === kind && t.name === name && (t.sectionName ?? '') === section);
      for (const t of matches(winner)) {
        const o = this.outcomes.get(winner)?.find((x) => x.index === t.index);
        if (o) o.winner = true;
      }
      for (const loser of losers) {
        for (const t of matches(loser)) {
          const o = this.outcomes.get(loser)?.find((x) => x.index === t.index);
          if (o) o.establishedBy = winner.ref;
        }
        this.diags.warning(
          'Conflicted',
          `${kind} ${ns}/${name}${section ? ` port ${section}` : ''} is already targeted by ${describeRef(winner.ref)}, which is older (or first by name); this policy is not applied to it`,
          loser.ref,
          'spec.targetRefs',
        );
      }
    }
  }

  /** The policy that applies to a target, if any; a port-specific policy beats a whole-Service one. */
  private policyFor(kind: string, namespace: string, name: string, section?: string): Policy | undefined {
    if (section !== undefined) {
      const specific = this.winners.get(targetKey(kind, namespace, name, section));
      if (specific) return specific;
    }
    return this.winners.get(targetKey(kind, namespace, name));
  }

  private permitted(route: ObjectRef, ref: BackendRef): boolean {
    if (ref.namespace === route.namespace) return true;
    return (this.inputs.grants.get(ref.namespace) ?? []).some(
      (g) =>
        g.from.some((f) => f.group === GATEWAY_GROUP && f.kind === 'HTTPRoute' && f.namespace === route.namespace) &&
        g.to.some((t) => t.group === ref.group && t.kind === ref.kind && (t.name === undefined || t.name === ref.name)),
    );
  }

  /** Resolves a backendRef written in `route`; diagnostics are the caller's to report. */
  resolve(route: ObjectRef, ref: BackendRef): Resolution {
    const gk = groupKind(ref.group, ref.kind);
    const isService = ref.group === '' && ref.kind === SERVICE;
    const isPool = (ref.group === GROUP && ref.kind === 'BackendPool') || (ref.group === INFERENCE_GROUP && ref.kind === 'InferencePool');
    if (!isService && !isPool)
      return {
        ok: false,
        reason: 'InvalidKind',
        message: `backendRef kind ${gk} is not supported; extlb converts Service, BackendPool.${GROUP} and InferencePool.${INFERENCE_GROUP}`,
      };
    if (!this.permitted(route, ref)) {
      return {
        ok: false,
        reason: 'RefNotPermitted',
        message: `backendRef to ${gk} ${ref.namespace}/${ref.name} is not permitted: no ReferenceGrant in namespace ${ref.namespace} allows HTTPRoutes from namespace ${route.namespace ?? ''}`,
      };
    }
    if (isService) return this.resolveService(ref);
    const cacheKey = `${ref.kind}/${ref.namespace}/${ref.name}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return { ok: true, backend: cached };
    const pool = this.inputs.pools.get(`${ref.kind}/${key(ref.namespace, ref.name)}`);
    if (!pool) return { ok: false, reason: 'BackendNotFound', message: `${gk} ${ref.namespace}/${ref.name} not found` };
    const policy = this.policyFor(ref.kind, ref.namespace, ref.name);
    const lb = policy?.lb ?? pool.lb ?? ROUND_ROBIN;
    const backend: Backend = {
      cluster: `${ref.kind === 'BackendPool' ? 'bpool' : 'infpool'}/${ref.namespace}/${ref.name}`,
      kind: pool.kind,
      ref: pool.ref,
      pool,
      h2c: pool.h2c,
      lb,
      lbFrom: policy ? policy.ref : pool.lb ? pool.ref : 'default',
    };
    this.attachPickers(backend, policy?.ref ?? pool.ref);
    this.cache.set(cacheKey, backend);
    return { ok: true, backend };
  }

  private resolveService(ref: BackendRef): Resolution {
    if (ref.port === undefined) return { ok: false, reason: 'BackendNotFound', message: `backendRef to Service ${ref.namespace}/${ref.name} needs a port` };
    const cacheKey = `Service/${ref.namespace}/${ref.name}/${ref.port}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return { ok: true, backend: cached };
    const service = this.inputs.services.get(key(ref.namespace, ref.name));
    if (!service) return { ok: false, reason: 'BackendNotFound', message: `Service ${ref.namespace}/${ref.name} not found` };
    if (service.type === 'ExternalName')
      return {
        ok: false,
        reason: 'InvalidKind',
        message: `Service ${ref.namespace}/${ref.name} is of type ExternalName, which Gateway API backends do not support`,
      };
    const servicePort = service.ports.find((p) => p.port === ref.port);
    if (!servicePort) return { ok: false, reason: 'BackendNotFound', message: `Service ${ref.namespace}/${ref.name} has no port ${ref.port}` };
    const policy = this.policyFor(SERVICE, ref.namespace, ref.name, servicePort.name);
    const backend: Backend = {
      cluster: `svc/${ref.namespace}/${ref.name}/${ref.port}`,
      kind: 'Service',
      ref: service.ref,
      service,
      servicePort,
      h2c: servicePort.appProtocol === 'kubernetes.io/h2c',
      lb: policy?.lb ?? ROUND_ROBIN,
      lbFrom: policy ? policy.ref : 'default',
    };
    if (policy) this.attachPickers(backend, policy.ref);
    this.cache.set(cacheKey, backend);
    return { ok: true, backend };
  }

  /** Resolves the picker refs of an External load balancer, in the namespace of their owner. */
  private attachPickers(backend: Backend, owner: ObjectRef): void {
    const ext = backend.lb.external;
    if (!ext) return;
    const ns = owner.namespace ?? '';
    const cacheKey = describeRef(owner);
    let pickers = this.pickerCache.get(cacheKey);
    if (!pickers) {
      pickers = { resolved: [], problems: [], owner };
      for (const ref of ext.refs) {
        if (ref.group !== '' || ref.kind !== SERVICE) {
          pickers.problems.push({ ref, message: `picker kind ${groupKind(ref.group, ref.kind)} is not supported; a picker must be a Service` });
          continue;
        }
        const service = this.inputs.services.get(key(ns, ref.name));
        if (!service) {
          pickers.problems.push({ ref, message: `picker Service ${ns}/${ref.name} not found` });
          continue;
        }
        if (service.type === 'ExternalName') {
          pickers.problems.push({ ref, message: `picker Service ${ns}/${ref.name} is of type ExternalName, which is not supported` });
          continue;
        }
        if (!service.ports.some((p) => p.port === ref.port)) {
          pickers.problems.push({ ref, message: `picker Service ${ns}/${ref.name} has no port ${ref.port ?? ''}` });
          continue;
        }
        pickers.resolved.push({ ref, service, port: ref.port ?? 0 });
      }
      if (pickers.resolved.length > 0) {
        pickers.cluster = `picker/${ns}/${pickers.resolved.map((p) => `${p.ref.name}:${p.port}`).join(',')}`;
      }
      for (const p of pickers.problems) this.diags.error('PickerNotFound', p.message, owner, p.ref.path);
      this.pickerCache.set(cacheKey, pickers);
    }
    backend.pickers = pickers;
  }

  /** DNS name of a picker Service inside the cluster. */
  serviceHost(service: Service): string {
    return `${service.meta.name}.${service.meta.namespace}.svc.${this.clusterDomain}`;
  }

  /** The picker set an object's stanza names, once a backend using it was resolved. */
  pickersOf(owner: ObjectRef): Pickers | undefined {
    return this.pickerCache.get(describeRef(owner));
  }
}
