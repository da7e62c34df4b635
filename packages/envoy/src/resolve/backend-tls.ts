// BackendTLSPolicy (GEP-1897): which policy applies to each Service port (GEP-713 arbitration,
// shared with LoadBalancerPolicy), what its CA references resolve to, and its conditions. A Service
// port whose policy cannot be honoured never falls back to plaintext: its backendRefs are invalid.
import { type Diagnostics, type ObjectRef, describeRef } from '../diagnostics.js';
import { parseCertificates } from '../pem.js';
import { type BackendTlsPolicy, type CaCertificateRef, type Inputs, key } from '../read/index.js';
import type { BackendTls } from './ir.js';
import { type Verdict, verdict } from './outcomes.js';
import { PolicyIndex, arbitrationVerdict } from './policies.js';

/** The only well-known CA set extlb knows: the proxy's system bundle. */
const SYSTEM = 'System';

/** What a policy's validation stanza makes of the connection, or why it cannot be honoured. */
type Settings = { ok: true; tls: BackendTls } | { ok: false; message: string };

export type TlsResolution = { ok: true; tls: BackendTls } | { ok: false; policy: ObjectRef; message: string };

interface CaProblem {
  reason: 'InvalidCACertificateRef' | 'InvalidKind';
  message: string;
  path: string;
}

interface Checked {
  settings: Settings;
  /** Why the validation stanza makes the policy invalid, before arbitration is considered. */
  invalid?: Verdict;
  caProblems: CaProblem[];
}

export class BackendTlsIndex {
  readonly arbitration: PolicyIndex<BackendTlsPolicy>;
  private readonly checked = new Map<BackendTlsPolicy, Checked>();
  /** Parsed ConfigMap bundles (PEM certificates, or why not), by `namespace/name`, so a bundle many policies share is parsed once. */
  private readonly bundles = new Map<string, string[] | string>();

  constructor(
    private readonly inputs: Inputs,
    diags: Diagnostics,
  ) {
    // A policy that cannot be honoured still takes its target: its Service must not go plaintext.
    this.arbitration = new PolicyIndex(inputs.backendTlsPolicies, inputs, diags, { contends: () => true, kinds: [{ group: '', kind: 'Service' }] });
    for (const policy of inputs.backendTlsPolicies) this.checked.set(policy, this.check(policy, diags));
  }

  private bundle(namespace: string, name: string, pem: string): string[] | string {
    const k = key(namespace, name);
    let parsed = this.bundles.get(k);
    if (parsed === undefined) {
      const certificates = parseCertificates(pem, 'ca.crt');
      parsed = typeof certificates === 'string' ? certificates : certificates.map((c) => c.toString().trim());
      this.bundles.set(k, parsed);
    }
    return parsed;
  }

  /** The certificates one reference resolves to, or the problem that makes it invalid. */
  private caCertificates(policy: BackendTlsPolicy, ref: CaCertificateRef): string[] | CaProblem {
    const ns = policy.meta.namespace;
    if (ref.group !== '' || ref.kind !== 'ConfigMap') {
      const gk = ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`;
      return { reason: 'InvalidKind', message: `${gk} is not supported as a CA certificate reference; only ConfigMap is`, path: ref.path };
    }
    const cm = this.inputs.configMaps.get(key(ns, ref.name));
    const problem = (message: string): CaProblem => ({ reason: 'InvalidCACertificateRef', message, path: ref.path });
    if (!cm) return problem(`ConfigMap ${ns}/${ref.name} not found`);
    if (cm.caCrt === undefined || cm.caCrt.trim() === '') return problem(`ConfigMap ${ns}/${ref.name} has no ca.crt`);
    const bundle = this.bundle(ns, ref.name, cm.caCrt);
    return typeof bundle === 'string' ? problem(`ConfigMap ${ns}/${ref.name}: ${bundle}`) : bundle;
  }

  private check(policy: BackendTlsPolicy, diags: Diagnostics): Checked {
    const caProblems: CaProblem[] = [];
    const trusted: string[] = [];
    for (const ref of policy.caCertificateRefs) {
      const found = this.caCertificates(policy, ref);
      if (Array.isArray(found)) trusted.push(...found);
      else caProblems.push(found);
    }
    for (const p of caProblems) diags.error(p.reason, p.message, policy.ref, p.path);
    for (const option of Object.keys(policy.options))
      diags.warning('UnsupportedValue', `option ${JSON.stringify(option)} is not supported and is ignored`, policy.ref, `spec.options[${option}]`);
    const fail = (reason: string, message: string): Checked => ({ settings: { ok: false, message }, invalid: verdict(false, reason, message), caProblems });
    if (policy.invalid !== undefined) return fail('Invalid', policy.invalid);
    const wellKnown = policy.wellKnownCACertificates;
    if (wellKnown !== undefined && wellKnown !== SYSTEM) {
      const message = `wellKnownCACertificates ${JSON.stringify(wellKnown)} is not supported; only System is`;
      diags.warning('UnsupportedValue', message, policy.ref, 'spec.validation.wellKnownCACertificates');
      return fail('Invalid', message);
    }
    if (wellKnown === undefined && trusted.length === 0) {
      return fail('NoValidCACertificate', `no CA certificate reference is valid: ${caProblems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
    }
    const tls: BackendTls = {
      policy: policy.ref,
      sni: policy.hostname,
      trust: wellKnown === SYSTEM ? { system: true } : { pem: `${trusted.join('\n')}\n` },
      // Gateway API: the hostname authenticates the backend unless subjectAltNames replace it.
      subjectAltNames:
        policy.subjectAltNames.length === 0
          ? [{ type: 'DNS', value: policy.hostname }]
          : policy.subjectAltNames.map((s) => ({ type: s.type === 'Hostname' ? 'DNS' : 'URI', value: s.value })),
    };
    return { settings: { ok: true, tls }, caProblems };
  }

  /** The TLS a Service port's connections use, when a policy applies to it. */
  forServicePort(namespace: string, service: string, portName: string | undefined): TlsResolution | undefined {
    const policy = this.arbitration.policyFor('Service', namespace, service, portName);
    const settings = policy && this.checked.get(policy)?.settings;
    if (!policy || !settings) return undefined;
    if (settings.ok) return settings;
    return {
      ok: false,
      policy: policy.ref,
      message: `${describeRef(policy.ref)} cannot be honoured (${settings.message}), so connections to it fail rather than go unencrypted`,
    };
  }

  accepted(policy: BackendTlsPolicy): Verdict {
    return this.checked.get(policy)?.invalid ?? arbitrationVerdict(policy, this.arbitration.outcomes.get(policy) ?? []);
  }

  resolvedRefs(policy: BackendTlsPolicy): Verdict {
    const problems = this.checked.get(policy)?.caProblems ?? [];
    const [first] = problems;
    if (!first) return verdict(true, 'ResolvedRefs', 'All references are resolved');
    return verdict(false, first.reason, problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
}
