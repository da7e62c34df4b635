// YAML for JSON-shaped data (plain objects, arrays, strings, numbers, booleans, null), written in
// one pass. The general-purpose `yaml` package builds a node tree and checks every scalar against
// its schema before writing; for converter output that costs several times the conversion itself.
// This writer needs no tree: block style, two-space indentation, keys in insertion order, so the
// same value always gives the same bytes. A string is written plain only when every reader —
// YAML 1.1, YAML 1.2 and kubectl (go-yaml v2) — reads it back as that same string; otherwise it is
// double-quoted, or a literal block when it spans lines.

/** Plain-scalar candidates: printable ASCII that starts with a letter, `_` or `/`. */
const PLAIN_CANDIDATE = /^[A-Za-z_/][\x20-\x7e]*$/;
/** Sequences that end or comment a plain scalar: `: `, ` #`, or a trailing `:` or space. */
const PLAIN_BREAKER = /: | #|[: ]$/;
/** Words some reader takes for a boolean or null (YAML 1.1 and go-yaml read `y`, `on`, `off`...). */
const NOT_A_STRING = new Set(['y', 'n', 'yes', 'no', 'true', 'false', 'on', 'off', 'null']);
/**
 * Characters a double-quoted scalar must escape beyond what JSON escapes: DEL and C1 controls,
 * the line breaks of YAML 1.1 (NEL, LS, PS), the byte-order mark and the two non-characters.
 */
const YAML_ESCAPE = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
const YAML_ESCAPES = new RegExp(YAML_ESCAPE.source, 'g');
/**
 * What keeps a multi-line string out of a literal block: control characters other than the line
 * feed (tabs and carriage returns included, so no reader can fold or trim them), YAML's other
 * line breaks and unpaired surrogates. Those strings are double-quoted with escapes instead.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the test looks for
const NOT_LITERAL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** YAML limits an implicit key to 1024 characters; longer keys are written as `? key`. */
const MAX_IMPLICIT_KEY = 1024;
/** How many distinct keys to remember the written form of (keys repeat; unbounded caches grow). */
const KEY_CACHE_LIMIT = 10_000;

const keyCache = new Map<string, string>();
const spaces: string[] = [''];

function pad(width: number): string {
  let s = spaces[width];
  if (s === undefined) {
    s = ' '.repeat(width);
    spaces[width] = s;
  }
  return s;
}

function quoted(s: string): string {
  const json = JSON.stringify(s);
  return YAML_ESCAPE.test(json) ? json.replace(YAML_ESCAPES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

function isPlain(s: string): boolean {
  return PLAIN_CANDIDATE.test(s) && !PLAIN_BREAKER.test(s) && !NOT_A_STRING.has(s.toLowerCase());
}

/** A single-line form of a string: plain when safe, double-quoted otherwise. */
function inlineString(s: string): string {
  return isPlain(s) ? s : quoted(s);
}

function keyText(key: string): string {
  let text = keyCache.get(key);
  if (text === undefined) {
    text = inlineString(key);
    if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(key, text);
  }
  return text;
}

function numberText(n: number): string {
  if (Number.isNaN(n)) return '.nan';
  if (!Number.isFinite(n)) return n > 0 ? '.inf' : '-.inf';
  const s = String(n);
  // `1e+21` is a float to YAML 1.2 and go-yaml, but YAML 1.1 wants a dot in the mantissa.
  const e = s.indexOf('e');
  return e < 0 || s.lastIndexOf('.', e) >= 0 ? s : `${s.slice(0, e)}.0${s.slice(e)}`;
}

/**
 * A literal block (`|`) for a multi-line string, or undefined when the string cannot be one:
 * its first non-empty line must not start with a space (that would set the block's indentation),
 * and it must hold no character a literal block cannot carry.
 */
function literalBlock(s: string, indent: number): string | undefined {
  if (NOT_LITERAL.test(s)) return undefined;
  const body = s.replace(/\n+$/, '');
  if (body === '' || body.replace(/^\n+/, '')[0] === ' ') return undefined;
  const trailing = s.length - body.length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const prefix = pad(indent);
  let out = `|${chomp}\n`;
  for (const line of s.slice(0, trailing > 1 ? s.length - 1 : body.length).split('\n')) out += line === '' ? '\n' : `${prefix}${line}\n`;
  return out;
}

/** What JSON.stringify would write for a value: `toJSON` applied; undefined for what it leaves out. */
function jsonForm(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return (value as { toJSON(): unknown }).toJSON();
  return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
}

/** An array or an object with at least one key JSON would keep; those are written as blocks. */
function isBlock(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  for (const key in value) if (Object.hasOwn(value, key) && jsonForm((value as Record<string, unknown>)[key]) !== undefined) return true;
  return false;
}

/** Everything but a non-empty collection, after `key: ` or `- ` (`indent`: a literal block's), with its newline. */
function inline(value: unknown, indent: number): string {
  switch (typeof value) {
    case 'string':
      return (value.includes('\n') && literalBlock(value, indent)) || `${inlineString(value)}\n`;
    case 'number':
      return `${numberText(value)}\n`;
    case 'boolean':
      return value ? 'true\n' : 'false\n';
    case 'object':
      return value === null ? 'null\n' : Array.isArray(value) ? '[]\n' : '{}\n';
    default:
      throw new TypeError(`cannot write a ${typeof value} as YAML`);
  }
}

/**
 * `out` followed by a non-empty collection whose lines start at `indent`; the first line starts
 * with `first` instead, which is the parent's `- ` when the collection is a sequence item
 * (`- key: v`). `open` holds the collections being written, to refuse a circular structure as
 * JSON.stringify does. The text is threaded through the calls: appending to one string is what
 * makes this fast.
 */
function block(value: object, indent: number, first: string, out: string, open: Set<object>): string {
  if (open.has(value)) throw new TypeError('cannot write a circular structure as YAML');
  open.add(value);
  const prefix = pad(indent);
  let lead = first;
  if (Array.isArray(value)) {
    for (const raw of value) {
      const item = jsonForm(raw) ?? null;
      out = isBlock(item) ? block(item, indent + 2, `${lead}- `, out, open) : `${out}${lead}- ${inline(item, indent + 2)}`;
      lead = prefix;
    }
  } else {
    for (const key of Object.keys(value)) {
      const item = jsonForm((value as Record<string, unknown>)[key]);
      if (item === undefined) continue;
      const text = keyText(key);
      const head = text.length > MAX_IMPLICIT_KEY ? `${lead}? ${text}\n${prefix}:` : `${lead}${text}:`;
      // Sequences are indented under their key too, as the `yaml` package writes them.
      out = isBlock(item) ? block(item, indent + 2, pad(indent + 2), `${out}${head}\n`, open) : `${out}${head} ${inline(item, indent + 2)}`;
      lead = prefix;
    }
  }
  open.delete(value);
  return out;
}

/** One YAML document for a JSON-shaped value, ending with a newline. */
export function toYaml(value: unknown): string {
  const v = jsonForm(value) ?? null;
  return isBlock(v) ? block(v, 0, '', '', new Set()) : inline(v, 2);
}

/** Several values as a YAML stream, each document opened with `---` (what `kubectl apply -f` takes). */
export function toYamlDocuments(values: unknown[]): string {
  let out = '';
  for (const value of values) out += `---\n${toYaml(value)}`;
  return out;
}
