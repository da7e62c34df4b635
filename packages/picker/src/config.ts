/**
 * The picker's configuration file (`extlb picker --config FILE`): a profile, its scorers and
 * weights, how the prompt is read, shedding, and how the endpoints' metrics are scraped. Every
 * mistake is reported at `file:line:col` with the field's path, all of them at once; a file that
 * loads is complete (defaults filled in) and within bounds.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { PROFILES, type ProfileName } from './picker.js';
import { parseSelector } from './prometheus.js';
import { DEFAULT_LOAD_AWARE, SCORER_TYPES, SHEDDING_MODES, type LoadAwareConfig, type ScorerConfig } from './scoring.js';
import { DEFAULT_SCRAPE, SERVER_METRICS, type MetricNames, type ScrapeOptions, type ServerKind } from './signals.js';

export interface PickerConfig {
  profile: ProfileName;
  maxEndpoints: number | undefined;
  loadAware: LoadAwareConfig;
  scrape: ScrapeOptions;
}

export interface ConfigProblem {
  file: string;
  line: number;
  col: number;
  /** The field, e.g. `scorers[1].weight`. */
  path: string;
  message: string;
}

export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    const sorted = problems.slice().sort((a, b) => a.line - b.line || a.col - b.col);
    super(sorted.map((p) => `${p.file}:${p.line}:${p.col}: ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = sorted;
  }
}

const SERVERS = Object.keys(SERVER_METRICS) as ServerKind[];

/** The defaults of the load-aware profile, as `--profile load-aware` runs it. */
export function defaultConfig(profile: ProfileName = 'load-aware'): PickerConfig {
  return {
    profile,
    maxEndpoints: undefined,
    loadAware: structuredClone(DEFAULT_LOAD_AWARE),
    scrape: { ...DEFAULT_SCRAPE, names: { ...SERVER_METRICS.vllm } },
  };
}

class Reader {
  readonly problems: ConfigProblem[] = [];
  constructor(
    readonly file: string,
    private readonly lines: LineCounter,
  ) {}

  problem(node: Node | Pair | null | undefined, path: string, message: string): void {
    const range = (node && 'range' in node ? node.range : undefined) ?? (node && 'key' in node ? (node.key as Node | null)?.range : undefined);
    const { line, col } = this.lines.linePos(range?.[0] ?? 0);
    this.problems.push({ file: this.file, line, col, path, message });
  }

  /** The pairs of a mapping, reporting unknown keys (and a node that is no mapping). */
  map(node: Node | null | undefined, path: string, known: readonly string[]): Map<string, Node> | undefined {
    if (!isMap(node)) {
      this.problem(node, path, `expected a mapping, got ${kind(node)}`);
      return undefined;
    }
    const out = new Map<string, Node>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      const at = path ? `${path}.${key}` : (key ?? '');
      if (key === undefined || !known.includes(key)) {
        this.problem(pair.key as Node, at, `unknown field${key === undefined ? '' : ` "${key}"`}; expected one of ${known.join(', ')}`);
        continue;
      }
      out.set(key, pair.value as Node);
    }
    return out;
  }

  number(node: Node | undefined, path: string, min: number, max: number, integer: boolean): number | undefined {
    if (node === undefined) return undefined;
    const v = isScalar(node) ? node.value : undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
      this.problem(node, path, `expected ${integer ? 'an integer' : 'a number'} in ${min}..${max}, got ${describe(node)}`);
      return undefined;
    }
    return v;
  }

  string(node: Node | undefined, path: string, check?: (s: string) => string | undefined): string | undefined {
    if (node === undefined) return undefined;
    const v = isScalar(node) ? node.value : undefined;
    if (typeof v !== 'string' || v === '') {
      this.problem(node, path, `expected a non-empty string, got ${describe(node)}`);
      return undefined;
    }
    const wrong = check?.(v);
    if (wrong) {
      this.problem(node, path, wrong);
      return undefined;
    }
    return v;
  }

  oneOf<T extends string>(node: Node | undefined, path: string, values: readonly T[]): T | undefined {
    return this.string(node, path, (s) => (values.includes(s as T) ? undefined : `expected one of ${values.join(', ')}, got "${s}"`)) as T | undefined;
  }
}

function kind(node: Node | null | undefined): string {
  if (node === null || node === undefined) return 'nothing';
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  return describe(node);
}

function describe(node: Node): string {
  if (!isScalar(node)) return kind(node);
  return node.value === null ? 'null' : JSON.stringify(node.value);
}

const TOP = ['profile', 'maxEndpoints', 'scorers', 'prefix', 'shedding', 'metrics'] as const;
const SCORER = ['type', 'weight', 'max'] as const;
const PREFIX = ['blockBytes', 'blocks', 'maxBytes'] as const;
const SHEDDING = ['mode', 'queue', 'kvCache', 'maxWaitMs', 'maxQueued'] as const;
const METRICS = ['server', 'names', 'port', 'path', 'intervalMs', 'timeoutMs', 'jitter', 'staleAfterMs', 'concurrency', 'maxBodyBytes'] as const;
const NAMES = ['waiting', 'running', 'kvCache', 'lora'] as const;

/** Reads a configuration file's text; throws `ConfigError` listing every problem with its position. */
export function parsePickerConfig(text: string, file: string): PickerConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const r = new Reader(file, lines);
  for (const e of doc.errors) {
    const { line, col } = lines.linePos(e.pos[0]);
    r.problems.push({ file, line, col, path: '', message: `YAML syntax error: ${e.message.split('\n')[0]}` });
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  const top = r.map(doc.contents as Node | null, '', TOP);
  const config = defaultConfig(top?.has('profile') ? 'round-robin' : 'load-aware');
  if (top) {
    const profile = r.oneOf(top.get('profile'), 'profile', PROFILES);
    if (profile) config.profile = profile;
    config.maxEndpoints = r.number(top.get('maxEndpoints'), 'maxEndpoints', 1, 64, true);
    readScorers(r, top.get('scorers'), config);
    readPrefix(r, top.get('prefix'), config);
    readShedding(r, top.get('shedding'), config);
    readMetrics(r, top.get('metrics'), config);
    const loadAwareOnly = (['scorers', 'prefix', 'shedding', 'metrics'] as const).filter((k) => top.has(k));
    if (config.profile !== 'load-aware' && loadAwareOnly.length > 0) {
      r.problem(top.get('profile'), 'profile', `${loadAwareOnly.join(', ')} apply to the load-aware profile only, not to "${config.profile}"`);
    }
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

function readScorers(r: Reader, node: Node | undefined, config: PickerConfig): void {
  if (node === undefined) return;
  if (!isSeq(node) || node.items.length === 0 || node.items.length > SCORER_TYPES.length) {
    r.problem(node, 'scorers', `expected a list of 1..${SCORER_TYPES.length} scorers, got ${isSeq(node) ? `${node.items.length}` : kind(node)}`);
    return;
  }
  const scorers: ScorerConfig[] = [];
  const seen = new Set<string>();
  node.items.forEach((item, i) => {
    const path = `scorers[${i}]`;
    const m = r.map(item as Node, path, SCORER);
    if (!m) return;
    if (!m.has('type')) r.problem(item as Node, `${path}.type`, `a scorer needs a type: one of ${SCORER_TYPES.join(', ')}`);
    const type = r.oneOf(m.get('type'), `${path}.type`, SCORER_TYPES);
    const weight = m.has('weight') ? r.number(m.get('weight'), `${path}.weight`, 0, 1000, false) : 1;
    const max = r.number(m.get('max'), `${path}.max`, 1, 1_000_000, true);
    if (max !== undefined && type !== undefined && type !== 'queue' && type !== 'in-flight')
      r.problem(m.get('max'), `${path}.max`, `only the queue and in-flight scorers take max`);
    if (type === undefined || weight === undefined) return;
    if (seen.has(type)) r.problem(m.get('type'), `${path}.type`, `scorer "${type}" is listed twice`);
    seen.add(type);
    scorers.push(max === undefined ? { type, weight } : { type, weight, max });
  });
  if (scorers.length > 0 && scorers.every((s) => s.weight === 0)) r.problem(node, 'scorers', 'every weight is 0: at least one scorer must count');
  config.loadAware.scorers = scorers;
}

function readPrefix(r: Reader, node: Node | undefined, config: PickerConfig): void {
  if (node === undefined) return;
  const m = r.map(node, 'prefix', PREFIX);
  if (!m) return;
  const p = config.loadAware.prefix;
  p.blockBytes = r.number(m.get('blockBytes'), 'prefix.blockBytes', 16, 65_536, true) ?? p.blockBytes;
  p.blocks = r.number(m.get('blocks'), 'prefix.blocks', 1, 1024, true) ?? p.blocks;
  p.maxBytes = r.number(m.get('maxBytes'), 'prefix.maxBytes', 64, 16 * 1024 * 1024, true) ?? p.maxBytes;
  if (p.blockBytes * p.blocks > p.maxBytes) {
    r.problem(node, 'prefix', `blocks × blockBytes (${p.blocks * p.blockBytes}) is more than maxBytes (${p.maxBytes}): the prefix could never be read in full`);
  }
}

function readShedding(r: Reader, node: Node | undefined, config: PickerConfig): void {
  if (node === undefined) return;
  const m = r.map(node, 'shedding', SHEDDING);
  if (!m) return;
  const s = config.loadAware.shedding;
  s.mode = r.oneOf(m.get('mode'), 'shedding.mode', SHEDDING_MODES) ?? s.mode;
  s.queue = r.number(m.get('queue'), 'shedding.queue', 1, 1_000_000, true) ?? s.queue;
  s.kvCache = r.number(m.get('kvCache'), 'shedding.kvCache', 0.01, 1, false) ?? s.kvCache;
  s.maxWaitMs = r.number(m.get('maxWaitMs'), 'shedding.maxWaitMs', 1, 600_000, true) ?? s.maxWaitMs;
  s.maxQueued = r.number(m.get('maxQueued'), 'shedding.maxQueued', 1, 1_000_000, true) ?? s.maxQueued;
}

function readMetrics(r: Reader, node: Node | undefined, config: PickerConfig): void {
  if (node === undefined) return;
  const m = r.map(node, 'metrics', METRICS);
  if (!m) return;
  const s = config.scrape;
  const server = r.oneOf(m.get('server'), 'metrics.server', SERVERS);
  if (server) s.names = { ...SERVER_METRICS[server] };
  const names = m.get('names');
  if (names !== undefined) {
    const n = r.map(names, 'metrics.names', NAMES);
    if (n) {
      const selector = (v: string): string | undefined => {
        try {
          parseSelector(v);
          return undefined;
        } catch (err) {
          return `not a metric name or selector: ${(err as Error).message}`;
        }
      };
      for (const key of NAMES) {
        const v = r.string(n.get(key), `metrics.names.${key}`, selector);
        if (v !== undefined) (s.names as MetricNames)[key] = v;
      }
    }
  }
  const port = r.number(m.get('port'), 'metrics.port', 1, 65_535, true);
  if (port !== undefined) s.port = port;
  s.path = r.string(m.get('path'), 'metrics.path', (p) => (p.startsWith('/') ? undefined : `a path starts with "/", got "${p}"`)) ?? s.path;
  s.intervalMs = r.number(m.get('intervalMs'), 'metrics.intervalMs', 10, 600_000, true) ?? s.intervalMs;
  s.timeoutMs = r.number(m.get('timeoutMs'), 'metrics.timeoutMs', 10, 600_000, true) ?? s.timeoutMs;
  s.jitter = r.number(m.get('jitter'), 'metrics.jitter', 0, 0.9, false) ?? s.jitter;
  s.staleAfterMs = r.number(m.get('staleAfterMs'), 'metrics.staleAfterMs', 10, 3_600_000, true) ?? s.staleAfterMs;
  s.concurrency = r.number(m.get('concurrency'), 'metrics.concurrency', 1, 1024, true) ?? s.concurrency;
  s.maxBodyBytes = r.number(m.get('maxBodyBytes'), 'metrics.maxBodyBytes', 1024, 256 * 1024 * 1024, true) ?? s.maxBodyBytes;
  if (s.staleAfterMs <= s.intervalMs) {
    r.problem(
      m.get('staleAfterMs') ?? node,
      'metrics.staleAfterMs',
      `must be longer than intervalMs (${s.intervalMs}), or every endpoint would be stale between scrapes`,
    );
  }
}
