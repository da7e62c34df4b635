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
export {
  EndpointPicker,
  PROFILES,
  isProfileName,
  restrictToSubset,
  type Pick,
  type PickDecision,
  type PickRequest,
  type PickerOptions,
  type PickerStats,
  type ProfileName,
} from './picker.js';
export { PromptReader, type PromptInfo, type PromptOptions } from './prompt.js';
export {
  DEFAULT_LOAD_AWARE,
  SCORER_TYPES,
  SHEDDING_MODES,
  isSaturated,
  rank,
  rendezvousWeight,
  type LoadAwareConfig,
  type PrefixConfig,
  type RankContext,
  type Ranking,
  type ScorerConfig,
  type ScorerType,
  type SheddingConfig,
  type SheddingMode,
} from './scoring.js';
export {
  DEFAULT_SCRAPE,
  MetricsScraper,
  SERVER_METRICS,
  SIGNAL_STATES,
  readSignals,
  type EndpointSignals,
  type LoraInfo,
  type MetricNames,
  type ScrapeOptions,
  type ServerKind,
  type SignalSource,
  type SignalState,
} from './signals.js';
export { formatSelector, matches, parsePage, parseSelector, type ParsedPage, type Sample, type Selector } from './prometheus.js';
export { ConfigError, defaultConfig, parsePickerConfig, type ConfigProblem, type PickerConfig } from './config.js';
export { FIXED_ANSWERS, WireError, decodeProcessingRequest, encodeEndpointAnswer, encodeStreamedBody } from './wire.js';
export { InvalidMessage, PhaseOrder, readMessage, tolerantDecoding, type Phase, type PickerMessage } from './requests.js';
export {
  openExchange,
  serveExchange,
  type Answers,
  type EncodedOrMessage,
  type Exchange,
  type StreamCounters,
  type StreamEvents,
  type StreamPort,
} from './stream.js';
export { registerPickerMetrics } from './metrics.js';
export {
  GRPC_TRANSPORTS,
  createProcessHandler,
  processStreams,
  endpointAnswer,
  splitHostPort,
  startPicker,
  type AnswerWith,
  type BodyMode,
  type GrpcTransport,
  type HandlerOptions,
  type OpenProcessStream,
  type PickerServerOptions,
  type RunningPicker,
} from './server.js';
export {
  HEALTH_SERVICES,
  SERVING_STATUS,
  WHOLE_SERVER,
  grpcJsHealth,
  healthHandlers,
  healthService,
  pickerHealth,
  type HealthService,
  type HealthState,
} from './health.js';
export { H2GrpcServer, serverStreamingMethod, unaryMethod, type CallEvents, type CallPort, type CallStatus, type H2Method } from './h2-server.js';
export { HEALTH_SERVICE, loadProtos, type Protos } from './protos.js';
export type * from './messages.js';
export { fromStruct, fromValue, headerText, setHeader, toStruct, toValue } from './messages.js';
export { RULES, type Rule, type RuleId } from './conformance/rules.js';
export { runConformance, type ConformanceOptions, type ConformanceReport, type RuleResult, type RuleStatus } from './conformance/kit.js';
export { formatReportText, formatReportYaml } from './conformance/report.js';
export { ExtProcSession, type Received } from './conformance/session.js';
export {
  DEFAULT_BENCH,
  REFERENCE_PICKERS,
  REPLICA_HIT_MARGIN,
  formatBenchReport,
  runPickerBench,
  type BenchOptions,
  type BenchReport,
  type PickerResult,
  type PickerUnderTest,
  type RateRow,
} from './benchmark/run.js';
export { DEFAULT_COST_MODEL, SimulatedModelServer, type CostModel } from './benchmark/model-server.js';
export { DEFAULT_WORKLOAD, SharedPrefixWorkload, type WorkloadOptions } from './benchmark/workload.js';
