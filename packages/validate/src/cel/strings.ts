// The CEL strings extension functions (cel-go ext.Strings, version 2 as Kubernetes 1.30+ enables
// it) that @marcbachmann/cel-js does not ship. Indexes count code points, as cel-go's do.
import type { Environment } from '@marcbachmann/cel-js';

/** Thrown as a CEL evaluation error; cel-js wraps it. */
export class CelLibraryError extends Error {}

function codePoints(s: string): string[] {
  return Array.from(s);
}

export function charAt(s: string, index: bigint): string {
  const cps = codePoints(s);
  const i = Number(index);
  if (i < 0 || i > cps.length) throw new CelLibraryError(`index out of range: ${index}`);
  return cps[i] ?? '';
}

/** replace(old, new[, n]): n < 0 replaces all, as Go's strings.Replace. */
export function replace(s: string, from: string, to: string, n: bigint = -1n): string {
  if (n === 0n) return s;
  if (n < 0n) return s.split(from).join(to);
  let out = s;
  let start = 0;
  for (let done = 0n; done < n; done++) {
    const at = from === '' ? (start <= out.length ? start : -1) : out.indexOf(from, start);
    if (at < 0) break;
    out = out.slice(0, at) + to + out.slice(at + from.length);
    start = at + to.length + (from === '' ? 1 : 0);
  }
  return out;
}

export function reverse(s: string): string {
  return codePoints(s).reverse().join('');
}

/** strings.quote: a double-quoted CEL string literal. */
export function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

function formatValue(v: unknown, verb: string): string {
  switch (verb) {
    case 'd':
      if (typeof v !== 'bigint') throw new CelLibraryError('error during formatting: decimal clause can only be used on integers');
      return v.toString();
    case 'x':
    case 'X': {
      const text = typeof v === 'bigint' ? v.toString(16) : typeof v === 'string' ? Buffer.from(v).toString('hex') : '';
      return verb === 'X' ? text.toUpperCase() : text;
    }
    case 'b':
      if (typeof v !== 'bigint' && typeof v !== 'boolean')
        throw new CelLibraryError('error during formatting: only integers and bools can be formatted as binary');
      return typeof v === 'boolean' ? (v ? '1' : '0') : v.toString(2);
    case 'o':
      if (typeof v !== 'bigint') throw new CelLibraryError('error during formatting: octal clause can only be used on integers');
      return v.toString(8);
    default:
      if (typeof v === 'string') return v;
      if (Array.isArray(v)) return `[${v.map((x) => formatValue(x, 's')).join(', ')}]`;
      return String(v);
  }
}

/** "%s is %d".format([a, b]): the verbs s, d, f (with precision), e, x, X, o, b, and %%. */
export function format(template: string, args: unknown[]): string {
  let next = 0;
  return template.replace(/%(?:\.(\d+))?([sdfexXob%])/g, (_m, precision: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (next >= args.length) throw new CelLibraryError(`index ${next} out of range`);
    const v = args[next++];
    if (verb === 'f' || verb === 'e') {
      const n = typeof v === 'bigint' ? Number(v) : (v as number);
      if (typeof n !== 'number') throw new CelLibraryError('error during formatting: fixed-point clause can only be used on doubles');
      const digits = precision === undefined ? 6 : Number(precision);
      return verb === 'f' ? n.toFixed(digits) : n.toExponential(digits).replace(/e([+-])(\d)$/, 'e$10$2');
    }
    return formatValue(v, verb);
  });
}

class StringsLibrary {}

export function registerStrings(env: Environment): Environment {
  return env
    .registerFunction('string.charAt(int): string', charAt)
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b))
    .registerFunction('string.replace(string, string, int): string', replace)
    .registerFunction('string.reverse(): string', reverse)
    .registerFunction('string.format(list): string', format)
    .registerType('strings.Library', StringsLibrary)
    .registerConstant('strings', 'strings.Library', new StringsLibrary())
    .registerFunction('strings.Library.quote(string): string', (_lib: StringsLibrary, s: string) => quote(s));
}
