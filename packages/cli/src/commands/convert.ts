// `extlb convert PATH...` (or `--from-cluster`): Gateway API and extlb objects in, Envoy
// configuration on stdout, statuses to a file, diagnostics on stderr at file:line:col.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { convert, describeRef, toBootstrap, toXds, type ConvertOptions, type Diagnostic, type EndpointMode, type EnvoyTarget } from '@extlb/envoy';
import { isValidatedKind, validate } from '@extlb/validate';
import type { Command } from '../command.js';
import { DiagnosticWriter, note, type DiagnosticLine } from '../diagnostic-lines.js';
import { oneOf, usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, UsageError, write, type Io } from '../io.js';
import { loadManifests, positionOf, type LoadProblem, type Manifest } from '../manifests.js';
import { toYaml, toYamlDocuments } from '../yaml-out.js';
import { bracketMapKeys } from './validate.js';

const USAGE =
  'extlb convert [PATH...|--from-cluster [--context NAME] [--kubeconfig FILE]] [--format bootstrap|xds] [-o yaml|json] ' +
  '[--envoy 1.35|1.38|legacy] [--endpoints static|dns|eds] [--status-out FILE] [--manifests-out FILE] [--out FILE] ' +
  '[--gateway-class NAME]... [-v] [--controller-name NAME] [--cluster-domain DOMAIN] [--per-try-timeout DURATION] [--xds-server HOST:PORT]';

/** The kinds the converter reads from a cluster: apiVersion and kind. */
export const CLUSTER_KINDS: [string, string][] = [
  ['gateway.networking.k8s.io/v1', 'Gateway'],
  ['gateway.networking.k8s.io/v1', 'HTTPRoute'],
  ['gateway.networking.k8s.io/v1beta1', 'ReferenceGrant'],
  ['v1', 'Service'],
  ['v1', 'Pod'],
  ['v1', 'Namespace'],
  ['discovery.k8s.io/v1', 'EndpointSlice'],
  ['extlb.dev/v1alpha1', 'BackendPool'],
  ['extlb.dev/v1alpha1', 'LoadBalancerPolicy'],
  ['inference.networking.k8s.io/v1', 'InferencePool'],
];

export interface ConvertRun {
  output: string;
  statuses: string;
  manifests: string;
  manifestCount: number;
  /** One line per error or warning: `file:line:col: severity: Kind ns/name: path: message`. */
  messages: DiagnosticLine[];
  /** The same for info diagnostics (ignored kinds, choices the converter made). */
  infos: DiagnosticLine[];
  errors: number;
}

function key(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

/** Finds the manifest of each object, so diagnostics can point into files. */
function indexManifests(manifests: Manifest[]): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const m of manifests) {
    const o = m.object as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (!o || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') continue;
    const ns = typeof o.metadata.namespace === 'string' ? o.metadata.namespace : o.kind === 'Namespace' ? undefined : 'default';
    const k = key(o.kind, ns, o.metadata.name);
    if (!out.has(k)) out.set(k, m);
  }
  return out;
}

function formatDiagnostic(d: Diagnostic, where: Map<string, Manifest>, source: string): DiagnosticLine {
  const m = d.object ? where.get(key(d.object.kind, d.object.namespace, d.object.name)) : undefined;
  let at = source;
  if (m) {
    const { line, col } = positionOf(m, bracketMapKeys(m.object, d.path ?? ''));
    at = `${m.file}:${line}:${col}`;
  }
  const object = d.object ? ` ${describeRef(d.object)}:` : '';
  const path = d.path ? ` ${d.path}:` : '';
  return { where: at, text: `${d.severity}:${object}${path} ${d.message}`, message: `${d.severity}:${path} ${d.message}` };
}

function formatProblem(p: LoadProblem): DiagnosticLine {
  return note(p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file, `error: ${p.message}`);
}

/**
 * API-server validation of the extlb kinds (schema, defaults, CEL), so that an object the API
 * server would refuse is reported with the API server's own message, not just converted.
 */
function validateExtlbKinds(manifests: Manifest[]): DiagnosticLine[] {
  const lines: DiagnosticLine[] = [];
  for (const m of manifests) {
    const o = m.object as { apiVersion?: unknown; kind?: unknown } | null;
    if (!o || !isValidatedKind(o.apiVersion, o.kind)) continue;
    for (const e of validate(m.object).errors) {
      const { line, col } = positionOf(m, bracketMapKeys(m.object, e.field));
      lines.push(note(`${m.file}:${line}:${col}`, `error: ${e.message}`));
    }
  }
  return lines;
}

export interface RenderOptions {
  format: 'bootstrap' | 'xds';
  output: 'yaml' | 'json';
  xdsServer?: string;
}

function render(value: unknown, output: 'yaml' | 'json'): string {
  return output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : toYaml(value);
}

/** Kubernetes objects in a form `kubectl apply -f` takes: YAML documents, or a JSON v1 List. */
function renderObjects(objects: unknown[], output: 'yaml' | 'json'): string {
  return output === 'json' ? render({ apiVersion: 'v1', kind: 'List', items: objects }, 'json') : toYamlDocuments(objects);
}

/** Converts objects and renders everything the command writes. */
export function runConversion(
  objects: unknown[],
  options: ConvertOptions,
  renderOptions: RenderOptions,
  where: Map<string, Manifest>,
  source: string,
): ConvertRun {
  const result = convert(objects, options);
  const bootstrapOptions = renderOptions.xdsServer ? { xdsServer: renderOptions.xdsServer } : {};
  const config = renderOptions.format === 'xds' ? toXds(result.envoy) : toBootstrap(result.envoy, bootstrapOptions);
  const messages = result.diagnostics.filter((d) => d.severity !== 'info').map((d) => formatDiagnostic(d, where, source));
  const infos = result.diagnostics.filter((d) => d.severity === 'info').map((d) => formatDiagnostic(d, where, source));
  if (renderOptions.format === 'bootstrap' && result.envoy.endpoints.length > 0) {
    messages.push(
      note(
        source,
        `warning: ${result.envoy.endpoints.length} ClusterLoadAssignments (eds endpoints) are not part of a bootstrap; write them with --format xds`,
      ),
    );
  }
  return {
    output: render(config, renderOptions.output),
    statuses: renderObjects(result.statuses, renderOptions.output),
    manifests: renderObjects(result.envoy.manifests, renderOptions.output),
    manifestCount: result.envoy.manifests.length,
    messages,
    infos,
    errors: result.diagnostics.filter((d) => d.severity === 'error').length,
  };
}

/** Lists every kind the converter reads from the cluster of a kubeconfig context. */
export async function listFromCluster(
  kubeconfig: string | undefined,
  context: string | undefined,
): Promise<{ objects: unknown[]; messages: DiagnosticLine[] }> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const objects: unknown[] = [];
  const messages: DiagnosticLine[] = [];
  for (const [apiVersion, kind] of CLUSTER_KINDS) {
    try {
      const list = await client.list(apiVersion, kind);
      // Typed kinds come back with Date objects and without apiVersion/kind; a JSON round trip and
      // the list's own kind restore the manifest form the converter reads.
      for (const item of list.items) objects.push({ ...(JSON.parse(JSON.stringify(item)) as object), apiVersion, kind });
    } catch (err) {
      messages.push(note('cluster', `warning: ${kind} (${apiVersion}) not listed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`));
    }
  }
  return { objects, messages };
}

function parseFlags(args: string[]) {
  return usageErrors(() =>
    parseArgs({
      args,
      options: {
        'from-cluster': { type: 'boolean' },
        context: { type: 'string' },
        kubeconfig: { type: 'string' },
        format: { type: 'string' },
        output: { type: 'string', short: 'o' },
        envoy: { type: 'string' },
        endpoints: { type: 'string' },
        'status-out': { type: 'string' },
        'manifests-out': { type: 'string' },
        out: { type: 'string' },
        'controller-name': { type: 'string' },
        'cluster-domain': { type: 'string' },
        'per-try-timeout': { type: 'string' },
        'xds-server': { type: 'string' },
        'gateway-class': { type: 'string', multiple: true },
        verbose: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: true,
    }),
  );
}

/** Writes an output file, creating its folder; a path that cannot be written is the user's to fix. */
async function writeOut(io: Io, file: string, text: string): Promise<string> {
  const path = isAbsolute(file) ? file : resolve(io.cwd, file);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return path;
}

export const command: Command = {
  name: 'convert',
  summary: 'Convert Gateway API routes and extlb backends into Envoy configuration (override_host + ext_proc), with the status each object should get.',
  usage: USAGE,
  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals } = parseFlags(args);
    const fromCluster = values['from-cluster'] === true;
    if (fromCluster && positionals.length > 0) throw new UsageError('give either PATHs or --from-cluster, not both');
    if (!fromCluster && positionals.length === 0) throw new UsageError('name at least one file, folder, or - for stdin, or use --from-cluster');
    if (!fromCluster && (values.context !== undefined || values.kubeconfig !== undefined))
      throw new UsageError('--context and --kubeconfig need --from-cluster');
    const renderOptions: RenderOptions = {
      format: oneOf('--format', values.format, ['bootstrap', 'xds'] as const) ?? 'bootstrap',
      output: oneOf('-o', values.output, ['yaml', 'json'] as const) ?? 'yaml',
    };
    if (values['xds-server'] !== undefined) renderOptions.xdsServer = values['xds-server'];
    const options: ConvertOptions = {
      envoy: oneOf<EnvoyTarget>('--envoy', values.envoy, ['1.35', '1.38', 'legacy']) ?? '1.35',
      endpoints: oneOf<EndpointMode>('--endpoints', values.endpoints, ['static', 'dns', 'eds']) ?? 'static',
    };
    if (values['controller-name'] !== undefined) options.controllerName = values['controller-name'];
    if (values['cluster-domain'] !== undefined) options.clusterDomain = values['cluster-domain'];
    if (values['per-try-timeout'] !== undefined) options.perTryTimeout = values['per-try-timeout'];
    if (values['gateway-class'] !== undefined) options.gatewayClassNames = values['gateway-class'];

    // Concatenated, not pushed with spread arguments: a stream of 100k documents is 100k lines.
    let lines: DiagnosticLine[] = [];
    let objects: unknown[];
    let where = new Map<string, Manifest>();
    let failed = 0;
    if (fromCluster) {
      try {
        const listed = await listFromCluster(values.kubeconfig, values.context);
        objects = listed.objects;
        lines = lines.concat(listed.messages);
      } catch (err) {
        await write(io.stderr, `extlb convert: cannot read the cluster: ${err instanceof Error ? err.message : String(err)}\n`);
        return EXIT_INVALID;
      }
    } else {
      const loaded = await loadManifests(positionals, io);
      objects = loaded.manifests.map((m) => m.object);
      where = indexManifests(loaded.manifests);
      const invalid = validateExtlbKinds(loaded.manifests);
      lines = lines.concat(loaded.problems.map(formatProblem), invalid);
      failed += loaded.problems.length + invalid.length;
    }
    const run = runConversion(objects, options, renderOptions, where, fromCluster ? 'cluster' : 'input');
    lines = lines.concat(run.messages);
    if (values.verbose === true) lines = lines.concat(run.infos);
    else if (run.infos.length > 0) lines.push(note('', `${run.infos.length} info message(s), such as ignored kinds; -v shows them`));
    failed += run.errors;
    if (values.out !== undefined) await writeOut(io, values.out, run.output);
    else await write(io.stdout, run.output);
    if (values['status-out'] !== undefined) await writeOut(io, values['status-out'], run.statuses);
    if (values['manifests-out'] !== undefined) await writeOut(io, values['manifests-out'], run.manifests);
    else if (run.manifestCount > 0)
      lines.push(note(fromCluster ? 'cluster' : 'input', 'warning: the dns endpoints need headless Services; write them with --manifests-out FILE'));
    const diagnostics = new DiagnosticWriter(io.stderr);
    for (const line of lines) await diagnostics.line(line);
    await diagnostics.end();
    return failed > 0 ? EXIT_INVALID : EXIT_OK;
  },
};

/**
 * What `npm start` runs: converts a folder of examples, writes the bootstrap and statuses next to
 * each other under `outDir`, and prints where they went. Returns the exit code.
 */
export async function convertExamples(io: Io, examples = 'examples/quickstart', outDir = 'out/quickstart'): Promise<number> {
  const dir = isAbsolute(outDir) ? outDir : resolve(io.cwd, outDir);
  const envoyFile = resolve(dir, 'envoy.yaml');
  const statusFile = resolve(dir, 'status.yaml');
  const code = await command.run([examples, '--out', envoyFile, '--status-out', statusFile], io);
  await write(
    io.stdout,
    `convert: ${examples} -> ${envoyFile} (Envoy bootstrap), ${statusFile} (statuses)${code === EXIT_OK ? '' : ' with errors, see above'}\n`,
  );
  return code;
}
