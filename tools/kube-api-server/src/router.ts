// The HTTP side: reads a request, logs it, applies faults, authenticates, routes it to discovery,
// list, watch or a write, and answers JSON (errors as Status objects).
import { APPLY_PATCH } from './patch.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { type AuthOptions, checkAccess, identify } from './auth.js';
import { discovery } from './discovery.js';
import { defaultReason, type FaultRule, type Faults } from './faults.js';
import { apiVersionOf, bucketOf, groupResource, type KindSpec, type KindTable } from './kinds.js';
import { list, listItem, selection, selects } from './list.js';
import { isRecord } from './objects.js';
import { type DeleteOptions, NAMESPACES, type Registry, type WriteOptions } from './registry.js';
import { type RequestInfo, requestInfo } from './request-info.js';
import { type RequestRecord, recordOf } from './request-log.js';
import { ApiError, badRequest, failure, fieldError, internalError, invalid, methodNotAllowed, methodNotSupported, noSuchResource } from './status.js';
import type { Store } from './store.js';
import type { WatchHub } from './watch.js';

/** The API server's default request body limit. */
const MAX_BODY = 3 * 1024 * 1024;

export interface RouterContext {
  store: Store;
  registry: Registry;
  kinds: KindTable;
  hub: WatchHub;
  faults: Faults;
  log: RequestRecord[];
  auth: AuthOptions | undefined;
  /** How long a list for a future resourceVersion waits before 504. */
  waitMs: number;
  /** host:port, for /api's serverAddressByClientCIDRs. */
  address(): string;
}

function send(res: ServerResponse, record: RequestRecord, code: number, body: unknown): void {
  record.code = code;
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A request body: JSON, or YAML when the content type says so (kubectl and apply send either). */
function parseBody(text: string, contentType: string | undefined): unknown {
  try {
    return contentType?.includes('yaml') ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

function dryRun(params: URLSearchParams): boolean {
  const values = params.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All') throw invalid('CreateOptions', 'meta.k8s.io', '', [fieldError('dryRun', 'FieldValueNotSupported', 'supported values: "All"', v)]);
  }
  return values.length > 0;
}

function deleteOptions(params: URLSearchParams, body: unknown): DeleteOptions {
  const options: DeleteOptions = {};
  const fromBody = isRecord(body) ? body : {};
  const policy = params.get('propagationPolicy') ?? fromBody.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw invalid('DeleteOptions', 'meta.k8s.io', '', [
        fieldError('propagationPolicy', 'FieldValueNotSupported', 'supported values: "Foreground", "Background", "Orphan", nil', policy),
      ]);
    }
    options.propagationPolicy = policy;
  }
  const orphan = params.get('orphanDependents') ?? fromBody.orphanDependents;
  if (orphan !== undefined && orphan !== null) options.orphanDependents = orphan === true || orphan === 'true';
  if (isRecord(fromBody.preconditions)) options.preconditions = fromBody.preconditions as DeleteOptions['preconditions'] & object;
  if (dryRun(params) || (Array.isArray(fromBody.dryRun) && fromBody.dryRun.includes('All'))) options.dryRun = true;
  return options;
}

/** The kind a resource request names, checked against its scope and subresource. */
function resolve(ctx: RouterContext, info: RequestInfo): { spec: KindSpec; namespace: string | undefined } {
  const spec = ctx.kinds.resource(info.group ?? '', info.version ?? '', info.resource ?? '');
  if (!spec || info.extra) throw noSuchResource();
  // `/api/v1/namespaces/x` names the Namespace x, not something in it.
  const namespace = spec.namespaced ? info.namespace : undefined;
  if (!spec.namespaced && info.namespace !== undefined && bucketOf(spec) !== NAMESPACES) throw noSuchResource();
  // Across namespaces, a namespaced resource only lists and watches.
  if (spec.namespaced && namespace === undefined && info.verb !== 'list' && info.verb !== 'watch') throw info.name ? noSuchResource() : methodNotAllowed();
  if (!info.name && (info.verb === 'update' || info.verb === 'patch')) throw methodNotAllowed();
  if (info.subresource !== undefined) {
    if (info.subresource !== 'status' || !spec.status) throw noSuchResource();
    if (!['get', 'update', 'patch'].includes(info.verb)) throw methodNotSupported(groupResource(spec), info.verb);
  }
  return { spec, namespace };
}

/** What an injected fault changes about a watch. */
type WatchFault = Pick<FaultRule, 'gone' | 'lines' | 'silent'>;

async function serveResource(
  ctx: RouterContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  info: RequestInfo,
  record: RequestRecord,
  fault: WatchFault,
) {
  const { spec, namespace } = resolve(ctx, info);
  const params = url.searchParams;
  const name = info.name ?? '';
  const text = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method ?? '') ? await readBody(req) : '';
  const contentType = req.headers['content-type'];
  if (contentType) record.contentType = contentType;
  const body = text === '' ? undefined : parseBody(text, contentType);
  if (body !== undefined) record.body = body;
  const write: WriteOptions = { dryRun: dryRun(params) };
  if (info.subresource === 'status') write.subresource = 'status';
  const fieldManager = params.get('fieldManager');
  if (fieldManager) write.fieldManager = fieldManager;
  const force = params.get('force');
  if (force !== null) write.force = force === 'true';
  const { registry } = ctx;
  switch (info.verb) {
    case 'get':
      return send(res, record, 200, registry.get(spec, namespace, name));
    case 'list':
      return send(res, record, 200, await list({ store: ctx.store, registry, spec, namespace, waitMs: ctx.waitMs }, params));
    case 'watch': {
      // A watch on one object is a watch on the collection with a name field selector.
      if (info.name) params.set('fieldSelector', [`metadata.name=${info.name}`, params.get('fieldSelector')].filter(Boolean).join(','));
      record.code = 200;
      const request = { spec, namespace, params, ...fault, ...(record.user ? { user: record.user } : {}) };
      return ctx.hub.open(request, res);
    }
    case 'create':
      if (info.name) throw methodNotSupported(groupResource(spec), 'create');
      return send(res, record, 201, registry.create(spec, namespace, body, write));
    case 'update':
      return send(res, record, 200, registry.update(spec, namespace, name, body, write));
    case 'patch': {
      // An apply that creates the object needs the create permission too, as the API server asks.
      if ((contentType ?? '').split(';')[0]?.trim() === APPLY_PATCH && !registry.stored(spec, namespace, name)) {
        checkAccess({ ...info, verb: 'create' }, record.user, ctx.auth);
      }
      const reply = registry.patch(spec, namespace, name, contentType, text, write);
      return send(res, record, reply.code, reply.body);
    }
    case 'delete': {
      const reply = registry.delete(spec, namespace, name, deleteOptions(params, body));
      return send(res, record, reply.code, reply.body);
    }
    case 'deletecollection': {
      const options = deleteOptions(params, body);
      const chosen = selection(spec, namespace, params);
      const deleted = ctx.store.items(bucketOf(spec)).filter(([, obj]) => selects(chosen, obj));
      for (const [, obj] of deleted) registry.delete(spec, obj.metadata.namespace, obj.metadata.name as string, options);
      const items = deleted.map(([, obj]) => listItem(registry, spec, obj));
      return send(res, record, 200, { apiVersion: apiVersionOf(spec), kind: `${spec.kind}List`, metadata: {}, items });
    }
    default:
      throw methodNotSupported(groupResource(spec), info.verb);
  }
}

function serveNonResource(ctx: RouterContext, res: ServerResponse, info: RequestInfo, record: RequestRecord): void {
  if (/^\/(healthz|livez|readyz)$/.test(info.path)) {
    record.code = 200;
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
    return;
  }
  const doc = info.verb === 'get' ? discovery(ctx.kinds, info.path, ctx.address()) : undefined;
  if (doc === undefined) throw noSuchResource();
  send(res, record, 200, doc);
}

/** The server's request handler. */
export function createHandler(ctx: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'https://kube-api-server');
    const info = requestInfo(method, url);
    const record = recordOf(method, url, info);
    ctx.log.push(record);
    const user = identify(req.headers.authorization, ctx.auth);
    if (user !== undefined) record.user = user;
    handle(ctx, req, res, url, info, record).catch((err: unknown) => {
      const error = err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
      if (res.headersSent) res.destroy();
      else send(res, record, error.code, error.status);
    });
  };
}

async function handle(ctx: RouterContext, req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, record: RequestRecord): Promise<void> {
  const fault = ctx.faults.take(record);
  if (fault?.delayMs) {
    record.fault = 'delay';
    await sleep(fault.delayMs);
  }
  if (fault?.reset) {
    record.fault = 'reset';
    req.socket.destroy();
    return;
  }
  if (fault?.status) {
    record.fault = 'status';
    const { code, reason, message, retryAfterSeconds } = fault.status;
    const error = failure(code, reason ?? defaultReason(code), message ?? `injected fault: ${code}`, retryAfterSeconds ? { retryAfterSeconds } : undefined);
    if (retryAfterSeconds) res.setHeader('Retry-After', String(retryAfterSeconds));
    throw error;
  }
  if (fault?.reply) {
    record.fault = 'reply';
    const { code = 200, body } = fault.reply;
    record.code = code;
    res
      .writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' })
      .end(typeof body === 'string' ? body : JSON.stringify(body));
    return;
  }
  const watchFault: WatchFault = info.verb === 'watch' && fault ? { gone: fault.gone, lines: fault.lines, silent: fault.silent } : {};
  const named = (['silent', 'gone', 'lines'] as const).find((k) => watchFault[k]);
  if (named) record.fault = named;
  checkAccess(info, record.user, ctx.auth);
  if (info.resourceRequest) await serveResource(ctx, req, res, url, info, record, watchFault);
  else serveNonResource(ctx, res, info, record);
}
