// Kubernetes' CEL format library (library/format.go, Kubernetes 1.32+):
// `format.dns1123Label().validate(s)` is optional.none() when s is valid, else the list of reasons,
// worded as apimachinery's validation helpers word them.
import { Optional, type Environment } from '@marcbachmann/cel-js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BYTE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const maxLen = (n: number) => `must be no more than ${n} characters`;
const regexError = (what: string, re: string, examples: string) =>
  `${what} (e.g. ${examples}, regex used for validation is '${re}')`;

/** apimachinery's shape for these checks: a length limit, then a regex with its explanation. */
function lengthAndPattern(max: number, re: RegExp, explanation: string): (s: string) => string[] {
  return (s) => {
    const errs: string[] = [];
    if (s.length > max) errs.push(maxLen(max));
    if (!re.test(s)) errs.push(explanation);
    return errs;
  };
}

const dns1123Label = lengthAndPattern(63, DNS1123_LABEL, regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", '[a-z0-9]([-a-z0-9]*[a-z0-9])?', "'my-name',  or '123-abc'"));
const dns1123Subdomain = lengthAndPattern(253, DNS1123_SUBDOMAIN, regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*', "'example.com'"));
const dns1035Label = lengthAndPattern(63, DNS1035_LABEL, regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", '[a-z]([-a-z0-9]*[a-z0-9])?', "'my-name',  or 'abc-123'"));
const labelValue = lengthAndPattern(63, LABEL_VALUE, regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?', "'MyValue',  or 'my_value',  or '12345'"));

/** A label key: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters. */
function qualifiedName(s: string): string[] {
  const parts = s.split('/');
  let name = s;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123Subdomain(prefix).map((e) => `prefix part ${e}`));
  } else if (parts.length > 2) {
    return [regexError("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]', "'MyName',  or 'my.name',  or '123-abc'") + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLen(63)}`);
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) {
    errs.push(`name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]', "'MyName',  or 'my.name',  or '123-abc'")}`);
  }
  return errs;
}

const simple = (re: RegExp, what: string) => (s: string) => (re.test(s) ? [] : [what]);

/** Every named format, keyed by the name `format.named()` and the `format.<name>()` functions use. */
export const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label,
  dns1123Subdomain,
  dns1035Label,
  qualifiedName,
  labelValue,
  dns1123LabelPrefix: (s) => dns1123Label(s.endsWith('-') ? s.slice(0, -1) : s),
  dns1123SubdomainPrefix: (s) => dns1123Subdomain(s.endsWith('-') ? s.slice(0, -1) : s),
  dns1035LabelPrefix: (s) => dns1035Label(s.endsWith('-') ? s.slice(0, -1) : s),
  uri: (s) => (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) || s.startsWith('/') ? [] : ['invalid URI']),
  uuid: simple(UUID, 'does not match the UUID format'),
  byte: simple(BYTE, 'invalid base64'),
  date: simple(DATE, 'does not match the date format'),
  datetime: simple(DATE_TIME, 'does not match the datetime format'),
};

export class FormatLibrary {}

export class NamedFormat {
  constructor(readonly name: string) {}
}

/** optional.none() when valid; otherwise optional.of(reasons). */
export function validateFormat(f: NamedFormat, s: string): Optional {
  const check = Object.hasOwn(FORMATS, f.name) ? FORMATS[f.name]! : () => ['unknown format'];
  const errs = check(s);
  return errs.length === 0 ? Optional.none() : Optional.of(errs);
}

export function registerFormats(env: Environment): Environment {
  let out = env
    .registerType('kubernetes.FormatLibrary', FormatLibrary)
    .registerType('kubernetes.NamedFormat', NamedFormat)
    .registerConstant('format', 'kubernetes.FormatLibrary', new FormatLibrary())
    .registerFunction('kubernetes.FormatLibrary.named(string): optional<kubernetes.NamedFormat>', (_l: FormatLibrary, name: string) =>
      Object.hasOwn(FORMATS, name) ? Optional.of(new NamedFormat(name)) : Optional.none(),
    )
    .registerFunction('kubernetes.NamedFormat.validate(string): optional<list<string>>', validateFormat);
  for (const name of Object.keys(FORMATS)) {
    const named = new NamedFormat(name);
    out = out.registerFunction(`kubernetes.FormatLibrary.${name}(): kubernetes.NamedFormat`, () => named);
  }
  return out;
}
