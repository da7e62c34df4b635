// convert(): Gateway API and extlb objects in; per Gateway an Envoy configuration, and the
// statuses and diagnostics for everything. A one-shot use of the Converter.
import { type ConvertOptions, Converter } from './converter/index.js';
import type { Diagnostic } from './diagnostics.js';
import type { EnvoyConfig } from './envoy/index.js';
import type { JsonObject } from './json.js';
import type { IR } from './resolve/index.js';

export { DEFAULT_CONTROLLER } from './resolve/index.js';

export interface ConvertResult {
  /** One Envoy configuration per converted Gateway, keyed and sorted by `namespace/name`. */
  gateways: Record<string, EnvoyConfig>;
  /** Objects carrying only the status each input object should get, sorted by kind, namespace, name. */
  statuses: JsonObject[];
  diagnostics: Diagnostic[];
  /** The intermediate representation the Envoy configurations were made from. */
  ir: IR;
}

export function convert(objects: readonly unknown[], options: ConvertOptions = {}): ConvertResult {
  const result = new Converter(options).update({ objects });
  return {
    gateways: Object.fromEntries(result.gateways),
    statuses: [...result.statuses],
    diagnostics: [...result.diagnostics],
    ir: result.ir,
  };
}
