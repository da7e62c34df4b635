import type { Readable, Writable } from 'node:stream';

/** Where a command reads and writes; tests pass their own streams instead of the process's. */
export interface Io {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  cwd: string;
}

/** Exit codes shared by every command: 0 success, 1 invalid input, 2 usage error. */
export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

/** Thrown for a wrong flag or argument; main prints its message and the command's usage, exits 2. */
export class UsageError extends Error {}

export function processIo(): Io {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() };
}

/** Writes text and resolves once the stream has taken it, so exit codes never cut output short. */
export function write(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * Resolves with the first SIGTERM or SIGINT. Both listeners go with it, so a second signal gets
 * Node's default handling and ends a slow shutdown at once.
 */
export function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (received: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(received);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
