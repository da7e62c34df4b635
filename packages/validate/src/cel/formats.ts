// Kubernetes' CEL format library (library/format.go, Kubernetes 1.32+):
// `format.dns1123Label().validate(s)` is optional.none() when s is valid, else the list of reasons,
// worded as apimachinery's validation helpers word them.
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { dns1035Label, dns1123Label, dns1123Subdomain, labelValue, qualifiedName } from '../names.js';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BYTE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

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
