/** Every rule the conformance kit checks, in report order; each group's file says how it is checked. */
import { ENDPOINT_RULES } from './groups/endpoint.js';
import { HEALTH_RULES } from './groups/health.js';
import { SCOPE_RULES } from './groups/scope.js';
import { SERVED_RULES } from './groups/served.js';
import { STREAMING_RULES } from './groups/streaming.js';
import { SUBSET_RULES } from './groups/subset.js';
import { TRANSPORT_RULES } from './groups/transport.js';

export type { Rule } from './rule.js';

export const RULES = [...TRANSPORT_RULES, ...ENDPOINT_RULES, ...SUBSET_RULES, ...SCOPE_RULES, ...SERVED_RULES, ...STREAMING_RULES, ...HEALTH_RULES] as const;

export type RuleId = (typeof RULES)[number]['id'];
