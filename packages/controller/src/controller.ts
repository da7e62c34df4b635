// extlb's control plane: informers keep the cluster's objects; a change schedules a recompute
// through the converter's stages; each Gateway's result becomes the snapshot its proxies get over
// ADS; the leader writes statuses and the pools' shadow Services. Kubernetes and Envoy are the
// engine — extlb keeps no store of its own and polls nothing.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DEFAULT_CONTROLLER, type EnvoyTarget, type JsonObject } from '@extlb/envoy';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Logger, createLogger } from '@extlb/telemetry';
import { KubeApi, type KubeApiOptions } from './cluster/api.js';
import { Informers } from './cluster/informers.js';
import { CONFIG_MAP, WATCHED_KINDS } from './cluster/kinds.js';
import { referencedConfigMaps } from './cluster/references.js';
import { LeaderElector } from './cluster/lease.js';
import { quote } from './cluster/wire.js';
import { type ControllerMetrics, controllerMetrics, xdsMetricCallbacks } from './ops/metrics.js';
import { type Computed, Pipeline } from './reconcile/pipeline.js';
import { type Batch, Scheduler } from './reconcile/scheduler.js';
import { reconcileShadowServices } from './reconcile/shadow.js';
import { GATEWAY_NAME_LABEL, gatewayClassStatus, withProxyFacts } from './status/gateway.js';
import { StatusWriter } from './status/writer.js';
import { Provisioner } from './provision/index.js';
import { type GatewayRef, IDENTITY_ANNOTATION, XdsIdentity, type XdsIdentityOptions } from './identity/index.js';
import { type PeerAuth, SnapshotCache, SnapshotError, type XdsNode, XdsServer } from './xds/index.js';

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

export class Controller {
  readonly metrics: ControllerMetrics;
  readonly cache = new SnapshotCache();
  readonly xds: XdsServer;
  readonly informers: Informers;
  readonly elector: LeaderElector;
  /** Undefined when xDS is plain text. */
  readonly identity: XdsIdentity | undefined;
  private readonly api: KubeApi;
  private readonly log: Logger;
  private readonly controllerName: string;
  private readonly pipeline: Pipeline;
  private readonly scheduler: Scheduler;
  private readonly writer: StatusWriter;
  /** Undefined when provisioning is off. */
  private readonly provisioner: Provisioner | undefined;
  /** Gateways with a snapshot now; one that goes away gets an empty snapshot, so its proxies drop it. */
  private groups = new Set<string>();
  private xdsListening = false;
  private stopping = false;
  /** Groups whose proxies have rejected an update, so their next ACK changes the Gateway's status. */
  private readonly nacked = new Set<string>();

  constructor(private readonly options: ControllerOptions) {
    this.controllerName = options.controllerName ?? DEFAULT_CONTROLLER;
    const identity = options.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
    this.log = options.logger ?? createLogger({ base: { component: 'controller', replica: identity } });
    this.api = new KubeApi(options.kubeConfig, options.api);
    this.metrics = controllerMetrics(
      () => this.xds,
      () => this.identity?.servingExpiresAt ?? 0,
    );
    this.pipeline = new Pipeline({
      controllerName: this.controllerName,
      ...(options.envoy ? { envoy: options.envoy } : {}),
      ...(options.clusterDomain ? { clusterDomain: options.clusterDomain } : {}),
    });
    this.scheduler = new Scheduler((batch) => this.recompute(batch), {
      ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
      ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
      ...(options.endpointDelayMs !== undefined ? { endpointDelayMs: options.endpointDelayMs } : {}),
      endpointKinds: ENDPOINT_KINDS,
    });
    this.informers = new Informers(this.api, {
      onChange: (kind, event) => {
        this.metrics.informerEvents.inc({ kind: kind.kind, event });
        this.scheduler.touch(kind.kind);
      },
      // Most often the controller's own status write coming back: nothing to recompute.
      onStatusOnly: (kind) => this.metrics.informerEvents.inc({ kind: kind.kind, event: 'status-only' }),
      onList: (kind, count) => {
        this.metrics.informerLists.inc({ kind: kind.kind });
        this.log.debug({ kind: kind.kind, count }, 'listed');
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
      ...(xdsIdentity ? { authorize: (auth, node, group) => this.refuse(xdsIdentity, auth, node, group) } : {}),
      cache: this.cache,
      controlPlaneId: identity,
      logger: { log: (level, msg, fields) => this.log[level](fields ?? {}, msg) },
      callbacks: {
        ...metricCallbacks,
        onNack: (stream, nack) => {
          metricCallbacks.onNack(stream, nack);
          this.nacked.add(stream.group);
          this.scheduler.touch('xDS NACK');
        },
        onAck: (stream, ack) => {
          metricCallbacks.onAck(stream, ack);
          if (this.nacked.has(stream.group) && this.xds.nacks(stream.group).length === 0) {
            this.nacked.delete(stream.group);
            this.scheduler.touch('xDS ACK');
          }
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
        this.scheduler.touch('Lease');
        this.identity?.kick();
      },
      onStoppedLeading: () => {
        this.metrics.leader.set(0);
        this.log.info('no longer leading: writing nothing');
      },
      onError: (error) => this.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'leader election'),
    });
    this.provisioner = options.provision?.enabled === false ? undefined : this.makeProvisioner();
    this.writer = new StatusWriter(this.api, {
      controllerName: this.controllerName,
      isLeader: () => this.elector.isLeader(),
      current: (kind, name, namespace) => this.informers.get(kind, name, namespace),
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
   * The Gateways whose proxies get an identity Secret: those of this controller's classes whose
   * Envoy it provisions, and those whose operator asks for one (the annotation) for an Envoy of their own.
   */
  private identityGateways(): GatewayRef[] {
    const classes = new Set(this.ownedClasses().map((gc) => String((gc.metadata as JsonObject).name)));
    return this.informers.list('Gateway').flatMap((gw) => {
      const meta = (gw.metadata ?? {}) as JsonObject;
      const spec = (gw.spec ?? {}) as JsonObject;
      const annotations = (meta.annotations ?? {}) as JsonObject;
      const provisioned = this.provisioner?.provisions(`${String(meta.namespace)}/${String(meta.name)}`) === true;
      if (!classes.has(String(spec.gatewayClassName)) || (annotations[IDENTITY_ANNOTATION] !== 'true' && !provisioned)) return [];
      return [{ namespace: String(meta.namespace), name: String(meta.name), uid: String(meta.uid) }];
    });
  }

  /** The xDS server's check of each new stream: a log line and a metric for each refusal. */
  private refuse(identity: XdsIdentity, auth: PeerAuth, node: XdsNode, group: string): string | undefined {
    const refusal = identity.authorize(auth, group);
    if (!refusal) return undefined;
    // The label is the claimed Gateway only when it is one this controller serves: a client cannot grow the metric's series.
    const gateway = this.groups.has(group) ? group : 'unknown';
    this.metrics.xdsRefused.inc({ gateway, reason: refusal.reason });
    this.log.warn(
      {
        gateway: clip(group, 300),
        node: clip(node.id, 300),
        userAgent: clip(node.userAgent, 100),
        reason: refusal.reason,
        identity: clip(refusal.identity ?? '', 300),
      },
      'xDS stream refused',
    );
    return refusal.message;
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

  /** Resolves when no recompute is under way or pending. */
  idle(): Promise<void> {
    return this.scheduler.idle();
  }

  /** SIGTERM: stop watching, give up the Lease, let proxies move to another replica. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    await this.informers.stop();
    await this.scheduler.stop();
    await this.elector.stop();
    this.identity?.stop();
    await this.xds.stop({ graceMs });
    await this.api.close();
    this.xdsListening = false;
    this.log.info('stopped');
  }

  private ownedClasses(): JsonObject[] {
    return this.informers.list('GatewayClass').filter((gc) => isObject(gc.spec) && gc.spec.controllerName === this.controllerName);
  }

  private async recompute(batch: Batch): Promise<void> {
    if (this.stopping || !this.informers.synced()) return;
    const started = process.hrtime.bigint();
    const kind = batch.endpointsOnly ? 'endpoints' : 'full';
    try {
      const computed = batch.endpointsOnly ? this.pipeline.endpointsOnly(this.informers.list('EndpointSlice')) : undefined;
      const result = computed ?? (await this.full());
      this.publish(result);
      // Endpoints change no status; everything else may.
      if (!computed) {
        await this.writeAsLeader(result);
        // Gateways may have come, gone or changed their annotation.
        this.identity?.kick();
      }
    } catch (err) {
      this.log.error({ error: err instanceof Error ? (err.stack ?? err.message) : String(err), kinds: [...batch.kinds] }, 'recompute failed');
    } finally {
      this.metrics.recomputeSeconds.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private async full(): Promise<Computed> {
    await this.watchReferencedConfigMaps();
    const classes = this.ownedClasses().map((gc) => String((gc.metadata as JsonObject).name));
    const result = this.pipeline.full(this.informers.objects(), classes, nowIso());
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0)
      this.log.info({ errors: errors.length, first: errors.slice(0, 5) }, 'the cluster has objects extlb cannot use as written; their statuses say why');
    return result;
  }

  /**
   * Watches, by name, the ConfigMaps that BackendTLSPolicies and Gateways name as CA bundles, and
   * stops watching those no longer named. A newly named one is listed before the recompute goes on,
   * so it is not reported missing for the moment its watch takes to start.
   */
  private async watchReferencedConfigMaps(): Promise<void> {
    const wanted = referencedConfigMaps(this.informers.list('BackendTLSPolicy'), this.informers.list('Gateway'));
    await Promise.all(
      wanted.map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return this.informers.watchNamed(CONFIG_MAP, namespace, name);
      }),
    );
    const stopped = await this.informers.unwatchNamedExcept(new Set(wanted.map((k) => `${CONFIG_MAP.kind} ${k}`)));
    if (stopped.length > 0) this.log.debug({ stopped }, 'no longer referenced: not watched');
  }

  /** Sets every Gateway's snapshot; a Gateway that went away gets an empty one. */
  private publish(computed: Computed): void {
    for (const [group, resources] of computed.snapshots) {
      try {
        const { changed } = this.cache.setSnapshot(group, resources);
        if (changed.length > 0) this.log.debug({ group, changed }, 'snapshot');
      } catch (err) {
        // The previous snapshot stays in use; the check says which resource is wrong.
        if (err instanceof SnapshotError) this.log.error({ group, issues: err.issues.slice(0, 10) }, 'snapshot refused');
        else throw err;
      }
    }
    for (const group of this.groups) if (!computed.snapshots.has(group)) this.cache.setSnapshot(group, {});
    this.groups = new Set(computed.snapshots.keys());
  }

  /** The leader's provisioning pass: every Gateway of this controller's classes gets its objects, or loses them. */
  private async provision(): Promise<void> {
    if (!this.provisioner) return;
    const classes = new Map(this.ownedClasses().map((gc) => [String((gc.metadata as JsonObject).name), gc]));
    const report = await this.provisioner.reconcile({
      gateways: this.informers.list('Gateway').filter((gw) => isObject(gw.spec) && classes.has(String(gw.spec.gatewayClassName))),
      classes,
      parameters: (namespace, name) => this.informers.get('GatewayParameters', name, namespace),
      deployments: this.informers.list('Deployment'),
      service: (namespace, name) => this.informers.get('Service', name, namespace),
    });
    if (report.applied.length + report.deleted.length > 0) this.log.info({ applied: report.applied, deleted: report.deleted }, 'provisioned');
    if (report.failed.length > 0) this.log.warn({ failed: report.failed.slice(0, 10) }, 'provisioning failed');
  }

  private async writeAsLeader(computed: Computed): Promise<void> {
    if (!this.elector.isLeader()) return;
    const shadows = await reconcileShadowServices(
      this.api,
      [...this.informers.list('BackendPool'), ...this.informers.list('InferencePool')],
      this.informers.list('Service'),
    );
    if (shadows.failed.length > 0) this.log.warn({ failed: shadows.failed }, 'shadow Services');
    await this.provision();
    const now = nowIso();
    const facts = {
      now,
      service: (namespace: string, name: string) =>
        this.informers
          .list('Service', namespace)
          .find((s) => isObject(s.metadata) && isObject(s.metadata.labels) && s.metadata.labels[GATEWAY_NAME_LABEL] === name),
      nacks: (namespace: string, name: string) => this.xds.nacks(`${namespace}/${name}`).map((n) => ({ typeUrl: n.typeUrl, message: n.message })),
      // The seam to the converter's proxy facts: once it takes them, this is setProxyFacts(key, { infrastructure }).
      infrastructure: (namespace: string, name: string) =>
        this.provisioner?.facts(
          `${namespace}/${name}`,
          (ns, n) => this.informers.get('Deployment', n, ns),
          (ns, n) => this.informers.get('Service', n, ns),
        ),
    };
    const desired = (computed.statuses ?? []).map((s) => {
      if (s.kind !== 'Gateway') return s;
      const m = s.metadata as { namespace: string; name: string };
      const live = this.informers.get('Gateway', m.name, m.namespace);
      const generation = isObject(live?.metadata) && typeof live.metadata.generation === 'number' ? live.metadata.generation : undefined;
      return { ...s, status: withProxyFacts(s.status as JsonObject, { ...m, ...(generation !== undefined ? { generation } : {}) }, facts) };
    });
    const covered = new Set(desired.filter((s) => s.kind === 'GatewayClass').map((s) => String((s.metadata as JsonObject).name)));
    for (const gc of this.ownedClasses()) if (!covered.has(String((gc.metadata as JsonObject).name))) desired.push(gatewayClassStatus(gc, now));
    const report = await this.writer.write(desired);
    this.log.debug({ written: report.written, unchanged: report.unchanged, skipped: report.skipped, failed: report.failed.length }, 'statuses');
    this.metrics.statusWrites.inc({ result: 'written' }, report.written);
    this.metrics.statusWrites.inc({ result: 'unchanged' }, report.unchanged);
    this.metrics.statusWrites.inc({ result: 'skipped' }, report.skipped);
    this.metrics.statusWrites.inc({ result: 'failed' }, report.failed.length);
    if (report.failed.length > 0) this.log.warn({ failed: report.failed.slice(0, 10) }, 'status writes failed');
  }
}
