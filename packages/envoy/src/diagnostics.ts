// What the converter tells its caller about the input: a closed set of codes, each with a
// severity, a sentence, the object and the API-server field path it is about.
import { compare } from './json.js';

/** The object a diagnostic or status is about, as `kubectl` names it. */
export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

export type Severity = 'error' | 'warning' | 'info';

/**
 * Every code the converter emits. A code is part of the API: callers match on it, so one is only
 * ever added here (and tested in test/diagnostics.test.ts), never invented at a call site.
 */
export const DIAGNOSTIC_CODES = [
  // Reading objects
  'Invalid',
  'Duplicate',
  'IgnoredKind',
  'UnownedEndpointSlice',
  'InvalidOption',
  // GatewayClasses, Gateways and their listeners
  'InvalidParameters',
  'UnsupportedAddress',
  'InvalidClientCertificateRef',
  'InsecureFrontendValidation',
  'UnsupportedProtocol',
  'UnsupportedValue',
  'ProtocolConflict',
  'HostnameConflict',
  'RouteShadowed',
  'ListenerSetNotAllowed',
  'InvalidRouteKinds',
  // Listener TLS (InvalidCACertificateRef also for BackendTLSPolicies)
  'InvalidCertificateRef',
  'InvalidCACertificateRef',
  'InvalidCACertificateKind',
  // Route attachment
  'UnsupportedParent',
  'OtherGatewayClass',
  'ParentNotFound',
  'NoMatchingParent',
  'NotAllowedByListeners',
  'NoMatchingListenerHostname',
  // Route rules
  'UnsupportedFilter',
  'IncompatibleFilters',
  // Backends, policies and pickers
  'InvalidKind',
  'BackendNotFound',
  'InvalidBackend',
  'RefNotPermitted',
  'InvalidBackendTLS',
  'TargetNotFound',
  'Conflicted',
  'PickerNotFound',
  'NoEndpointPicker',
  // Envoy output
  'NoEndpoints',
  'StaticEndpoints',
  'LegacyNoFallback',
  'ServedEndpointNeeds138',
  'FailOpenStreaming',
  'RetryBackoff',
  'OutputTooLarge',
] as const;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

/**
 * One finding of the converter. `error` means an input object is invalid or refers to something
 * missing (the CLI exits 1); `warning` means the output works but differs from what was asked
 * (an unsupported feature, a default Envoy cannot honour); `info` explains a choice.
 */
export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  /** A sentence that does not repeat the object or the path. */
  message: string;
  object?: ObjectRef;
  /** API-server field path inside `object`, e.g. `spec.rules[0].backendRefs[1].name`. */
  path?: string;
}

export class Diagnostics {
  readonly list: Diagnostic[] = [];

  add(severity: Severity, code: DiagnosticCode, message: string, object?: ObjectRef, path?: string): void {
    const d: Diagnostic = { severity, code, message };
    if (object) d.object = object;
    if (path) d.path = path;
    this.list.push(d);
  }
  error(code: DiagnosticCode, message: string, object?: ObjectRef, path?: string): void {
    this.add('error', code, message, object, path);
  }
  warning(code: DiagnosticCode, message: string, object?: ObjectRef, path?: string): void {
    this.add('warning', code, message, object, path);
  }
  info(code: DiagnosticCode, message: string, object?: ObjectRef, path?: string): void {
    this.add('info', code, message, object, path);
  }

  /**
   * Sorted by object, then path, then message, so the output is independent of input order; the
   * same finding reached twice (a backend used by two Gateways) is reported once.
   */
  sorted(): Diagnostic[] {
    const keyed = this.list.map((d) => ({
      d,
      key: [d.object?.kind ?? '', d.object?.namespace ?? '', d.object?.name ?? '', d.path ?? '', d.code, d.message, d.severity].join('\u0000'),
    }));
    keyed.sort((a, b) => compare(a.key, b.key));
    const out: Diagnostic[] = [];
    let last: string | undefined;
    for (const { d, key } of keyed) {
      if (key !== last) out.push(d);
      last = key;
    }
    return out;
  }
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}
