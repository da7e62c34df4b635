import type { Writable } from 'node:stream';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON object per line, the shape log collectors parse without configuration. Lines logged in
 * the same turn of the event loop go out in one write: stdout on a pipe writes synchronously, and
 * a write per request cost the webhook a measurable share of its throughput under load. A write
 * error (a closed pipe) is dropped: losing a log line must never take a request down with it.
 */
export function jsonLogger(stream: Writable, minLevel: LogLevel = 'info'): Logger {
  stream.on('error', () => {});
  let pending = '';
  const flush = () => {
    const text = pending;
    pending = '';
    if (!stream.destroyed) stream.write(text);
  };
  return {
    log(level, msg, fields) {
      if (RANK[level] < RANK[minLevel]) return;
      if (pending === '') setImmediate(flush);
      pending += `${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`;
    },
  };
}

export const silentLogger: Logger = { log() {} };
