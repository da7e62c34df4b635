// What `extlb convert -o yaml` spends its time on, for an estate the size of the converter's bench
// (packages/envoy/bench): reading the manifests, converting, and writing the bootstrap as YAML —
// with the `yaml` package's stringify and with the CLI's own writer (src/yaml-out.ts) — beside
// JSON.stringify. The estate is written as a manifest file first, as a user would hand it over.
// Target: writing YAML costs no more than the conversion (ratio YAML/convert <= 1).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { convert, toBootstrap } from '@extlb/envoy';
import { stringify } from 'yaml';
import { loadManifests } from '../src/manifests.js';
import { toYaml } from '../src/yaml-out.js';
import { estateYaml, NOW } from './estate.js';

async function timed<T>(fn: () => T | Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const out = await fn();
  return [out, Number(process.hrtime.bigint() - start) / 1e6];
}

const gc = (globalThis as { gc?: () => void }).gc;
const dir = mkdtempSync(join(tmpdir(), 'extlb-cli-bench-'));
try {
  for (const routes of [1000, 10000]) {
    const file = join(dir, `estate-${routes}.yaml`);
    writeFileSync(file, estateYaml(routes));
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), cwd: dir };
    gc?.();
    const [loaded, loadMs] = await timed(() => loadManifests([file], io));
    if (loaded.problems.length > 0) throw new Error(`the estate does not load: ${JSON.stringify(loaded.problems[0])}`);
    const objects = loaded.manifests.map((m) => m.object);
    convert(objects, { now: NOW }); // warm-up
    gc?.();
    const [result, convertMs] = await timed(() => convert(objects, { now: NOW }));
    const [config] = Object.values(result.gateways);
    if (!config) throw new Error('the estate converts no Gateway');
    const bootstrap = toBootstrap(config);
    gc?.();
    const [json, jsonMs] = await timed(() => JSON.stringify(bootstrap, null, 2));
    gc?.();
    const [, packageMs] = await timed(() => stringify(bootstrap, { lineWidth: 0, aliasDuplicateObjects: false }));
    toYaml(bootstrap); // warm-up
    gc?.();
    const [yaml, writerMs] = await timed(() => toYaml(bootstrap));
    console.log(
      `${String(routes).padStart(6)} routes ${String(objects.length).padStart(6)} objects  read ${loadMs.toFixed(0)} ms  convert ${convertMs.toFixed(0)} ms  ` +
        `JSON ${jsonMs.toFixed(0)} ms (${(json.length / 1e6).toFixed(1)} MB)  ` +
        `yaml package ${packageMs.toFixed(0)} ms (YAML/convert ${(packageMs / convertMs).toFixed(2)})  ` +
        `yaml-out ${writerMs.toFixed(0)} ms (${(yaml.length / 1e6).toFixed(1)} MB, YAML/convert ${(writerMs / convertMs).toFixed(2)}, ${(packageMs / writerMs).toFixed(1)}x faster)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('target: yaml-out YAML/convert <= 1 (writing YAML costs no more than converting)');
