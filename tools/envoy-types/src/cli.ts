// `npm run generate`: rewrites packages/envoy/src/generated from Envoy's protos; `--check` only
// reports the generated modules that differ from what the protos give.
import { parseArgs } from 'node:util';
import { findDrift } from './drift.js';
import { REPO_ROOT, envoyTypes, generateInto } from './main.js';

const { values } = parseArgs({ options: { check: { type: 'boolean' } } });
const started = performance.now();
const generated = envoyTypes();
const ms = Math.round(performance.now() - started);
if (values.check) {
  const drift = findDrift(REPO_ROOT, generated);
  const lines = [...drift.changed.map((f) => `changed: ${f}`), ...drift.missing.map((f) => `missing: ${f}`), ...drift.stale.map((f) => `stale:   ${f}`)];
  if (lines.length > 0) {
    console.error(`the Envoy types differ from the protos (run npm run generate):\n${lines.join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(`all ${drift.generated.length} Envoy type modules match the protos`);
  }
} else {
  const written = generateInto(REPO_ROOT, generated);
  const bytes = [...generated.files.values()].reduce((n, c) => n + Buffer.byteLength(c), 0);
  console.log(`generated ${generated.types} Envoy types in ${written.length} modules (${Math.round(bytes / 1024)} KiB) in ${ms} ms`);
}
