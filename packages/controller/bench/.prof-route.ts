import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { Converter } from '@extlb/envoy';
import { clusterEstate, httpRoute } from './cluster-estate.js';
const estate = clusterEstate({ routes: 10_000, pools: 1000, services: 1000, endpoints: 50_000, idleGateways: 0 } as never);
const converter = new Converter({ endpoints: 'eds', gatewayClassNames: ['extlb'] });
converter.update({ objects: estate.objects });
const s = new Session(); s.connect();
await s.post('Profiler.enable'); await s.post('Profiler.start');
for (let i = 0; i < 8; i++) { const u = converter.update({ updated: [httpRoute(i, 1000, 1000, i + 1)] }); console.log(JSON.stringify(u.timings)); }
const { profile } = await s.post('Profiler.stop');
writeFileSync('/tmp/conv-prof/route.cpuprofile', JSON.stringify(profile));
