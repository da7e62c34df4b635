// convert(): Gateway API and extlb objects in; per Gateway an Envoy configuration, and the
// statuses and diagnostics for everything. A composition of the four stages, each usable alone.
import { type Diagnostic, Diagnostics } from './diagnostics.js';
import { parseDuration } from './duration.js';
import type { EndpointMode, EnvoyTarget } from './envoy-target.js';
import { type EnvoyConfig, type EnvoyOptions, toEnvoy } from './envoy/index.js';
import type { JsonObject } from './json.js';
import { DEFAULT_MAX_OUTPUT_BYTES, jsonSize } from './output-size.js';
import { readInputs } from './read/index.js';
import type { Gateway as IrGateway } from './resolve/ir.js';
import { InputEndpoints } from './resolve/endpoints.js';
import { DEFAULT_CONTROLLER, type IR, InputCertificates, type ResolveOptions, resolve } from './resolve/index.js';
import { statuses } from './status/index.js';

export interface ConvertOptions {
  /** Target Envoy: `1.35` (override_host), `1.38` (adds served-endpoint reporting) or `legacy` (ORIGINAL_DST). Default 1.35. */
  envoy?: EnvoyTarget;
  /** How backend endpoints reach Envoy: listed (`static`, default), resolved from a headless Service (`dns`), or served over EDS (`eds`). */
  endpoints?: EndpointMode;
  /**
   * This controller's name: written in statuses, and the controllerName of the GatewayClasses whose
   * Gateways are converted (when the input has GatewayClasses). Default `extlb.dev/gateway-controller`.
   */
  controllerName?: string;
  /** lastTransitionTime of every condition. Default: the current time. */
  now?: string;
  clusterDomain?: string;
  /** Gateway API durations. */
  connectTimeout?: string;
  perTryTimeout?: string;
  /** The proxy's system CA bundle (BackendTLSPolicy `wellKnownCACertificates: System`). */
  systemCaFile?: string;
  /** Convert only Gateways of these classes (all when unset): a cluster may run several controllers. */
  gatewayClassNames?: string[];
  /**
   * The largest Envoy configuration of one Gateway, in bytes of compact JSON (default 32 MiB). A
   * Gateway whose configuration would be larger is reported (OutputTooLarge) and left out.
   */
  maxOutputBytes?: number;
}

export interface ConvertResult {
  /** One Envoy configuration per converted Gateway, keyed and sorted by `namespace/name`. */
  gateways: Record<string, EnvoyConfig>;
  /** Objects carrying only the status each input object should get, sorted by kind, namespace, name. */
  statuses: JsonObject[];
  diagnostics: Diagnostic[];
  /** The intermediate representation the Envoy configurations were made from. */
  ir: IR;
}

export { DEFAULT_CONTROLLER };

function durationOption(value: string | undefined, fallbackMs: number, name: string, diags: Diagnostics): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(value);
  if (ms !== undefined) return ms;
  diags.error('InvalidOption', `option ${name} is not a Gateway API duration such as 5s or 1m30s: ${JSON.stringify(value)}`);
  return fallbackMs;
}

/** The Envoy stage's options, with defaults and checked durations. */
export function envoyOptions(options: ConvertOptions, diags: Diagnostics): EnvoyOptions {
  return {
    envoy: options.envoy ?? '1.35',
    endpoints: options.endpoints ?? 'static',
    connectTimeoutMs: durationOption(options.connectTimeout, 5000, 'connectTimeout', diags),
    perTryTimeoutMs: durationOption(options.perTryTimeout, 15_000, 'perTryTimeout', diags),
    clusterDomain: options.clusterDomain ?? 'cluster.local',
    systemCaFile: options.systemCaFile ?? '/etc/ssl/certs/ca-certificates.crt',
  };
}

export function convert(objects: readonly unknown[], options: ConvertOptions = {}): ConvertResult {
  const diags = new Diagnostics();
  const envoy = envoyOptions(options, diags);
  const inputs = readInputs(objects, diags);
  const controllerName = options.controllerName ?? DEFAULT_CONTROLLER;
  const resolveOptions: ResolveOptions = { controllerName };
  if (options.gatewayClassNames) resolveOptions.gatewayClassNames = options.gatewayClassNames;
  const { ir, outcomes } = resolve(inputs, resolveOptions, diags);
  const endpoints = new InputEndpoints(inputs);
  const certificates = new InputCertificates(inputs);
  const gateways: Record<string, EnvoyConfig> = {};
  for (const gateway of ir.gateways) {
    const config = boundedEnvoy(gateway, endpoints, certificates, envoy, diags, options.maxOutputBytes);
    if (config) gateways[gateway.name] = config;
  }
  const now = options.now ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { gateways, statuses: statuses(outcomes, { controllerName, now }), diagnostics: diags.sorted(), ir };
}

/**
 * toEnvoy() for one Gateway, kept only when its configuration is at most `maxBytes` once written;
 * past that, an OutputTooLarge error on the Gateway and undefined. The controller and convert()
 * share it, so a file and a cluster give the same answer.
 */
export function boundedEnvoy(
  gateway: IrGateway,
  endpoints: InputEndpoints,
  certificates: InputCertificates,
  envoy: EnvoyOptions,
  diags: Diagnostics,
  maxBytes = DEFAULT_MAX_OUTPUT_BYTES,
): EnvoyConfig | undefined {
  const config = toEnvoy(gateway, endpoints, certificates, envoy, diags);
  if (jsonSize(config, maxBytes) <= maxBytes) return config;
  diags.error(
    'OutputTooLarge',
    `its Envoy configuration would be more than ${maxBytes} bytes (the limit, maxOutputBytes), so none is written: spread its routes over more Gateways, or use fewer rules, matches and backends per route`,
    gateway.ref,
  );
  return undefined;
}
