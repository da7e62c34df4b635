/**
 * The picker conformance kit: drives any endpoint picker over ext_proc gRPC the way Envoy does
 * and checks each rule of the Endpoint Picker Protocol, reporting pass, fail, or skip with the
 * reason. The rules and their checks live in `groups/`, one file per part of the protocol; this
 * file only runs them in order and gathers the verdicts.
 */
import { requestHeaders } from './answers.js';
import { ENDPOINT_RULES, checkEndpoints } from './groups/endpoint.js';
import { checkHealth } from './groups/health.js';
import { SCOPE_RULES, checkScope } from './groups/scope.js';
import { SERVED_RULES, checkServed } from './groups/served.js';
import { STREAMING_RULES, checkStreaming } from './groups/streaming.js';
import { SUBSET_RULES, checkSubsets } from './groups/subset.js';
import { checkTransport } from './groups/transport.js';
import { samplePool, type PoolSample } from './pool.js';
import { Probe } from './probe.js';
import { skipAll, type Rule, type RuleStatus, type Verdict } from './rule.js';
import { RULES, type RuleId } from './rules.js';

export type { RuleStatus } from './rule.js';

export interface RuleResult {
  id: RuleId;
  title: string;
  requirement: string;
  status: RuleStatus;
  detail: string;
}

export interface ConformanceReport {
  picker: string;
  startedAt: string;
  durationMs: number;
  summary: { passed: number; failed: number; skipped: number };
  results: RuleResult[];
}

export interface ConformanceOptions {
  /** The picker's `host:port`. */
  target: string;
  /** The picker's endpoints, if known; otherwise the kit learns them from its answers. */
  endpoints?: readonly string[];
  /** Longest wait for any single answer. Default 2000 ms. */
  timeoutMs?: number;
  /** Plain requests sent to learn the picker's endpoints and check its answers. Default 12. */
  samples?: number;
}

/** The groups that need the picker to answer ext_proc, in the order they run. */
const EXT_PROC_GROUPS: ReadonlyArray<{ rules: readonly Rule[]; check: (probe: Probe, pool: PoolSample) => Promise<Record<string, Verdict>> }> = [
  { rules: ENDPOINT_RULES, check: checkEndpoints },
  { rules: SUBSET_RULES, check: checkSubsets },
  { rules: SCOPE_RULES, check: checkScope },
  { rules: SERVED_RULES, check: checkServed },
  { rules: STREAMING_RULES, check: checkStreaming },
];

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const started = Date.now();
  const probe = new Probe(options.target, options.timeoutMs ?? 2000);
  const verdicts: Record<string, Verdict> = {};
  try {
    const first = await probe.ask(requestHeaders());
    const transport = checkTransport(first);
    Object.assign(verdicts, transport.verdicts);
    if (transport.answers) {
      const pool = await samplePool(probe, first, options);
      for (const group of EXT_PROC_GROUPS) Object.assign(verdicts, await group.check(probe, pool));
    } else {
      for (const group of EXT_PROC_GROUPS) Object.assign(verdicts, skipAll(group.rules, 'the picker does not answer ext_proc request headers'));
    }
    Object.assign(verdicts, await checkHealth(probe));
  } finally {
    probe.close();
  }
  const results: RuleResult[] = RULES.map((rule) => {
    const v = verdicts[rule.id] ?? { status: 'skip' as const, detail: 'not reached' };
    return { id: rule.id, title: rule.title, requirement: rule.requirement, status: v.status, detail: v.detail };
  });
  return {
    picker: options.target,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    summary: {
      passed: results.filter((r) => r.status === 'pass').length,
      failed: results.filter((r) => r.status === 'fail').length,
      skipped: results.filter((r) => r.status === 'skip').length,
    },
    results,
  };
}
