// The committed Envoy types must be exactly what the protos give today (run `npm run generate` to
// fix): generated in memory and compared byte for byte with packages/envoy/src/generated.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { deepStrictEqual, ok } from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findDrift } from '../src/drift.js';
import { GENERATED_DIR, REPO_ROOT, envoyTypes } from '../src/main.js';

describe('the generated Envoy types', () => {
  const generated = envoyTypes();

  it('match the protos byte for byte, with none missing and none stale', () => {
    const drift = findDrift(REPO_ROOT, generated);
    ok(drift.generated.length >= 30, `expected at least 30 modules, got ${drift.generated.length}`);
    deepStrictEqual({ changed: drift.changed, missing: drift.missing, stale: drift.stale }, { changed: [], missing: [], stale: [] });
  });

  const copy = mkdtempSync(join(tmpdir(), 'extlb-envoy-types-'));
  after(() => rmSync(copy, { recursive: true, force: true }));

  it('notices an edited, a deleted and a leftover module', () => {
    cpSync(join(REPO_ROOT, GENERATED_DIR), join(copy, GENERATED_DIR), { recursive: true });
    writeFileSync(join(copy, GENERATED_DIR, 'index.ts'), '// edited by hand\n');
    rmSync(join(copy, GENERATED_DIR, 'envoy/config/route/v3.ts'));
    writeFileSync(join(copy, GENERATED_DIR, 'envoy/old.ts'), 'export {};\n');
    const found = findDrift(copy, generated);
    deepStrictEqual(
      { changed: found.changed, missing: found.missing, stale: found.stale },
      { changed: [`${GENERATED_DIR}/index.ts`], missing: [`${GENERATED_DIR}/envoy/config/route/v3.ts`], stale: [`${GENERATED_DIR}/envoy/old.ts`] },
    );
  });
});
