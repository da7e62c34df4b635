// JSON logs through pino, one object per line in the shape log collectors parse without
// configuration: {"level":"info","time":"2026-05-01T10:00:00.000Z","msg":"...",...fields}.
import { pino, type DestinationStream, type Logger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LoggerOptions {
  /** The lowest level written; 'silent' writes nothing. Default 'info'. */
  level?: LogLevel | 'silent';
  /**
   * Where the lines go. A file descriptor or a path (and `process.stdout`, as file descriptor 1)
   * is written asynchronously: lines logged while a write is under way leave together in the
   * next one, so a busy server does not pay a system call per line. Any other stream is written
   * line by line. Default: standard output.
   */
  destination?: number | string | DestinationStream;
  /** Fields on every line, e.g. `{ component: 'webhook' }`. */
  base?: Record<string, unknown>;
}

function destinationOf(target: number | string | DestinationStream): DestinationStream {
  const dest = target === process.stdout ? 1 : target;
  const stream = typeof dest === 'object' ? dest : pino.destination({ dest, sync: false });
  // A failed write (a closed pipe, a destroyed stream) loses that line; it must never take a
  // request, or the process, down with it.
  (stream as Partial<NodeJS.EventEmitter>).on?.('error', () => {});
  return stream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      // No pid or hostname: the container runtime and the collector know where a line came from.
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destinationOf(options.destination ?? 1),
  );
}
