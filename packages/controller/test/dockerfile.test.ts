// The root Dockerfile builds the one image examples/deploy names. No Docker engine runs here, so
// the file is read as Docker reads it and held to its rules (stages, exact Node base images, the
// lockfile's npm, production dependencies only in the runtime stage, a non-root user, the CLI as
// entry point); then the Dockerfile's own staging and install commands are run in a temporary
// directory, and the CLI they leave is started — the controller against an API server, the picker
// on a port — with production dependencies only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { after, describe, it } from 'node:test';
import { startKubeApiServer } from '@extlb/kube-api-server';
import * as grpc from '@grpc/grpc-js';
import { DEPLOY, EXTLB_IMAGE, ROOT, deployImages, runCli, startCli } from './deploy-manifests.js';

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}
interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

/** Docker's reading of a Dockerfile: comments dropped (inside continuations too), `\` joins lines, FROM starts a stage. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const joined = pending ? `${pending.text} ${line}` : line;
    const start = pending?.line ?? i + 1;
    if (joined.endsWith('\\')) {
      pending = { text: joined.slice(0, -1).trim(), line: start };
      return;
    }
    pending = undefined;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(joined) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args, line: start };
    if (instruction.keyword === 'FROM') {
      const [, image = '', name] = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ image, ...(name ? { name } : {}), instructions: [] });
    } else {
      const stage = stages.at(-1);
      assert.ok(stage, `Dockerfile:${start}: ${keyword} before any FROM`);
      stage.instructions.push(instruction);
    }
  });
  return stages;
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const stageNamed = (name: string) => dockerfile.find((s) => s.name === name);
const runs = (s: Stage) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const one = (s: Stage, keyword: string): Instruction => {
  const found = s.instructions.filter((i) => i.keyword === keyword);
  assert.equal(found.length, 1, `stage ${s.name}: one ${keyword}`);
  return found[0] as Instruction;
};
/** `--from=stage src dest` of a COPY. */
const copyOf = (i: Instruction) => {
  const parts = i.args.split(/\s+/);
  const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
  const paths = parts.filter((p) => !p.startsWith('--'));
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1) as string };
};
/** grpc.health.v1.HealthCheckResponse.status SERVING, as the picker answers once its endpoints are loaded. */
const SERVING = 1;

/** A grpc.health.v1 Check, encoded by hand: `service` is field 1 (a string), `status` field 1 (an enum). */
function healthCheck(address: string, service: string): Promise<number> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const name = Buffer.from(service);
  const request = Buffer.concat([Buffer.from([0x0a, name.length]), name]);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (b: Buffer) => b,
      (b: Buffer) => b,
      request,
      (err, reply) => {
        client.close();
        if (err || !reply) reject(err ?? new Error('no reply'));
        else resolve(reply[0] === 0x08 ? (reply[1] as number) : 0);
      },
    );
  });
}

const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const rootPackage = json('package.json');
const cliPackage = json('packages/cli/package.json');
const runtime = dockerfile.at(-1) as Stage;

/** The stage whose output a runtime COPY takes, and the RUN that installs production dependencies there. */
function productionInstall(): { stage: Stage; command: string } {
  const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map(copyOf);
  assert.equal(copies.length, 1, 'the runtime stage copies one tree');
  const stage = stageNamed(copies[0]?.from ?? '');
  assert.ok(stage, 'from an earlier stage, never from the build context');
  const installs = runs(stage).filter((r) => /\bnpm (ci|install|prune)\b/.test(r) && !/--global/.test(r));
  assert.equal(installs.length, 1, `stage ${stage.name}: one install`);
  return { stage, command: installs[0] as string };
}

describe('Dockerfile', () => {
  it('builds in stages, every one from the same exact Node 20 image', () => {
    assert.ok(dockerfile.length >= 2, 'multi-stage');
    const bases = dockerfile.map((s) => s.image);
    for (const image of bases) {
      const m = /^node:(20)\.(\d+)\.(\d+)-bookworm-slim$/.exec(image);
      assert.ok(m, `${image}: an exact node:20.x.y-bookworm-slim tag (no digest, no floating tag)`);
      assert.ok(Number(m[2]) >= Number(/>=20\.(\d+)/.exec(rootPackage.engines.node)?.[1]), `${image} satisfies engines.node ${rootPackage.engines.node}`);
    }
    assert.equal(new Set(bases).size, 1, 'the runtime runs on the Node the build used');
    const names = dockerfile.map((s) => s.name);
    assert.equal(new Set(names).size, names.length, 'stage names are unique');
  });

  it("installs with the lockfile's npm (packageManager), and builds with dev dependencies", () => {
    const npm = /^npm@(.+)$/.exec(rootPackage.packageManager)?.[0];
    for (const s of dockerfile.filter((st) => runs(st).some((r) => /\bnpm ci\b/.test(r)))) {
      const global = runs(s).findIndex((r) => r.includes(`npm install --global ${npm}`));
      const ci = runs(s).findIndex((r) => /\bnpm ci\b/.test(r));
      assert.ok(global >= 0 && global < ci, `stage ${s.name}: ${npm} before npm ci`);
    }
    const build = dockerfile[0] as Stage;
    assert.ok(
      runs(build).some((r) => /\bnpm ci\b/.test(r) && !/--omit/.test(r) && /npm run build/.test(r)),
      'the first stage installs everything and builds',
    );
  });

  it('gives the runtime stage production dependencies only, as a non-root user, with the CLI as entry point', () => {
    const { stage, command } = productionInstall();
    assert.notEqual(stage, runtime);
    assert.match(command, /^npm ci\b/, 'exactly what the lockfile pins');
    assert.match(command, /--omit=dev\b/);
    assert.match(command, new RegExp(`--workspace ${cliPackage.name}\\b`));
    assert.match(command, /--include-workspace-root=false\b/, "the root's dev tools stay out");
    // That stage starts from the build stage's staging tree, which holds no node_modules.
    const inputs = stage.instructions.filter((i) => i.keyword === 'COPY').map(copyOf);
    assert.deepEqual(
      inputs.map((c) => c.from),
      [(dockerfile[0] as Stage).name],
    );
    const staging = inputs[0]?.sources[0] as string;
    const stagingRun = runs(dockerfile[0] as Stage).find((r) => r.includes(staging.replace(/\/$/, '')));
    assert.ok(stagingRun?.includes('--exclude=node_modules'), 'the staging tree leaves every node_modules out');
    assert.ok(!runtime.instructions.some((i) => i.keyword === 'RUN'), 'nothing is installed in the runtime stage itself');

    const user = one(runtime, 'USER').args;
    assert.ok(!/^(root|0)(:|$)/.test(user), `USER ${user} is not root`);
    const [uid] = user.split(':');
    assert.ok(uid === 'node' || Number(uid) > 0, `USER ${user}`);
    const copied = copyOf(runtime.instructions.find((i) => i.keyword === 'COPY') as Instruction);
    assert.ok(!/--chown/.test(runtime.instructions.find((i) => i.keyword === 'COPY')?.args ?? ''), 'the code stays owned by root, not by the user it runs as');
    const workdir = one(runtime, 'WORKDIR').args;
    const bin = posix.join(workdir, 'packages/cli', cliPackage.bin.extlb);
    assert.deepEqual(JSON.parse(one(runtime, 'ENTRYPOINT').args), ['node', bin]);
    assert.equal(posix.resolve(workdir, copied.dest), workdir);
  });

  it('keeps local installs and builds out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const pattern of ['**/node_modules', '**/dist', '**/*.tsbuildinfo']) assert.ok(ignored.includes(pattern), `.dockerignore: ${pattern}`);
  });

  it('is the image every manifest in examples/deploy names (besides Envoy and the demo app)', () => {
    const image = EXTLB_IMAGE;
    const readme = readFileSync(join(DEPLOY, 'README.md'), 'utf8');
    assert.ok(readme.includes(`docker build -t ${image} .`), `the README builds ${image}`);
    assert.ok(readFileSync(join(ROOT, 'Dockerfile'), 'utf8').includes(`docker build -t ${image} .`));
    const named = deployImages();
    assert.deepEqual(
      named.filter((n) => n.image === image).map((n) => n.name),
      ['echo-picker', 'extlb-controller', 'extlb-webhook'],
    );
    const others = named.filter((n) => n.image !== image);
    assert.deepEqual(
      others.map((n) => `${n.file}: ${n.image}`),
      ['examples/deploy/app/echo.yaml: registry.k8s.io/e2e-test-images/agnhost:2.53', 'examples/deploy/gateway/edge.yaml: envoyproxy/envoy:v1.38.0'],
      'only the demo backend and Envoy come from elsewhere',
    );
  });

  it("leaves, by the Dockerfile's own commands, a CLI that runs the controller and the picker with production dependencies only", async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'extlb-image-'));
    after(() => rmSync(scratch, { recursive: true, force: true }));
    // The staging step makes its directory itself.
    const dir = join(scratch, 'app');
    for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) assert.ok(!existsSync(join(d, 'node_modules')), `no node_modules above ${dir} to borrow from`);
    // The build stage's staging step, here on the repository as built (npm test builds first).
    const build = dockerfile[0] as Stage;
    const { command } = productionInstall();
    const staging = runs(build).find((r) => r.includes('tar -c')) as string;
    const target = copyOf(productionInstall().stage.instructions.find((i) => i.keyword === 'COPY') as Instruction).sources[0]?.replace(/\/$/, '') as string;
    execFileSync('sh', ['-c', staging.replaceAll(target, dir)], { cwd: ROOT, stdio: 'pipe' });
    // The install, from npm's cache where it can (the registry otherwise).
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    execFileSync('sh', ['-c', `${command} --prefer-offline`], { cwd: dir, env, stdio: 'pipe' });

    // Not one package the lockfile marks as needed for development only.
    const lock = json('package-lock.json').packages as Record<string, { dev?: boolean; link?: boolean }>;
    const installed = (base: string): string[] =>
      readdirSync(join(dir, base), { withFileTypes: true }).flatMap((e) => {
        if (e.name.startsWith('.')) return [];
        if (e.name.startsWith('@')) return installed(join(base, e.name));
        const path = join(base, e.name);
        const nested = existsSync(join(dir, path, 'node_modules')) ? installed(join(path, 'node_modules')) : [];
        return [path, ...nested];
      });
    const packages = installed('node_modules');
    assert.ok(packages.length > 50, `${packages.length} packages installed`);
    const dev = packages.filter((p) => lock[p] === undefined || lock[p]?.dev === true);
    assert.deepEqual(dev, [], 'no development dependency (and nothing the lockfile does not pin)');
    for (const tool of ['typescript', 'tsx', 'turbo', '@biomejs/biome']) assert.ok(!packages.includes(`node_modules/${tool}`), `${tool} is not in the image`);

    const cli = join(dir, 'packages/cli/dist/bin.js');
    const prodEnv = { ...env, NODE_ENV: 'production' };
    const opts = { cli, cwd: dir, env: prodEnv };
    for (const args of [['--help'], ['controller', '--help']]) {
      const run = await runCli(args, opts);
      assert.equal(run.code, 0, `extlb ${args.join(' ')}: ${run.stderr}`);
    }
    const validated = await runCli(['validate', join(DEPLOY, 'app/route.yaml')], opts);
    assert.equal(validated.code, 0, validated.stdout + validated.stderr);

    await t.test('extlb controller: ready against an API server, then a clean stop', async () => {
      const api = await startKubeApiServer({ namespaces: ['extlb-system'] });
      after(() => api.close());
      const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
      const controller = startCli(
        [
          'controller',
          `--kubeconfig=${kubeconfig}`,
          '--namespace=extlb-system',
          '--xds-listen=127.0.0.1:0',
          '--http-listen=127.0.0.1:0',
          '--shutdown-timeout=1',
        ],
        opts,
      );
      after(() => controller.stop());
      const [, port] = await controller.waitFor(/"httpPort":(\d+)/);
      let ready = 0;
      for (let i = 0; i < 200 && ready !== 200; i++) {
        ready = (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(ready, 200, controller.output());
      assert.equal(await controller.stop(), 0, controller.output());
    });

    await t.test('extlb picker: answers a gRPC health check, then a clean stop', async () => {
      const picker = startCli(['picker', '--listen=127.0.0.1:0', '--endpoints=127.0.0.1:8000'], opts);
      after(() => picker.stop());
      const [, port] = await picker.waitFor(/"address":"127\.0\.0\.1:(\d+)".*"msg":"listening"/);
      assert.equal(await healthCheck(`127.0.0.1:${port}`, 'readiness'), SERVING);
      assert.equal(await picker.stop(), 0, picker.output());
    });
  });
});
