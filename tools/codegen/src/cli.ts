// `npm run generate`: regenerates everything from schemas/ into the repository; `--out DIR`
// writes elsewhere; `--check` only reports generated files that differ from schemas/.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findDrift } from './drift.js';
import { REPO_ROOT, generateInto } from './main.js';

const { values } = parseArgs({ options: { out: { type: 'string' }, check: { type: 'boolean' } } });
if (values.check) {
  const drift = await findDrift();
  const lines = [...drift.changed.map((f) => `changed: ${f}`), ...drift.missing.map((f) => `missing: ${f}`), ...drift.stale.map((f) => `stale:   ${f}`)];
  if (lines.length > 0) {
    console.error(`generated files differ from schemas/ (run npm run generate):\n${lines.join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(`all ${drift.generated.length} generated files match schemas/`);
  }
} else {
  const out = resolve(values.out ?? REPO_ROOT);
  const written = await generateInto(out);
  console.log(`generated ${written.length} files into ${out}`);
}
