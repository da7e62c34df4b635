// What a Gateway asks for beyond its listeners — infrastructure parameters and metadata,
// addresses, the client certificate it presents to backends, insecure client validation — and
// what extlb makes of each: honoured, reported as unsupported, or a reason the Gateway is not
// accepted. Nothing here is left unsaid.
import { isIP } from 'node:net';
import type { Diagnostics } from '../diagnostics.js';
import type { GatewayRecord, GatewayAddress, Inputs } from '../read/index.js';
import type { TlsRefs } from './certificates.js';
import type { CertificateRef } from './ir.js';
import { type Verdict, verdict } from './outcomes.js';
import { parametersFault } from './parameters.js';

export interface GatewaySpecOutcome {
  /** Why the Gateway is not accepted at all, when it is not. */
  rejected?: Verdict;
  /** Set when a reference of the Gateway itself (not of a listener) does not resolve. */
  unresolved?: Verdict;
  /** The addresses status reports: the ones the spec gives values for. */
  addresses: { type: string; value: string }[];
  /** The InsecureFrontendValidationMode condition, when some validation allows insecure fallback. */
  insecureFrontend?: Verdict;
  /** The Secret the proxy presents to the backends it speaks TLS to, when the reference resolved. */
  backendClientCertificate?: CertificateRef;
}

const HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i;
const SUPPORTED_ADDRESSES = ['IPAddress', 'Hostname'];

/** Why extlb cannot take an address, or undefined when it can. */
function addressFault(a: GatewayAddress): string | undefined {
  if (!SUPPORTED_ADDRESSES.includes(a.type)) return `address type ${a.type} is not supported; extlb supports ${SUPPORTED_ADDRESSES.join(' and ')}`;
  if (a.value === undefined) return undefined;
  if (a.type === 'IPAddress' && isIP(a.value) === 0) return `${JSON.stringify(a.value)} is not an IP address`;
  if (a.type === 'Hostname' && !HOSTNAME.test(a.value)) return `${JSON.stringify(a.value)} is not a hostname`;
  return undefined;
}

function rejections(gw: GatewayRecord, inputs: Inputs, diags: Diagnostics): Verdict[] {
  const out: Verdict[] = [];
  const params = gw.infrastructure.parametersRef;
  // A Gateway's parameters are local: in its own namespace.
  const message = params ? parametersFault(params, inputs, gw.meta.namespace) : undefined;
  if (params && message !== undefined) {
    diags.error('InvalidParameters', message, gw.ref, params.path);
    out.push(verdict(false, 'InvalidParameters', `${params.path}: ${message}`));
  }
  for (const a of gw.addresses) {
    const fault = addressFault(a);
    if (fault === undefined) continue;
    diags.error('UnsupportedAddress', fault, gw.ref, a.path);
    out.push(verdict(false, 'UnsupportedAddress', `${a.path}: ${fault}`));
  }
  return out;
}

/** Fields extlb reads but cannot act on: each is said once, as a warning. */
function unsupported(gw: GatewayRecord, diags: Diagnostics): void {
  // infrastructure labels and annotations go on the objects the controller provisions for the Gateway.
  for (const a of gw.addresses) {
    if (a.value !== undefined) continue;
    diags.warning(
      'UnsupportedValue',
      `the converter assigns no ${a.type}: the proxy listens on every address of its host, and the address clients use is the one routed to it`,
      gw.ref,
      a.path,
    );
  }
}

/** The backend client certificate: the Secret to present when it resolves, else why not. */
function backendClientCertificate(
  gw: GatewayRecord,
  tlsRefs: TlsRefs,
  diags: Diagnostics,
): { certificate: CertificateRef } | { unresolved: Verdict } | undefined {
  const ref = gw.tls.backendClientCertificate;
  if (!ref) return undefined;
  const fault = tlsRefs.keyPair(gw, ref);
  if (!fault) return { certificate: { namespace: ref.namespace, name: ref.name } };
  const reason = fault.fault === 'notPermitted' ? 'RefNotPermitted' : 'InvalidClientCertificateRef';
  diags.error(reason, fault.message, gw.ref, ref.path);
  return { unresolved: verdict(false, reason, `${ref.path}: ${fault.message}`) };
}

function insecureFrontend(gw: GatewayRecord, diags: Diagnostics): Verdict | undefined {
  const frontend = gw.tls.frontend;
  const validations = [frontend?.default, ...(frontend?.perPort ?? []).map((p) => p.validation)];
  const insecure = validations.filter((v) => v?.mode === 'AllowInsecureFallback').map((v) => v?.path ?? '');
  if (insecure.length === 0) return undefined;
  for (const path of insecure) {
    diags.warning(
      'InsecureFrontendValidation',
      'AllowInsecureFallback lets clients without a valid certificate in: authorizing them is left to the backends',
      gw.ref,
      `${path}.mode`,
    );
  }
  return verdict(true, 'ConfigurationChanged', `client certificate validation allows insecure fallback at ${insecure.join(', ')}`);
}

export function checkGatewaySpec(gw: GatewayRecord, inputs: Inputs, tlsRefs: TlsRefs, diags: Diagnostics): GatewaySpecOutcome {
  const out: GatewaySpecOutcome = { addresses: [] };
  const [first, ...rest] = rejections(gw, inputs, diags);
  if (first) out.rejected = verdict(false, first.reason, [first, ...rest].map((r) => r.message).join('; '));
  else out.addresses = gw.addresses.flatMap((a) => (a.value === undefined ? [] : [{ type: a.type, value: a.value }]));
  unsupported(gw, diags);
  const client = backendClientCertificate(gw, tlsRefs, diags);
  if (client && 'unresolved' in client) out.unresolved = client.unresolved;
  else if (client) out.backendClientCertificate = client.certificate;
  const insecure = insecureFrontend(gw, diags);
  if (insecure) out.insecureFrontend = insecure;
  return out;
}
