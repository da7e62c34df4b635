/** The subset hint: the picker chooses only from it, and answers 503 when it leaves nothing eligible. */
import { EPP } from '@extlb/types';
import { FOREIGN_ENDPOINTS, describe, namedEndpoints, requestHeaders, type Answer } from '../answers.js';
import type { PoolSample } from '../pool.js';
import type { Probe } from '../probe.js';
import { fail, judge, pass, skip, type IdOf, type Rule, type Verdict, type Verdicts } from '../rule.js';

export const SUBSET_RULES = [
  {
    id: 'subset.respected',
    title: 'picks only from the x-gateway-destination-endpoint-subset hint',
    requirement: 'If the key x-gateway-destination-endpoint-subset is set, the EPP MUST only select endpoints from the specified list.',
  },
  {
    id: 'subset.empty-503',
    title: 'answers ImmediateResponse 503 to an empty subset',
    requirement: 'If the list is empty, the EPP MUST return an ImmediateResponse with 503 (Service Unavailable).',
  },
  {
    id: 'subset.ineligible-503',
    title: 'answers ImmediateResponse 503 when no endpoint of the subset is eligible',
    requirement: 'If none of the endpoints in the list is eligible, the EPP MUST return an ImmediateResponse with 503.',
  },
] as const satisfies readonly Rule[];

type Id = IdOf<typeof SUBSET_RULES>;

export async function checkSubsets(probe: Probe, pool: PoolSample): Promise<Verdicts<Id>> {
  const foreign = FOREIGN_ENDPOINTS.filter((e) => !pool.members.includes(e));
  return {
    'subset.respected': pool.noEndpoints ? skip(pool.noEndpoints) : await respected(probe, pool.members),
    'subset.empty-503': unavailable(await probe.ask(requestHeaders({ subset: [] })), ''),
    'subset.ineligible-503': unavailable(await probe.ask(requestHeaders({ subset: foreign })), `subset [${foreign.join(', ')}]: `),
  };
}

async function respected(probe: Probe, members: string[]): Promise<Verdict> {
  if (members.length === 0) return skip('no endpoint of the picker is known, so no subset can be offered');
  const subsets = members.slice(0, 4).map((e) => [e]);
  if (members.length >= 2) subsets.push(members.slice(-2));
  const problems: string[] = [];
  for (const subset of subsets) {
    for (let i = 0; i < 2; i++) {
      const a = await probe.ask(requestHeaders({ subset }));
      if (a.kind !== 'request_headers') {
        problems.push(`subset [${subset.join(', ')}] was answered with ${describe(a)}`);
        break;
      }
      const named = namedEndpoints(a);
      const outside = named.filter((e) => !subset.includes(e));
      if (named.length === 0) problems.push(`subset [${subset.join(', ')}] was answered without an endpoint`);
      else if (outside.length > 0) problems.push(`subset [${subset.join(', ')}] was answered with ${outside.join(', ')}`);
    }
  }
  return judge(problems, `${subsets.length} subsets offered, every answer stayed inside them`);
}

function unavailable(a: Answer, context: string): Verdict {
  return a.kind === 'immediate_response' && a.status === EPP.status.noEndpoint
    ? pass(`${context}ImmediateResponse ${EPP.status.noEndpoint}`)
    : fail(`${context}expected ImmediateResponse ${EPP.status.noEndpoint}, got ${describe(a)}`);
}
