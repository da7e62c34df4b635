// Every shell command in the repository's READMEs, run as a reader would run it (the npm commands
// run in a fresh clone, in fresh-clone.test.ts). A package README speaks to someone who installed
// the package: its commands run in a project folder of their own, with the package installed
// (node_modules), their manifests (a copy of examples/quickstart in manifests/), a serving
// certificate (tls.crt, tls.key), an endpoints file and a kubeconfig for a loopback API server that
// serves EndpointSlices. Other READMEs' commands run in the README's own folder; those of a block
// marked ```sh repo-root, in the repository root (see readme-commands.ts).
// - A command with `--listen HOST:PORT` is a server: it runs on a free loopback port (later commands
//   of the same README that name the port are pointed at it, as a reader would with a server in
//   another terminal) from the moment it accepts connections and has said "listening", to the
//   README's end; then it gets SIGTERM and must exit 0 (extlb's servers handle SIGTERM from before
//   they start listening, so no wait is needed).
// - A command that needs a cluster and Docker (a ```sh cluster block) is checked step by step as
//   far as it can be without them (cluster-commands.ts reads the steps):
//   - `docker build -t IMAGE CONTEXT`: CONTEXT has the Dockerfile, and IMAGE is the image it builds
//     (extlb/extlb:VERSION), which examples/deploy's manifests run (packages/controller/test/
//     dockerfile.test.ts holds the Dockerfile to that and runs its install steps).
//   - `docker run --rm IMAGE ARGS...`: the image's entry point is the extlb CLI, so `extlb ARGS...`
//     runs here and must exit 0; its output goes on to the next step of a pipeline.
//   - `kubectl ... -f SOURCE`: a file or folder must exist and read as manifests without problems
//     (a folder's top level, as kubectl reads it without -R); `-` is the output of the step piped
//     in; a URL cannot be fetched here, so it must be an install file of the Gateway API release
//     extlb's conformance targets.
//   - `kind load docker-image IMAGE`: IMAGE was built by a `docker build` before it.
//   - `curl` to a loopback port: a `kubectl port-forward` before it forwards that port.
//   - Other kubectl and kind commands can only be recognised.
//   What was not run is reported: the test is marked skipped with "needs a cluster: not run: ...".
//   A command of any other kind in a cluster block fails, and so does kubectl, docker or kind in a
//   block without the mark.
// - Everything else must exit 0.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it, type TestContext } from 'node:test';
import { EXTLB_IMAGE, deployImages } from '../../controller/test/deploy-manifests.js';
import { GATEWAY_API_RELEASE } from '../../envoy/test/conformance/upstream.js';
import { endpointSlice, startFakeKubeApi, type FakeKubeApi } from '../../picker/test/fake-kube-api.js';
import { makeCert } from '../../webhook/test/helpers.js';
import { loadManifests } from '../src/manifests.js';
import { type ClusterStep, clusterPipelines, isGatewayApiInstall, needsCluster } from './cluster-commands.js';
import { isNpmCommand, readmeCommands, readmeDir, shellEnv, type ReadmeCommand } from './readme-commands.js';

const repo = resolve(import.meta.dirname, '../../..');
/** The extlb command, as npm links it and as the image's entry point runs it. */
const extlb = join(repo, 'packages/cli/bin/extlb.js');
const LISTEN = /--listen[ =](\S+):(\d+)/;
const LOOPBACK_HOSTS = '(?:0\\.0\\.0\\.0|127\\.0\\.0\\.1|localhost)';

let api: FakeKubeApi;
before(async () => {
  api = await startFakeKubeApi([endpointSlice('llm-abc12', ['10.0.0.1', '10.0.0.2'], '1', 'default')], 'default');
});
after(() => api.close());

/** A user's project folder for a package README's commands. */
function userProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-readme-'));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  cpSync(join(repo, 'examples/quickstart'), join(dir, 'manifests'), { recursive: true });
  makeCert(dir, 'extlb-webhook.extlb-system.svc');
  writeFileSync(join(dir, 'endpoints.txt'), '10.0.0.1:8000\n10.0.0.2:8000\n');
  writeFileSync(join(dir, 'kubeconfig.yaml'), api.kubeconfig());
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
    server.on('error', reject);
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

interface Server {
  where: string;
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** What the cluster steps of one command checked, and what they could not run. */
interface ClusterReport {
  checked: string[];
  notRun: string[];
}

/** One step of a cluster command, where it stands. */
interface StepPlace {
  cwd: string;
  /** The command, for messages. */
  where: string;
  line: number;
  /** Whether a step before it in its pipeline feeds it. */
  piped: boolean;
  /** That step's output, when it ran here. */
  input: string | undefined;
  report: ClusterReport;
}

/** The files kubectl reads for `-f SOURCE`: without -R, only the manifest files at a folder's top level. */
function kubectlPaths(cwd: string, source: string, recursive: boolean): string[] {
  if (recursive || !statSync(resolve(cwd, source)).isDirectory()) return [source];
  return readdirSync(resolve(cwd, source), { withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/.test(e.name))
    .map((e) => join(source, e.name))
    .sort();
}

/** Reads `paths` (`-`: `stdin`) as kubectl would; they must hold manifests and no problems. Returns how many. */
async function readsManifests(paths: string[], stdin: string, cwd: string, where: string): Promise<number> {
  const io = { stdin: Readable.from([stdin]), stdout: new PassThrough(), stderr: new PassThrough(), cwd };
  const { manifests, problems } = await loadManifests(paths, io);
  assert.deepEqual(problems, [], where);
  assert.ok(manifests.length > 0, `${where}\n${paths.join(' ')} holds no manifests`);
  return manifests.length;
}

/** The commands of one README, run in order, with the servers they start. */
class Session {
  private readonly servers: Server[] = [];
  /** The README's ports and the free loopback ports standing in for them. */
  private readonly ports = new Map<string, number>();
  /** The images its `docker build`s built. */
  private readonly built = new Set<string>();
  /** The local ports its `kubectl port-forward`s forward, and the line of each. */
  private readonly forwarded = new Map<number, number>();

  constructor(
    /** Where its commands run, unless their block says repo-root. */
    readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Points the README's loopback HOST:PORT at the port standing in for it. */
  private rewritePorts(command: string): string {
    let out = command;
    for (const [port, standIn] of this.ports) out = out.replace(new RegExp(`${LOOPBACK_HOSTS}:${port}\\b`, 'g'), `127.0.0.1:${standIn}`);
    return out;
  }

  async run(c: ReadmeCommand, t: TestContext): Promise<void> {
    const where = `${c.readme}:${c.line}: ${c.command}`;
    const cwd = c.repoRoot ? repo : this.cwd;
    if (c.cluster) return this.cluster(c, cwd, where, t);
    assert.ok(
      !needsCluster(c.command),
      `${where}\nneeds a cluster or Docker, which tests do not have: mark its block \`\`\`sh cluster (see readme-commands.ts)`,
    );
    const listen = LISTEN.exec(c.command);
    if (listen) return this.startServer(c.command, listen, cwd, where);
    const r = spawnSync('sh', ['-c', this.rewritePorts(c.command)], { cwd, env: this.env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${where}\nexit ${r.status}\n${r.stdout}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /internal error/, where);
  }

  /** A command of a cluster block, step by step, as far as it goes without a cluster; the rest is reported as not run. */
  private async cluster(c: ReadmeCommand, cwd: string, where: string, t: TestContext): Promise<void> {
    let pipelines: ClusterStep[][];
    try {
      pipelines = clusterPipelines(c.command);
    } catch (err) {
      assert.fail(`${where}\n${(err as Error).message}`);
    }
    const report: ClusterReport = { checked: [], notRun: [] };
    for (const pipeline of pipelines) {
      let input: string | undefined;
      for (const [i, step] of pipeline.entries()) input = await this.clusterStep(step, { cwd, where, line: c.line, piped: i > 0, input, report });
    }
    for (const note of report.checked) t.diagnostic(note);
    if (report.notRun.length > 0) t.skip(`needs a cluster: not run: ${report.notRun.join('; ')}`);
  }

  /** Checks one step; its output when it ran here. */
  private async clusterStep(step: ClusterStep, at: StepPlace): Promise<string | undefined> {
    const where = `${at.where}\n${step.text}`;
    switch (step.kind) {
      case 'docker-build': {
        assert.equal(resolve(at.cwd, step.context), repo, `${where}\nthe image is built from the repository root`);
        assert.equal(resolve(at.cwd, step.dockerfile), join(repo, 'Dockerfile'), `${where}\nwith the repository's Dockerfile`);
        assert.ok(existsSync(join(repo, 'Dockerfile')), `${where}\nthe Dockerfile is missing`);
        assert.equal(step.image, EXTLB_IMAGE, `${where}\nthe Dockerfile builds ${EXTLB_IMAGE}`);
        assert.ok(
          deployImages().some((c) => c.image === step.image),
          `${where}\nno manifest under examples/deploy runs ${step.image}`,
        );
        this.built.add(step.image);
        at.report.checked.push(`${step.text}: the repository's Dockerfile, tagged as examples/deploy names it; not built (no Docker)`);
        return undefined;
      }
      case 'docker-run': {
        assert.equal(step.image, EXTLB_IMAGE, `${where}\nthe README test knows the entry point of ${EXTLB_IMAGE} only (extlb)`);
        const r = spawnSync(process.execPath, [extlb, ...step.args], { cwd: at.cwd, env: this.env, encoding: 'utf8', timeout: 120_000 });
        assert.equal(r.status, 0, `${where}\nextlb ${step.args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
        at.report.checked.push(`${step.text}: ran extlb ${step.args.join(' ')}, the image's entry point, here`);
        return r.stdout;
      }
      case 'kubectl-files':
        for (const source of step.sources) await this.kubectlSource(source, step.recursive, step.text, where, at);
        return undefined;
      case 'port-forward':
        for (const port of step.ports) this.forwarded.set(port, at.line);
        at.report.notRun.push(step.text);
        return undefined;
      case 'curl': {
        const line = this.forwarded.get(step.port);
        assert.ok(line !== undefined, `${where}\nno kubectl port-forward before it forwards port ${step.port}`);
        at.report.notRun.push(`${step.text} (through the port-forward of line ${line})`);
        return undefined;
      }
      case 'kind-load':
        for (const image of step.images) assert.ok(this.built.has(image), `${where}\n${image} is not built by a docker build before it`);
        at.report.notRun.push(step.text);
        return undefined;
      case 'cluster':
        at.report.notRun.push(step.text);
        return undefined;
      case 'extlb-cluster': {
        // Its flags must parse: with no kubeconfig to read, a usage error is exit 2, anything later exit 1.
        const r = spawnSync(process.execPath, [extlb, ...step.args, '--kubeconfig', join(at.cwd, 'no-such-kubeconfig')], {
          cwd: at.cwd,
          env: this.env,
          encoding: 'utf8',
          timeout: 60_000,
        });
        assert.equal(r.status, 1, `${where}\nextlb ${step.args.join(' ')}: exit ${r.status} (2 is a usage error)\n${r.stdout}\n${r.stderr}`);
        at.report.notRun.push(`${step.text} (its flags parse; it needs the cluster)`);
        return undefined;
      }
      case 'echo':
        return undefined;
    }
  }

  /** One `-f SOURCE` of a kubectl command. */
  private async kubectlSource(source: string, recursive: boolean, text: string, where: string, at: StepPlace): Promise<void> {
    if (source === '-') {
      assert.ok(at.piped, `${where}\nreads manifests from stdin, but nothing is piped into it`);
      if (at.input === undefined) {
        at.report.notRun.push(`${text} (its input is not made here)`);
        return;
      }
      const count = await readsManifests(['-'], at.input, at.cwd, where);
      at.report.checked.push(`${text}: the ${count} manifests piped in read without problems; not applied (no cluster)`);
    } else if (/^https?:\/\//.test(source)) {
      assert.ok(
        isGatewayApiInstall(source, GATEWAY_API_RELEASE),
        `${where}\n${source} cannot be fetched here: the README test knows only the install files of Gateway API ${GATEWAY_API_RELEASE}, the release extlb's conformance targets`,
      );
      at.report.notRun.push(`${text} (not fetched: Gateway API ${GATEWAY_API_RELEASE}'s install file)`);
    } else {
      assert.ok(existsSync(resolve(at.cwd, source)), `${where}\n${source} does not exist`);
      const count = await readsManifests(kubectlPaths(at.cwd, source, recursive), '', at.cwd, where);
      at.report.checked.push(`${text}: the ${count} manifests of ${source} read without problems; not applied (no cluster)`);
    }
  }

  private async startServer(command: string, listen: RegExpExecArray, cwd: string, where: string): Promise<void> {
    const port = await freePort();
    this.ports.set(listen[2]!, port);
    const text = this.rewritePorts(command.replace(listen[0], `--listen 127.0.0.1:${port}`));
    const proc = spawn('sh', ['-c', `exec ${text}`], { cwd, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
    const server: Server = { where, proc, output: () => output, exited };
    this.servers.push(server);
    let gone = false;
    void exited.then(() => (gone = true));
    while (!/listening/.test(output) || !(await accepts(port))) {
      assert.ok(!gone, `${where}\nexited before it listened:\n${output}`);
      await new Promise((wait) => setTimeout(wait, 100));
    }
  }

  /** Stops the servers, each of which must exit 0 on SIGTERM. */
  async stopServers(): Promise<void> {
    const servers = this.servers.splice(0);
    for (const server of servers) server.proc.kill('SIGTERM');
    for (const server of servers) assert.equal(await server.exited, 0, `${server.where}\ndid not exit 0 on SIGTERM:\n${server.output()}`);
  }
}

const byReadme = new Map<string, ReadmeCommand[]>();
for (const c of readmeCommands(repo)) if (!isNpmCommand(c)) byReadme.set(c.readme, [...(byReadme.get(c.readme) ?? []), c]);

it('finds the commands of every README', () => {
  // The READMEs of the CLI, the picker and the webhook each tell the reader to run extlb.
  for (const readme of ['packages/cli/README.md', 'packages/picker/README.md', 'packages/webhook/README.md']) {
    assert.ok(
      (byReadme.get(readme) ?? []).some((c) => /\bextlb\b/.test(c.command)),
      readme,
    );
  }
});

for (const [readme, commands] of byReadme) {
  describe(readme, () => {
    let session: Session;
    let project: string | undefined;
    before(() => {
      project = readme.startsWith('packages/') ? userProject() : undefined;
      const path = `${join(repo, 'node_modules/.bin')}${delimiter}${process.env.PATH ?? ''}`;
      const env = shellEnv(project ? { PATH: path, KUBECONFIG: join(project, 'kubeconfig.yaml') } : { PATH: path });
      session = new Session(project ?? join(repo, readmeDir(commands[0]!)), env);
    });
    after(() => {
      if (project) rmSync(project, { recursive: true, force: true });
    });

    for (const c of commands) it(`line ${c.line}: ${c.command}`, (t) => session.run(c, t));
    if (commands.some((c) => LISTEN.test(c.command))) it('stops its servers, each exiting 0 on SIGTERM', () => session.stopServers());
  });
}
