// apimachinery's name validation (pkg/util/validation): DNS labels and subdomains, qualified names
// and label values, with its wording. Object metadata and the CEL format library both use them.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const maxLen = (n: number) => `must be no more than ${n} characters`;
const regexError = (what: string, re: string, examples: string) => `${what} (e.g. ${examples}, regex used for validation is '${re}')`;

/** No errors: shared, so that checking a valid name allocates nothing. Never mutated. */
const NONE = Object.freeze([]) as unknown as string[];

/** apimachinery's shape for these checks: a length limit, then a regex with its explanation. */
function lengthAndPattern(max: number, re: RegExp, explanation: string): (s: string) => string[] {
  const tooLong = maxLen(max);
  return (s) => {
    // The common answer, a valid name, allocates nothing.
    if (s.length <= max && re.test(s)) return NONE;
    const errs: string[] = [];
    if (s.length > max) errs.push(tooLong);
    if (!re.test(s)) errs.push(explanation);
    return errs;
  };
}

export const dns1123Label = lengthAndPattern(
  63,
  DNS1123_LABEL,
  regexError(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?',
    "'my-name',  or '123-abc'",
  ),
);
export const dns1123Subdomain = lengthAndPattern(
  253,
  DNS1123_SUBDOMAIN,
  regexError(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
    "'example.com'",
  ),
);
export const dns1035Label = lengthAndPattern(
  63,
  DNS1035_LABEL,
  regexError(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
    '[a-z]([-a-z0-9]*[a-z0-9])?',
    "'my-name',  or 'abc-123'",
  ),
);
export const labelValue = lengthAndPattern(
  63,
  LABEL_VALUE,
  regexError(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?',
    "'MyValue',  or 'my_value',  or '12345'",
  ),
);

// Built once: a map with 100,000 bad keys reports one of these per key.
const NAME_CHARS = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_RE = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME_EXAMPLES = "'MyName',  or 'my.name',  or '123-abc'";
const TOO_MANY_SLASHES = `${regexError(`a qualified name ${NAME_CHARS}`, NAME_RE, NAME_EXAMPLES)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const NAME_PART_TOO_LONG = `name part ${maxLen(63)}`;
const NAME_PART_INVALID = `name part ${regexError(NAME_CHARS, NAME_RE, NAME_EXAMPLES)}`;

/** Whether `s`, with its only "/" at `slash`, is a valid prefix and name: the common case, decided without allocating errors. */
function isValidPrefixed(s: string, slash: number): boolean {
  const nameLength = s.length - slash - 1;
  if (slash === 0 || slash > 253 || nameLength === 0 || nameLength > 63 || s.indexOf('/', slash + 1) >= 0) return false;
  return DNS1123_SUBDOMAIN.test(s.slice(0, slash)) && QUALIFIED_NAME.test(s.slice(slash + 1));
}

const shared = (...errs: string[]) => Object.freeze(errs) as unknown as string[];
// The answers for a name without a prefix, shared: a map with 100,000 bad keys gets one per key.
const NAME_EMPTY = shared('name part must be non-empty');
const NAME_INVALID = shared(NAME_PART_INVALID);
const NAME_TOO_LONG = shared(NAME_PART_TOO_LONG);
const NAME_TOO_LONG_AND_INVALID = shared(NAME_PART_TOO_LONG, NAME_PART_INVALID);

/** A label key: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters. Never mutate the answer. */
export function qualifiedName(s: string): string[] {
  const slash = s.indexOf('/');
  if (slash < 0) {
    if (s.length === 0) return NAME_EMPTY;
    const invalid = !QUALIFIED_NAME.test(s);
    if (s.length > 63) return invalid ? NAME_TOO_LONG_AND_INVALID : NAME_TOO_LONG;
    return invalid ? NAME_INVALID : NONE;
  }
  if (isValidPrefixed(s, slash)) return NONE;
  const parts = s.split('/');
  let name = s;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123Subdomain(prefix).map((e) => `prefix part ${e}`));
  } else if (parts.length > 2) {
    return [TOO_MANY_SLASHES];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(NAME_PART_TOO_LONG);
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) errs.push(NAME_PART_INVALID);
  return errs;
}
