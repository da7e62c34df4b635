export { createWebhookServer, type CloseOptions, type WebhookServer, type WebhookServerOptions } from './server.js';
export {
  BadRequestError,
  MAX_JSON_DEPTH,
  invalidStatus,
  parseAdmissionReview,
  reviewAdmission,
  type ReviewOptions,
  type ReviewResult,
  type Verdict,
} from './admission.js';
export { applyPatch, diff, escapePointerToken, type DiffOptions, type PatchOperation } from './json-patch.js';
export { Counter, Gauge, Histogram, LATENCY_BUCKETS, METRICS_CONTENT_TYPE, WebhookMetrics } from './metrics.js';
export { jsonLogger, silentLogger, type LogLevel, type Logger } from './log.js';
export { CertificateWatcher, MIN_TLS_VERSION, loadKeyPair, type CertificateWatcherOptions, type KeyPair } from './tls.js';
export { HttpError, MAX_BODY_BYTES } from './body.js';
export * from './types.js';
