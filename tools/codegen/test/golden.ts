// Golden-file comparison for node:test on Node 20, which has no snapshot support:
// UPDATE_GOLDEN=1 rewrites the committed file; otherwise the output must match it byte for byte.
import { deepStrictEqual } from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';

export function matchGolden(path: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`golden file ${path} is missing; run with UPDATE_GOLDEN=1 to create it`);
  // Compare line arrays: a failure then shows the differing lines rather than two huge strings.
  deepStrictEqual(actual.split('\n'), readFileSync(path, 'utf8').split('\n'), `output differs from ${path}`);
}
