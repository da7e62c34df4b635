import type { Io } from './io.js';

/** One `extlb` subcommand. `run` returns the exit code; it never calls process.exit itself. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], io: Io): Promise<number>;
}
