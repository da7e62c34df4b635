// Runs every package benchmark (packages/*/bench/*.bench.ts) one after another, each in its own
// process so that one benchmark's heap and JIT state never colour another's figures.
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const only = process.argv.slice(2);
const files: string[] = [];
for (const pkg of readdirSync(join(root, 'packages')).sort()) {
  const dir = join(root, 'packages', pkg, 'bench');
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (f.endsWith('.bench.ts') && (only.length === 0 || only.some((o) => f.includes(o) || pkg === o))) {
      files.push(join(dir, f));
    }
  }
}
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file.slice(root.length + 1)}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) failed++;
}
if (files.length === 0) console.log('no benchmarks matched');
process.exitCode = failed === 0 ? 0 : 1;
