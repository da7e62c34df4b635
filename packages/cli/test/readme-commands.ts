// The shell commands the repository's READMEs tell a reader to run: every line of every ```sh
// block, comments removed and continuation lines joined. The README tests run each of them, so a
// command added to a README is tested without anyone listing it.
//
// Words after the language on a block's opening fence tell the tests how to run its commands
// (GitHub still highlights the block by its first word):
// - ```sh cluster: the commands need a Kubernetes cluster and Docker, which tests do not have.
//   Each is checked as far as it can be without them (cluster-commands.ts says how), and what
//   could not be run is reported as such; a kubectl, docker or kind command in a block without the
//   mark fails.
// - ```sh repo-root: the commands run from the repository root, for a README that tells the reader
//   to run them there (commands run in the README's own folder otherwise).
// Any other word there is an error, so that a misspelt mark does not go unnoticed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export interface ReadmeCommand {
  /** The README, relative to the repository root. */
  readme: string;
  /** 1-based line of the command in the README. */
  line: number;
  command: string;
  /** Its block is marked `cluster`. */
  cluster: boolean;
  /** Its block is marked `repo-root`. */
  repoRoot: boolean;
}

const SHELL_LANGUAGES = ['sh', 'bash', 'shell'];
const BLOCK_MARKS = ['cluster', 'repo-root'];

/** Every README.md in the repository root, packages/*, tools/* and anywhere under examples/. */
export function readmeFiles(repo: string): string[] {
  const found = [join(repo, 'README.md')];
  for (const parent of ['packages', 'tools']) {
    for (const entry of readdirSync(join(repo, parent), { withFileTypes: true })) {
      const readme = join(repo, parent, entry.name, 'README.md');
      if (entry.isDirectory() && existsSync(readme)) found.push(readme);
    }
  }
  const examples = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) examples(join(dir, entry.name));
      else if (entry.name === 'README.md') found.push(join(dir, entry.name));
    }
  };
  examples(join(repo, 'examples'));
  return found.map((f) => relative(repo, f)).sort();
}

/** `line` without a trailing `# comment` (a `#` after a space and outside quotes). */
export function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i).trimEnd();
    }
  }
  return line.trimEnd();
}

/** The commands of one README's ```sh (or bash, shell) blocks, in order; throws on an unknown mark. */
export function commandsOf(text: string, readme: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  let block: { cluster: boolean; repoRoot: boolean } | undefined;
  let inFence = false;
  let pending: ReadmeCommand | undefined;
  text.split('\n').forEach((raw, i) => {
    const fence = /^\s*```(\S*)(.*)$/.exec(raw);
    if (fence) {
      inFence = !inFence;
      block = undefined;
      if (!inFence || !SHELL_LANGUAGES.includes(fence[1]!)) return;
      const marks = fence[2]!.trim().split(/\s+/).filter(Boolean);
      const unknown = marks.filter((m) => !BLOCK_MARKS.includes(m));
      if (unknown.length > 0) throw new Error(`${readme}:${i + 1}: ${unknown.join(' ')}: not a mark of a shell block (${BLOCK_MARKS.join(', ')})`);
      block = { cluster: marks.includes('cluster'), repoRoot: marks.includes('repo-root') };
      return;
    }
    if (!block) return;
    const line = withoutComment(raw).trim();
    if (pending) {
      pending.command += ` ${line.replace(/\\$/, '').trim()}`;
      if (!line.endsWith('\\')) pending = undefined;
      return;
    }
    if (line === '') return;
    const command: ReadmeCommand = { readme, line: i + 1, command: line.replace(/\\$/, '').trim(), ...block };
    out.push(command);
    if (line.endsWith('\\')) pending = command;
  });
  return out;
}

/** Every README command of the repository, README by README. */
export function readmeCommands(repo: string): ReadmeCommand[] {
  return readmeFiles(repo).flatMap((readme) => commandsOf(readFileSync(join(repo, readme), 'utf8'), readme));
}

/** Whether the command runs npm itself (`npm ci`, `npm start`...): those run in a fresh clone. */
export function isNpmCommand(c: ReadmeCommand): boolean {
  return /^npm\s/.test(c.command);
}

/** The folder a README speaks from, relative to the repository root. */
export function readmeDir(c: ReadmeCommand): string {
  return dirname(c.readme);
}

/**
 * The environment of a user's shell for README commands: none of the npm_* variables of the
 * `npm test` that runs the tests (npm_config_local_prefix would point a nested npm at this
 * checkout), npm offline (a missing local bin must fail, not fetch another `extlb` from the
 * registry) and quiet, plus `extra`.
 */
export function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key) && !/^(INIT_CWD|TURBO_.*)$/.test(key)) env[key] = value;
  return {
    ...env,
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    TURBO_TELEMETRY_DISABLED: '1',
    ...extra,
  };
}
