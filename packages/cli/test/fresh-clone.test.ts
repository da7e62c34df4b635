// A newcomer's first minutes, as they would spend them: clone the repository, run the README's npm
// commands (`npm ci && npm start`), then run `extlb` the ways npm offers — the linked
// node_modules/.bin/extlb, `npx extlb` and `npm exec extlb`. The clone is of the committed tree
// plus the working tree's uncommitted changes to tracked files (new files must be added to git
// first, as a clone would not have them). npm works offline from its cache, so a missing local
// bin fails here instead of fetching some other `extlb` from the registry. The clone's turbo
// shares this checkout's build cache: a build of the same sources is replayed, not redone, which
// keeps the test cheap without changing what the README's commands leave behind.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isNpmCommand, readmeCommands, shellEnv } from './readme-commands.js';

const repo = join(import.meta.dirname, '../../..');
const launcher = join(import.meta.dirname, '../bin/extlb.js');

/** Where turbo keeps this checkout's cache: `.turbo/cache` beside the main git directory. */
function turboCache(): Record<string, string> {
  const gitDir = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: repo, encoding: 'utf8' }).trim();
  const cache = join(dirname(gitDir), '.turbo/cache');
  return existsSync(cache) ? { TURBO_CACHE_DIR: cache } : {};
}

function run(command: string, cwd: string): { status: number | null; stdout: string; stderr: string; seconds: number } {
  const start = process.hrtime.bigint();
  const r = spawnSync('sh', ['-c', command], { cwd, env: shellEnv(turboCache()), encoding: 'utf8', timeout: 15 * 60_000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

describe('the extlb launcher', () => {
  it('says how to build when the build has not run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'extlb-unbuilt-'));
    try {
      mkdirSync(join(dir, 'bin'));
      copyFileSync(launcher, join(dir, 'bin/extlb.js'));
      const r = spawnSync(process.execPath, [join(dir, 'bin/extlb.js'), '--help'], { encoding: 'utf8' });
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^extlb is not built yet: run `npm run build` \(or `npm start`\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is executable in git, so a clone can run it before npm links it', () => {
    const mode = execFileSync('git', ['ls-files', '--stage', 'packages/cli/bin/extlb.js'], { cwd: repo, encoding: 'utf8' }).split(' ')[0];
    assert.equal(mode, '100755');
  });
});

describe('a fresh clone', () => {
  const clone = mkdtempSync(join(tmpdir(), 'extlb-clone-'));
  after(() => rmSync(clone, { recursive: true, force: true }));

  it("runs the README's npm commands, then extlb through node_modules/.bin, npx and npm exec", (t) => {
    execFileSync('git', ['clone', '--quiet', '--shared', repo, clone]);
    const changes = execFileSync('git', ['diff', 'HEAD', '--binary'], { cwd: repo, maxBuffer: 256 << 20 });
    if (changes.length > 0) execFileSync('git', ['apply', '--binary', '-'], { cwd: clone, input: changes });

    const npmCommands = readmeCommands(clone).filter(isNpmCommand);
    assert.ok(
      npmCommands.some((c) => c.command.startsWith('npm ci')),
      'the README starts with npm ci',
    );
    for (const c of npmCommands) {
      // `npm test` is what runs this test: running it here would run this test again, inside itself.
      if (/^npm (test|t|run test)\b/.test(c.command)) continue;
      const r = run(c.command, clone);
      t.diagnostic(`${c.readme}:${c.line}: ${c.command} (${r.seconds.toFixed(1)} s)`);
      assert.equal(r.status, 0, `${c.readme}:${c.line}: ${c.command}\n${r.stdout}\n${r.stderr}`);
    }

    const bin = join(clone, 'node_modules/.bin/extlb');
    assert.ok((statSync(bin).mode & 0o111) !== 0, 'node_modules/.bin/extlb is executable');
    for (const command of ['node_modules/.bin/extlb --help', 'npx --no-install extlb --help', 'npx extlb --help', 'npm exec extlb -- --help']) {
      const r = run(command, clone);
      t.diagnostic(`${command} (${r.seconds.toFixed(1)} s)`);
      assert.equal(r.status, 0, `${command}\n${r.stderr}`);
      assert.match(r.stdout, /^usage: extlb <command> \[flags\]/, command);
    }
  });
});
