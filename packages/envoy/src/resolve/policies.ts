// GEP-713 arbitration for Direct policies (LoadBalancerPolicy, BackendTLSPolicy): on each target
// the oldest policy wins (then `namespace/name`), and a policy for one Service port beats one for
// the whole Service.
import { type Diagnostics, type ObjectRef, describeRef } from '../diagnostics.js';
import { compare } from '../json.js';
import { type Inputs, type Meta, type Policy, type PolicyTarget, type RouteGroupKind, byAge, key } from '../read/index.js';
import { type Verdict, verdict } from './outcomes.js';

/** How one policy fared on one of its targets. */
export interface TargetOutcome {
  index: number;
  found: boolean;
  winner: boolean;
  /** The established policy when this one lost. */
  establishedBy?: ObjectRef;
  /** A whole-Service winner: the ports where a policy naming that port applies instead. */
  overridden: { port: string; by: ObjectRef }[];
  /** Whether it applies to some of the target (a pool, or at least one port of a Service). */
  effective: boolean;
  /** The target's kind is not one the policy kind may name. */
  unsupported?: true;
}

/** A Direct policy as arbitration sees it. */
export interface DirectPolicy {
  ref: ObjectRef;
  meta: Meta;
  targets: PolicyTarget[];
}

export interface ArbitrationRules<P extends DirectPolicy> {
  /** Whether a policy takes part (a policy whose stanza could not be read does not). */
  contends(policy: P): boolean;
  /** The kinds a target may be; any other is reported and skipped. Unset: Service and the pools. */
  kinds?: readonly RouteGroupKind[];
}

const SERVICE = 'Service';

function targetKey(kind: string, namespace: string, name: string, section?: string): string {
  return `${kind}/${namespace}/${name}#${section ?? ''}`;
}

/** `LoadBalancerPolicy ns/a (port http), ...` */
export function describeOverrides(overridden: { port: string; by: ObjectRef }[]): string {
  return overridden.map((x) => `${describeRef(x.by)} (port ${x.port})`).join(', ');
}

function groupKind(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

export class PolicyIndex<P extends DirectPolicy = Policy> {
  private readonly winners = new Map<string, P>();
  readonly outcomes = new Map<P, TargetOutcome[]>();

  constructor(policies: readonly P[], inputs: Inputs, diags: Diagnostics, rules: ArbitrationRules<P>) {
    const contenders = new Map<string, P[]>();
    for (const policy of policies) {
      const outcomes: TargetOutcome[] = [];
      for (const t of policy.targets) {
        const ns = policy.meta.namespace;
        const path = `spec.targetRefs[${t.index}]`;
        let found: boolean;
        if (rules.kinds && !rules.kinds.some((k) => k.group === t.group && k.kind === t.kind)) {
          const allowed = rules.kinds.map((k) => groupKind(k.group, k.kind)).join(', ');
          diags.warning(
            'UnsupportedValue',
            `a ${groupKind(t.group, t.kind)} target is not supported; a ${policy.ref.kind} applies to ${allowed}`,
            policy.ref,
            path,
          );
          outcomes.push({ index: t.index, found: false, winner: false, overridden: [], effective: false, unsupported: true });
          continue;
        }
        if (t.kind === SERVICE) {
          const svc = inputs.services.get(key(ns, t.name));
          found = svc !== undefined && (t.sectionName === undefined || svc.ports.some((p) => p.name === t.sectionName));
          if (!svc) diags.error('TargetNotFound', `${groupKind(t.group, t.kind)} ${ns}/${t.name} not found`, policy.ref, path);
          else if (!found) diags.error('TargetNotFound', `Service ${ns}/${t.name} has no port named "${t.sectionName}"`, policy.ref, `${path}.sectionName`);
        } else {
          found = inputs.pools.has(`${t.kind}/${key(ns, t.name)}`);
          if (!found) diags.error('TargetNotFound', `${groupKind(t.group, t.kind)} ${ns}/${t.name} not found`, policy.ref, path);
        }
        outcomes.push({ index: t.index, found, winner: false, overridden: [], effective: false });
        if (found && rules.contends(policy)) {
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
      const matches = (p: P) => p.targets.filter((t) => t.kind === kind && t.name === name && (t.sectionName ?? '') === section);
      for (const t of matches(winner)) {
        const o = this.outcomes.get(winner)?.find((x) => x.index === t.index);
        if (o) {
          o.winner = true;
          o.effective = true;
        }
      }
      for (const loser of losers) {
        for (const t of matches(loser)) {
          const o = this.outcomes.get(loser)?.find((x) => x.index === t.index);
          if (o) o.establishedBy = winner.ref;
        }
        diags.warning(
          'Conflicted',
          `${kind} ${ns}/${name}${section ? ` port ${section}` : ''} is already targeted by ${describeRef(winner.ref)}, which is older (or first by name); this policy is not applied to it`,
          loser.ref,
          'spec.targetRefs',
        );
      }
    }
    this.yieldToPortPolicies(inputs, diags);
  }

  /**
   * A policy for a whole Service yields, port by port, to a policy naming that port (GEP-713: the
   * more specific target wins). Where that leaves it no port, it applies nowhere: Conflicted.
   */
  private yieldToPortPolicies(inputs: Inputs, diags: Diagnostics): void {
    for (const [policy, outcomes] of this.outcomes) {
      for (const o of outcomes) {
        const t = policy.targets.find((x) => x.index === o.index);
        if (!o.winner || !t || t.kind !== SERVICE || t.sectionName !== undefined) continue;
        const ns = policy.meta.namespace;
        const ports = inputs.services.get(key(ns, t.name))?.ports ?? [];
        for (const port of ports) {
          const specific = port.name === undefined ? undefined : this.winners.get(targetKey(SERVICE, ns, t.name, port.name));
          if (specific && port.name !== undefined) o.overridden.push({ port: port.name, by: specific.ref });
        }
        if (ports.length === 0 || o.overridden.length < ports.length) continue;
        o.effective = false;
        diags.warning(
          'Conflicted',
          `every port of Service ${ns}/${t.name} is targeted by a policy that names the port (${describeOverrides(o.overridden)}), which is more specific; this policy applies to none of them`,
          policy.ref,
          `spec.targetRefs[${t.index}]`,
        );
      }
    }
  }

  /** The policy that applies to a target, if any; a port-specific policy beats a whole-Service one. */
  policyFor(kind: string, namespace: string, name: string, section?: string): P | undefined {
    if (section !== undefined) {
      const specific = this.winners.get(targetKey(kind, namespace, name, section));
      if (specific) return specific;
    }
    return this.winners.get(targetKey(kind, namespace, name));
  }
}

function targetName(t: PolicyTarget): string {
  return `${groupKind(t.group, t.kind)} ${t.name}${t.sectionName ? ` port ${t.sectionName}` : ''}`;
}

/** The Accepted condition arbitration gives a policy: applied to some target, or why not. */
export function arbitrationVerdict(policy: DirectPolicy, outcomes: readonly TargetOutcome[]): Verdict {
  const overridden = outcomes.flatMap((o) => o.overridden);
  if (outcomes.some((o) => o.effective)) {
    if (overridden.length === 0) return verdict(true, 'Accepted', 'Policy is accepted');
    return verdict(true, 'Accepted', `Policy is accepted; on some ports a policy that names the port applies instead: ${describeOverrides(overridden)}`);
  }
  if (overridden.length > 0)
    return verdict(false, 'Conflicted', `on every port of its target a policy that names the port applies instead: ${describeOverrides(overridden)}`);
  const establishedBy = outcomes.find((o) => o.establishedBy)?.establishedBy;
  if (establishedBy)
    return verdict(false, 'Conflicted', `every target is already targeted by ${establishedBy.kind} ${establishedBy.namespace ?? ''}/${establishedBy.name}`);
  if (outcomes.length > 0 && outcomes.every((o) => o.unsupported))
    return verdict(false, 'Invalid', `no target is of a kind a ${policy.ref.kind} applies to: ${policy.targets.map(targetName).join(', ')}`);
  return verdict(false, 'TargetNotFound', `no target found: ${policy.targets.map(targetName).join(', ')}`);
}
