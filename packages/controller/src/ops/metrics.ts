// The controller's metrics, on @extlb/telemetry's registry (prom-client, with its process metrics).
import { Counter, Gauge, Histogram, type Registry, createRegistry } from '@extlb/telemetry';
import type { XdsServer } from '../xds/index.js';

export interface ControllerMetrics {
  registry: Registry;
  recomputeSeconds: Histogram<'kind'>;
  informerEvents: Counter<'kind' | 'event'>;
  informerLists: Counter<'kind'>;
  informerRelists: Counter<'kind'>;
  informerErrors: Counter<'kind' | 'reason'>;
  statusWrites: Counter<'result'>;
  workRetries: Counter<'work'>;
  workWaiting: Gauge;
  pushes: Counter<'type'>;
  pushSeconds: Histogram<'type'>;
  nacks: Counter<'type'>;
  leader: Gauge;
  xdsRefused: Counter<'gateway' | 'reason'>;
  identitySecrets: Counter<'result'>;
}

const shortType = (typeUrl: string) => typeUrl.slice(typeUrl.lastIndexOf('.') + 1);

export function controllerMetrics(xds: () => XdsServer | undefined, servingExpiresAt: () => number = () => 0): ControllerMetrics {
  const registry = createRegistry();
  const registers = [registry];
  const m: ControllerMetrics = {
    registry,
    recomputeSeconds: new Histogram({
      name: 'extlb_controller_recompute_seconds',
      help: 'Time to recompute snapshots and statuses, by kind of recompute (full, endpoints).',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    informerEvents: new Counter({
      name: 'extlb_controller_informer_events_total',
      help: 'Objects added, updated and deleted in the informer caches, by kind.',
      labelNames: ['kind', 'event'],
      registers,
    }),
    informerLists: new Counter({
      name: 'extlb_controller_informer_lists_total',
      help: 'Lists the informers made: the first, and each relist after 410 Gone or a restart.',
      labelNames: ['kind'],
      registers,
    }),
    informerRelists: new Counter({
      name: 'extlb_controller_informer_relists_total',
      help: 'Lists after the first (410 Gone, or a restart that lost its place), each after a backoff.',
      labelNames: ['kind'],
      registers,
    }),
    informerErrors: new Counter({
      name: 'extlb_controller_informer_errors_total',
      help: 'Watch and list failures, each followed by a restart with backoff, by reason (malformed, silent, short, status, connection).',
      labelNames: ['kind', 'reason'],
      registers,
    }),
    statusWrites: new Counter({
      name: 'extlb_controller_status_writes_total',
      help: 'Status writes, by result (written, unchanged, skipped, failed).',
      labelNames: ['result'],
      registers,
    }),
    workRetries: new Counter({
      name: 'extlb_controller_work_retries_total',
      help: 'Work that failed and was queued again with backoff, by work (status, shadow-service, recompute).',
      labelNames: ['work'],
      registers,
    }),
    workWaiting: new Gauge({
      name: 'extlb_controller_work_waiting',
      help: 'Status writes, shadow Service writes and recomputes queued, under way or waiting for a retry.',
      registers,
    }),
    pushes: new Counter({ name: 'extlb_controller_xds_pushes_total', help: 'xDS responses sent, by resource type.', labelNames: ['type'], registers }),
    pushSeconds: new Histogram({
      name: 'extlb_controller_xds_push_seconds',
      help: 'From a version being ready to the proxy acknowledging (or rejecting) it, by resource type.',
      labelNames: ['type'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    nacks: new Counter({ name: 'extlb_controller_xds_nacks_total', help: 'Updates proxies rejected, by resource type.', labelNames: ['type'], registers }),
    leader: new Gauge({ name: 'extlb_controller_leader', help: '1 while this replica holds the Lease and writes to the API.', registers }),
    xdsRefused: new Counter({
      name: 'extlb_controller_xds_streams_refused_total',
      help: 'xDS streams refused (PERMISSION_DENIED) because the client certificate does not prove the Gateway claimed, by that Gateway ("unknown" when this controller serves no such Gateway) and reason.',
      labelNames: ['gateway', 'reason'],
      registers,
    }),
    identitySecrets: new Counter({
      name: 'extlb_controller_xds_identity_secrets_total',
      help: "Writes of Gateways' xDS identity Secrets by the leader, by result (issued, refreshed, deleted, failed).",
      labelNames: ['result'],
      registers,
    }),
  };
  new Gauge({
    name: 'extlb_controller_xds_connected_proxies',
    help: 'ADS streams open now (proxies connected to this replica).',
    registers,
    collect() {
      this.set(xds()?.stats().streamsOpen ?? 0);
    },
  });
  new Gauge({
    name: 'extlb_controller_xds_serving_certificate_expiry_seconds',
    help: "Seconds until this replica's xDS serving certificate expires (it is renewed at 2/3 of its life); 0 with plain-text xDS.",
    registers,
    collect() {
      const at = servingExpiresAt();
      this.set(at > 0 ? Math.max(0, (at - Date.now()) / 1000) : 0);
    },
  });
  return m;
}

/** xDS callbacks that feed the metrics. */
export function xdsMetricCallbacks(m: ControllerMetrics) {
  return {
    onResponse: (_s: unknown, r: { typeUrl: string }) => m.pushes.inc({ type: shortType(r.typeUrl) }),
    onAck: (_s: unknown, a: { typeUrl: string; latencyMs: number }) => m.pushSeconds.observe({ type: shortType(a.typeUrl) }, a.latencyMs / 1000),
    onNack: (_s: unknown, n: { typeUrl: string; latencyMs?: number }) => {
      m.nacks.inc({ type: shortType(n.typeUrl) });
      if (n.latencyMs !== undefined) m.pushSeconds.observe({ type: shortType(n.typeUrl) }, n.latencyMs / 1000);
    },
  };
}
