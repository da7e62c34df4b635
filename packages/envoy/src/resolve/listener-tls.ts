// The TLS of an HTTPS listener: the certificates it serves — only those whose references resolve,
// so a certificate the Gateway may not use never reaches the output — and the client-certificate
// validation the Gateway asks for on the listener's port, with only the CA bundles that resolve.
// What does not resolve becomes the listener's ResolvedRefs (and, for CAs, Accepted) condition.
import type { DiagnosticCode, Diagnostics } from '../diagnostics.js';
import type { FrontendValidation, GatewayRecord, ListenerSpec, ObjectReference } from '../read/index.js';
import type { RefFault, TlsRefs } from './certificates.js';
import type { CertificateRef, ServerTls } from './ir.js';
import type { Verdict } from './outcomes.js';

export interface ListenerTls extends ServerTls {
  /** Why ResolvedRefs is False, in the order the references are written. */
  problems: Verdict[];
  /** Validation is asked for and no CA bundle resolves: Accepted=False/NoValidCACertificate. */
  noValidCa?: string;
}

/** The validation a listener's port gets: its `perPort` entry when there is one, else `default`. */
function frontendValidation(gw: GatewayRecord, port: number): FrontendValidation | undefined {
  const frontend = gw.tls.frontend;
  const entry = frontend?.perPort.find((p) => p.port === port);
  return entry ? entry.validation : frontend?.default;
}

/** Per fault, the listener's ResolvedRefs reason, which is also the diagnostic's code. */
type Reasons = Record<RefFault['fault'], DiagnosticCode>;
const CERTIFICATE_REASONS: Reasons = { kind: 'InvalidCertificateRef', notPermitted: 'RefNotPermitted', invalid: 'InvalidCertificateRef' };
const CA_REASONS: Reasons = { kind: 'InvalidCACertificateKind', notPermitted: 'RefNotPermitted', invalid: 'InvalidCACertificateRef' };

/** The references that resolve, reporting each one that does not. */
function usable(
  gw: GatewayRecord,
  refs: ObjectReference[],
  check: (ref: ObjectReference) => RefFault | undefined,
  reasons: Reasons,
  problems: Verdict[],
  diags: Diagnostics,
): CertificateRef[] {
  const out: CertificateRef[] = [];
  for (const ref of refs) {
    const fault = check(ref);
    if (!fault) {
      if (!out.some((c) => c.namespace === ref.namespace && c.name === ref.name)) out.push({ namespace: ref.namespace, name: ref.name });
      continue;
    }
    const reason = reasons[fault.fault];
    diags.error(reason, fault.message, gw.ref, ref.path);
    problems.push({ status: false, reason, message: `${ref.path}: ${fault.message}` });
  }
  return out;
}

export function listenerTls(gw: GatewayRecord, l: ListenerSpec, tlsRefs: TlsRefs, diags: Diagnostics): ListenerTls {
  const problems: Verdict[] = [];
  const certificates = usable(gw, l.tls?.certificateRefs ?? [], (r) => tlsRefs.keyPair(gw, r), CERTIFICATE_REASONS, problems, diags);
  const out: ListenerTls = { certificates, problems };
  const validation = frontendValidation(gw, l.port);
  if (!validation) return out;
  const caCertificates = usable(gw, validation.caCertificateRefs, (r) => tlsRefs.caBundle(gw, r), CA_REASONS, problems, diags);
  if (caCertificates.length === 0) {
    // Serving without the client validation asked for would let in clients it should refuse.
    out.noValidCa = `${validation.path}: no CA certificate reference can be used, so client certificates cannot be validated and the listener is not served`;
  } else out.clientValidation = { mode: validation.mode, caCertificates };
  return out;
}
