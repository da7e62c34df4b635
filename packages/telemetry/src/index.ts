// @extlb/telemetry: the metrics registry, JSON logger and /metrics handler every extlb server
// (webhook, picker, controller) sets up the same way.
export { createRegistry, metricsHandler, type RegistryOptions } from './metrics.js';
export { createLogger, type LoggerOptions, type LogLevel } from './log.js';
export type { Logger } from 'pino';
export { Counter, Gauge, Histogram, Registry } from 'prom-client';
