/** Whether the picker speaks ext_proc at all: the gate for every other ext_proc rule. */
import { describe, type Answer } from '../answers.js';
import { fail, pass, type IdOf, type Rule, type Verdicts } from '../rule.js';

export const TRANSPORT_RULES = [
  {
    id: 'ext-proc.answers',
    title: 'answers request headers over ext_proc',
    requirement: 'The EPP MUST implement the Envoy external processing service protocol.',
  },
] as const satisfies readonly Rule[];

/** The verdict on the first request's answer; false `answers` means no other ext_proc rule can run. */
export function checkTransport(first: Answer): { answers: boolean; verdicts: Verdicts<IdOf<typeof TRANSPORT_RULES>> } {
  const answers = first.kind === 'request_headers' || first.kind === 'immediate_response';
  const verdict = answers ? pass(describe(first)) : fail(`expected a request_headers or immediate_response answer, got ${describe(first)}`);
  return { answers, verdicts: { 'ext-proc.answers': verdict } };
}
