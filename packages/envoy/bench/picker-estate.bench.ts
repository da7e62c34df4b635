// The picker estate of issue 12 — rules × matches × External pools, each pool with its own ext_proc
// filter — at growing sizes: conversion time, the configuration's size per Envoy route × weighted
// cluster (flat when the output is linear), and the size the earlier layout would have had (every
// weighted cluster listing every picker filter of its route) with the ratio between the two. Then
// the largest estate Gateway API allows per route, three times: refused by the size bound, with the
// time that costs.
import { convert, DEFAULT_MAX_OUTPUT_BYTES, type EnvoyConfig, jsonSize } from '../src/index.js';
import { type PickerEstateSize, pickerEstate, routeBackendPairs } from '../test/picker-estate.js';

type Json = Record<string, unknown>;
const NOW = '2026-01-01T00:00:00Z';

function time<T>(fn: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const out = fn();
  return [out, Number(process.hrtime.bigint() - start) / 1e6];
}

function routesOf(config: EnvoyConfig): Json[] {
  return config.routes.flatMap((rc) => (rc.virtual_hosts as Json[]).flatMap((vh) => vh.routes as Json[]));
}

/**
 * Bytes the earlier layout added: each weighted cluster also carried a `disabled` ExtProcPerRoute
 * for every other picker filter of its route.
 */
function earlierExtraBytes(config: EnvoyConfig): number {
  let extra = 0;
  for (const route of routesOf(config)) {
    const clusters = ((route.route as Json | undefined)?.weighted_clusters as Json | undefined)?.clusters as Json[] | undefined;
    if (!clusters) continue;
    const filters = new Set(clusters.flatMap((c) => Object.keys((c.typed_per_filter_config as Json | undefined) ?? {})));
    for (const c of clusters) {
      const own = (c.typed_per_filter_config as Json | undefined) ?? {};
      const missing = [...filters].filter((f) => !(f in own));
      extra += missing.reduce(
        (n, f) =>
          n + JSON.stringify({ [f]: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute', disabled: true } }).length - 1,
        0,
      );
    }
  }
  return extra;
}

const sizes: PickerEstateSize[] = [
  { routes: 1, rules: 16, matches: 8, pools: 4 },
  { routes: 1, rules: 16, matches: 8, pools: 8 },
  { routes: 1, rules: 16, matches: 8, pools: 16 },
  { routes: 1, rules: 16, matches: 16, pools: 16 },
  { routes: 1, rules: 16, matches: 64, pools: 16 },
];
console.log('picker estate: routes × rules × matches × External pools (one ext_proc filter per pool)');
for (const size of sizes) {
  const objects = pickerEstate(size);
  convert(objects, { now: NOW }); // warm-up
  const [result, ms] = time(() => convert(objects, { now: NOW }));
  const config = result.gateways['default/gw'] as EnvoyConfig;
  const bytes = jsonSize(config, Number.POSITIVE_INFINITY);
  const earlier = bytes + earlierExtraBytes(config);
  const pairs = routeBackendPairs(size);
  const input = JSON.stringify(objects).length;
  console.log(
    `  ${size.routes}×${size.rules}×${String(size.matches).padStart(2)}×${String(size.pools).padStart(2)}  input ${(input / 1e3).toFixed(0).padStart(4)} kB  convert ${ms.toFixed(0).padStart(5)} ms  ` +
      `output ${(bytes / 1e6).toFixed(2).padStart(6)} MB (${(bytes / pairs).toFixed(0)} B per route × backend)  ` +
      `earlier layout ${(earlier / 1e6).toFixed(2).padStart(6)} MB (${(earlier / pairs).toFixed(0)} B per pair)  earlier/now ${(earlier / bytes).toFixed(2)}x`,
  );
}
const largest: PickerEstateSize = { routes: 3, rules: 16, matches: 64, pools: 16 };
const objects = pickerEstate(largest);
const [result, ms] = time(() => convert(objects, { now: NOW }));
const refused = result.diagnostics.some((d) => d.code === 'OutputTooLarge');
const unbounded = convert(objects, { now: NOW, maxOutputBytes: Number.POSITIVE_INFINITY }).gateways['default/gw'] as EnvoyConfig;
const [, countMs] = time(() => jsonSize(unbounded, DEFAULT_MAX_OUTPUT_BYTES));
const [whole, wholeMs] = time(() => jsonSize(unbounded, Number.POSITIVE_INFINITY));
console.log(
  `  ${largest.routes}×${largest.rules}×${largest.matches}×${largest.pools}  input ${(JSON.stringify(objects).length / 1e3).toFixed(0)} kB  convert ${ms.toFixed(0)} ms, ` +
    `${refused ? `refused (OutputTooLarge): ${(whole / 1e6).toFixed(1)} MB past the ${DEFAULT_MAX_OUTPUT_BYTES / 2 ** 20} MiB bound` : 'NOT refused'}; ` +
    `counting to the bound ${countMs.toFixed(0)} ms, counting all of it ${wholeMs.toFixed(0)} ms; peak RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
);
