// The committed generated files must be exactly what schemas/ produces today (run
// `npm run generate` to fix): regenerated into a temporary folder and compared byte for byte.
import { deepStrictEqual, ok } from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findDrift } from '../src/drift.js';
import { REPO_ROOT } from '../src/main.js';

describe('generated files', () => {
  it('match schemas/ byte for byte, with none missing and none stale', async () => {
    const drift = await findDrift();
    ok(drift.generated.length >= 9, `expected at least 9 generated files, got ${drift.generated.length}`);
    deepStrictEqual({ changed: drift.changed, missing: drift.missing, stale: drift.stale }, { changed: [], missing: [], stale: [] });
  });

  const copy = mkdtempSync(join(tmpdir(), 'extlb-drift-copy-'));
  after(() => rmSync(copy, { recursive: true, force: true }));

  it('notices an edited, a deleted and a leftover file', async () => {
    const drift = await findDrift();
    for (const f of drift.generated) {
      mkdirSync(join(copy, f, '..'), { recursive: true });
      cpSync(join(REPO_ROOT, f), join(copy, f));
    }
    writeFileSync(join(copy, 'docs/api.md'), 'edited by hand\n');
    rmSync(join(copy, 'packages/types/src/generated/types.ts'));
    writeFileSync(join(copy, 'packages/crds/generated/old.yaml'), 'kind: Gone\n');
    const found = await findDrift(copy);
    deepStrictEqual(
      { changed: found.changed, missing: found.missing, stale: found.stale },
      { changed: ['docs/api.md'], missing: ['packages/types/src/generated/types.ts'], stale: ['packages/crds/generated/old.yaml'] },
    );
  });
});
