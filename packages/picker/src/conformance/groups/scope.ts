/**
 * The endpoint list belongs to one pool (GIE PR #3003): the picker names only its own pool's
 * members; a retry that stays on the pool walks the list, so the served endpoint may be any entry
 * of it; a retry that moves to another pool asks that pool's picker, so this picker's stream ends
 * after the request path with no response and no served endpoint.
 */
import * as grpc from '@grpc/grpc-js';
import { FOREIGN_ENDPOINTS, analyse, describe, describeEnd, namedEndpoints, requestHeaders } from '../answers.js';
import type { PoolSample } from '../pool.js';
import type { Probe } from '../probe.js';
import { judge, skip, skipAll, type IdOf, type Rule, type Verdict, type Verdicts } from '../rule.js';
import { servedAccepted } from './served.js';

export const SCOPE_RULES = [
  {
    id: 'scope.pool-members',
    title: "names only its own pool's members, even when the subset hint offers others",
    requirement:
      'The ordered endpoint list is scoped to the selected InferencePool backend for which the EPP was invoked; the data plane MUST NOT reuse endpoints returned for another backend.',
  },
  {
    id: 'scope.served-fallback',
    title: 'accepts as served an endpoint further down its list, where a retry on the same pool landed',
    requirement: "If a retry remains on the same backend, the data plane MUST continue through that backend's endpoint list in order.",
  },
  {
    id: 'scope.request-only',
    title: 'a request the data plane moved to another pool (no response path, no served endpoint) ends cleanly',
    requirement:
      'If route-level retry or failover selects a different InferencePool backend, the data plane MUST invoke the EPP of that backend, and x-gateway-destination-endpoint-served MUST be reported to the EPP of the backend that produced the terminal response.',
  },
] as const satisfies readonly Rule[];

type Id = IdOf<typeof SCOPE_RULES>;

/** How many requests end after the request path before the kit checks the picker still names endpoints. */
const MOVED_REQUESTS = 3;

export async function checkScope(probe: Probe, pool: PoolSample): Promise<Verdicts<Id>> {
  if (pool.noEndpoints) return skipAll(SCOPE_RULES, pool.noEndpoints);
  return {
    'scope.pool-members': await poolMembers(probe, pool),
    'scope.served-fallback': await servedAccepted(probe, (picked) =>
      // A one-entry list leaves the rest to the proxy's fallback policy, which may pick any member.
      picked.length > 1 ? picked.at(-1) : pool.members.find((m) => m !== picked[0]),
    ),
    'scope.request-only': await requestOnly(probe),
  };
}

async function poolMembers(probe: Probe, pool: PoolSample): Promise<Verdict> {
  if (pool.members.length === 0) return skip('no endpoint of the picker is known');
  const outsidePool = (names: string[]): string[] => names.filter((e) => !pool.members.includes(e));
  const problems: string[] = [];
  if (pool.given) {
    for (const a of pool.named) {
      const outside = outsidePool(namedEndpoints(a));
      if (outside.length > 0) problems.push(`a plain request was answered with ${outside.join(', ')}, not in the pool [${pool.members.join(', ')}]`);
    }
  }
  const foreign = FOREIGN_ENDPOINTS.filter((e) => !pool.members.includes(e));
  const offered = pool.members.slice(0, 2).map((member) => [foreign[0] as string, member, ...foreign.slice(1)]);
  for (const subset of offered) {
    const outside = outsidePool(namedEndpoints(await probe.ask(requestHeaders({ subset }))));
    if (outside.length > 0) problems.push(`subset [${subset.join(', ')}] was answered with ${outside.join(', ')}, which is not in the picker's pool`);
  }
  const source = pool.given ? 'as given' : 'as learned from plain answers';
  return judge(problems, `${offered.length} subsets mixing pool members with foreign endpoints offered; every answer stayed inside the pool (${source})`);
}

async function requestOnly(probe: Probe): Promise<Verdict> {
  const problems: string[] = [];
  for (let i = 0; i < MOVED_REQUESTS; i++) {
    const session = probe.session();
    try {
      session.send(requestHeaders());
      const a = analyse(await session.next());
      if (a.kind !== 'request_headers') {
        problems.push(`the request was answered with ${describe(a)}`);
        continue;
      }
      session.finish();
      const end = await session.drain();
      if (end.kind !== 'end' || end.code !== grpc.status.OK) problems.push(`after the request path alone, ${describeEnd(end)}`);
    } finally {
      session.cancel();
    }
  }
  const next = await probe.ask(requestHeaders());
  if (namedEndpoints(next).length === 0) problems.push(`after ${MOVED_REQUESTS} such requests the next one was answered with ${describe(next)}`);
  return judge(problems, `${MOVED_REQUESTS} requests ended after the request path, each stream closed cleanly, and the picker went on naming endpoints`);
}
