export { main } from './main.js';
export type { Command } from './command.js';
export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, processIo, type Io } from './io.js';
// The pieces the repository's `npm start` runs on the bundled examples.
export { printValidationSummary } from './commands/validate.js';
export { convertExamples } from './commands/convert.js';
