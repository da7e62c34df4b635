export { main } from './main.js';
export type { Command } from './command.js';
export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, type Io } from './io.js';
