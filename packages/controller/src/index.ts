// @extlb/controller: extlb's control plane — informers feeding @extlb/envoy's Converter, an xDS
// (ADS) server per Gateway, status and shadow Service writing by the elected leader with retries —
// and its parts.
export { Controller, type ControllerOptions } from './controller.js';
export { ApiError, KubeApi, type KubeApiOptions, ShortWatch, WatchTimeout } from './cluster/api.js';
export { type FailureReason, Informers, type InformerEvents, type InformerOptions } from './cluster/informers.js';
export { allowPlainHttp } from './cluster/kubeconfig.js';
export { MalformedResponse } from './cluster/wire.js';
export { WATCHED_KINDS, type WatchedKind } from './cluster/kinds.js';
export { LeaderElector, type LeaderElectionOptions } from './cluster/lease.js';
export { startOpsServer, type OpsServerOptions } from './ops/http.js';
export { DEFAULT_DEBUG_PORT, type DebugHealth, type DebugSource, debugHandler, isLoopback, startDebugServer } from './ops/debug.js';
export { type ConfigDump, configDump, type ProxiesReport, type ProxyStatus, type ProxyTypeStatus, proxyStatus, REDACTED, redact } from './ops/debug-state.js';
export { Scheduler, type Batch, type SchedulerOptions } from './reconcile/scheduler.js';
export { isShadowService, syncShadowService } from './reconcile/shadow.js';
export { TokenBucket, WorkQueue, type WorkQueueOptions } from './reconcile/work-queue.js';
export { mergeStatus, sameStatus } from './status/merge.js';
export { StatusWriter, type WriteReport } from './status/writer.js';
export * from './xds/index.js';
