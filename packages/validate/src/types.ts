// The public result types of @extlb/validate; the webhook and the CLI code against these.

export type Operation = 'CREATE' | 'UPDATE';

export type ValidatedKind = 'BackendPool' | 'LoadBalancerPolicy' | 'InferencePool' | 'GatewayParameters';

export interface FieldError {
  /** API-server field path, e.g. "spec.targetPorts[0].number"; "" for the root. */
  field: string;
  /** apimachinery ErrorType text: "Required value", "Invalid value", "Unsupported value", ... */
  type: string;
  detail: string;
  /** The whole line as the API server prints it. */
  message: string;
}

export interface Warning {
  field: string;
  message: string;
}

export interface ValidationResult {
  /** undefined: not a kind this package validates. */
  kind: ValidatedKind | undefined;
  valid: boolean;
  /**
   * Pruned and defaulted copy; the input is never mutated. With `shareInput`, it holds the input's
   * own values wherever pruning and defaulting left them as they were.
   */
  object: unknown;
  /** The errors, in the API server's order; at most `maxErrors` of them. */
  errors: FieldError[];
  /** Errors found past `maxErrors`: counted, not listed. */
  omittedErrors: number;
  /** Unknown fields (sorted by field), then the semantic warnings; no two alike. */
  warnings: Warning[];
}

export interface ValidateOptions {
  operation?: Operation;
  oldObject?: unknown;
  /**
   * List at most this many errors and only count the rest (`omittedErrors`): a caller that shows
   * a few errors of a hostile object then pays nothing to format the others. Default: all.
   */
  maxErrors?: number;
  /**
   * Let the result's `object` share the values validation leaves unchanged with the input, instead
   * of copying them: for a caller that changes neither afterwards, a review of 3 MiB of labels or
   * managedFields then costs no copy of them. Default: the result shares nothing with the input.
   */
  shareInput?: boolean;
}
