// examples/deploy as its tests read it: every object with the file it came from, the container
// flags as the CLI parses them, and the built extlb CLI run the way a user runs it.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = join(import.meta.dirname, '../../..');
export const DEPLOY = join(ROOT, 'examples/deploy');
/** The `extlb` command as built (`npm run build`), which the image's entry point runs too. */
export const CLI = join(ROOT, 'packages/cli/dist/bin.js');
/** The image the repository's Dockerfile builds, tagged with the CLI's version. */
export const EXTLB_IMAGE = `extlb/extlb:${JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')).version}`;

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: any;
};

export interface Located {
  /** Relative to the repository root. */
  file: string;
  object: Manifest;
}

/** Every .yaml file under `dir`, depth first, sorted. */
export function yamlFiles(dir = DEPLOY): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** The objects of one file; a YAML error throws with its file:line:col. */
export function loadFile(file: string): Manifest[] {
  const shown = relative(ROOT, file);
  return parseAllDocuments(readFileSync(file, 'utf8'), { uniqueKeys: true, prettyErrors: true }).flatMap((doc) => {
    if (!('errors' in doc)) return [];
    const [error] = doc.errors;
    if (error) throw new Error(`${shown}:${error.linePos?.[0].line ?? 0}:${error.linePos?.[0].col ?? 0}: ${error.message}`);
    const o = doc.toJS() as Manifest | null;
    return o ? [o] : [];
  });
}

/** Every object under examples/deploy (or one of its folders). */
export function loadDeploy(folder = ''): Located[] {
  return yamlFiles(join(DEPLOY, folder)).flatMap((file) => loadFile(file).map((object) => ({ file: relative(ROOT, file), object })));
}

export interface ContainerImage {
  /** Relative to the repository root. */
  file: string;
  /** The Deployment's name. */
  name: string;
  image: string;
}

/** The image of every container (init containers first) of every Deployment under examples/deploy. */
export function deployImages(): ContainerImage[] {
  return loadDeploy().flatMap(({ file, object }) =>
    object.kind === 'Deployment'
      ? [...(object.spec.template.spec.initContainers ?? []), ...object.spec.template.spec.containers].map((c: { image: string }) => ({
          file,
          name: object.metadata.name,
          image: c.image,
        }))
      : [],
  );
}

/** The one object of `kind` (named `name`, if given) among `objects`; throws when there is not exactly one. */
export function only(objects: readonly Located[], kind: string, name?: string): Manifest {
  const found = objects.filter((o) => o.object.kind === kind && (name === undefined || o.object.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return (found[0] as Located).object;
}

/** A flag's value in container args (`--name=value` or `--name value`), as node's parseArgs reads them. */
export function flagValue(args: readonly string[], name: string): string | undefined {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const arg = args[i] as string;
  return arg.includes('=') ? arg.slice(name.length + 1) : args[i + 1];
}

/** Container args with `--name=value` flags given other values (e.g. listen addresses on loopback for a test). */
export function withFlags(args: readonly string[], values: Record<string, string>): string[] {
  return args.map((a) => {
    const name = Object.keys(values).find((n) => a.startsWith(`${n}=`));
    return name === undefined ? a : `${name}=${values[name]}`;
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion. */
export function runCli(args: readonly string[], options: { cwd?: string; cli?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const cli = options.cli ?? CLI;
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A container's resolved env (downward API fields taken from the Pod's metadata). */
export function containerEnv(deployment: Manifest, podName: string): Record<string, string> {
  const container = deployment.spec.template.spec.containers[0];
  const pod: Record<string, string> = { 'metadata.name': podName, 'metadata.namespace': deployment.metadata.namespace ?? 'default' };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    env[e.name] = e.value ?? (field ? (pod[field] ?? '') : '');
  }
  return env;
}

/** Kubernetes' `$(VAR)` expansion of container args from the container's env. */
export function expandArgs(args: readonly string[], env: Record<string, string>): string[] {
  return args.map((a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole));
}

export interface RunningCli {
  readonly child: ChildProcess;
  /** Output so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (now or later); rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts a long-running CLI command (controller, picker) the way a container does. */
export function startCli(args: readonly string[], options: { cwd?: string; cli?: string; env?: NodeJS.ProcessEnv } = {}): RunningCli {
  const cli = options.cli ?? CLI;
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listeners = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const append = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return {
    child,
    output: () => out,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (!m) return;
          done();
          resolve(m);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} in the output of extlb ${args[0]} within ${timeoutMs} ms:\n${out}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then((code) => {
          if (!listeners.has(check)) return;
          done();
          reject(new Error(`extlb ${args[0]} exited (${code}) before ${pattern}:\n${out}`));
        });
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
