export { EPP } from '@extlb/types';
export {
  DEFAULT_MAX_ENTRIES,
  DEFAULT_MAX_LENGTH,
  EndpointListError,
  describeError,
  formatEndpoint,
  formatEndpointList,
  formatIpv6,
  parseEndpoint,
  parseEndpointList,
  type Endpoint,
  type EntryError,
  type ParseOptions,
  type ParseResult,
  type ParsedEntry,
} from './codec.js';
export {
  FALLBACK_POLICIES,
  OverrideHostConfigError,
  OverrideHostSimulator,
  protocolSources,
  simulateOverrideHost,
  validateOverrideHostConfig,
  type ClusterHost,
  type FallbackPolicyName,
  type HostHealth,
  type MetadataKey,
  type OverrideEntry,
  type OverrideHostConfig,
  type OverrideHostSource,
  type SimulatedAttempt,
  type SimulatedRequest,
  type SimulationInput,
  type SimulationResult,
  type SkippedEntry,
} from './simulator.js';
export { STRATEGIES, createStrategy, isStrategyName, type Strategy, type StrategyContext, type StrategyName } from './strategies.js';
export {
  clusterEndpoints,
  endpointsFromSlices,
  fileEndpoints,
  staticEndpoints,
  type ClusterEndpointsOptions,
  type EndpointSliceLike,
  type PoolMembers,
} from './pool-members.js';
export { EndpointPicker, restrictToSubset, type Pick, type PickDecision, type PickRequest, type PickerOptions, type PickerStats } from './picker.js';
export { InvalidMessage, PhaseOrder, readMessage, tolerantDecoding, type Phase, type PickerMessage } from './requests.js';
export { serveExchange, type Exchange, type StreamCounters } from './stream.js';
export { registerPickerMetrics } from './metrics.js';
export {
  createProcessHandler,
  endpointAnswer,
  splitHostPort,
  startPicker,
  type AnswerWith,
  type BodyMode,
  type HandlerOptions,
  type PickerServerOptions,
  type RunningPicker,
} from './server.js';
export { HEALTH_SERVICES, SERVING_STATUS, WHOLE_SERVER, healthHandlers, pickerHealth, type HealthState } from './health.js';
export { HEALTH_SERVICE, loadProtos, type Protos } from './protos.js';
export type * from './messages.js';
export { fromStruct, fromValue, headerText, setHeader, toStruct, toValue } from './messages.js';
export { RULES, type Rule, type RuleId } from './conformance/rules.js';
export { runConformance, type ConformanceOptions, type ConformanceReport, type RuleResult, type RuleStatus } from './conformance/kit.js';
export { formatReportText, formatReportYaml } from './conformance/report.js';
export { ExtProcSession, type Received } from './conformance/session.js';
