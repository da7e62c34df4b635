// extlb's control plane, which is I/O only: informers keep the cluster's objects and feed their
// changes to one Converter (@extlb/envoy composes every stage); each Gateway's configuration
// becomes the snapshot its proxies get over ADS; what the proxies say (NACKs) and the Service in
// front of them merge into statuses as proxy facts, with no recompute; the leader writes statuses
// and the pools' shadow Services through a work queue that retries each failed write with backoff.
// Kubernetes and Envoy are the engine — extlb keeps no store of its own and polls nothing.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Converter, type ConverterUpdate, DEFAULT_CONTROLLER, type EnvoyConfig, type EnvoyTarget, type GatewayProxyFacts, type JsonObject } from '@extlb/envoy';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Logger, createLogger } from '@extlb/telemetry';
import { KubeApi, type KubeApiOptions } from './cluster/api.js';
import { Informers } from './cluster/informers.js';
import { CONFIG_MAP, WATCHED_KINDS } from './cluster/kinds.js';
import { LeaderElector } from './cluster/lease.js';
import { quote } from './cluster/wire.js';
import type { DebugSource } from './ops/debug.js';
import { type ControllerMetrics, controllerMetrics, xdsMetricCallbacks } from './ops/metrics.js';
import { type Batch, Scheduler } from './reconcile/scheduler.js';
import { isShadowService, serviceKey, syncShadowService } from './reconcile/shadow.js';
import { TokenBucket, WorkQueue, type WorkQueueOptions } from './reconcile/work-queue.js';
import { GATEWAY_NAME_LABEL, infrastructureOf } from './status/gateway.js';
import { labelOf, StatusWriter } from './status/writer.js';
import { Provisioner } from './provision/index.js';
import { MANAGED_BY_LABEL } from './provision/objects.js';
import { type GatewayRef, IDENTITY_ANNOTATION, XdsIdentity, type XdsIdentityOptions } from './identity/index.js';
import {
  type PeerAuth,
  SnapshotCache,
  SnapshotError,
  type SnapshotResources,
  type StreamVerdict,
  type XdsNode,
  type XdsResource,
  XdsServer,
  TYPE_URL,
} from './xds/index.js';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  /** GatewayClasses naming this controllerName are this controller's. */
  controllerName?: string;
  /** This replica, in the Lease and in logs. Default: hostname plus a random suffix. */
  identity?: string;
  /** Where the Lease lives (the controller's own namespace). */
  leaseNamespace: string;
  leaseName?: string;
  lease?: { durationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  xds: {
    host?: string;
    port: number;
    /**
     * Plain-text xDS, for development only: any client that names a Gateway gets its
     * configuration, TLS keys included. Without it xDS is mutual TLS (see `identity`).
     */
    plaintext?: boolean;
    /** The xDS identity: the CA, certificate lifetimes, the trust domain, the server's DNS names. */
    identity?: XdsIdentitySettings;
  };
  envoy?: EnvoyTarget;
  clusterDomain?: string;
  /** Debounce of recomputes, of those for endpoint changes only, and the longest a change may wait. */
  delayMs?: number;
  endpointDelayMs?: number;
  maxDelayMs?: number;
  /** Request deadlines and retries of the Kubernetes API client, and the watches' timeout and silence bound. */
  api?: KubeApiOptions;
  /** The largest Envoy configuration of one Gateway, in bytes of compact JSON (default 32 MiB); past it the Gateway is not Programmed and keeps its last snapshot. */
  maxOutputBytes?: number;
  /** The queue of writes (statuses, shadow Services) and failed recomputes: backoff of a failed key, and its concurrency. */
  work?: Pick<WorkQueueOptions, 'baseDelayMs' | 'maxDelayMs' | 'concurrency'>;
  /** Status writes per second on average, and at once. Default 50 per second, 500 at once. */
  statusWrites?: { perSecond?: number; burst?: number };
  logger?: Logger;
  /**
   * Provisioning of each Gateway's Envoy (GEP-1762). Default on; `xdsServer` is what the
   * provisioned bootstraps dial, by default the controller's Service on port 18000.
   */
  provision?: { enabled?: boolean; xdsServer?: string };
}

/** What `extlb controller` passes for the xDS identity; the rest comes from the controller. */
export type XdsIdentitySettings = Partial<Omit<XdsIdentityOptions, 'api' | 'namespace' | 'gateways' | 'isLeader' | 'onLeaderPass' | 'onError'>> & {
  /** The controller's Service, whose DNS names the serving certificate holds. Default `extlb-controller`. */
  serviceName?: string;
};

/** The DNS names a Service answers to in the cluster. */
export function serviceDnsNames(service: string, namespace: string, clusterDomain = 'cluster.local'): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.${clusterDomain}`];
}

/** A client's string as a log shows it: cut, so a client cannot make the log hold what it likes. */
const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}…(${s.length} chars)` : s);

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const ENDPOINT_KINDS = new Set(WATCHED_KINDS.filter((k) => k.endpointsOnly).map((k) => k.kind));
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** An object's identity in the changes handed to the Converter. */
function changeKey(o: JsonObject): string {
  const m = (isObject(o.metadata) ? o.metadata : {}) as JsonObject;
  return `${String(o.apiVersion)} ${String(o.kind)} ${String(m.namespace ?? '')}/${String(m.name)}`;
}

/**
 * Each resource of a configuration, rendered as an xDS resource once: one the Converter kept (an
 * endpoint change keeps every ClusterLoadAssignment but those of the slices changed) stays the same
 * object, which the cache then need not serialize again.
 */
const rendered = new WeakMap<object, XdsResource>();
const FIELDS = {
  listeners: TYPE_URL.listener,
  routes: TYPE_URL.route,
  clusters: TYPE_URL.cluster,
  endpoints: TYPE_URL.endpoint,
  secrets: TYPE_URL.secret,
} as const;

/** Each list rendered once too: a list the Converter kept is the same list, which the cache then skips. */
const renderedLists = new WeakMap<readonly object[], readonly XdsResource[]>();

/** A Gateway's configuration as the snapshot its proxies get (what toXds renders, resource by resource). */
function snapshotOf(config: EnvoyConfig): SnapshotResources {
  const out: SnapshotResources = {};
  for (const [field, type] of Object.entries(FIELDS) as [keyof typeof FIELDS, string][]) {
    const list = config[field] as readonly object[];
    if (field === 'secrets' && list.length === 0) continue;
    let xds = renderedLists.get(list);
    if (!xds) {
      xds = list.map((r) => {
        let x = rendered.get(r);
        if (!x) {
          x = { '@type': type, ...r } as XdsResource;
          rendered.set(r, x);
        }
        return x;
      });
      renderedLists.set(list, xds);
    }
    out[field] = xds;
  }
  return out;
}

/** Work queue keys: a status, a shadow Service, or the recompute itself. */
const STATUS = 'status ';
const SHADOW = 'shadow ';
const RECOMPUTE = 'recompute';
/** The work item of the provisioning pass. */
const PROVISION = 'provision';

export class Controller {
  readonly metrics: ControllerMetrics;
  readonly cache = new SnapshotCache();
  readonly xds: XdsServer;
  readonly informers: Informers;
  readonly elector: LeaderElector;
  /** This replica's name, in the Lease, the logs and the debug endpoints. */
  readonly replica: string;
  /** Undefined when xDS is plain text. */
  readonly identity: XdsIdentity | undefined;
  private readonly api: KubeApi;
  private readonly log: Logger;
  private readonly controllerName: string;
  private readonly converter: Converter;
  private readonly scheduler: Scheduler;
  private readonly writer: StatusWriter;
  private readonly work: WorkQueue;
  /** Undefined when provisioning is off. */
  private readonly provisioner: Provisioner | undefined;
  /** Gateways with a snapshot now; one that goes away gets an empty snapshot, so its proxies drop it. */
  private groups = new Set<string>();
  private xdsListening = false;
  private stopping = false;
  /** Changes since the last update, by object; `resync`: hand the Converter every object instead. */
  private pending = new Map<string, { event: 'add' | 'update' | 'delete'; object: JsonObject }>();
  private resync = true;
  /** The shadow Services last queued for writing, and whether some Service changed since (one may be a shadow someone edited). */
  private shadowsQueued?: ConverterUpdate['needs']['shadowServices'];
  private servicesChanged = true;
  /** The identity Gateways the last identity pass was asked for. */
  private identityWanted: string | undefined;
  /** The last update's answer, and what the work queue is to bring about. */
  private last?: ConverterUpdate;
  private readonly desiredStatus = new Map<string, JsonObject>();
  private readonly desiredShadow = new Map<string, JsonObject | undefined>();
  /** The Gateways whose facts the controller fed, so one that loses them is told. */
  private readonly factsFed = new Set<string>();

  constructor(private readonly options: ControllerOptions) {
    this.controllerName = options.controllerName ?? DEFAULT_CONTROLLER;
    const identity = options.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
    this.replica = identity;
    this.log = options.logger ?? createLogger({ base: { component: 'controller', replica: identity } });
    this.api = new KubeApi(options.kubeConfig, options.api);
    this.metrics = controllerMetrics(
      () => this.xds,
      () => this.identity?.servingExpiresAt ?? 0,
    );
    this.converter = new Converter({
      controllerName: this.controllerName,
      endpoints: 'eds',
      now: nowIso,
      ...(options.envoy ? { envoy: options.envoy } : {}),
      ...(options.clusterDomain ? { clusterDomain: options.clusterDomain } : {}),
      ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
    });
    this.work = new WorkQueue((key) => this.doWork(key), {
      ...options.work,
      onRetry: (key, error, delayMs) => {
        const work = key === RECOMPUTE ? 'recompute' : key.startsWith(SHADOW) ? 'shadow-service' : 'status';
        this.metrics.workRetries.inc({ work });
        this.log.warn({ work: key, error: quote(errorText(error)), retryInMs: delayMs }, 'failed; trying again');
      },
      onDepth: (waiting) => this.metrics.workWaiting.set(waiting),
    });
    this.scheduler = new Scheduler((batch) => this.recompute(batch), {
      ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
      ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
      ...(options.endpointDelayMs !== undefined ? { endpointDelayMs: options.endpointDelayMs } : {}),
      endpointKinds: ENDPOINT_KINDS,
    });
    this.informers = new Informers(this.api, {
      onChange: (kind, event, object) => {
        this.metrics.informerEvents.inc({ kind: kind.kind, event });
        // A provisioned Deployment is no input of the Converter: its change is a provisioning pass.
        if (kind.provisionOnly) return this.queueProvision();
        const o = object as unknown as JsonObject;
        const k = changeKey(o);
        // An object added and deleted before the Converter saw it was never there.
        if (event === 'delete' && this.pending.get(k)?.event === 'add') this.pending.delete(k);
        else this.pending.set(k, { event, object: o });
        if (kind.kind === 'Service') this.servicesChanged = true;
        this.scheduler.touch(kind.kind);
        // A Gateway's Service gaining or losing a load balancer address is a fact of its status now,
        // whether or not the Converter finds anything else changed.
        if (kind.kind === 'Service' && isObject(o.metadata) && isObject(o.metadata.labels) && GATEWAY_NAME_LABEL in o.metadata.labels)
          setImmediate(() => this.last && this.feedInfrastructure(this.last));
      },
      // Most often the controller's own status write coming back: nothing to recompute.
      onStatusOnly: (kind) => this.metrics.informerEvents.inc({ kind: kind.kind, event: 'status-only' }),
      onList: (kind, count) => {
        this.metrics.informerLists.inc({ kind: kind.kind });
        this.log.debug({ kind: kind.kind, count }, 'listed');
        this.resync = true;
        this.servicesChanged = true;
        this.scheduler.touch(kind.kind);
      },
      onRelist: (kind, waitMs) => {
        this.metrics.informerRelists.inc({ kind: kind.kind });
        this.log.debug({ kind: kind.kind, waitMs }, 'listing again');
      },
      // Once per failure; what the API server said is quoted, never whole.
      onError: (kind, error, retryInMs, reason) => {
        this.metrics.informerErrors.inc({ kind: kind.kind, reason });
        this.log.warn({ kind: kind.kind, reason, error: quote(error instanceof Error ? error.message : String(error)), retryInMs }, 'watch failed; restarting');
      },
    });
    const metricCallbacks = xdsMetricCallbacks(this.metrics);
    this.identity = options.xds.plaintext ? undefined : this.makeIdentity(options.xds.identity ?? {});
    const xdsIdentity = this.identity;
    this.xds = new XdsServer({
      ...(xdsIdentity ? { verify: (auth: PeerAuth, node: XdsNode, group: string) => this.verifyStream(xdsIdentity, auth, node, group) } : {}),
      cache: this.cache,
      controlPlaneId: identity,
      logger: { log: (level, msg, fields) => this.log[level](fields ?? {}, msg) },
      callbacks: {
        ...metricCallbacks,
        // What a Gateway's trusted, live proxies reject is a fact of its status: no stage runs again.
        // An empty list clears the NACKs alone; the Gateway's infrastructure facts stay.
        onProxyFacts: (group, facts) => {
          for (const s of this.converter.setProxyFacts(group, { rejected: facts?.rejected ?? [] })) this.queueStatus(s);
        },
      },
    });
    this.elector = new LeaderElector(this.api, {
      namespace: options.leaseNamespace,
      name: options.leaseName ?? 'extlb-controller',
      identity,
      ...(options.lease?.durationMs !== undefined ? { leaseDurationMs: options.lease.durationMs } : {}),
      ...(options.lease?.renewDeadlineMs !== undefined ? { renewDeadlineMs: options.lease.renewDeadlineMs } : {}),
      ...(options.lease?.retryPeriodMs !== undefined ? { retryPeriodMs: options.lease.retryPeriodMs } : {}),
      onStartedLeading: () => {
        this.metrics.leader.set(1);
        this.log.info('leading: writing statuses');
        this.queueWrites();
        this.queueProvision();
        this.identity?.kick();
      },
      onStoppedLeading: () => {
        this.metrics.leader.set(0);
        this.log.info('no longer leading: writing nothing');
      },
      onError: (error) => this.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'leader election'),
    });
    this.provisioner = options.provision?.enabled === false ? undefined : this.makeProvisioner();
    const writeRate = new TokenBucket(options.statusWrites?.perSecond ?? 50, options.statusWrites?.burst ?? 500);
    this.writer = new StatusWriter(this.api, {
      controllerName: this.controllerName,
      isLeader: () => this.elector.isLeader(),
      current: (kind, name, namespace) => this.informers.get(kind, name, namespace),
      beforeWrite: () => writeRate.take(),
    });
  }

  private makeProvisioner(): Provisioner {
    const service = this.options.xds.identity?.serviceName ?? 'extlb-controller';
    const host = serviceDnsNames(service, this.options.leaseNamespace, this.options.clusterDomain)[3] as string;
    const xdsServer = this.options.provision?.xdsServer ?? `${host}:18000`;
    const serverName = xdsServer.slice(0, xdsServer.lastIndexOf(':'));
    return new Provisioner(this.api, { xdsServer, ...(this.options.xds.plaintext ? {} : { xdsServerName: serverName }) });
  }

  private makeIdentity(settings: XdsIdentitySettings): XdsIdentity {
    const { serviceName, ...rest } = settings;
    return new XdsIdentity({
      serverNames: serviceDnsNames(serviceName ?? 'extlb-controller', this.options.leaseNamespace, this.options.clusterDomain),
      ...rest,
      api: this.api,
      namespace: this.options.leaseNamespace,
      gateways: () => this.identityGateways(),
      isLeader: () => this.elector.isLeader(),
      onLeaderPass: (report) => {
        for (const [result, list] of [
          ['issued', report.issued],
          ['refreshed', report.refreshed],
          ['deleted', report.deleted],
          ['failed', report.failed],
        ] as const) {
          if (list.length > 0) this.metrics.identitySecrets.inc({ result }, list.length);
        }
        if (report.rotated.length > 0) this.log.info({ steps: report.rotated }, 'xDS CA rotation');
        if (report.issued.length + report.deleted.length > 0) this.log.info({ issued: report.issued, deleted: report.deleted }, 'xDS identity Secrets');
        if (report.failed.length > 0) this.log.warn({ failed: report.failed.slice(0, 10) }, 'xDS identity Secrets not written');
      },
      onError: (error, what) => this.log.warn({ error: error instanceof Error ? error.message : String(error) }, what),
    });
  }

  /**
   * An identity pass (a LIST of identity Secrets, then writes) when a Gateway that gets one came,
   * went or changed since the last pass was asked for. A full update alone is no reason: every
   * relist of a 410 storm is one, and made Secrets the most listed kind of the storm. The
   * informers do not see identity Secrets (their type is not TLS); between Gateway changes the
   * pass's own timer renews and remakes them.
   */
  private kickIdentity(): void {
    const wanted = JSON.stringify(
      this.identityGateways().map((g) => [g.uid, (this.informers.get('Gateway', g.name, g.namespace)?.metadata as JsonObject | undefined)?.resourceVersion]),
    );
    if (wanted === this.identityWanted) return;
    this.identityWanted = wanted;
    this.identity?.kick();
  }

  /**
   * The Gateways whose proxies get an identity Secret: those of this controller's classes whose
   * Envoy it provisions, and those whose operator asks for one (the annotation) for an Envoy of their own.
   */
  private identityGateways(): GatewayRef[] {
    const classes = new Set(this.last?.needs.gatewayClasses ?? []);
    return this.informers.list('Gateway').flatMap((gw) => {
      const meta = (gw.metadata ?? {}) as JsonObject;
      const spec = (gw.spec ?? {}) as JsonObject;
      const annotations = (meta.annotations ?? {}) as JsonObject;
      const provisioned = this.provisioner?.provisions(`${String(meta.namespace)}/${String(meta.name)}`) === true;
      if (!classes.has(String(spec.gatewayClassName)) || (annotations[IDENTITY_ANNOTATION] !== 'true' && !provisioned)) return [];
      return [{ namespace: String(meta.namespace), name: String(meta.name), uid: String(meta.uid) }];
    });
  }

  /** The xDS server's verify step: the identity's check, with a log line and a metric for each refusal. */
  private verifyStream(identity: XdsIdentity, auth: PeerAuth, node: XdsNode, group: string): StreamVerdict {
    const check = identity.authorize(auth, group);
    if (check.allowed) return check;
    // The label is the claimed Gateway only when it is one this controller serves: a client cannot grow the metric's series.
    const gateway = this.groups.has(group) ? group : 'unknown';
    this.metrics.xdsRefused.inc({ gateway, reason: check.reason });
    this.log.warn(
      {
        gateway: clip(group, 300),
        node: clip(node.id, 300),
        userAgent: clip(node.userAgent, 100),
        reason: check.reason,
        identity: clip(check.identity ?? '', 300),
      },
      'xDS stream refused',
    );
    return { allowed: false, message: check.message };
  }

  /** What the loopback debug endpoints read (`startDebugServer`). */
  debugSource(): DebugSource {
    return {
      replica: this.replica,
      isLeader: () => this.elector.isLeader(),
      streams: () => this.xds.streams(),
      cache: this.cache,
      notReady: () => this.notReady(),
      servingExpiresAt: () => this.identity?.servingExpiresAt,
    };
  }

  /** Undefined when ready; else why not. */
  notReady(): string | undefined {
    if (!this.xdsListening) return 'the xDS server is not listening yet';
    if (!this.informers.synced()) return `waiting for the first list of ${this.informers.unsynced().join(', ')}`;
    const stale = this.informers.notCurrent();
    if (stale.length > 0) return `informers not current: ${stale.join(', ')}`;
    return undefined;
  }

  async start(): Promise<{ xdsPort: number }> {
    if (!this.identity)
      this.log.warn('xDS is plain text (--xds-plaintext): any client that names a Gateway gets its configuration, TLS keys included; for development only');
    const credentials = this.identity ? await this.loadIdentity(this.identity) : undefined;
    const { port } = await this.xds.start({
      host: this.options.xds.host ?? '0.0.0.0',
      port: this.options.xds.port,
      ...(credentials ? { credentials } : {}),
    });
    this.xdsListening = true;
    await this.informers.start();
    this.elector.start();
    // Every kind is listed and in the informers' caches: the first full recompute need not wait
    // out the debounce that batches later changes. (After the elector's first request is on its
    // way: the recompute holds the event loop, and a pooled connection may not outlive it.)
    this.scheduler.hurry();
    this.log.info({ xdsPort: port, controllerName: this.controllerName }, 'started');
    return { xdsPort: port };
  }

  /** The CA and the serving certificate, tried until the API server answers (the xDS port opens only with them). */
  private async loadIdentity(identity: XdsIdentity) {
    for (let delay = 500; ; delay = Math.min(delay * 2, 30_000)) {
      try {
        return await identity.start();
      } catch (err) {
        if (this.stopping) throw err;
        this.log.warn({ error: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'cannot load the xDS CA; trying again');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Resolves when no recompute is under way or pending, and no write is queued or under way. */
  async idle(): Promise<void> {
    // A retried recompute goes back through the scheduler: wait until neither has anything left.
    do {
      await this.scheduler.idle();
      await this.work.idle();
    } while (this.scheduler.busy());
  }

  /** SIGTERM: stop watching, give up the Lease, let proxies move to another replica. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    await this.informers.stop();
    await this.scheduler.stop();
    this.work.stop();
    await this.work.idle();
    await this.elector.stop();
    this.identity?.stop();
    await this.xds.stop({ graceMs });
    await this.api.close();
    this.xdsListening = false;
    this.log.info('stopped');
  }

  private async recompute(batch: Batch): Promise<void> {
    if (this.stopping || !this.informers.synced()) return;
    const started = process.hrtime.bigint();
    let kind = 'full';
    try {
      let update = this.updateConverter();
      kind = update.kind;
      // A newly named ConfigMap is listed before the update is published, so it is not reported
      // missing for the moment its watch takes to start.
      if (await this.watchReferencedConfigMaps(update.needs.configMaps)) update = this.updateConverter();
      this.publish(update);
      this.takeUpdate(update);
      this.work.forget(RECOMPUTE);
    } catch (err) {
      // The Converter may hold half of a change: the retry hands it every object.
      this.resync = true;
      this.log.error({ error: err instanceof Error ? (err.stack ?? err.message) : String(err), kinds: [...batch.kinds] }, 'recompute failed');
      this.work.addRateLimited(RECOMPUTE, err);
    } finally {
      this.metrics.recomputeSeconds.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  /** Hands the Converter what changed (every object after a relist or a failure). */
  private updateConverter(): ConverterUpdate {
    const pending = this.pending;
    this.pending = new Map();
    if (this.resync) {
      this.resync = false;
      return this.converter.update({ objects: this.informers.objects() });
    }
    const added: JsonObject[] = [];
    const updated: JsonObject[] = [];
    const deleted: JsonObject[] = [];
    for (const { event, object } of pending.values()) (event === 'add' ? added : event === 'update' ? updated : deleted).push(object);
    return this.converter.update({ added, updated, deleted });
  }

  /** Work queue items: a status write, a shadow Service write, a recompute to try again. */
  private async doWork(key: string): Promise<void> {
    if (key === RECOMPUTE) {
      this.scheduler.touch('retry');
      return;
    }
    if (key === PROVISION) {
      if (this.elector.isLeader()) await this.provision();
      return;
    }
    if (key.startsWith(STATUS)) {
      const desired = this.desiredStatus.get(key);
      if (!desired) return;
      const result = await this.writer.writeOne(desired).catch((err: unknown) => {
        this.metrics.statusWrites.inc({ result: 'failed' });
        throw new Error(`${labelOf(desired)}: ${errorText(err)}`);
      });
      this.metrics.statusWrites.inc({ result });
      // A newer desired status queued meanwhile is written next; this one is done.
      if (this.desiredStatus.get(key) === desired) this.desiredStatus.delete(key);
      return;
    }
    if (key.startsWith(SHADOW) && this.elector.isLeader()) {
      const name = key.slice(SHADOW.length);
      const [namespace = '', svc = ''] = name.split('/');
      const want = this.desiredShadow.get(name);
      const have = this.informers.list('Service', namespace).find((s) => serviceKey(s) === name && isShadowService(s));
      const result = await syncShadowService(this.api, want, have).catch((err: unknown) => {
        throw new Error(`shadow Service ${namespace}/${svc}: ${errorText(err)}`);
      });
      if (result !== 'unchanged') this.log.debug({ service: name, result }, 'shadow Service');
    }
  }

  /** The statuses and shadow Services an update asks for, queued for writing by the leader. */
  private takeUpdate(update: ConverterUpdate): void {
    this.last = update;
    const full = update.kind === 'full';
    if (full) {
      const errors = update.diagnostics.filter((d) => d.severity === 'error');
      if (errors.length > 0)
        this.log.info({ errors: errors.length, first: errors.slice(0, 5) }, 'the cluster has objects extlb cannot use as written; their statuses say why');
    }
    // The statuses that changed and those of the objects changed (all after a relist): writing
    // every status on every full update would cost a merge and compare per object per change. The
    // shadow Services likewise, when the wanted ones or some Service changed.
    const shadows = full && (this.servicesChanged || update.needs.shadowServices !== this.shadowsQueued);
    this.queueWrites(update.changedStatuses, shadows);
    if (full) {
      // After the update's statuses: those merged the facts held before this update, so a Gateway
      // whose facts first come now (one just accepted) must have its merged status queued last.
      this.feedInfrastructure(update);
      this.queueProvision();
      this.kickIdentity();
    }
  }

  /** Queues `statuses` (all of the last update's when undefined), and, with `shadows`, the shadow Services. */
  private queueWrites(statuses?: readonly JsonObject[], shadows = statuses === undefined): void {
    const last = this.last;
    if (!last || !this.elector.isLeader()) return;
    for (const s of statuses ?? last.statuses) this.queueStatus(s);
    if (!shadows) return;
    this.shadowsQueued = last.needs.shadowServices;
    this.servicesChanged = false;
    const wanted = new Map(last.needs.shadowServices.map((s) => [serviceKey(s), s] as const));
    for (const s of this.informers.list('Service')) if (isShadowService(s) && !wanted.has(serviceKey(s))) wanted.set(serviceKey(s), undefined as never);
    this.desiredShadow.clear();
    for (const [name, want] of wanted) {
      this.desiredShadow.set(name, want);
      this.work.add(`${SHADOW}${name}`);
    }
  }

  private queueStatus(s: JsonObject): void {
    if (!this.elector.isLeader()) return;
    const key = `${STATUS}${changeKey(s)}`;
    this.desiredStatus.set(key, s);
    this.work.add(key);
  }

  /** The leader's provisioning pass (a work item, one at a time), then the facts it makes. */
  private queueProvision(): void {
    if (this.provisioner && this.elector.isLeader()) this.work.add(PROVISION);
  }

  private async provision(): Promise<void> {
    const provisioner = this.provisioner;
    const last = this.last;
    if (!provisioner || !last) return;
    const owned = new Set(last.needs.gatewayClasses);
    const classes = new Map(
      this.informers
        .list('GatewayClass')
        .flatMap((gc) => (owned.has(String((gc.metadata as JsonObject)?.name)) ? [[String((gc.metadata as JsonObject).name), gc] as const] : [])),
    );
    const report = await provisioner.reconcile({
      gateways: this.informers.list('Gateway').filter((gw) => isObject(gw.spec) && classes.has(String(gw.spec.gatewayClassName))),
      classes,
      parameters: (namespace, name) => this.informers.get('GatewayParameters', name, namespace),
      deployments: this.informers.list('Deployment'),
      service: (namespace, name) => this.informers.get('Service', name, namespace),
    });
    if (report.applied.length + report.deleted.length > 0) this.log.info({ applied: report.applied, deleted: report.deleted }, 'provisioned');
    this.feedInfrastructure(last);
    this.kickIdentity();
    // A refused object is a fact on its Gateway's status (Programmed=False/Invalid); the next change tries it again.
    if (report.failed.length > 0) this.log.warn({ failed: report.failed.slice(0, 10) }, 'provisioning failed');
  }

  /**
   * Each Gateway's infrastructure facts: from the Deployment and Service extlb provisions for it,
   * else from the Service in front of its own Envoy pods (addresses only).
   */
  private feedInfrastructure(update: ConverterUpdate): void {
    const fed = new Set<string>();
    for (const gateway of update.gateways.keys()) {
      const [namespace = '', name = ''] = gateway.split('/');
      // A Service extlb provisioned speaks through the provisioner alone: until its pass has
      // recorded the Gateway, that Service's cluster IP is no sign of a proxy up behind it.
      const service = this.informers
        .list('Service', namespace)
        .find(
          (s) =>
            isObject(s.metadata) &&
            isObject(s.metadata.labels) &&
            s.metadata.labels[GATEWAY_NAME_LABEL] === name &&
            s.metadata.labels[MANAGED_BY_LABEL] !== 'extlb',
        );
      const infrastructure =
        this.provisioner?.facts(
          gateway,
          (ns, n) => this.informers.get('Deployment', n, ns),
          (ns, n) => this.informers.get('Service', n, ns),
        ) ?? infrastructureOf(service);
      if (!infrastructure && !this.factsFed.has(gateway)) continue;
      const facts: GatewayProxyFacts = { infrastructure };
      if (infrastructure) fed.add(gateway);
      for (const s of this.converter.setProxyFacts(gateway, facts)) this.queueStatus(s);
    }
    this.factsFed.clear();
    for (const g of fed) this.factsFed.add(g);
  }

  /**
   * Watches, by name, the ConfigMaps the Converter says BackendTLSPolicies and Gateways name as CA
   * bundles, and stops watching those no longer named. True when a new one was listed.
   */
  private async watchReferencedConfigMaps(wanted: readonly string[]): Promise<boolean> {
    const before = new Set(this.informers.namedWatches());
    const keys = wanted.map((k) => `${CONFIG_MAP.kind} ${k}`);
    const fresh = keys.filter((k) => !before.has(k));
    await Promise.all(
      wanted.map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return this.informers.watchNamed(CONFIG_MAP, namespace, name);
      }),
    );
    const stopped = await this.informers.unwatchNamedExcept(new Set(keys));
    if (stopped.length > 0) this.log.debug({ stopped }, 'no longer referenced: not watched');
    return fresh.length > 0;
  }

  /** Sets the snapshot of every Gateway the update changed; a Gateway that went away gets an empty one. */
  private publish(update: ConverterUpdate): void {
    for (const group of update.changedGateways) {
      const config = update.gateways.get(group);
      try {
        const { changed } = this.cache.setSnapshot(group, config ? snapshotOf(config) : {});
        if (changed.length > 0) this.log.debug({ group, changed }, 'snapshot');
      } catch (err) {
        // The previous snapshot stays in use; the check says which resource is wrong.
        if (err instanceof SnapshotError) this.log.error({ group, issues: err.issues.slice(0, 10) }, 'snapshot refused');
        else throw err;
      }
    }
    this.groups = new Set(update.gateways.keys());
  }
}
