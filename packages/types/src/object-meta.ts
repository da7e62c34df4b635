/**
 * The parts of Kubernetes ObjectMeta that extlb reads. The API server owns this schema, so it is
 * written here by hand rather than generated from schemas/.
 */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
