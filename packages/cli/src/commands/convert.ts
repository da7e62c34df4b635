// `extlb convert PATH...` (or `--from-cluster`): Gateway API and extlb objects in, Envoy
// configuration on stdout, statuses to a file, diagnostics on stderr at file:line:col.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type ConvertOptions,
  type Diagnostic,
  type EndpointMode,
  type EnvoyConfig,
  type EnvoyTarget,
  convert,
  describeRef,
  parseHostPort,
  toBootstrap,
  toXds,
} from '@extlb/envoy';
import type { Command } from '../command.js';
import { DiagnosticWriter, note, type DiagnosticLine } from '../diagnostic-lines.js';
import { oneOf, usageErrors } from '../flags.js';
import { EXIT_INVALID, EXIT_OK, UsageError, write, type Io } from '../io.js';
import { loadManifests, positionOf, type LoadProblem, type Manifest } from '../manifests.js';
import { toYaml, toYamlDocuments } from '../yaml-out.js';
import { bracketMapKeys } from './validate.js';

const USAGE =
  'extlb convert [PATH...|--from-cluster [--context NAME] [--kubeconfig FILE]] [--gateway NAMESPACE/NAME | --out-dir DIR] [--format bootstrap|xds] [-o yaml|json] ' +
  '[--envoy 1.35|1.38|legacy] [--endpoints static|dns|eds] [--xds-server HOST:PORT] [--node-id ID] [--node-cluster NAME] [--status-out FILE] [--manifests-out FILE] [--out FILE] ' +
  '[--gateway-class NAME]... [-v] [--controller-name NAME] [--cluster-domain DOMAIN] [--per-try-timeout DURATION]';

/** The kinds the converter reads from a cluster: apiVersion, kind, and a field selector where only some are wanted. */
export const CLUSTER_KINDS: [apiVersion: string, kind: string, fieldSelector?: string][] = [
  ['gateway.networking.k8s.io/v1', 'GatewayClass'],
  ['gateway.networking.k8s.io/v1', 'Gateway'],
  ['gateway.networking.k8s.io/v1', 'HTTPRoute'],
  ['gateway.networking.k8s.io/v1', 'GRPCRoute'],
  ['gateway.networking.k8s.io/v1beta1', 'ReferenceGrant'],
  ['gateway.networking.k8s.io/v1', 'BackendTLSPolicy'],
  ['v1', 'Service'],
  ['v1', 'Pod'],
  ['v1', 'Namespace'],
  ['discovery.k8s.io/v1', 'EndpointSlice'],
  // Listener certificates; only TLS Secrets, so no other secret leaves the cluster.
  ['v1', 'Secret', 'type=kubernetes.io/tls'],
  // CA bundles: listeners' client certificate validation, BackendTLSPolicies.
  ['v1', 'ConfigMap'],
  ['extlb.dev/v1alpha1', 'BackendPool'],
  ['extlb.dev/v1alpha1', 'LoadBalancerPolicy'],
  ['inference.networking.k8s.io/v1', 'InferencePool'],
];

export interface ConvertRun {
  /** The rendered configuration of each Gateway, by `namespace/name`. */
  outputs: Map<string, string>;
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

export interface RenderOptions {
  format: 'bootstrap' | 'xds';
  output: 'yaml' | 'json';
  xdsServer?: string;
  nodeId?: string;
  nodeCluster?: string;
  /** Convert only this Gateway (`namespace/name`). */
  gateway?: string;
}

function render(value: unknown, output: 'yaml' | 'json'): string {
  return output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : toYaml(value);
}

/** Kubernetes objects in a form `kubectl apply -f` takes: YAML documents, or a JSON v1 List. */
function renderObjects(objects: unknown[], output: 'yaml' | 'json'): string {
  return output === 'json' ? render({ apiVersion: 'v1', kind: 'List', items: objects }, 'json') : toYamlDocuments(objects);
}

function renderConfig(config: EnvoyConfig, r: RenderOptions): string {
  if (r.format === 'xds') return render(toXds(config), r.output);
  const options: Parameters<typeof toBootstrap>[1] = {};
  if (r.xdsServer !== undefined) options.xdsServer = r.xdsServer;
  if (r.nodeId !== undefined) options.nodeId = r.nodeId;
  if (r.nodeCluster !== undefined) options.nodeCluster = r.nodeCluster;
  return render(toBootstrap(config, options), r.output);
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
  const names = Object.keys(result.gateways);
  // A Gateway left out for the size of its configuration is explained by its error diagnostic.
  const tooLarge = result.diagnostics.some((d) => d.code === 'OutputTooLarge' && `${d.object?.namespace}/${d.object?.name}` === renderOptions.gateway);
  if (renderOptions.gateway !== undefined && !names.includes(renderOptions.gateway) && !tooLarge) {
    throw new UsageError(`--gateway ${renderOptions.gateway}: no such Gateway is converted; the input has ${names.length === 0 ? 'none' : names.join(', ')}`);
  }
  const selected = renderOptions.gateway === undefined ? names : [renderOptions.gateway];
  const configs = selected.flatMap((name) => result.gateways[name] ?? []);
  const messages = result.diagnostics.filter((d) => d.severity !== 'info').map((d) => formatDiagnostic(d, where, source));
  const infos = result.diagnostics.filter((d) => d.severity === 'info').map((d) => formatDiagnostic(d, where, source));
  const manifests = configs.flatMap((c) => c.manifests);
  return {
    outputs: new Map(configs.map((c) => [`${c.gateway.namespace ?? ''}/${c.gateway.name}`, renderConfig(c, renderOptions)])),
    statuses: renderObjects(result.statuses, renderOptions.output),
    manifests: renderObjects(manifests, renderOptions.output),
    manifestCount: manifests.length,
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
  const [k8s, { allowPlainHttp }] = await Promise.all([import('@kubernetes/client-node'), import('@extlb/controller')]);
  const kc = new k8s.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  // An http:// server (kubectl proxy) as kubectl takes it; client-node alone refuses one.
  const client = k8s.KubernetesObjectApi.makeApiClient(allowPlainHttp(kc));
  const objects: unknown[] = [];
  const messages: DiagnosticLine[] = [];
  for (const [apiVersion, kind, fieldSelector] of CLUSTER_KINDS) {
    try {
      const list = await client.list(apiVersion, kind, undefined, undefined, undefined, undefined, fieldSelector);
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
        'node-id': { type: 'string' },
        'node-cluster': { type: 'string' },
        gateway: { type: 'string' },
        'out-dir': { type: 'string' },
        'gateway-class': { type: 'string', multiple: true },
        verbose: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: true,
    }),
  );
}

/** An output file that could not be written: the input was fine, the run failed (exit 1). */
class WriteError extends Error {}

/** Writes an output file, creating its folder. */
async function writeOut(io: Io, file: string, text: string): Promise<string> {
  const path = isAbsolute(file) ? file : resolve(io.cwd, file);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new WriteError(`cannot write ${file}: ${code ? `${code} (${message})` : String(err)}`);
  }
  return path;
}

/**
 * Longest file name --out-dir writes, in bytes: under every common file system's limit (255 on
 * most, 143 on eCryptfs) with room to spare, whatever a Gateway's name (up to 253 characters).
 */
export const MAX_FILE_NAME = 128;

/**
 * The file name of a Gateway's configuration: its name, or when that is too long its start and a
 * hash of the whole name, so that the same Gateway always gets the same file and two never share one.
 */
export function gatewayFileName(name: string, ext: string): string {
  const whole = `${name}.${ext}`;
  if (Buffer.byteLength(whole) <= MAX_FILE_NAME) return whole;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 16);
  // Names are DNS subdomains (ASCII), so characters are bytes here.
  return `${name.slice(0, MAX_FILE_NAME - hash.length - ext.length - 2)}-${hash}.${ext}`;
}

export const command: Command = {
  name: 'convert',
  summary: 'Convert Gateway API routes and extlb backends into Envoy configuration (override_host + ext_proc), with the status each object should get.',
  usage: USAGE,
  async run(args: string[], io: Io): Promise<number> {
    try {
      return await convertCommand(args, io);
    } catch (err) {
      if (!(err instanceof WriteError)) throw err;
      await write(io.stderr, `extlb convert: ${err.message}\n`);
      return EXIT_INVALID;
    }
  },
};

/** The command itself; a file it cannot write ends it with a WriteError. */
async function convertCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args);
  const fromCluster = values['from-cluster'] === true;
  if (fromCluster && positionals.length > 0) throw new UsageError('give either PATHs or --from-cluster, not both');
  if (!fromCluster && positionals.length === 0) throw new UsageError('name at least one file, folder, or - for stdin, or use --from-cluster');
  if (!fromCluster && (values.context !== undefined || values.kubeconfig !== undefined)) throw new UsageError('--context and --kubeconfig need --from-cluster');
  const renderOptions: RenderOptions = {
    format: oneOf('--format', values.format, ['bootstrap', 'xds'] as const) ?? 'bootstrap',
    output: oneOf('-o', values.output, ['yaml', 'json'] as const) ?? 'yaml',
  };
  const options: ConvertOptions = {
    envoy: oneOf<EnvoyTarget>('--envoy', values.envoy, ['1.35', '1.38', 'legacy']) ?? '1.35',
    endpoints: oneOf<EndpointMode>('--endpoints', values.endpoints, ['static', 'dns', 'eds']) ?? 'static',
  };
  const xdsServer = values['xds-server'];
  if (xdsServer !== undefined && !parseHostPort(xdsServer)) throw new UsageError(`--xds-server must be HOST:PORT, not ${JSON.stringify(xdsServer)}`);
  if (options.endpoints === 'eds' && renderOptions.format === 'bootstrap' && xdsServer === undefined) {
    throw new UsageError('--endpoints eds with a bootstrap needs --xds-server HOST:PORT: the proxy gets its endpoints from that server');
  }
  if (xdsServer !== undefined) renderOptions.xdsServer = xdsServer;
  if (values['node-id'] !== undefined) renderOptions.nodeId = values['node-id'];
  if (values['node-cluster'] !== undefined) renderOptions.nodeCluster = values['node-cluster'];
  if (values.gateway !== undefined) {
    if (!/^[^/]+\/[^/]+$/.test(values.gateway)) throw new UsageError(`--gateway must be NAMESPACE/NAME, not ${JSON.stringify(values.gateway)}`);
    renderOptions.gateway = values.gateway;
  }
  const outDir = values['out-dir'];
  if (outDir !== undefined && values.out !== undefined) throw new UsageError('give either --out or --out-dir, not both');
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
    lines = lines.concat(loaded.problems.map(formatProblem));
    failed += loaded.problems.length;
  }
  const run = runConversion(objects, options, renderOptions, where, fromCluster ? 'cluster' : 'input');
  lines = lines.concat(run.messages);
  if (values.verbose === true) lines = lines.concat(run.infos);
  else if (run.infos.length > 0) lines.push(note('', `${run.infos.length} info message(s), such as ignored kinds; -v shows them`));
  failed += run.errors;
  const ext = renderOptions.output === 'json' ? 'json' : 'yaml';
  if (outDir !== undefined) {
    for (const [name, text] of run.outputs) {
      const [namespace, gateway] = name.split('/') as [string, string];
      await writeOut(io, join(outDir, namespace, gatewayFileName(gateway, ext)), text);
    }
  } else if (run.outputs.size > 1) {
    const names = [...run.outputs.keys()].join(', ');
    throw new UsageError(
      `the input has ${run.outputs.size} Gateways (${names}); each is its own proxy: pick one with --gateway NAMESPACE/NAME, or write them all with --out-dir DIR`,
    );
  } else {
    const [only] = run.outputs.values();
    if (only === undefined) {
      lines.push(note(fromCluster ? 'cluster' : 'input', 'warning: no Gateway is converted, so there is no Envoy configuration to write'));
    } else if (values.out !== undefined) await writeOut(io, values.out, only);
    else await write(io.stdout, only);
  }
  if (values['status-out'] !== undefined) await writeOut(io, values['status-out'], run.statuses);
  if (values['manifests-out'] !== undefined) await writeOut(io, values['manifests-out'], run.manifests);
  else if (run.manifestCount > 0)
    lines.push(note(fromCluster ? 'cluster' : 'input', 'warning: the dns endpoints need headless Services; write them with --manifests-out FILE'));
  const diagnostics = new DiagnosticWriter(io.stderr);
  for (const line of lines) await diagnostics.line(line);
  await diagnostics.end();
  return failed > 0 ? EXIT_INVALID : EXIT_OK;
}

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
