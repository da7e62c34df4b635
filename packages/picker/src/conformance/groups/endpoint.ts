/**
 * The destination endpoint: that plain requests are answered with an ordered list, spelt as Envoy
 * compares it, in the header and/or envoy.lb metadata with one value, and never chosen by the client.
 */
import { EPP } from '@extlb/types';
import { describeError, parseEndpointList } from '../../codec.js';
import { FOREIGN_CLIENT_ENDPOINT, describe, endpointValue, requestHeaders, type Answer } from '../answers.js';
import type { PoolSample } from '../pool.js';
import type { Probe } from '../probe.js';
import { fail, judge, pass, skip, skipAll, type IdOf, type Rule, type Verdict, type Verdicts } from '../rule.js';

export const ENDPOINT_RULES = [
  {
    id: 'endpoint.present',
    title: 'names an endpoint in the header and/or envoy.lb metadata',
    requirement: 'The EPP MUST communicate one or more selected endpoints via the x-gateway-destination-endpoint header or dynamic_metadata["envoy.lb"].',
  },
  {
    id: 'endpoint.format',
    title: 'every entry is ip:port or [ipv6]:port, spelt as Envoy compares, and the metadata value is a string',
    requirement: 'The value MUST contain at least one endpoint in <ip:port> format or multiple endpoints in <ip:port>,<ip:port>,... format.',
  },
  {
    id: 'endpoint.agree',
    title: 'header and metadata carry the same value',
    requirement: 'The EPP MUST not set two different values in the header and the inner response metadata value.',
  },
  {
    id: 'endpoint.ordered-list',
    title: 'the list is an ordered list Envoy can walk: no empty or repeated entries',
    requirement: 'The first valid endpoint in the list will be used; on retry the proxy goes sequentially down the list.',
  },
  {
    id: 'endpoint.client-header-ignored',
    title: 'a client-sent x-gateway-destination-endpoint never survives',
    requirement: 'A client must never be able to pick an endpoint by sending the header itself (extlb design rule).',
  },
] as const satisfies readonly Rule[];

type Id = IdOf<typeof ENDPOINT_RULES>;

const APPEND_ACTION_NAMES = ['APPEND_IF_EXISTS_OR_ADD', 'ADD_IF_ABSENT', 'OVERWRITE_IF_EXISTS_OR_ADD', 'OVERWRITE_IF_EXISTS'];
const OVERWRITING_ACTIONS = [2, 3];

export async function checkEndpoints(probe: Probe, pool: PoolSample): Promise<Verdicts<Id>> {
  if (pool.noEndpoints) return skipAll(ENDPOINT_RULES, pool.noEndpoints);
  const { format, order, agree, longest } = checkValues(pool.named);
  const both = pool.named.filter((a) => a.header !== undefined && a.metadata !== undefined).length;
  return {
    'endpoint.present': present(pool),
    'endpoint.format': judge(format, `all answers well formed; endpoints seen: ${pool.members.join(', ')}`),
    'endpoint.agree':
      agree.length === 0 && both === 0
        ? skip('the picker answers in only one place, so there is nothing to compare')
        : judge(agree, `${both} answers carried both, with equal values`),
    'endpoint.ordered-list': judge(order, `lists of up to ${longest} endpoint(s), no empty or repeated entries`),
    'endpoint.client-header-ignored': clientHeaderVerdict(await probe.ask(requestHeaders({ extra: { [EPP.header]: FOREIGN_CLIENT_ENDPOINT } }))),
  };
}

function present(pool: PoolSample): Verdict {
  const missing = pool.named.filter((a) => a.header === undefined && a.metadata === undefined);
  if (missing.length > 0)
    return fail(`${missing.length} of ${pool.named.length} request_headers answers named no endpoint in the header or in envoy.lb metadata`);
  const refused = pool.refused.length > 0 ? `; ${pool.refused.length} were refused (${describe(pool.refused[0] as Answer)})` : '';
  return pass(`${pool.named.length} of ${pool.samples.length} plain requests named endpoints${refused}`);
}

/** Problems of spelling, of list shape and of header/metadata agreement, across every answer. */
function checkValues(named: readonly Answer[]): { format: string[]; order: string[]; agree: string[]; longest: number } {
  const format: string[] = [];
  const order: string[] = [];
  const agree: string[] = [];
  let longest = 0;
  for (const a of named) {
    const values: Array<[string, string]> = [];
    if (a.metadata !== undefined) {
      if (typeof a.metadata.stringValue === 'string') values.push(['metadata', a.metadata.stringValue]);
      else format.push(`metadata value is ${a.metadata.kind ?? 'not a string'}, not a string: Envoy treats it as absent`);
    }
    if (a.header !== undefined) values.push(['header', a.header]);
    for (const [where, value] of values) {
      const { endpoints, errors } = parseEndpointList(value, { strict: true });
      for (const e of errors) {
        const text = `${where} "${value}": ${describeError(e)}`;
        if (/duplicate|empty entry|entries/.test(e.reason)) order.push(text);
        else format.push(text);
      }
      longest = Math.max(longest, endpoints.length);
    }
    if (a.header !== undefined && typeof a.metadata?.stringValue === 'string' && a.header !== a.metadata.stringValue) {
      agree.push(`header "${a.header}" but metadata "${a.metadata.stringValue}"`);
    }
  }
  return { format, order, agree, longest };
}

function clientHeaderVerdict(a: Answer): Verdict {
  if (a.kind !== 'request_headers') return skip(`the picker answered the request carrying a client header with ${describe(a)}`);
  if ((endpointValue(a) ?? '').includes(FOREIGN_CLIENT_ENDPOINT) || (a.header ?? '').includes(FOREIGN_CLIENT_ENDPOINT)) {
    return fail(`the client sent ${EPP.header}: ${FOREIGN_CLIENT_ENDPOINT} and the picker's answer repeats it`);
  }
  if (a.header !== undefined && !OVERWRITING_ACTIONS.includes(a.headerAppendAction ?? 0)) {
    const action = APPEND_ACTION_NAMES[a.headerAppendAction ?? 0] ?? String(a.headerAppendAction);
    return fail(`the header is set with append_action ${action}, not OVERWRITE_IF_EXISTS_OR_ADD, so a client-sent value may survive beside the picker's`);
  }
  if (a.header !== undefined) return pass('the picker overwrites the header');
  if (a.headerRemoved) return pass('the picker removes the header and answers in metadata');
  return pass('the picker answers in metadata only; the proxy must not read the header (or must strip it)');
}
