// The Grafana dashboard (examples/observability/grafana-dashboard.yaml, a ConfigMap holding its JSON) names only metrics that
// exist: the controller's from its registry (names, types, label names), the proxies' from the
// stats Envoy derives from the configuration the converter writes. The Envoy side is a model of
// what Envoy documents, not of the converter: which stats each part of a configuration has
// (HTTP connection manager, cluster, ext_proc filter, tcp_proxy, server), how its default tag
// extractors turn a stat name into a name and tags (source/common/config/well_known_names.cc), and
// how /stats/prometheus spells them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { convert, type EnvoyConfig } from '@extlb/envoy';
import { parseAllDocuments } from 'yaml';
import { controllerMetrics } from '../src/ops/metrics.js';
import { provisionedBootstrap } from '../src/provision/index.js';
import { DEPLOY, ROOT, yamlFiles } from './deploy-manifests.js';

type Json = Record<string, any>;
/** The dashboard, as the ConfigMap Grafana's sidecar loads holds it. */
const dashboardMap = parseAllDocuments(readFileSync(join(ROOT, 'examples/observability/grafana-dashboard.yaml'), 'utf8'))[0]?.toJS() as Json;
const dashboard = JSON.parse(dashboardMap.data['extlb.json']) as Json;

/** A metric as Prometheus sees it: its name and the label names its series carry. */
interface Metric {
  labels: Set<string>;
}

// ---- Envoy's stats, as its docs list them -----------------------------------------------------

/** Per HTTP connection manager, under `http.<stat_prefix>.` (config_http_conn_man_stats). */
const HCM_STATS = {
  counters: [
    'downstream_rq_total',
    'downstream_rq_1xx',
    'downstream_rq_2xx',
    'downstream_rq_3xx',
    'downstream_rq_4xx',
    'downstream_rq_5xx',
    'downstream_cx_total',
  ],
  histograms: ['downstream_rq_time', 'downstream_cx_length_ms'],
  gauges: ['downstream_rq_active', 'downstream_cx_active'],
};
/** Per ext_proc filter, under `http.<stat_prefix>.ext_proc.<its own stat_prefix>` (ext_proc filter docs, Statistics). */
const EXT_PROC_STATS = {
  counters: ['streams_started', 'stream_msgs_sent', 'stream_msgs_received', 'streams_closed', 'streams_failed', 'failure_mode_allowed', 'message_timeouts'],
  histograms: [],
  gauges: [],
};
/** Per cluster, under `cluster.<name or alt_stat_name>.` (config_cluster_manager_cluster_stats, and the router's dynamic HTTP stats). */
const CLUSTER_STATS = {
  counters: [
    'upstream_rq_total',
    'upstream_rq_1xx',
    'upstream_rq_2xx',
    'upstream_rq_3xx',
    'upstream_rq_4xx',
    'upstream_rq_5xx',
    'upstream_rq_retry',
    'upstream_rq_timeout',
    'upstream_cx_connect_fail',
    'lb_healthy_panic',
  ],
  histograms: ['upstream_rq_time', 'upstream_cx_connect_ms'],
  gauges: ['membership_healthy', 'membership_total', 'upstream_rq_active'],
};
/** Per tcp_proxy, under `tcp.<stat_prefix>.` (config_network_filters_tcp_proxy, Statistics). */
const TCP_STATS = {
  counters: ['downstream_cx_total', 'downstream_cx_no_route', 'downstream_cx_tx_bytes_total', 'downstream_cx_rx_bytes_total', 'idle_timeout'],
  histograms: [],
  gauges: ['downstream_cx_tx_bytes_buffered'],
};
/** The server's own, under `server.` (operations/stats: server statistics). */
const SERVER_STATS = { counters: [], histograms: ['initialization_time_ms'], gauges: ['live', 'state', 'uptime', 'concurrency', 'memory_allocated'] };

type StatSet = typeof HCM_STATS;

/**
 * Envoy's default tag extractors that these stats meet: a regex one removes its first capture
 * group from the name and takes its second as the value; a tokenized one (`cluster.$.**`) takes
 * the `$` segment (one dot-free segment) as the value and removes it.
 */
const EXTRACTORS: ({ tag: string; regex: RegExp } | { tag: string; tokens: string[] })[] = [
  { tag: 'envoy.response_code', regex: /_rq(_(\d{3}))$/ },
  { tag: 'envoy.response_code_class', regex: /_rq_((\d))xx$/ },
  { tag: 'envoy.tcp_prefix', tokens: ['tcp', '$', '**'] },
  { tag: 'envoy.cluster_name', tokens: ['cluster', '$', '**'] },
  { tag: 'envoy.http_conn_manager_prefix', tokens: ['http', '$', '**'] },
];

function extractTags(stat: string): { name: string; tags: string[] } {
  let name = stat;
  const tags: string[] = [];
  for (const e of EXTRACTORS) {
    if ('regex' in e) {
      const m = e.regex.exec(name);
      if (!m || m[1] === undefined) continue;
      // The first group is what goes: `_503` of `_rq_503`, `5` of `_rq_5xx` (the name keeps `_rq_xx`).
      name = name.slice(0, m.index) + name.slice(m.index).replace(m[1], '');
      tags.push(e.tag);
    } else {
      const parts = name.split('.');
      const at = e.tokens.indexOf('$');
      if (parts.length < e.tokens.length || e.tokens.some((t, i) => t !== '$' && t !== '**' && parts[i] !== t)) continue;
      parts.splice(at, 1);
      name = parts.join('.');
      tags.push(e.tag);
    }
  }
  return { name, tags };
}

/** /stats/prometheus: `envoy_` + the tag-free name with every character outside [a-zA-Z0-9_] as `_`; tags likewise. */
const promName = (s: string) => `envoy_${s.replace(/[^a-zA-Z0-9_]/g, '_')}`;
const promLabel = (s: string) => s.replace(/[^a-zA-Z0-9_]/g, '_');

function addStats(out: Map<string, Metric>, scope: string, set: StatSet): void {
  const add = (stat: string, suffixes: string[], extra: string[]) => {
    const { name, tags } = extractTags(`${scope}${stat}`);
    for (const suffix of suffixes) {
      const m = out.get(promName(name) + suffix) ?? { labels: new Set<string>() };
      for (const t of [...tags.map(promLabel), ...extra]) m.labels.add(t);
      out.set(promName(name) + suffix, m);
    }
  };
  for (const c of set.counters) add(c, [''], []);
  for (const g of set.gauges) add(g, [''], []);
  for (const h of set.histograms) {
    add(h, ['_bucket'], ['le']);
    add(h, ['_sum', '_count'], []);
  }
}

/** The Envoy metrics of one configuration: its listeners' HTTP connection managers and tcp_proxies, its clusters. */
function envoyMetrics(configs: { listeners: Json[]; clusters: Json[] }[]): Map<string, Metric> {
  const out = new Map<string, Metric>();
  addStats(out, 'server.', SERVER_STATS);
  for (const config of configs) {
    for (const l of config.listeners) {
      for (const fc of l.filter_chains ?? []) {
        for (const f of fc.filters ?? []) {
          const tc = f.typed_config as Json;
          if (tc['@type'].endsWith('.HttpConnectionManager')) {
            addStats(out, `http.${tc.stat_prefix}.`, HCM_STATS);
            for (const hf of tc.http_filters ?? []) {
              if (hf.typed_config?.['@type'].endsWith('.ExternalProcessor'))
                addStats(out, `http.${tc.stat_prefix}.ext_proc.${hf.typed_config.stat_prefix ?? ''}`, EXT_PROC_STATS);
            }
          }
          if (tc['@type'].endsWith('.TcpProxy')) addStats(out, `tcp.${tc.stat_prefix}.`, TCP_STATS);
        }
      }
    }
    for (const c of config.clusters) addStats(out, `cluster.${c.alt_stat_name ?? c.name}.`, CLUSTER_STATS);
  }
  return out;
}

// ---- The controller's, from its registry ------------------------------------------------------

function registryMetrics(): Map<string, Metric> {
  const { registry } = controllerMetrics(() => undefined);
  const out = new Map<string, Metric>();
  for (const m of registry.getMetricsAsArray() as unknown as { name: string; labelNames?: string[]; type?: string; constructor: { name: string } }[]) {
    const labels = new Set(m.labelNames ?? []);
    if (m.constructor.name === 'Histogram') {
      out.set(`${m.name}_bucket`, { labels: new Set([...labels, 'le']) });
      out.set(`${m.name}_sum`, { labels });
      out.set(`${m.name}_count`, { labels });
    } else out.set(m.name, { labels });
  }
  return out;
}

// ---- The dashboard's queries --------------------------------------------------------------------

/** Labels Prometheus itself gives every scraped series. */
const TARGET_LABELS = new Set(['instance', 'job']);
const PROMQL_WORDS = new Set(['sum', 'rate', 'max', 'min', 'avg', 'by', 'without', 'histogram_quantile', 'irate', 'increase', 'count']);

/** The metric names of a PromQL expression, and the label names it groups or matches by. */
function parse(expr: string): { metrics: string[]; labels: string[] } {
  const labels: string[] = [];
  let rest = expr.replace(/\{([^}]*)\}/g, (_, body: string) => {
    for (const m of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)) labels.push(m[1] as string);
    return ' ';
  });
  rest = rest.replace(/\b(by|without)\s*\(([^)]*)\)/g, (_, __, body: string) => {
    labels.push(
      ...body
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  const metrics = [...rest.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w));
  return { metrics, labels };
}

function queries(): { panel: string; expr: string }[] {
  return (dashboard.panels as Json[]).flatMap((p) => (p.targets ?? []).map((t: Json) => ({ panel: String(p.title), expr: String(t.expr) })));
}

/** The configurations a cluster running examples/deploy serves: the converter's for the Gateway, and the provisioned bootstrap. */
function deployConfigs(): { listeners: Json[]; clusters: Json[] }[] {
  const objects = [...yamlFiles(join(DEPLOY, 'app')), ...yamlFiles(join(DEPLOY, 'gateway')), join(DEPLOY, 'controller/gatewayclass.yaml')].flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as unknown),
  );
  // A TCPRoute and a TLS passthrough stream, so the proxies' L4 panels have their stats too.
  const l4 = parseAllDocuments(readFileSync(join(ROOT, 'packages/envoy/test/scenarios/l4-listeners/input.yaml'), 'utf8')).map((d) => d.toJS() as unknown);
  const configs: EnvoyConfig[] = [objects, l4].flatMap((input) =>
    Object.values(convert(input, { envoy: '1.38', endpoints: 'eds', now: '2026-01-01T00:00:00Z' }).gateways),
  );
  const bootstrap = provisionedBootstrap(
    { namespace: 'demo', name: 'edge', uid: 'u', className: 'extlb', listeners: [], addresses: [], infrastructure: { labels: {}, annotations: {} } },
    { xdsServer: 'extlb-controller.extlb-system.svc:18000' },
  ) as Json;
  return [...configs, { listeners: bootstrap.static_resources.listeners, clusters: bootstrap.static_resources.clusters }];
}

describe('the Grafana dashboard', () => {
  const controller = registryMetrics();
  const configs = deployConfigs();
  const envoy = envoyMetrics(configs);

  it('has controller and proxy panels, each with at least one query', () => {
    const titles = (dashboard.panels as Json[]).filter((p) => p.type === 'row').map((p) => p.title);
    assert.deepEqual(titles, ['Controller', 'Proxies (Envoy)']);
    for (const p of (dashboard.panels as Json[]).filter((p) => p.type !== 'row')) assert.ok((p.targets ?? []).length > 0, `${p.title} has no query`);
  });

  it('names only metrics and labels that exist', () => {
    let envoySeen = 0;
    let controllerSeen = 0;
    for (const { panel, expr } of queries()) {
      const { metrics, labels } = parse(expr);
      assert.ok(metrics.length > 0, `${panel}: no metric in ${expr}`);
      const found = metrics.map((name) => {
        const m = controller.get(name) ?? envoy.get(name);
        assert.ok(m, `${panel}: ${name} is neither in the controller's registry nor among the stats of the configuration the converter writes`);
        if (controller.has(name)) controllerSeen++;
        else envoySeen++;
        return m;
      });
      for (const label of labels) {
        if (TARGET_LABELS.has(label)) continue;
        assert.ok(
          found.some((m) => m.labels.has(label)),
          `${panel}: no metric of ${expr} has the label ${label}`,
        );
      }
    }
    assert.ok(controllerSeen > 0 && envoySeen > 0);
  });

  it('finds the per-backend and picker stats where the configuration has them', () => {
    // The model, not the dashboard: what the deploy example's configuration makes Envoy count.
    assert.ok(envoy.get('envoy_cluster_upstream_rq_total')?.labels.has('envoy_cluster_name'));
    assert.ok(envoy.get('envoy_cluster_upstream_rq_xx')?.labels.has('envoy_response_code_class'));
    assert.ok(envoy.get('envoy_http_ext_proc_failure_mode_allowed')?.labels.has('envoy_http_conn_manager_prefix'));
    assert.ok(envoy.get('envoy_tcp_downstream_cx_total')?.labels.has('envoy_tcp_prefix'));
  });

  it("keeps a backend's whole name as its cluster label, dots and all", () => {
    // A tag value is one dot-free segment; a BackendPool named `llm.v2` must not be cut to `llm`.
    const input = parseAllDocuments(readFileSync(join(ROOT, 'packages/envoy/test/scenarios/backendpool-picker/input.yaml'), 'utf8')).map((d) => {
      const o = d.toJS() as Json;
      if (o?.kind === 'BackendPool' && o.metadata.name === 'llm') o.metadata.name = 'llm.v2';
      if (o?.kind === 'HTTPRoute') for (const r of o.spec.rules) for (const b of r.backendRefs) if (b.name === 'llm') b.name = 'llm.v2';
      return o;
    });
    const [config] = Object.values(convert(input, { now: '2026-01-01T00:00:00Z' }).gateways) as EnvoyConfig[];
    const cluster = config?.clusters.find((c) => c.name === 'bpool/default/llm.v2') as Json;
    assert.ok(cluster, 'the pool has its cluster');
    const { name, tags } = extractTags(`cluster.${cluster.alt_stat_name ?? cluster.name}.upstream_rq_total`);
    assert.equal(name, 'cluster.upstream_rq_total');
    assert.deepEqual(tags, ['envoy.cluster_name']);
    assert.equal(cluster.alt_stat_name, 'bpool/default/llm_v2');
  });
});
