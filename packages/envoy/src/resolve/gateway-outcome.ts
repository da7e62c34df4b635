// A Gateway's own outcome, from its listeners' (which attachment has counted routes on).
import type { GatewayRecord } from '../read/index.js';
import type { GatewaySpecOutcome } from './gateway-spec.js';
import { type GatewayOutcome, type ListenerOutcome, type Verdict, verdict } from './outcomes.js';

/** `listener "a" is` or `listeners "a", "b" are`. */
const theListeners = (listeners: ListenerOutcome[]) =>
  `${listeners.length === 1 ? 'listener' : 'listeners'} ${listeners.map((l) => `"${l.name}"`).join(', ')} ${listeners.length === 1 ? 'is' : 'are'}`;

/**
 * A Gateway is accepted when one of its listeners is (and nothing of the Gateway itself rejects
 * it), with ListenersNotValid when some listener is not served; programmed when one is served.
 */
export function gatewayOutcome(
  gateway: GatewayRecord,
  listeners: ListenerOutcome[],
  spec: GatewaySpecOutcome,
  rejected: Verdict | undefined,
  attachedListenerSets: number,
): GatewayOutcome {
  const notServed = listeners.filter((l) => !l.programmed.status);
  const unresolved = listeners.filter((l) => !l.resolvedRefs.status);
  let accepted = verdict(true, 'Accepted', 'Gateway is accepted');
  let programmed = verdict(true, 'Programmed', 'Gateway is in the Envoy configuration');
  if (rejected) {
    accepted = rejected;
    programmed = verdict(false, 'Invalid', 'the Gateway is not accepted');
  } else if (!listeners.some((l) => l.accepted.status && !l.conflicted.status)) {
    accepted = verdict(false, 'ListenersNotValid', 'no listener can be converted');
    programmed = verdict(false, 'Invalid', 'no listener can be converted');
  } else if (notServed.length === listeners.length) {
    accepted = verdict(true, 'ListenersNotValid', `${theListeners(notServed)} not served`);
    programmed = verdict(false, 'Invalid', 'no listener can be served');
  } else if (notServed.length > 0) accepted = verdict(true, 'ListenersNotValid', `${theListeners(notServed)} not served; the others are`);
  const resolvedRefs =
    spec.unresolved ??
    (unresolved.length > 0
      ? verdict(false, 'ListenersNotResolved', `${theListeners(unresolved)} missing references`)
      : verdict(true, 'ResolvedRefs', 'All references are resolved'));
  const outcome: GatewayOutcome = { gateway, accepted, programmed, resolvedRefs, addresses: spec.addresses, listeners, attachedListenerSets };
  if (spec.insecureFrontend) outcome.insecureFrontend = spec.insecureFrontend;
  return outcome;
}
