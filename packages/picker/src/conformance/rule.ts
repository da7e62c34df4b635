/** What every group of rules shares: a rule, and the verdict a check gives it. */

export interface Rule<Id extends string = string> {
  id: Id;
  title: string;
  /** The requirement, quoted or summarised from the Endpoint Picker Protocol. */
  requirement: string;
}

export type RuleStatus = 'pass' | 'fail' | 'skip';

export interface Verdict {
  status: RuleStatus;
  /** Why: what was seen, or why the rule could not be checked. */
  detail: string;
}

/** The verdicts of one group, one per rule. */
export type Verdicts<Id extends string> = Record<Id, Verdict>;

/** Ids of a list of rules. */
export type IdOf<Rules extends readonly Rule[]> = Rules[number]['id'];

/** Pass with `detail` when nothing went wrong, otherwise fail listing each distinct problem. */
export function judge(problems: readonly string[], detail: string): Verdict {
  return problems.length === 0 ? { status: 'pass', detail } : { status: 'fail', detail: [...new Set(problems)].join('; ') };
}

export function pass(detail: string): Verdict {
  return { status: 'pass', detail };
}

export function fail(detail: string): Verdict {
  return { status: 'fail', detail };
}

export function skip(detail: string): Verdict {
  return { status: 'skip', detail };
}

/** The same skip for every rule of a group. */
export function skipAll<Id extends string>(rules: readonly Rule<Id>[], detail: string): Verdicts<Id> {
  return Object.fromEntries(rules.map((r) => [r.id, skip(detail)])) as Verdicts<Id>;
}
