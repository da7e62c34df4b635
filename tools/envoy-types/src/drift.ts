// Compares the committed Envoy types with what the protos give now, for the drift test and for
// `npm run generate -w @extlb/envoy-types -- --check` in CI.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Generated } from './generate.js';
import { GENERATED_DIR, REPO_ROOT, envoyTypes } from './main.js';

export interface Drift {
  generated: string[];
  /** Committed, but different from what the protos give now. */
  changed: string[];
  /** Generated, but not in the tree. */
  missing: string[];
  /** In the generated folder, but no longer generated. */
  stale: string[];
}

export function findDrift(root = REPO_ROOT, generated: Generated = envoyTypes()): Drift {
  const drift: Drift = { generated: [], changed: [], missing: [], stale: [] };
  for (const [path, content] of generated.files) {
    const file = `${GENERATED_DIR}/${path}`;
    drift.generated.push(file);
    const committed = join(root, file);
    if (!existsSync(committed)) drift.missing.push(file);
    else if (readFileSync(committed, 'utf8') !== content) drift.changed.push(file);
  }
  const dir = join(root, GENERATED_DIR);
  const inTree = existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(root, join(e.parentPath, e.name)))
    : [];
  drift.stale = inTree.filter((f) => !drift.generated.includes(f)).sort();
  return drift;
}
