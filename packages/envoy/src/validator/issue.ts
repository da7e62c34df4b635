/** One thing Envoy would refuse, at its path in the configuration. */
export interface ValidationIssue {
  path: string;
  message: string;
}
