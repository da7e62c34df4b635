/**
 * What Envoy's `envoy.load_balancing_policies.override_host` picks on each upstream attempt.
 *
 * The model follows the released implementation, not its documentation: the override list is built
 * once per request from every source in order (a header source reads only the header's first
 * value; a metadata source counts only a string value), entries are matched as exact strings
 * against the cluster's host addresses, each attempt consumes entries until one matches, health is
 * not checked, and the fallback policy picks once the list has nothing usable left.
 */
import { EPP } from '@extlb/types';
import { parseEndpoint, trimEntry } from './codec.js';

export interface MetadataKey {
  /** The dynamic-metadata namespace, e.g. `envoy.lb`. */
  key: string;
  /** Keys walked inside that namespace; at least one. */
  path: string[];
}

/** One override source; Envoy rejects a source with both or neither field set. */
export interface OverrideHostSource {
  header?: string;
  metadata?: MetadataKey;
}

export type HostHealth = 'HEALTHY' | 'DEGRADED' | 'UNHEALTHY';

export interface ClusterHost {
  address: string;
  health?: HostHealth;
}

/**
 * Fallback policies the simulator knows, by Envoy extension name or short name. `First` is Envoy's
 * own unit-test policy that always returns the first host; it makes expectations easy to state.
 */
export const FALLBACK_POLICIES = {
  RoundRobin: 'envoy.load_balancing_policies.round_robin',
  LeastRequest: 'envoy.load_balancing_policies.least_request',
  Random: 'envoy.load_balancing_policies.random',
  First: 'test.load_balancing_policies.first',
} as const;
export type FallbackPolicyName = keyof typeof FALLBACK_POLICIES;

export interface OverrideHostConfig {
  sources: OverrideHostSource[];
  /** Policies tried in order; the first one known is used (as Envoy does with `fallback_policy.policies`). */
  fallback: string | string[] | undefined;
  selectedHostKey?: MetadataKey;
}

export interface SimulationInput extends OverrideHostConfig, SimulatedRequest {
  /** The cluster's hosts in any valid spelling (Envoy renders them canonically); null = no host map yet. */
  hosts: ReadonlyArray<string | ClusterHost> | null;
  /** Seed for the Random fallback. */
  seed?: number;
}

export interface OverrideEntry {
  /** Position in the combined override list. */
  index: number;
  value: string;
  /** Which configured source the entry came from. */
  source: number;
}

export interface SkippedEntry {
  entry: number;
  value: string;
  reason: string;
}

export interface SimulatedAttempt {
  attempt: number;
  /** The chosen host address, or null when Envoy would find none (a 503 "no healthy upstream"). */
  host: string | null;
  by: 'override' | 'fallback' | 'none';
  /** For `override`: the override-list entry used. */
  entry?: number;
  skipped: SkippedEntry[];
  reason: string;
}

export interface SimulationResult {
  overrideList: OverrideEntry[];
  attempts: SimulatedAttempt[];
  /** Request dynamic metadata after the attempts (changes only with `selectedHostKey`). */
  metadata: Record<string, unknown>;
}

export class OverrideHostConfigError extends Error {
  readonly errors: string[];
  constructor(errors: string[]) {
    super(errors.join('; '));
    this.name = 'OverrideHostConfigError';
    this.errors = errors;
  }
}

/** The header and metadata sources of the Endpoint Picker Protocol, in either order. */
export function protocolSources(order: ReadonlyArray<'metadata' | 'header'>): OverrideHostSource[] {
  return order.map((s) => (s === 'header' ? { header: EPP.header } : { metadata: { key: EPP.namespace, path: [EPP.endpointKey] } }));
}

/**
 * The load-time checks Envoy applies to an OverrideHost config, with Envoy's messages. Returns
 * the errors (empty when the config loads) and the fallback policy Envoy would use.
 */
export function validateOverrideHostConfig(config: OverrideHostConfig): { errors: string[]; fallback?: FallbackPolicyName } {
  const errors: string[] = [];
  if (!Array.isArray(config.sources) || config.sources.length === 0) {
    errors.push('override_host_sources: value must contain at least 1 item');
  } else {
    config.sources.forEach((s, i) => {
      const hasHeader = s.header !== undefined;
      const hasMetadata = s.metadata !== undefined;
      if (hasHeader && hasMetadata) errors.push(`override_host_sources[${i}]: Only one override source must be set`);
      else if (!hasHeader && !hasMetadata) errors.push(`override_host_sources[${i}]: Empty override source`);
      else if (hasHeader && (typeof s.header !== 'string' || s.header === '')) {
        errors.push(`override_host_sources[${i}].header: must be a non-empty header name`);
      } else if (hasMetadata) {
        const m = s.metadata;
        if (!m || typeof m.key !== 'string' || m.key === '')
          errors.push(`override_host_sources[${i}].metadata.key: value length must be at least 1 characters`);
        if (!m || !Array.isArray(m.path) || m.path.length === 0) errors.push(`override_host_sources[${i}].metadata.path: value must contain at least 1 item`);
        else if (m.path.some((p) => typeof p !== 'string' || p === '')) errors.push(`override_host_sources[${i}].metadata.path: every key must be non-empty`);
      }
    });
  }
  if (config.fallback === undefined) {
    errors.push('fallback_policy: value is required');
    return { errors };
  }
  const names = Array.isArray(config.fallback) ? config.fallback : [config.fallback];
  const fallback = names.map(fallbackByName).find((n) => n !== undefined);
  if (!fallback) {
    errors.push(`dynamic forwarding LB: didn't find a registered fallback load balancer factory with names from ${names.join(', ')}`);
    return { errors };
  }
  return { errors, fallback };
}

function fallbackByName(name: string): FallbackPolicyName | undefined {
  for (const [short, full] of Object.entries(FALLBACK_POLICIES)) {
    if (name === short || name === full) return short as FallbackPolicyName;
  }
  return undefined;
}

export interface SimulatedRequest {
  /** Request headers; a list holds the values of a repeated header. null = no headers at all. */
  headers?: Readonly<Record<string, string | readonly string[]>> | null;
  /** Request dynamic metadata: namespace → plain JSON object. */
  metadata?: Readonly<Record<string, unknown>> | null;
  /** Upstream attempts to simulate (first try plus retries or hedges). Default 1. */
  attempts?: number;
}

/**
 * One cluster with an override_host policy. The fallback policy's state (its round-robin position,
 * its request counts) lives as long as the simulator, as a load balancer's does in Envoy, so a
 * series of `request` calls spreads the way a series of requests would.
 */
export class OverrideHostSimulator {
  private readonly config: OverrideHostConfig;
  private readonly fallback: FallbackPolicyName;
  private readonly seed: number;
  private hosts: Map<string, ClusterHost> | null = null;
  private pickFallback: () => string | undefined = () => undefined;

  /** Throws OverrideHostConfigError with Envoy's messages when the config would not load. */
  constructor(config: OverrideHostConfig & { hosts: SimulationInput['hosts']; seed?: number }) {
    const { errors, fallback } = validateOverrideHostConfig(config);
    if (errors.length > 0 || !fallback) throw new OverrideHostConfigError(errors);
    this.config = config;
    this.fallback = fallback;
    this.seed = config.seed ?? 1;
    this.setHosts(config.hosts);
  }

  /** Replaces the host set; as in Envoy, the fallback policy starts afresh over the new hosts. */
  setHosts(hosts: SimulationInput['hosts']): void {
    const errors: string[] = [];
    const map = hosts === null ? null : canonicalHosts(hosts, errors);
    if (errors.length > 0) throw new OverrideHostConfigError(errors);
    this.hosts = map;
    this.pickFallback = makeFallback(this.fallback, map ?? new Map(), this.seed);
  }

  /** The host-map keys override entries are compared against. */
  hostSet(): string[] {
    return this.hosts ? [...this.hosts.keys()] : [];
  }

  request(request: SimulatedRequest = {}): SimulationResult {
    const attempts = request.attempts ?? 1;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 1000) {
      throw new OverrideHostConfigError([`attempts: ${attempts} is not an integer in 1..1000`]);
    }
    const hosts = this.hosts;
    const metadata = structuredClone((request.metadata ?? {}) as Record<string, unknown>);
    const list = buildOverrideList(this.config.sources, request.headers ?? null, request.metadata ?? null);
    const results: SimulatedAttempt[] = [];
    let next = 0;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (hosts === null) {
        // Envoy returns no host at all when the cluster has no host map yet, not even from the fallback.
        results.push({ attempt, host: null, by: 'none', skipped: [], reason: 'the cluster has no host map yet' });
        continue;
      }
      const skipped: SkippedEntry[] = [];
      let chosen: SimulatedAttempt | undefined;
      while (next < list.length && !chosen) {
        const entry = list[next++] as OverrideEntry;
        const host = hosts.get(entry.value);
        if (host) {
          const health = host.health && host.health !== 'HEALTHY' ? ` (host is ${host.health}: override_host does not check health)` : '';
          chosen = { attempt, host: host.address, by: 'override', entry: entry.index, skipped, reason: `override entry ${entry.index}${health}` };
        } else {
          skipped.push({ entry: entry.index, value: entry.value, reason: whyNotFound(entry.value, hosts) });
        }
      }
      if (!chosen) {
        const why =
          list.length === 0
            ? 'no override source present'
            : skipped.length > 0
              ? 'no remaining override entry is in the cluster'
              : 'override list exhausted by earlier attempts';
        const host = this.pickFallback();
        chosen = host
          ? { attempt, host, by: 'fallback', skipped, reason: `fallback ${this.fallback}: ${why}` }
          : { attempt, host: null, by: 'none', skipped, reason: `fallback ${this.fallback} found no host (the cluster is empty): ${why}` };
      }
      if (chosen.host !== null && this.config.selectedHostKey) writeSelectedHost(metadata, this.config.selectedHostKey, chosen.host);
      results.push(chosen);
    }
    return { overrideList: list, attempts: results, metadata };
  }
}

/** Simulates the attempts of one request. Throws OverrideHostConfigError on bad config, hosts or attempts. */
export function simulateOverrideHost(input: SimulationInput): SimulationResult {
  return new OverrideHostSimulator(input).request(input);
}

function canonicalHosts(hosts: ReadonlyArray<string | ClusterHost>, errors: string[]): Map<string, ClusterHost> {
  const map = new Map<string, ClusterHost>();
  hosts.forEach((h, i) => {
    const spec = typeof h === 'string' ? { address: h } : h;
    const parsed = typeof spec?.address === 'string' ? parseEndpoint(trimEntry(spec.address)) : 'address must be a string';
    if (typeof parsed === 'string') errors.push(`hosts[${i}]: ${parsed}`);
    else map.set(parsed.address, { ...spec, address: parsed.address });
  });
  return map;
}

function buildOverrideList(
  sources: readonly OverrideHostSource[],
  headers: SimulatedRequest['headers'],
  metadata: SimulatedRequest['metadata'],
): OverrideEntry[] {
  const list: OverrideEntry[] = [];
  sources.forEach((source, s) => {
    const value = source.header !== undefined ? headerValue(headers, source.header) : metadataValue(metadata, source.metadata as MetadataKey);
    if (value === undefined) return;
    for (const piece of value.split(',')) {
      const trimmed = trimEntry(piece);
      if (trimmed !== '') list.push({ index: list.length, value: trimmed, source: s });
    }
  });
  return list;
}

function headerValue(headers: SimulatedRequest['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== wanted) continue;
    // Only the first value of a repeated header counts.
    return typeof v === 'string' ? v : v[0];
  }
  return undefined;
}

function metadataValue(metadata: SimulatedRequest['metadata'], key: MetadataKey): string | undefined {
  let node: unknown = metadata?.[key.key];
  for (const segment of key.path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  // A list or a number is treated as absent, exactly like a missing key.
  return typeof node === 'string' ? node : undefined;
}

function whyNotFound(value: string, hosts: Map<string, ClusterHost>): string {
  const parsed = parseEndpoint(value);
  if (typeof parsed === 'string') return `not an address (${parsed}); skipped`;
  if (hosts.has(parsed.address)) return `spelt differently from the host ${parsed.address}; Envoy compares exact strings, so it is skipped`;
  return "not in the cluster's host set; skipped";
}

function writeSelectedHost(metadata: Record<string, unknown>, key: MetadataKey, host: string): void {
  // Envoy merges into the namespace, so other keys already there survive.
  const existing = metadata[key.key];
  let node = (existing !== null && typeof existing === 'object' && !Array.isArray(existing) ? existing : {}) as Record<string, unknown>;
  metadata[key.key] = node;
  key.path.forEach((segment, i) => {
    if (i === key.path.length - 1) node[segment] = host;
    else {
      const child = node[segment];
      const next = (child !== null && typeof child === 'object' && !Array.isArray(child) ? child : {}) as Record<string, unknown>;
      node[segment] = next;
      node = next;
    }
  });
}

/**
 * A fallback picker over the cluster. Like Envoy's, it prefers healthy hosts, then degraded ones,
 * and in "panic" (nothing healthy or degraded) uses them all.
 */
function makeFallback(policy: FallbackPolicyName, hosts: Map<string, ClusterHost>, seed: number): () => string | undefined {
  const all = [...hosts.values()];
  const healthy = all.filter((h) => (h.health ?? 'HEALTHY') === 'HEALTHY');
  const degraded = all.filter((h) => h.health === 'DEGRADED');
  const pool = (healthy.length > 0 ? healthy : degraded.length > 0 ? degraded : all).map((h) => h.address);
  let rr = 0;
  const load = new Map<string, number>();
  const random = mulberry32(seed);
  return () => {
    if (pool.length === 0) return undefined;
    switch (policy) {
      case 'First':
        return pool[0];
      case 'RoundRobin':
        return pool[rr++ % pool.length];
      case 'Random':
        return pool[Math.floor(random() * pool.length)];
      case 'LeastRequest': {
        // No request ever completes inside one simulated request, so "least requests" is "fewest picks".
        let best = pool[0] as string;
        for (const h of pool) if ((load.get(h) ?? 0) < (load.get(best) ?? 0)) best = h;
        load.set(best, (load.get(best) ?? 0) + 1);
        return best;
      }
    }
  };
}

/** A small seeded PRNG so Random choices are reproducible. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
