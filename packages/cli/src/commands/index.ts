import type { Command } from '../command.js';

/**
 * Every subcommand, loaded on first use so that `extlb validate` does not pay for the gRPC or
 * Kubernetes client start-up of the others. Add a command with one line here.
 */
export const commands: Record<string, () => Promise<Command>> = {
  convert: async () => (await import('./convert.js')).command,
  crds: async () => (await import('./crds.js')).command,
  validate: async () => (await import('./validate.js')).command,
  webhook: async () => (await import('./webhook.js')).command,
  picker: async () => (await import('./picker.js')).command,
  'picker-bench': async () => (await import('./picker-bench.js')).command,
  conformance: async () => (await import('./conformance.js')).command,
  simulate: async () => (await import('./simulate.js')).command,
  controller: async () => (await import('./controller.js')).command,
  bootstrap: async () => (await import('./bootstrap.js')).command,
  check: async () => (await import('./check.js')).command,
  install: async () => (await import('./install.js')).command,
  'proxy-status': async () => (await import('./proxy-status.js')).command,
  'config-dump': async () => (await import('./config-dump.js')).command,
};
