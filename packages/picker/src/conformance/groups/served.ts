/** The served endpoint: the picker takes x-gateway-destination-endpoint-served on the response path. */
import { EPP } from '@extlb/types';
import * as grpc from '@grpc/grpc-js';
import { analyse, describe, describeEnd, namedEndpoints, requestHeaders, responseHeaders } from '../answers.js';
import type { PoolSample } from '../pool.js';
import type { Probe } from '../probe.js';
import { fail, pass, skip, type IdOf, type Rule, type Verdict, type Verdicts } from '../rule.js';

export const SERVED_RULES = [
  {
    id: 'served.accepted',
    title: 'accepts x-gateway-destination-endpoint-served on the response path',
    requirement: 'For each HTTP response, the data plane MUST communicate to the EPP the endpoint that served the request (metadata_context envoy.lb).',
  },
] as const satisfies readonly Rule[];

export async function checkServed(probe: Probe, pool: PoolSample): Promise<Verdicts<IdOf<typeof SERVED_RULES>>> {
  return { 'served.accepted': pool.noEndpoints ? skip(pool.noEndpoints) : await servedAccepted(probe, (picked) => picked[0]) };
}

/**
 * One request answered with an endpoint list, then response headers reporting the endpoint
 * `choose` takes from that list as served; the picker must answer them and close cleanly.
 */
export async function servedAccepted(probe: Probe, choose: (picked: string[]) => string | undefined): Promise<Verdict> {
  const session = probe.session();
  try {
    session.send(requestHeaders());
    const a = analyse(await session.next());
    const picked = namedEndpoints(a);
    if (a.kind !== 'request_headers' || picked.length === 0) return skip(`the request was answered with ${describe(a)}, so there is no response path`);
    const served = choose(picked);
    if (served === undefined) return skip(`the picker named only ${picked.join(', ')}, so no other endpoint can have served the request`);
    session.send(responseHeaders({ served }));
    const r = analyse(await session.next());
    if (r.kind !== 'response_headers') return fail(`response headers carrying ${EPP.servedKey}=${served} were answered with ${describe(r)}`);
    session.finish();
    const end = await session.drain();
    if (end.kind !== 'end' || end.code !== grpc.status.OK) return fail(`after the response path with ${EPP.servedKey}=${served}, ${describeEnd(end)}`);
    return pass(`the picker named ${picked.join(',')}; response headers with ${EPP.servedKey}=${served} answered, stream closed cleanly`);
  } finally {
    session.cancel();
  }
}
