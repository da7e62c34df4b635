// The committed generated files must be exactly what schemas/ produces today: regenerate into a
// temporary folder and compare byte for byte, and flag generated files whose source is gone.
import { deepStrictEqual, equal } from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { GENERATED_DIRS, REPO_ROOT, generateInto } from '../src/main.js';

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

const out = mkdtempSync(join(tmpdir(), 'extlb-drift-'));
after(() => rmSync(out, { recursive: true, force: true }));
const generated = await generateInto(out);

describe('generated files are up to date with schemas/ (run `npm run generate` to fix)', () => {
  for (const path of generated) {
    it(path, () => {
      const committed = join(REPO_ROOT, path);
      equal(existsSync(committed), true, `${path} is not committed`);
      equal(readFileSync(committed, 'utf8'), readFileSync(join(out, path), 'utf8'), `${path} drifted from schemas/`);
    });
  }

  it('no generated folder holds a file the generator no longer writes', () => {
    const committed = GENERATED_DIRS.flatMap((d) => listFiles(join(REPO_ROOT, d))).map((f) => relative(REPO_ROOT, f));
    deepStrictEqual(committed.filter((f) => !generated.includes(f)), []);
  });
});
