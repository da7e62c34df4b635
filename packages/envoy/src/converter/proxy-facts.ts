// What only a running control plane knows about a Gateway, merged into the status the converter
// computed: whether its proxies accepted the configuration (a NACK), and the infrastructure that
// serves it (its addresses, whether it is up). No stage runs again for them.
import type { JsonObject } from '../json.js';

/**
 * Facts about one Gateway's proxies and infrastructure. The xDS server feeds `rejected`; whatever
 * provisions the proxies (or watches the Service in front of them) feeds `infrastructure`.
 */
export interface GatewayProxyFacts {
  /** Envoy's NACKs of the Gateway's current configuration, one entry per type and message, with how many proxies sent it. */
  rejected?: { typeUrl: string; message: string; proxies: number }[];
  /** The proxies' infrastructure: its addresses, and whether it serves. */
  infrastructure?: {
    addresses: { type: 'IPAddress' | 'Hostname'; value: string }[];
    available: boolean;
    /** Why it is not available: reason `Pending`, `NoResources` or `AddressNotAssigned`, and a message. */
    problem?: { reason: string; message: string };
  };
}

/** Gateway API bounds a condition's message (maxLength 32768). */
export const MAX_CONDITION_MESSAGE = 32768;

/** A message cut to fit a condition, saying how long it was. */
export function conditionMessage(message: string, max = MAX_CONDITION_MESSAGE): string {
  if (message.length <= max) return message;
  const note = `… (${message.length} characters, cut)`;
  return `${message.slice(0, Math.max(0, max - note.length))}${note}`;
}

const ORDER = ['Accepted', 'Programmed'];
const conditionOrder = (c: JsonObject) => {
  const i = ORDER.indexOf(String(c.type));
  return i < 0 ? ORDER.length : i;
};

/** The Gateway status (`status` stanza) with Programmed set False for `reason` and `message`, the other conditions as they were. */
export function notProgrammed(status: JsonObject, reason: string, message: string): JsonObject {
  const conditions = Array.isArray(status.conditions) ? (status.conditions as JsonObject[]) : [];
  const old = conditions.find((c) => c.type === 'Programmed');
  const programmed: JsonObject = { type: 'Programmed', status: 'False' };
  if (old?.observedGeneration !== undefined) programmed.observedGeneration = old.observedGeneration;
  programmed.lastTransitionTime = old?.lastTransitionTime ?? '';
  programmed.reason = reason;
  programmed.message = conditionMessage(message);
  const next = [...conditions.filter((c) => c.type !== 'Programmed'), programmed].sort((a, b) => conditionOrder(a) - conditionOrder(b));
  return { ...status, conditions: next };
}

const isProgrammed = (status: JsonObject) =>
  Array.isArray(status.conditions) && (status.conditions as JsonObject[]).some((c) => c.type === 'Programmed' && c.status === 'True');

/** The rejected updates as Envoy's words, e.g. `Envoy rejected the Cluster update: … (2 proxies)`. */
function rejection(rejected: NonNullable<GatewayProxyFacts['rejected']>): string {
  return rejected
    .map((r) => `Envoy rejected the ${r.typeUrl.split('.').pop()} update: ${r.message} (${r.proxies === 1 ? '1 proxy' : `${r.proxies} proxies`})`)
    .join('; ');
}

/**
 * A Gateway's status with its facts: addresses from the infrastructure; Programmed=False when its
 * proxies rejected the configuration (reason Invalid, Envoy's words) or its infrastructure is not
 * available (the problem's reason). A status already not Programmed stays as it is: the
 * configuration was never built, so no proxy can have it.
 */
export function withProxyFacts(status: JsonObject, facts: GatewayProxyFacts | undefined): JsonObject {
  if (!facts) return status;
  let out = status;
  const infra = facts.infrastructure;
  if (infra && infra.addresses.length > 0) out = { ...out, addresses: infra.addresses.map((a) => ({ type: a.type, value: a.value })) };
  if (!isProgrammed(out)) return out;
  if (facts.rejected && facts.rejected.length > 0) return notProgrammed(out, 'Invalid', rejection(facts.rejected));
  if (infra && !infra.available) {
    const problem = infra.problem ?? { reason: 'Pending', message: 'the Gateway’s proxies are not available yet' };
    return notProgrammed(out, problem.reason, problem.message);
  }
  return out;
}
