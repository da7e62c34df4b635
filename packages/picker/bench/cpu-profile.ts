// Where a process's CPU went while the bench measured it: a V8 CPU profile (node:inspector's
// Profiler, in the measured process itself) summed by self time into the parts of a decision.
// A native frame (a binding, a builtin) counts for the JavaScript that called it, so a write
// into nghttp2 counts as node:http2's and a Buffer copy made by grpc-js as grpc-js's.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export const PARTS = [
  'protobuf decode/encode',
  'header reading',
  'strategy',
  'exchange (answers, pass-through)',
  'metrics',
  'gRPC framing (picker server)',
  'bench server',
  'grpc-js',
  'node:http2',
  'streams/events',
  'other node',
  'gc',
  'other',
] as const;
export type Part = (typeof PARTS)[number];

/** The picker's own modules, by what they do in a decision. */
const PICKER_MODULES: ReadonlyArray<readonly [RegExp, Part]> = [
  [/\/(wire|protos)\./, 'protobuf decode/encode'],
  [/\/(requests|messages)\./, 'header reading'],
  [/\/(picker|strategies|codec|pool-members|scoring)\./, 'strategy'],
  [/\/(server|stream)\./, 'exchange (answers, pass-through)'],
  [/\/metrics\./, 'metrics'],
  [/\/h2-server\./, 'gRPC framing (picker server)'],
];

/** The profiler's own frames (node:inspector and the natives it calls): not the measured process's work. */
const PROFILER = 'profiler';

function partOf(url: string): Part | typeof PROFILER | undefined {
  if (url === '') return undefined;
  if (url.includes('/packages/picker/bench/')) return 'bench server';
  if (url.includes('/packages/picker/')) return PICKER_MODULES.find(([re]) => re.test(url))?.[1] ?? 'other';
  if (url.includes('/protobufjs/') || url.includes('@grpc/proto-loader')) return 'protobuf decode/encode';
  if (url.includes('prom-client') || url.includes('/packages/telemetry/')) return 'metrics';
  if (url.includes('@grpc/grpc-js')) return 'grpc-js';
  if (url.startsWith('node:inspector')) return PROFILER;
  if (url.startsWith('node:internal/http2')) return 'node:http2';
  if (url.startsWith('node:internal/streams') || url === 'node:events' || url.startsWith('node:internal/event')) return 'streams/events';
  if (url.startsWith('node:')) return 'other node';
  return 'other';
}

/** Self time (µs) by part, idle and the profiler's own frames left out. */
export function summarise(profile: Profile): Record<Part, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const part = new Map<number, Part | 'idle' | typeof PROFILER>();
  const children = new Set(profile.nodes.flatMap((n) => n.children ?? []));
  const walk = (node: ProfileNode, inherited: Part | typeof PROFILER): void => {
    const name = node.callFrame.functionName;
    const own = name === '(idle)' ? 'idle' : name === '(garbage collector)' ? 'gc' : name === '(program)' ? 'other' : (partOf(node.callFrame.url) ?? inherited);
    part.set(node.id, own);
    for (const c of node.children ?? []) walk(byId.get(c) as ProfileNode, own === 'idle' ? inherited : own);
  };
  for (const n of profile.nodes) if (!children.has(n.id)) walk(n, 'other');
  const out = Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>;
  profile.samples.forEach((id, i) => {
    const p = part.get(id);
    if (p !== undefined && p !== 'idle' && p !== PROFILER) out[p] += profile.timeDeltas[i] ?? 0;
  });
  return out;
}

/** Profiles this process from `start` to `stop`. */
export class SelfProfiler {
  private readonly session = new Session();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    // 500 µs between samples: thousands over a round, and little of the profiled process's time.
    await this.session.post('Profiler.setSamplingInterval', { interval: 500 });
    await this.session.post('Profiler.start');
  }

  /** `keepAs`: a file to write the whole profile to, for a closer look (Chrome DevTools, speedscope). */
  async stop(keepAs?: string): Promise<Record<Part, number>> {
    const { profile } = (await this.session.post('Profiler.stop')) as { profile: Profile };
    if (keepAs) writeFileSync(keepAs, JSON.stringify(profile));
    await this.session.post('Profiler.disable');
    this.session.disconnect();
    return summarise(profile);
  }
}
