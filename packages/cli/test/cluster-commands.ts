// The commands of a README block marked ```sh cluster (see readme-commands.ts): they need a
// Kubernetes cluster and Docker, which tests do not have. Each command is read as the shell splits
// it (quotes, `|`, `;`, `&&`, `||`, `&`, a `for NAME in ...; do ...; done` loop) into steps, and
// every step is classified as one of the steps below, which the README test checks as far as it
// can without a cluster. A step of any other kind, or shell syntax beyond that (redirections,
// subshells, command substitution), is an error: nothing in a cluster block goes unchecked
// without saying so.

import { posix } from 'node:path';

export type ClusterStep =
  /** `docker build -t IMAGE [-f DOCKERFILE] CONTEXT`; the Dockerfile as docker finds it from where the command runs. */
  | { kind: 'docker-build'; text: string; image: string; context: string; dockerfile: string }
  /** `docker run --rm IMAGE ARGS...`: the image's entry point is the extlb CLI, so ARGS are extlb's. */
  | { kind: 'docker-run'; text: string; image: string; args: string[] }
  /** `kubectl ... -f SOURCE...`: files, folders (their top level unless `-R`), `-` (stdin) or URLs. */
  | { kind: 'kubectl-files'; text: string; sources: string[]; recursive: boolean }
  /** `kubectl ... port-forward TARGET [LOCAL:]REMOTE...`: the local ports. */
  | { kind: 'port-forward'; text: string; ports: number[] }
  /** `curl ... URL` to a loopback port, which only a port-forward can make answer. */
  | { kind: 'curl'; text: string; port: number }
  /** `kind load docker-image IMAGE...`. */
  | { kind: 'kind-load'; text: string; images: string[] }
  /** Any other kubectl or kind command: it can only be recognised. */
  | { kind: 'cluster'; text: string }
  /** `npx extlb COMMAND ARGS...` of a command that reads the cluster through the kubeconfig (check, proxy-status, config-dump). */
  | { kind: 'extlb-cluster'; text: string; args: string[] }
  | { kind: 'echo'; text: string };

type Token = { word: string } | { op: string };

/** Longest first, so that `&&` is not read as two `&`. */
const OPERATORS = ['&&', '||', '>>', '|', '&', ';', '>', '<', '(', ')'];
/** Operators that end a pipeline; `|` continues one. */
const SEPARATORS = new Set([';', '&', '&&', '||']);
const CLUSTER_TOOLS = new Set(['kubectl', 'docker', 'kind']);
/** extlb's commands that read a cluster through the kubeconfig. */
export const EXTLB_CLUSTER_COMMANDS = new Set(['check', 'proxy-status', 'config-dump']);

/** The words and operators of a command line, quotes removed (no expansion is done). */
export function shellTokens(command: string): Token[] {
  const tokens: Token[] = [];
  let word: string | undefined;
  const flush = (): void => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'" || c === '"') {
      const end = command.indexOf(c, i + 1);
      if (end < 0) throw new Error(`an unterminated ${c} in: ${command}`);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '\\' && i + 1 < command.length) {
      word = (word ?? '') + command[++i];
    } else if (/\s/.test(c)) {
      flush();
    } else {
      const op = OPERATORS.find((o) => command.startsWith(o, i));
      if (op === undefined) {
        word = (word ?? '') + c;
        continue;
      }
      flush();
      tokens.push({ op });
      i += op.length - 1;
    }
  }
  flush();
  return tokens;
}

/** Whether any command of the line is run by kubectl, docker or kind. */
export function needsCluster(command: string): boolean {
  let starts = true;
  for (const token of shellTokens(command)) {
    if ('op' in token) {
      starts = token.op === '|' || token.op === '(' || SEPARATORS.has(token.op);
    } else {
      if (starts && CLUSTER_TOOLS.has(token.word)) return true;
      starts &&= token.word === 'do';
    }
  }
  return false;
}

/** The simple commands of a line, pipeline by pipeline, with a loop's body in place of the loop. */
function pipelines(command: string): string[][][] {
  const out: string[][][] = [[]];
  let words: string[] = [];
  let loops = 0;
  const end = (op: string | undefined): void => {
    if (words[0] === 'do') {
      if (loops === 0) throw new Error(`\`do\` outside a for loop in: ${command}`);
      words = words.slice(1);
    }
    if (words[0] === 'for') {
      if (!/^[A-Za-z_]\w*$/.test(words[1] ?? '') || words[2] !== 'in') throw new Error(`not a \`for NAME in WORDS\` loop: ${words.join(' ')}`);
      if (op !== ';') throw new Error(`a loop header ends with \`;\` before \`do\`: ${words.join(' ')}`);
      loops++;
    } else if (words.length === 1 && words[0] === 'done') {
      if (loops === 0) throw new Error(`\`done\` without a loop in: ${command}`);
      loops--;
    } else if (words.length > 0) {
      out.at(-1)!.push(words);
    } else if (op !== undefined && op !== ';') {
      throw new Error(`\`${op}\` without a command before it in: ${command}`);
    }
    words = [];
    if (op !== '|' && out.at(-1)!.length > 0) out.push([]);
  };
  for (const token of shellTokens(command)) {
    if ('word' in token) words.push(token.word);
    else if (token.op === '|' || SEPARATORS.has(token.op)) end(token.op);
    else throw new Error(`\`${token.op}\` (redirection or subshell): the README test reads no such shell syntax in a cluster block: ${command}`);
  }
  end(undefined);
  if (loops > 0) throw new Error(`a for loop without \`done\`: ${command}`);
  return out.filter((p) => p.length > 0);
}

/** A command line's steps, pipeline by pipeline: each step of a pipeline reads the output of the step before it. */
export function clusterPipelines(command: string): ClusterStep[][] {
  return pipelines(command).map((pipeline) =>
    pipeline.map((words) => {
      const step = classify(words);
      // The shell would expand these; the checks read the words as written.
      if (step.kind !== 'cluster' && step.kind !== 'echo' && words.some((w) => /[$`]/.test(w))) {
        throw new Error(`a shell expansion ($ or \`) the README test does not do, in: ${step.text}`);
      }
      return step;
    }),
  );
}

function classify(words: string[]): ClusterStep {
  const text = words.join(' ');
  const [tool, ...args] = words;
  switch (tool) {
    case 'docker':
      return docker(args, text);
    case 'kubectl':
      return kubectl(args, text);
    case 'kind':
      return kind(args, text);
    case 'curl':
      return curl(args, text);
    case 'echo':
      return { kind: 'echo', text };
    case 'npx':
      if (args[0] === 'extlb' && EXTLB_CLUSTER_COMMANDS.has(args[1] ?? '')) return { kind: 'extlb-cluster', text, args: args.slice(1) };
  }
  throw new Error(
    `${tool}: not a command the README test knows in a cluster block (docker build, docker run, kubectl, kind, curl to a port-forward, echo, npx extlb ${[...EXTLB_CLUSTER_COMMANDS].join('|')})`,
  );
}

/** The `--name value`, `--name=value` (and `-n value`) flags of one command, in order, and its other words. */
function parseFlags(args: string[], valued: ReadonlySet<string>, text: string, known?: ReadonlySet<string>) {
  const flags: { name: string; value: string }[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (known && !known.has(name)) throw new Error(`${name}: a flag the README test does not know in: ${text}`);
    let value: string | undefined;
    if (name !== arg) value = arg.slice(eq + 1);
    else if (valued.has(name)) {
      value = args[++i];
      if (value === undefined) throw new Error(`${name} without a value in: ${text}`);
    }
    flags.push({ name, value: value ?? '' });
  }
  const given = (names: string[]) => flags.filter((f) => names.includes(f.name));
  return { value: (...names: string[]) => given(names).map((f) => f.value), has: (...names: string[]) => given(names).length > 0, positional };
}

const DOCKER_BUILD_FLAGS = new Set(['-t', '--tag', '-f', '--file']);
const DOCKER_RUN_FLAGS = new Set(['--rm']);

function docker(args: string[], text: string): ClusterStep {
  const [command, ...rest] = args;
  if (command === 'build') {
    const flags = parseFlags(rest, DOCKER_BUILD_FLAGS, text, DOCKER_BUILD_FLAGS);
    const [image, ...more] = flags.value('-t', '--tag');
    if (image === undefined || more.length > 0 || flags.positional.length !== 1) throw new Error(`docker build -t IMAGE [-f DOCKERFILE] CONTEXT, not: ${text}`);
    const context = flags.positional[0]!;
    return { kind: 'docker-build', text, image, context, dockerfile: flags.value('-f', '--file')[0] ?? posix.join(context, 'Dockerfile') };
  }
  if (command === 'run') {
    const at = rest.findIndex((a) => !a.startsWith('-'));
    if (at < 0) throw new Error(`docker run without an image: ${text}`);
    parseFlags(rest.slice(0, at), new Set(), text, DOCKER_RUN_FLAGS);
    return { kind: 'docker-run', text, image: rest[at]!, args: rest.slice(at + 1) };
  }
  throw new Error(`docker ${command}: the README test knows docker build and docker run: ${text}`);
}

/** kubectl's flags that take a value (those a README may put before the verb, and -f). */
const KUBECTL_VALUED = new Set([
  '-n',
  '--namespace',
  '--context',
  '--kubeconfig',
  '--cluster',
  '--user',
  '-s',
  '--server',
  '-o',
  '--output',
  '-l',
  '--selector',
  '-f',
  '--filename',
  '-c',
  '--container',
  '--address',
]);

function kubectl(args: string[], text: string): ClusterStep {
  const flags = parseFlags(args, KUBECTL_VALUED, text);
  const sources = flags.value('-f', '--filename');
  if (sources.length > 0) return { kind: 'kubectl-files', text, sources, recursive: flags.has('-R', '--recursive') };
  const [verb, , ...ports] = flags.positional;
  if (verb !== 'port-forward') return { kind: 'cluster', text };
  const local = ports.map((p) => {
    const m = /^(\d*):\d+$|^(\d+)$/.exec(p);
    if (!m) throw new Error(`${p}: not a [LOCAL:]REMOTE port in: ${text}`);
    return m[1] ?? m[2]!;
  });
  return { kind: 'port-forward', text, ports: local.filter((p) => p !== '').map(Number) };
}

function kind(args: string[], text: string): ClusterStep {
  const flags = parseFlags(args, new Set(['--name', '-n', '--nodes']), text);
  const [command, what, ...images] = flags.positional;
  if (command === 'load' && what === 'docker-image') {
    if (images.length === 0) throw new Error(`kind load docker-image without an image: ${text}`);
    return { kind: 'kind-load', text, images };
  }
  return { kind: 'cluster', text };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function curl(args: string[], text: string): ClusterStep {
  const urls = args.filter((a) => /^https?:\/\//.test(a));
  const url = urls.length === 1 ? new URL(urls[0]!) : undefined;
  if (!url || !LOOPBACK.has(url.hostname)) throw new Error(`curl: the README test knows curl to one loopback URL (a port-forward), not: ${text}`);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { kind: 'curl', text, port };
}

/** Whether `url` is an install file of Gateway API's `release` (either channel), as published on GitHub. */
export function isGatewayApiInstall(url: string, release: string): boolean {
  const prefix = `https://github.com/kubernetes-sigs/gateway-api/releases/download/${release}/`;
  return url.startsWith(prefix) && ['standard-install.yaml', 'experimental-install.yaml'].includes(url.slice(prefix.length));
}
