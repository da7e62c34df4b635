// Label and field selectors, with the API server's grammar and its 400 messages.
import type { KindSpec } from './kinds.js';
import type { KubeObject } from './objects.js';
import { badRequest } from './status.js';

type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: '>' | '<'; value: number };

export type Matcher = (obj: KubeObject) => boolean;

const KEY = String.raw`(?:[A-Za-z0-9][-A-Za-z0-9_.]*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`;
const VALUE = '(?:[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?';
const VALUE_ONLY = new RegExp(`^${VALUE}$`);
const PATTERNS: [RegExp, (m: RegExpMatchArray) => LabelRequirement][] = [
  [new RegExp(`^!\\s*(${KEY})$`), (m) => ({ key: m[1] as string, op: '!' })],
  [new RegExp(`^(${KEY})$`), (m) => ({ key: m[1] as string, op: 'exists' })],
  [new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`), (m) => ({ key: m[1] as string, op: m[3] === '!=' ? '!=' : '=', value: m[4] as string })],
  [
    new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`),
    (m) => ({ key: m[1] as string, op: m[3] === 'notin' ? 'notin' : 'in', values: setValues(m[4] as string) }),
  ],
  [new RegExp(`^(${KEY})\\s*(>|<)\\s*(\\d+)$`), (m) => ({ key: m[1] as string, op: m[3] === '>' ? '>' : '<', value: Number(m[4]) })],
];

function setValues(text: string): string[] {
  const values = text.split(',').map((v) => v.trim());
  if (values.some((v) => !VALUE_ONLY.test(v))) throw new Error(`the set (${text}) holds a value that is not a label value`);
  return values;
}

/** Splits on the commas between requirements, not those inside `in (a,b)` sets. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim());
}

function parseRequirement(text: string): LabelRequirement {
  for (const [pattern, build] of PATTERNS) {
    const m = text.match(pattern);
    if (m) return build(m);
  }
  throw new Error(`${JSON.stringify(text)} is none of key, !key, key=value, key!=value, key in (v,…), key notin (v,…)`);
}

function matchesRequirement(labels: Record<string, string>, r: LabelRequirement): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
      return has && value === r.value;
    case '!=':
      return !has || value !== r.value;
    case 'in':
      return has && r.values.includes(value as string);
    case 'notin':
      return !has || !r.values.includes(value as string);
    case '>':
    case '<': {
      const n = Number(value);
      return has && /^-?\d+$/.test(value as string) && (r.op === '>' ? n > r.value : n < r.value);
    }
  }
}

/** Parses `a=b,c!=d,e in (x,y),!f,g` into a matcher; a syntax error is a 400. */
export function parseLabelSelector(selector: string | null | undefined): Matcher | undefined {
  if (!selector || selector.trim() === '') return undefined;
  let requirements: LabelRequirement[];
  try {
    requirements = splitTopLevel(selector).map(parseRequirement);
  } catch (err) {
    throw badRequest(`unable to parse requirement: ${(err as Error).message}`);
  }
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return requirements.every((r) => matchesRequirement(labels, r));
  };
}

/** Splits a field selector on unescaped commas and reads `\,` `\=` `\\` escapes in values. */
function fieldTerms(selector: string): { field: string; op: '=' | '!='; value: string }[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i] as string;
    if (c === '\\' && i + 1 < selector.length) {
      current += c + selector[++i];
    } else if (c === ',') {
      terms.push(current);
      current = '';
    } else current += c;
  }
  terms.push(current);
  return terms.map((term) => {
    const m = term.match(/^([^=!\\]+)(==|=|!=)(.*)$/);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    return { field: (m[1] as string).trim(), op: m[2] === '!=' ? '!=' : '=', value: (m[3] as string).replace(/\\(.)/g, '$1') };
  });
}

/** The field selectors a kind supports: `metadata.name`, `metadata.namespace` and its own. */
function fieldReader(spec: KindSpec, field: string): ((obj: KubeObject) => string) | undefined {
  if (field === 'metadata.name') return (o) => o.metadata.name ?? '';
  if (field === 'metadata.namespace') return (o) => o.metadata.namespace ?? '';
  const read = spec.fields?.[field];
  return read ? (o) => read(o) ?? '' : undefined;
}

/** Parses `metadata.name=x,type!=y` for a kind; an unknown field is a 400 as the API server words it. */
export function parseFieldSelector(spec: KindSpec, selector: string | null | undefined): Matcher | undefined {
  if (!selector || selector.trim() === '') return undefined;
  const terms = fieldTerms(selector).map((t) => {
    const read = fieldReader(spec, t.field);
    if (!read) {
      if (!spec.custom) throw badRequest(`field label not supported: ${t.field}`);
      const known = ['metadata.name', 'metadata.namespace', ...Object.keys(spec.fields ?? {})].map((f) => `"${f}"`).join(', ');
      throw badRequest(`"${t.field}" is not a known field selector: only ${known}`);
    }
    return { ...t, read };
  });
  return (obj) => terms.every((t) => (t.read(obj) === t.value) === (t.op === '='));
}
