// Issue 19's reading row: how long `extlb validate` and `extlb convert` take to read an estate of
// 10k routes (the converter bench's shape) from its file, beside the same file read by js-yaml's
// loadAll and the same objects decoded from JSON by JSON.parse, all measured in this run, in turns
// (extlb, js-yaml, JSON.parse, and again), so that other work on the machine weighs on each alike.
// Printed as the median of the turns, in wall time and in this process's CPU time.
// Aim: read in at most 1.5 times js-yaml's time.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import jsyaml from 'js-yaml';
import { loadManifests } from '../src/manifests.js';
import { estateYaml } from './estate.js';

const ROUTES = 10_000;
const TURNS = 3;
const AIM = 1.5;

interface Timing {
  wall: number;
  cpu: number;
}

async function timed(fn: () => unknown): Promise<Timing> {
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t: Timing[]) => `${median(t.map((x) => x.wall)).toFixed(0)} ms (CPU ${median(t.map((x) => x.cpu)).toFixed(0)} ms)`;

const dir = mkdtempSync(join(tmpdir(), 'extlb-read-bench-'));
try {
  const file = join(dir, 'estate.yaml');
  writeFileSync(file, estateYaml(ROUTES));
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), cwd: dir };
  const first = await loadManifests([file], io);
  if (first.problems.length > 0) throw new Error(`the estate does not read: ${JSON.stringify(first.problems[0])}`);
  const json = JSON.stringify(first.manifests.map((m) => m.object));
  const objects = first.manifests.length;
  const bytes = readFileSync(file).length;
  const extlb: Timing[] = [];
  const jsYaml: Timing[] = [];
  const jsonParse: Timing[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    extlb.push(await timed(() => loadManifests([file], io)));
    jsYaml.push(await timed(() => jsyaml.loadAll(readFileSync(file, 'utf8'))));
    jsonParse.push(await timed(() => JSON.parse(json)));
  }
  const ratio = median(extlb.map((t) => t.wall)) / median(jsYaml.map((t) => t.wall));
  const cpuRatio = median(extlb.map((t) => t.cpu)) / median(jsYaml.map((t) => t.cpu));
  console.log(
    `reading ${ROUTES.toLocaleString('en-US')} routes (${objects.toLocaleString('en-US')} objects, ${(bytes / 1e6).toFixed(1)} MB of YAML), median of ${TURNS}:`,
  );
  console.log(`  extlb validate/convert read ${ms(extlb)}`);
  console.log(`  beside it: js-yaml loadAll of the same file ${ms(jsYaml)}; JSON.parse of the same objects ${ms(jsonParse)}`);
  console.log(`  ${ratio.toFixed(2)} x js-yaml's time (CPU ${cpuRatio.toFixed(2)} x); aim <= ${AIM} x js-yaml: ${ratio <= AIM ? 'met' : 'NOT met'}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
