export type * from './generated/types.js';
export type { ObjectMeta } from './object-meta.js';
export { EPP } from './epp.js';
export {
  API_VERSION,
  GROUP,
  INFERENCE_API_VERSION,
  INFERENCE_GROUP,
  KINDS,
  POLICY_LABEL,
  VERSION,
  isBackendPool,
  isGatewayParameters,
  isInferencePool,
  isLoadBalancerPolicy,
  kindOf,
  type KindName,
} from './kinds.js';
