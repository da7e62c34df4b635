// Converts a generated estate at three sizes and prints time, memory and the ratio of conversion
// time to serializing the output. Full size: 10,000 HTTPRoutes (2 rules each), 1,000 GRPCRoutes,
// 1,000 BackendPools, 2,000 Services (100 of them TLS by a BackendTLSPolicy), 50,000 endpoints;
// the smaller sizes scale every count with the routes.
// Target: the full estate in under 2 s and 1 GiB RSS on a 2-core machine, near-linear growth; the
// time of each stage (read, resolve, envoy, status) is printed beside the total. Then HTTPS
// listeners, to show what checking their certificates costs.
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { Converter, convert, type EnvoyConfig, toBootstrap } from '../src/index.js';
import { envoyOf, readObjects } from '../test/golden.js';

const NOW = '2026-01-01T00:00:00Z';
/** A CA bundle for the BackendTLSPolicies: the golden scenario's. */
const CA_CONFIGMAP = (
  readObjects(fileURLToPath(new URL('../test/scenarios/grpc-and-backend-tls/input.yaml', import.meta.url))) as { kind: string; data?: Record<string, string> }[]
).find((o) => o.kind === 'ConfigMap');

function estate(routes: number): unknown[] {
  const pools = routes / 10;
  const services = routes / 5;
  const podsPerPool = 25; // 25 × pools + 12.5 × services = 5 × routes endpoints
  const objects: unknown[] = [];
  objects.push({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'bench', creationTimestamp: NOW },
    spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
  });
  for (let p = 0; p < 10; p++) {
    objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `picker-${p}`, namespace: 'bench' }, spec: { ports: [{ name: 'grpc', port: 9002 }] } });
  }
  for (let i = 0; i < pools; i++) {
    const external = i % 2 === 0;
    objects.push({
      apiVersion: 'extlb.dev/v1alpha1',
      kind: 'BackendPool',
      metadata: { name: `pool-${i}`, namespace: 'bench' },
      spec: {
        selector: { matchLabels: { pool: `pool-${i}` } },
        targetPorts: [{ number: 8000 }],
        loadBalancer: external
          ? {
              type: 'External',
              external: {
                refs: [
                  { name: `picker-${i % 10}`, port: { number: 9002 } },
                  { name: `picker-${(i + 1) % 10}`, port: { number: 9002 } },
                ],
                maxEndpoints: 3,
              },
            }
          : { type: 'LeastRequest' },
      },
    });
    for (let k = 0; k < podsPerPool; k++) {
      const n = i * podsPerPool + k;
      objects.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `pool-${i}-${k}`, namespace: 'bench', labels: { pool: `pool-${i}`, tier: 'model' } },
        status: { phase: 'Running', podIP: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
      });
    }
  }
  for (let s = 0; s < services; s++) {
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc-${s}`, namespace: 'bench' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    const addresses = Array.from({ length: s % 2 === 0 ? 12 : 13 }, (_, k) => `172.${(s >> 8) & 255}.${s & 255}.${k + 1}`);
    objects.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `svc-${s}-a`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `svc-${s}` } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
    });
    if (s % 20 === 5) {
      objects.push({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'BackendTLSPolicy',
        metadata: { name: `svc-${s}-tls`, namespace: 'bench', creationTimestamp: NOW },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: `svc-${s}`, sectionName: 'http' }],
          validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'bench-ca' }], hostname: `svc-${s}.bench.example.com` },
        },
      });
    }
    if (s % 10 === 0) {
      objects.push({
        apiVersion: 'extlb.dev/v1alpha1',
        kind: 'LoadBalancerPolicy',
        metadata: { name: `svc-${s}-lb`, namespace: 'bench', creationTimestamp: NOW },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: `svc-${s}` }],
          loadBalancer: { type: 'External', external: { refs: [{ name: `picker-${s % 10}`, port: { number: 9002 } }] } },
        },
      });
    }
  }
  objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench-ca', namespace: 'bench' }, data: CA_CONFIGMAP?.data });
  for (let r = 0; r < routes / 10; r++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GRPCRoute',
      metadata: { name: `grpc-${r}`, namespace: 'bench', creationTimestamp: NOW },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: [`g${r % 200}.example.org`],
        rules: [
          { matches: [{ method: { service: `bench.v1.Service${r}`, method: 'Get' } }], backendRefs: [{ name: `svc-${r % services}`, port: 80 }] },
          {
            matches: [{ method: { service: `bench.v1.Service${r}` }, headers: [{ name: 'x-tenant', value: `t${r % 7}` }] }],
            backendRefs: [{ name: `svc-${(r + 3) % services}`, port: 80 }],
          },
        ],
      },
    });
  }
  for (let r = 0; r < routes; r++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `route-${r}`, namespace: 'bench', creationTimestamp: NOW },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: [`r${r % 2000}.example.com`],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: `/v1/${r}` } }],
            backendRefs: [{ group: 'extlb.dev', kind: 'BackendPool', name: `pool-${r % pools}` }],
          },
          {
            matches: [{ path: { type: 'Exact', value: `/health/${r}` }, headers: [{ name: 'x-tenant', value: `t${r % 7}` }] }],
            backendRefs: [
              { name: `svc-${r % services}`, port: 80, weight: 3 },
              { name: `svc-${(r + 1) % services}`, port: 80, weight: 1 },
            ],
            timeouts: { request: '10s' },
          },
        ],
      },
    });
  }
  return objects;
}

function time<T>(fn: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const out = fn();
  return [out, Number(process.hrtime.bigint() - start) / 1e6];
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** One conversion, with the time the Converter spent in each stage. */
function stages(objects: unknown[]) {
  const update = new Converter({ now: NOW }).update({ objects });
  return { config: [...update.gateways.values()][0] as EnvoyConfig, ms: update.timings };
}

const rows: string[] = [];
let peakRss = 0;
for (const routes of [1000, 5000, 10000]) {
  const objects = estate(routes);
  convert(objects, { now: NOW }); // warm-up
  const runs: number[] = [];
  const stageRuns: Record<string, number[]> = { read: [], resolve: [], envoy: [], status: [] };
  let config = envoyOf(convert(objects, { now: NOW }));
  for (let i = 0; i < 3; i++) {
    gc?.();
    const [r, ms] = time(() => convert(objects, { now: NOW }));
    config = envoyOf(r);
    runs.push(ms);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    gc?.();
    for (const [stage, ms] of Object.entries(stages(objects).ms)) stageRuns[stage]?.push(ms);
  }
  gc?.();
  const [bootstrap, renderMs] = time(() => toBootstrap(config));
  const [json, jsonMs] = time(() => JSON.stringify(bootstrap));
  // The yaml package's generic writer, for scale: `extlb convert -o yaml` uses the CLI's own
  // writer (packages/cli/src/yaml-out.ts), which the CLI's bench measures against conversion.
  const [, yamlMs] = time(() => stringify(bootstrap, { lineWidth: 0, aliasDuplicateObjects: false }));
  const endpoints = config.clusters.reduce(
    (n, c) =>
      n + ((c.load_assignment as { endpoints?: { lb_endpoints: unknown[] }[] } | undefined)?.endpoints ?? []).reduce((m, e) => m + e.lb_endpoints.length, 0),
    0,
  );
  const convertMs = median(runs);
  const perStage = Object.entries(stageRuns)
    .map(([stage, ms]) => `${stage} ${median(ms).toFixed(0)}`)
    .join(' / ');
  rows.push(
    `${String(routes).padStart(6)} routes  ${String(objects.length).padStart(6)} objects  ${String(config.clusters.length).padStart(5)} clusters  ${String(endpoints).padStart(6)} endpoints  ` +
      `convert ${convertMs.toFixed(0).padStart(5)} ms (${perStage} ms)  toBootstrap ${renderMs.toFixed(0)} ms  JSON ${jsonMs.toFixed(0)} ms (${(json.length / 1e6).toFixed(1)} MB, convert/JSON ${(convertMs / jsonMs).toFixed(1)}x)  YAML by the yaml package ${yamlMs.toFixed(0)} ms (convert/YAML ${(convertMs / yamlMs).toFixed(2)}x)`,
  );
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}
// HTTPS: every listener on its own port with its own Secret (the same test certificate under other
// names), so each certificate is parsed and its key checked once, and a client-validation CA for
// all of them. (Listeners sharing a port add virtual hosts per listener pair: not what this measures.)
const testSecret = (
  readObjects(fileURLToPath(new URL('../test/scenarios/route-features/input.yaml', import.meta.url))) as { kind: string; stringData: Record<string, string> }[]
).find((o) => o.kind === 'Secret') as { stringData: Record<string, string> };
function tlsEstate(listeners: number): unknown[] {
  const objects: unknown[] = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'bench' }, data: { 'ca.crt': testSecret.stringData['tls.crt'] } },
  ];
  const specs = Array.from({ length: listeners }, (_, i) => {
    objects.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `cert-${i}`, namespace: 'bench' },
      type: 'kubernetes.io/tls',
      // Text before a PEM block is allowed (RFC 7468), and makes each Secret's content its own.
      stringData: { ...testSecret.stringData, 'tls.crt': `cert ${i} of ${listeners}\n${testSecret.stringData['tls.crt']}` },
    });
    return { name: `https-${i}`, port: 10000 + i, protocol: 'HTTPS', hostname: `h${i}.example.com`, tls: { certificateRefs: [{ name: `cert-${i}` }] } };
  });
  objects.push({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'tls', namespace: 'bench' },
    spec: {
      gatewayClassName: 'extlb',
      listeners: specs,
      tls: { frontend: { default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } } } },
    },
  });
  return objects;
}
for (const listeners of [100, 1000]) {
  const objects = tlsEstate(listeners);
  gc?.();
  // The first conversion parses every certificate; later ones find the verdicts of unchanged ones.
  const firstMs = time(() => convert(objects, { now: NOW }))[1];
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    gc?.();
    runs.push(time(() => convert(objects, { now: NOW }))[1]);
  }
  const againMs = median(runs);
  rows.push(
    `${String(listeners).padStart(6)} HTTPS listeners, each with its own Secret  first convert ${firstMs.toFixed(0).padStart(5)} ms (${((firstMs * 1000) / listeners).toFixed(0)} µs per listener, its certificate checked)  again ${againMs.toFixed(0)} ms (first/again ${(firstMs / againMs).toFixed(1)}x)`,
  );
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}
console.log(rows.join('\n'));
console.log(`peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB (target < 1024 MiB); target: 10k routes convert < 2000 ms`);
