// Every shell command in the repository's READMEs, run as a reader would run it (the npm commands
// run in a fresh clone, in fresh-clone.test.ts). A package README speaks to someone who installed
// the package: its commands run in a project folder of their own, with the package installed
// (node_modules), their manifests (a copy of examples/quickstart in manifests/), a serving
// certificate (tls.crt, tls.key), an endpoints file and a kubeconfig for a loopback API server that
// serves EndpointSlices. Other READMEs' commands run in the README's own folder.
// - A command with `--listen HOST:PORT` is a server: it runs on a free loopback port (later commands
//   of the same README that name the port are pointed at it, as a reader would with a server in
//   another terminal) from the moment it accepts connections and has said "listening", to the
//   README's end; then it gets SIGTERM and must exit 0.
// - kubectl needs a cluster, which tests do not have: its `-f` files must exist and hold manifests
//   that read without problems.
// - Everything else must exit 0.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { endpointSlice, startFakeKubeApi, type FakeKubeApi } from '../../picker/test/fake-kube-api.js';
import { makeCert } from '../../webhook/test/helpers.js';
import { loadManifests } from '../src/manifests.js';
import { isNpmCommand, readmeCommands, readmeDir, shellEnv, type ReadmeCommand } from './readme-commands.js';

const repo = resolve(import.meta.dirname, '../../..');
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

/**
 * How long a server runs at least before it gets SIGTERM: extlb's servers set up their SIGTERM
 * handling just after they announce that they are listening, and a SIGTERM before that ends them
 * by the signal, not with exit code 0.
 */
const SETTLE_MS = 1000;

interface Server {
  where: string;
  /** When it said it was listening. */
  ready: number;
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The commands of one README, run in order in one folder, with the servers they start. */
class Session {
  private readonly servers: Server[] = [];
  /** The README's ports and the free loopback ports standing in for them. */
  private readonly ports = new Map<string, number>();

  constructor(
    readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Points the README's loopback HOST:PORT at the port standing in for it. */
  private rewritePorts(command: string): string {
    let out = command;
    for (const [port, standIn] of this.ports) out = out.replace(new RegExp(`${LOOPBACK_HOSTS}:${port}\\b`, 'g'), `127.0.0.1:${standIn}`);
    return out;
  }

  async run(c: ReadmeCommand): Promise<void> {
    const where = `${c.readme}:${c.line}: ${c.command}`;
    if (/^kubectl\s/.test(c.command)) return this.kubectl(c.command, where);
    const listen = LISTEN.exec(c.command);
    if (listen) return this.startServer(c.command, listen, where);
    const r = spawnSync('sh', ['-c', this.rewritePorts(c.command)], { cwd: this.cwd, env: this.env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${where}\nexit ${r.status}\n${r.stdout}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /internal error/, where);
  }

  private async kubectl(command: string, where: string): Promise<void> {
    const files = [...command.matchAll(/(?:^|\s)(?:-f|--filename)[ =](\S+)/g)].map((m) => m[1]!);
    assert.ok(
      files.length > 0 && !files.includes('-'),
      `${where}\nkubectl needs a cluster; the README test checks the files a kubectl command names with -f FILE`,
    );
    for (const file of files) {
      assert.ok(existsSync(resolve(this.cwd, file)), `${where}\n${file} does not exist`);
      const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), cwd: this.cwd };
      const { manifests, problems } = await loadManifests([file], io);
      assert.deepEqual(problems, [], where);
      assert.ok(manifests.length > 0, `${where}\n${file} holds no manifests`);
    }
  }

  private async startServer(command: string, listen: RegExpExecArray, where: string): Promise<void> {
    const port = await freePort();
    this.ports.set(listen[2]!, port);
    const text = this.rewritePorts(command.replace(listen[0], `--listen 127.0.0.1:${port}`));
    const proc = spawn('sh', ['-c', `exec ${text}`], { cwd: this.cwd, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
    const server: Server = { where, ready: Number.POSITIVE_INFINITY, proc, output: () => output, exited };
    this.servers.push(server);
    let gone = false;
    void exited.then(() => (gone = true));
    while (!/listening/.test(output) || !(await accepts(port))) {
      assert.ok(!gone, `${where}\nexited before it listened:\n${output}`);
      await new Promise((wait) => setTimeout(wait, 100));
    }
    server.ready = Date.now();
  }

  /** Stops the servers, each of which must exit 0 on SIGTERM. */
  async stopServers(): Promise<void> {
    const servers = this.servers.splice(0);
    const wait = Math.max(...servers.map((s) => s.ready)) + SETTLE_MS - Date.now();
    if (wait > 0 && Number.isFinite(wait)) await new Promise((settle) => setTimeout(settle, wait));
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

    for (const c of commands) it(`line ${c.line}: ${c.command}`, () => session.run(c));
    if (commands.some((c) => LISTEN.test(c.command))) it('stops its servers, each exiting 0 on SIGTERM', () => session.stopServers());
  });
}
