// YAML scalars as kubectl reads them. kubectl turns manifests into JSON with sigs.k8s.io/yaml,
// which decodes with go-yaml v2 (go.yaml.in/yaml/v2 v2.4.2) into untyped Go values. go-yaml v2
// resolves a plain scalar by its first character and by trying Go's number parsers, which is
// neither YAML 1.1 nor YAML 1.2:
// - booleans: y Y yes Yes YES true True TRUE on On ON, and n N no No NO false False FALSE off Off OFF
// - null: empty, ~ null Null NULL
// - integers: Go's strconv.ParseInt/ParseUint with base 0 after every `_` is removed: 0x1F,
//   0o17, 0b101, 0755 (octal, leading zero), +12, 1_000; int64, or uint64 when unsigned
// - floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` after `_` is removed (so 1e3,
//   08 and 5. are numbers), a leading `.` (.5), and .inf -.inf +.inf .nan in the spellings above;
//   a float out of range stays a string
// - timestamps (2024-06-01) are recognised, but decoding into an untyped value keeps the text:
//   they are strings. Sexagesimal numbers (2:13:20) are not supported: strings.
// - quoted scalars are always strings; `!!binary` is decoded to a string; `!!timestamp` keeps
//   its text; `<<` merges mappings.
import { Buffer } from 'node:buffer';
import type { DocumentOptions, ParseOptions, ScalarTag, SchemaOptions } from 'yaml';

const TAG = 'tag:yaml.org,2002:';
const NULL_WORDS = /^(?:~|null|Null|NULL)?$/;
const TRUE_WORDS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const FALSE_WORDS = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const SPECIAL_FLOATS: Record<string, number> = {};
for (const spelling of ['inf', 'Inf', 'INF']) {
  SPECIAL_FLOATS[`.${spelling}`] = Number.POSITIVE_INFINITY;
  SPECIAL_FLOATS[`+.${spelling}`] = Number.POSITIVE_INFINITY;
  SPECIAL_FLOATS[`-.${spelling}`] = Number.NEGATIVE_INFINITY;
}
for (const spelling of ['nan', 'NaN', 'NAN']) SPECIAL_FLOATS[`.${spelling}`] = Number.NaN;

/** What Go's ParseInt/ParseUint accept with base 0 (underscores already removed). */
const GO_INTEGER = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;
/** go-yaml's yamlStyleFloat. */
const GO_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** Go's ParseFloat on a scalar that starts with `.` (no underscores there). */
const DOT_FLOAT = /^\.[0-9]+(?:[eE][-+]?[0-9]+)?$/;
/** After ParseInt and ParseFloat fail, go-yaml reads `0b` followed by a base-2 ParseInt. */
const GO_BINARY_TAIL = /^0b([-+]?)([01]+)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's ParseInt (or, without a sign, ParseUint) result when it fits 64 bits. */
function fits(sign: string, magnitude: bigint): number | undefined {
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) return Number(value);
  return sign === '' && value <= UINT64_MAX ? Number(value) : undefined;
}

function magnitudeOf(digits: string): bigint {
  // A leading zero means octal in Go; BigInt wants the 0o prefix for that.
  return /^0[0-7]+$/.test(digits) ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
}

/** The integer go-yaml reads from a plain scalar, or undefined when it does not read one. */
function goInteger(text: string): number | undefined {
  const plain = text.replaceAll('_', '');
  const m = GO_INTEGER.exec(plain);
  if (m) return fits(m[1]!, magnitudeOf(m[2]!));
  const binary = GO_BINARY_TAIL.exec(plain);
  return binary ? fits(binary[1]!, BigInt(`0b${binary[2]}`)) : undefined;
}

/** The float go-yaml reads from a plain scalar that is not an integer, or undefined. */
function goFloat(text: string): number | undefined {
  if (Object.hasOwn(SPECIAL_FLOATS, text)) return SPECIAL_FLOATS[text];
  const candidate = text[0] === '.' ? (DOT_FLOAT.test(text) ? text : undefined) : text.replaceAll('_', '');
  if (candidate === undefined || !GO_FLOAT.test(candidate)) return undefined;
  const n = Number(candidate);
  return Number.isFinite(n) ? n : undefined;
}

/** A pattern object for the `yaml` package's `test`; go-yaml decides by parsing, not by a pattern. */
function matcher(accepts: (text: string) => boolean): RegExp {
  return Object.assign(/(?:)/, { test: accepts });
}

/** go-yaml resolves by the first character: only digits, signs and `.` may start a number. */
const NUMBER_START = /^[-+.0-9]/;

const nullTag: ScalarTag = {
  identify: (value) => value === null,
  default: true,
  tag: `${TAG}null`,
  test: NULL_WORDS,
  resolve: () => null,
};

const boolTag: ScalarTag = {
  identify: (value) => typeof value === 'boolean',
  default: true,
  tag: `${TAG}bool`,
  test: matcher((text) => TRUE_WORDS.has(text) || FALSE_WORDS.has(text)),
  resolve: (text) => TRUE_WORDS.has(text),
};

const intTag: ScalarTag = {
  identify: (value) => typeof value === 'number' && Number.isInteger(value),
  default: true,
  tag: `${TAG}int`,
  test: matcher((text) => NUMBER_START.test(text) && goInteger(text) !== undefined),
  resolve: (text) => goInteger(text)!,
};

const floatTag: ScalarTag = {
  identify: (value) => typeof value === 'number',
  default: true,
  tag: `${TAG}float`,
  // Integers are tested first, so this sees them only under an explicit tag: `!!float 0x10` is 16.
  test: matcher((text) => NUMBER_START.test(text) && (goFloat(text) ?? goInteger(text)) !== undefined),
  resolve: (text) => (goFloat(text) ?? goInteger(text))!,
};

/** Decoded into an untyped value, a timestamp keeps its text. */
const timestampTag: ScalarTag = {
  identify: () => false,
  default: false,
  tag: `${TAG}timestamp`,
  resolve: (text) => text,
};

/** `!!binary` becomes the decoded bytes as a string, as Go's string(data) does. */
const binaryTag: ScalarTag = {
  identify: () => false,
  default: false,
  tag: `${TAG}binary`,
  resolve: (text) => Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8'),
};

/**
 * The value of a plain (unquoted, untagged) scalar, as the tags above resolve it in their order:
 * null, bool, int, float, else a string. Most scalars are words that none of them can take, and
 * the first character tells.
 */
export function resolvePlainScalar(text: string): unknown {
  if (text === '') return null;
  const c = text.charCodeAt(0);
  // Only these start a null (~ n N), a bool (y Y n N t T f F o O) or a number (- + . 0-9).
  if (!(c <= 0x39 || c === 0x7e || 'nNyYtTfFoO'.includes(text[0]!))) return text;
  if (NULL_WORDS.test(text)) return null;
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  if (NUMBER_START.test(text)) {
    const n = goInteger(text) ?? goFloat(text);
    if (n !== undefined) return n;
  }
  return text;
}

/**
 * A scalar with an explicit standard tag its text does not fit (`!!int foo`) is only a warning to
 * the `yaml` package, with this message; go-yaml refuses it ("cannot decode !!str `foo` as a !!int").
 */
export const MISFIT_TAG_WARNING = /^Unresolved tag: tag:yaml\.org,2002:(\w+)/;

/**
 * Options for the `yaml` package's parsers and Document.toJS that read scalars as kubectl does.
 * `<<` merge keys are on; YAML 1.1's other types (sets, ordered maps, sexagesimal numbers,
 * timestamps as dates) are off, and unknown tags leave the value as it is, as in go-yaml.
 */
export const KUBECTL_YAML: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  schema: 'failsafe',
  customTags: [nullTag, boolTag, intTag, floatTag, timestampTag, binaryTag],
  merge: true,
  resolveKnownTags: false,
};

/** Sets a key of a plain object, `__proto__` included, as an own property. */
export function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}
