/**
 * A reader of the Prometheus text exposition format (version 0.0.4, which vLLM, SGLang and
 * trtllm-serve serve) that keeps only the series it is asked for. A model server's page is mostly
 * histograms the picker never reads, and scraping every pod often is what costs an endpoint picker
 * its CPU, so lines of other metrics are skipped after their name; only the wanted lines are parsed
 * in full. Every line is still checked to be a comment or to start with a metric name, so a page
 * that is not the format (an HTML error page, a truncated body) is reported, not read as empty.
 *
 * (`parse-prometheus-text-format` from npm builds objects for every family of the page; that work is
 * what this avoids.)
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedPage {
  samples: Sample[];
  /** `line N: reason` for each line that breaks the format (at most `maxErrors`). */
  errors: string[];
}

/**
 * A series to read: a metric name, optionally with label values it must have, written as in
 * PromQL (`nv_trt_llm_request_metrics{request_type="waiting"}`).
 */
export interface Selector {
  name: string;
  labels: Readonly<Record<string, string>>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Parses `name` or `name{label="value",...}`; throws with the reason on anything else. */
export function parseSelector(text: string): Selector {
  const name = NAME.exec(text)?.[0];
  if (!name) throw new Error(`"${text}" does not start with a metric name`);
  if (name.length === text.length) return { name, labels: {} };
  const parsed = readLabels(text, name.length);
  if (typeof parsed === 'string') throw new Error(`"${text}": ${parsed}`);
  if (parsed.end !== text.length) throw new Error(`"${text}": unexpected text after the labels`);
  return { name, labels: parsed.labels };
}

export function formatSelector(s: Selector): string {
  const labels = Object.entries(s.labels);
  return labels.length === 0 ? s.name : `${s.name}{${labels.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

/** Reads the samples of `wanted` metric names from a page. Never throws. */
export function parsePage(text: string, wanted: ReadonlySet<string>, maxErrors = 8): ParsedPage {
  const samples: Sample[] = [];
  const errors: string[] = [];
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    lineNo++;
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end).trim();
    pos = end + 1;
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) {
      if (errors.length < maxErrors) errors.push(`line ${lineNo}: not a comment and no metric name`);
      continue;
    }
    if (!wanted.has(name)) continue;
    const sample = readSample(line, name);
    if (typeof sample === 'string') {
      if (errors.length < maxErrors) errors.push(`line ${lineNo}: ${sample}`);
    } else samples.push(sample);
  }
  return { samples, errors };
}

/** Whether a sample has every label value a selector asks for. */
export function matches(sample: Sample, selector: Selector): boolean {
  if (sample.name !== selector.name) return false;
  for (const key in selector.labels) if (sample.labels[key] !== selector.labels[key]) return false;
  return true;
}

function readSample(line: string, name: string): Sample | string {
  let pos = name.length;
  let labels: Record<string, string> = {};
  if (line[pos] === '{') {
    const parsed = readLabels(line, pos);
    if (typeof parsed === 'string') return parsed;
    labels = parsed.labels;
    pos = parsed.end;
  }
  const rest = line.slice(pos);
  if (!/^[ \t]/.test(rest)) return `expected a space before the value of ${name}`;
  const [valueText, timestamp, extra] = rest.trim().split(/[ \t]+/);
  if (extra !== undefined) return `unexpected text after the value of ${name}`;
  if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) return `the timestamp of ${name} is not an integer`;
  const value = parseValue(valueText ?? '');
  if (value === undefined) return `the value of ${name} is not a number: ${JSON.stringify(valueText)}`;
  return { name, labels, value };
}

function parseValue(text: string): number | undefined {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** Reads `{k="v",...}` starting at `start` (the brace); returns the labels and the index after `}`. */
function readLabels(text: string, start: number): { labels: Record<string, string>; end: number } | string {
  const labels: Record<string, string> = {};
  let pos = start + 1;
  for (;;) {
    while (text[pos] === ' ') pos++;
    if (text[pos] === '}') return { labels, end: pos + 1 };
    const key = LABEL_NAME.exec(text.slice(pos))?.[0];
    if (!key) return `expected a label name at column ${pos + 1}`;
    pos += key.length;
    while (text[pos] === ' ') pos++;
    if (text[pos] !== '=') return `expected "=" after label ${key}`;
    pos++;
    while (text[pos] === ' ') pos++;
    if (text[pos] !== '"') return `expected a quoted value for label ${key}`;
    pos++;
    let value = '';
    for (;;) {
      const c = text[pos];
      if (c === undefined) return `the value of label ${key} is not closed`;
      pos++;
      if (c === '"') break;
      if (c === '\\') {
        const e = text[pos++];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else return `unknown escape "\\${e ?? ''}" in label ${key}`;
      } else value += c;
    }
    labels[key] = value;
    while (text[pos] === ' ') pos++;
    if (text[pos] === ',') pos++;
    else if (text[pos] !== '}') return `expected "," or "}" after label ${key}`;
  }
}
