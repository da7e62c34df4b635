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
export { MAX_CAUSES, MAX_WARNINGS_TOTAL, boundWarnings } from './bounds.js';
export { applyPatch, diff, escapePointerToken, type DiffOptions, type PatchOperation } from './json-patch.js';
export { LATENCY_BUCKETS } from './metrics.js';
export { CertificateWatcher, MIN_TLS_VERSION, loadKeyPair, type CertificateWatcherOptions, type KeyPair } from './tls.js';
export { HttpError, MAX_BODY_BYTES } from './body.js';
export * from './types.js';
