// ListenerSets: which ones a Gateway takes (its `spec.allowedListeners`: None unless it says
// otherwise), and the status of each — accepted when its Gateway allows it and some listener of
// it is valid, its listeners' own conditions beside. Their listeners join the Gateway's in
// resolveListeners, after the Gateway's own, oldest set first.
import type { Diagnostics } from '../diagnostics.js';
import { GATEWAY_GROUP, type GatewayRecord, type Inputs, type ListenerSet } from '../read/index.js';
import { type ListenerOutcome, type ListenerSetOutcome, type Verdict, verdict } from './outcomes.js';

/** The ListenerSets naming a Gateway as their parent, oldest first, split by whether it allows them. */
export function listenerSetsOf(gw: GatewayRecord, inputs: Inputs, diags: Diagnostics): { allowed: ListenerSet[]; refused: ListenerSet[] } {
  const allowed: ListenerSet[] = [];
  const refused: ListenerSet[] = [];
  for (const set of inputs.listenerSets) {
    const p = set.parentRef;
    if (p.group !== GATEWAY_GROUP || p.kind !== 'Gateway' || p.namespace !== gw.meta.namespace || p.name !== gw.meta.name) continue;
    if (allows(gw, set, inputs)) allowed.push(set);
    else {
      refused.push(set);
      diags.warning('ListenerSetNotAllowed', notAllowed(gw, set), set.ref, 'spec.parentRef');
    }
  }
  return { allowed, refused };
}

function allows(gw: GatewayRecord, set: ListenerSet, inputs: Inputs): boolean {
  const { from, selector } = gw.allowedListeners;
  if (from === 'All') return true;
  if (from === 'Same') return set.meta.namespace === gw.meta.namespace;
  if (from === 'None') return false;
  const labels = inputs.namespaces.get(set.meta.namespace);
  return labels !== undefined && Object.entries(selector ?? {}).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v);
}

function notAllowed(gw: GatewayRecord, set: ListenerSet): string {
  const { from } = gw.allowedListeners;
  const which =
    from === 'None'
      ? 'no ListenerSets (spec.allowedListeners.namespaces.from is None, the default)'
      : from === 'Same'
        ? `ListenerSets of namespace ${gw.meta.namespace} only`
        : 'ListenerSets of the namespaces its selector names only';
  return `Gateway ${gw.meta.namespace}/${gw.meta.name} allows ${which}, not this one of namespace ${set.meta.namespace}`;
}

/** The status of a set its Gateway refused, or whose Gateway is not accepted. */
export function refusedSetOutcome(set: ListenerSet, gw: GatewayRecord, reason: 'NotAllowed' | 'ParentNotAccepted'): ListenerSetOutcome {
  const message = reason === 'NotAllowed' ? notAllowed(gw, set) : `Gateway ${gw.meta.namespace}/${gw.meta.name} is not accepted`;
  return { listenerSet: set, accepted: verdict(false, reason, message), programmed: verdict(false, reason, message), listeners: [] };
}

/** The status of a set its Gateway took: from its listeners' outcomes. */
export function acceptedSetOutcome(set: ListenerSet, listeners: ListenerOutcome[]): ListenerSetOutcome {
  const own = listeners.filter((l) => l.owner === set.ref).sort((a, b) => a.index - b.index);
  const valid = own.filter((l) => l.accepted.status);
  const notValid = (what: string): Verdict => verdict(false, 'ListenersNotValid', `no listener of the ListenerSet is ${what}`);
  return {
    listenerSet: set,
    accepted: valid.length > 0 ? verdict(true, 'Accepted', 'ListenerSet is accepted') : notValid('valid'),
    programmed: own.some((l) => l.programmed.status) ? verdict(true, 'Programmed', 'ListenerSet is in the Envoy configuration') : notValid('served'),
    listeners: own,
  };
}
