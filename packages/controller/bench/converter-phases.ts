// The Converter alone on the controller bench's estate (10k routes, 1k pools, 50k endpoints), in
// this process: the CPU time of a full update, of an EndpointSlice change, of a route change and of
// a route added and deleted, with the time per stage. A figure beside the end-to-end bench, where
// three processes share the machine; never asserted.
import { Converter } from '@extlb/envoy';
import { clusterEstate, httpRoute } from './cluster-estate.js';

const estate = clusterEstate({ routes: 10_000, pools: 1000, services: 1000, endpoints: 50_000, idleGateways: 0 } as never);
const converter = new Converter({ endpoints: 'eds', gatewayClassNames: ['extlb'] });
const cpu = <T>(f: () => T): [T, number] => {
  const start = process.cpuUsage();
  const r = f();
  const used = process.cpuUsage(start);
  return [r, (used.user + used.system) / 1000];
};
const fmt = (t: Record<string, number>) =>
  Object.entries(t)
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ');
const [first, fullMs] = cpu(() => converter.update({ objects: estate.objects }));
console.log(`full update: ${fullMs.toFixed(0)} ms CPU (${fmt(first.timings as never)} ms)`);
const slices = estate.objects.filter((o) => o.kind === 'EndpointSlice');
const endpointMs: number[] = [];
for (let i = 0; i < 20; i++) {
  const s = structuredClone(slices[i * 7]) as { endpoints: { addresses: string[] }[] };
  s.endpoints = s.endpoints.slice(1);
  const [u, ms] = cpu(() => converter.update({ updated: [s] }));
  endpointMs.push(ms);
  if (i === 19) console.log(`endpoint update (kind ${u.kind}, ${u.changedGateways.length} Gateway): ${fmt(u.timings as never)} ms`);
}
const routeMs: number[] = [];
for (let i = 0; i < 5; i++) {
  const [u, ms] = cpu(() => converter.update({ updated: [httpRoute(i, 1000, 1000, i + 1)] }));
  routeMs.push(ms);
  if (i === 4)
    console.log(
      `route update (kind ${u.kind}, resolved ${u.resolvedGateways === 'all' ? 'every Gateway' : u.resolvedGateways.join(', ')}): ${fmt(u.timings as never)} ms`,
    );
}
// A route added, then deleted: its backend is one other routes of its listener already use, so
// each resolves only the Gateway it attaches to (see resolve/route-update.ts in @extlb/envoy).
const addMs: number[] = [];
const deleteMs: number[] = [];
for (let i = 0; i < 3; i++) {
  const added = httpRoute(10_000 + i, 1000, 1000, 1);
  const [a, ms] = cpu(() => converter.update({ added: [added] }));
  addMs.push(ms);
  const [d, dms] = cpu(() => converter.update({ deleted: [added] }));
  deleteMs.push(dms);
  const resolved = (u: typeof a) => (u.resolvedGateways === 'all' ? 'every Gateway' : u.resolvedGateways.join(', '));
  if (i === 2)
    console.log(
      `route added (kind ${a.kind}, resolved ${resolved(a)}: ${fmt(a.timings as never)} ms); deleted (kind ${d.kind}, resolved ${resolved(d)}: ${fmt(d.timings as never)} ms)`,
    );
}
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((q / 100) * xs.length) - 1)] ?? NaN;
console.log(
  `endpoint update CPU: p50 ${p(endpointMs, 50).toFixed(1)} ms, max ${p(endpointMs, 100).toFixed(1)} ms (aim for the whole path to every ACK: p99 < 50 ms)`,
);
console.log(`route update CPU: p50 ${p(routeMs, 50).toFixed(1)} ms, max ${p(routeMs, 100).toFixed(1)} ms (aim for the whole path to every ACK: p99 < 300 ms)`);
console.log(`route added, CPU: p50 ${p(addMs, 50).toFixed(0)} ms; deleted: p50 ${p(deleteMs, 50).toFixed(0)} ms`);
