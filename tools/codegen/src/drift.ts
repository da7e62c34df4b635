// Compares the committed generated files with a fresh generation, for the drift test and for
// `npm run generate -- --check` in CI.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GENERATED_DIRS, REPO_ROOT, generateInto } from './main.js';

export interface Drift {
  generated: string[];
  /** Committed, but different from what schemas/ gives now. */
  changed: string[];
  /** Generated, but not in the tree. */
  missing: string[];
  /** In a generated folder, but no longer generated. */
  stale: string[];
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

export async function findDrift(root = REPO_ROOT): Promise<Drift> {
  const out = mkdtempSync(join(tmpdir(), 'extlb-drift-'));
  try {
    const generated = await generateInto(out);
    const drift: Drift = { generated, changed: [], missing: [], stale: [] };
    for (const path of generated) {
      const committed = join(root, path);
      if (!existsSync(committed)) drift.missing.push(path);
      else if (readFileSync(committed, 'utf8') !== readFileSync(join(out, path), 'utf8')) drift.changed.push(path);
    }
    const inTree = GENERATED_DIRS.flatMap((d) => listFiles(join(root, d))).map((f) => relative(root, f));
    drift.stale = inTree.filter((f) => !generated.includes(f)).sort();
    return drift;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
