/**
 * The `x-gateway-destination-endpoint` value: `ip:port`, `[ipv6]:port`, comma-separated.
 *
 * Envoy's override_host policy does no address parsing: it looks each entry up, as an exact string,
 * among its hosts' `Address::asString()` forms. An entry spelt any other way (`[2001:db8:0::1]:80`,
 * `10.0.0.01:80`) is silently skipped. So the canonical form here is that exact rendering, and a
 * picker that formats through this module never names an endpoint Envoy cannot find.
 */

/** One endpoint in canonical form. `address` is what Envoy's host map is keyed by. */
export interface Endpoint {
  ip: string;
  port: number;
  family: 4 | 6;
  /** `ip:port` or `[ip]:port`, exactly as Envoy renders a host address. */
  address: string;
}

export interface ParsedEntry extends Endpoint {
  /** Position in the comma-separated value, counting empty entries. */
  index: number;
  /** The entry as written, without surrounding whitespace. */
  text: string;
  /** False when the entry was spelt differently from `address`: Envoy would skip it. */
  canonical: boolean;
}

export interface EntryError {
  /** Position in the comma-separated value; -1 for a problem with the whole value. */
  index: number;
  text: string;
  reason: string;
}

export interface ParseResult {
  endpoints: ParsedEntry[];
  errors: EntryError[];
}

export interface ParseOptions {
  /** Most entries accepted; later ones are reported, not parsed. Default 64. */
  maxEntries?: number;
  /** Longest value accepted, in characters. Default 8192 (a common header-size budget). */
  maxLength?: number;
  /** Report a non-canonical spelling as an error instead of normalising it. Default false. */
  strict?: boolean;
}

export const DEFAULT_MAX_ENTRIES = 64;
export const DEFAULT_MAX_LENGTH = 8192;

/** Thrown by the formatting functions; `errors` holds every bad entry, not just the first. */
export class EndpointListError extends Error {
  readonly errors: EntryError[];
  constructor(errors: EntryError[]) {
    super(errors.map(describeError).join('; '));
    this.name = 'EndpointListError';
    this.errors = errors;
  }
}

export function describeError(e: EntryError): string {
  const where = e.index < 0 ? 'value' : `entry ${e.index}`;
  return e.text === '' ? `${where}: ${e.reason}` : `${where} "${e.text}": ${e.reason}`;
}

// Envoy splits with absl::SkipWhitespace and trims each piece: these are the bytes it trims.
const WHITESPACE = /^[ \t\r\n\f\v]+|[ \t\r\n\f\v]+$/g;

/** Trims the ASCII whitespace Envoy trims around each entry (and nothing else). */
export function trimEntry(text: string): string {
  return text.replace(WHITESPACE, '');
}

/**
 * Parses a destination-endpoint value. Never throws: every problem becomes an `EntryError` with
 * the entry's index, and the good entries are still returned in order. Duplicates are reported
 * (a picker gains nothing from naming an endpoint twice) and left out of `endpoints`.
 */
export function parseEndpointList(value: string, options: ParseOptions = {}): ParseResult {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxLength = options.maxLength ?? DEFAULT_MAX_LENGTH;
  const endpoints: ParsedEntry[] = [];
  const errors: EntryError[] = [];
  if (typeof value !== 'string') {
    errors.push({ index: -1, text: '', reason: `expected a string, got ${describeType(value)}` });
    return { endpoints, errors };
  }
  if (value.length > maxLength) {
    errors.push({ index: -1, text: '', reason: `value is ${value.length} characters long; the limit is ${maxLength}` });
    return { endpoints, errors };
  }
  if (trimEntry(value) === '') {
    errors.push({ index: -1, text: '', reason: 'no endpoint: the value is empty' });
    return { endpoints, errors };
  }
  const seen = new Map<string, number>();
  const pieces = value.split(',');
  for (let index = 0; index < pieces.length; index++) {
    const text = trimEntry(pieces[index] ?? '');
    if (index >= maxEntries) {
      errors.push({ index, text: '', reason: `more than ${maxEntries} entries; the rest are ignored` });
      break;
    }
    if (text === '') {
      errors.push({ index, text, reason: 'empty entry' });
      continue;
    }
    const parsed = parseEndpoint(text);
    if (typeof parsed === 'string') {
      errors.push({ index, text, reason: parsed });
      continue;
    }
    const canonical = parsed.address === text;
    if (!canonical && options.strict) {
      errors.push({ index, text, reason: `not in canonical form: Envoy compares exact strings and would skip it; write ${parsed.address}` });
      continue;
    }
    const first = seen.get(parsed.address);
    if (first !== undefined) {
      errors.push({ index, text, reason: `duplicate of entry ${first}` });
      continue;
    }
    seen.set(parsed.address, index);
    // Spelled out: spreading `parsed` here cost ten times the parse itself in V8.
    endpoints.push({ ip: parsed.ip, port: parsed.port, family: parsed.family, address: parsed.address, index, text, canonical });
  }
  return { endpoints, errors };
}

/**
 * Parses one `ip:port` or `[ipv6]:port` (no surrounding whitespace). Returns the endpoint in
 * canonical form, or the reason it is not one.
 */
export function parseEndpoint(text: string): Endpoint | string {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return 'missing "]" after the IPv6 address';
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (!rest.startsWith(':')) return 'expected ":port" after "]"';
    portText = rest.slice(1);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return 'missing ":port"';
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return 'an IPv6 address must be written in brackets: [addr]:port';
  }
  if (host === '') return 'missing IP address before the port';
  const port = parsePort(portText);
  if (typeof port === 'string') return port;
  if (host.includes(':')) {
    const words = parseIpv6(host);
    if (typeof words === 'string') return words;
    const ip = formatIpv6(words);
    return { ip, port, family: 6, address: `[${ip}]:${port}` };
  }
  const octets = parseIpv4(host);
  if (typeof octets === 'string') return octets;
  const ip = octets.join('.');
  return { ip, port, family: 4, address: `${ip}:${port}` };
}

/** Canonical `ip:port` for an IP (either family, any valid spelling) and a port. Throws if invalid. */
export function formatEndpoint(ip: string, port: number): string {
  const text = ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
  const parsed = Number.isInteger(port) ? parseEndpoint(text) : 'port must be an integer';
  if (typeof parsed === 'string') throw new EndpointListError([{ index: 0, text, reason: parsed }]);
  return parsed.address;
}

/**
 * Formats endpoints (strings in any valid spelling, or `{ip, port}`) as the canonical
 * comma-separated value, keeping their order. Throws `EndpointListError` listing every bad,
 * duplicate or excess entry, so a picker cannot emit a value Envoy would partly skip.
 */
export function formatEndpointList(endpoints: ReadonlyArray<string | { ip: string; port: number }>, options: Omit<ParseOptions, 'strict'> = {}): string {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxLength = options.maxLength ?? DEFAULT_MAX_LENGTH;
  const errors: EntryError[] = [];
  const out: string[] = [];
  const seen = new Map<string, number>();
  if (endpoints.length === 0) errors.push({ index: -1, text: '', reason: 'no endpoint: the list is empty' });
  if (endpoints.length > maxEntries) {
    errors.push({ index: -1, text: '', reason: `${endpoints.length} entries; the limit is ${maxEntries}` });
  }
  endpoints.forEach((e, index) => {
    const text = typeof e === 'string' ? trimEntry(e) : e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
    const parsed = typeof e !== 'string' && !Number.isInteger(e.port) ? 'port must be an integer' : parseEndpoint(text);
    if (typeof parsed === 'string') {
      errors.push({ index, text, reason: parsed });
      return;
    }
    const first = seen.get(parsed.address);
    if (first !== undefined) {
      errors.push({ index, text, reason: `duplicate of entry ${first}` });
      return;
    }
    seen.set(parsed.address, index);
    out.push(parsed.address);
  });
  const value = out.join(',');
  if (value.length > maxLength) {
    errors.push({ index: -1, text: '', reason: `value would be ${value.length} characters long; the limit is ${maxLength}` });
  }
  if (errors.length > 0) throw new EndpointListError(errors);
  return value;
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function parsePort(text: string): number | string {
  if (text === '') return 'missing port number';
  if (!/^[0-9]+$/.test(text)) return `port "${text}" is not a number`;
  // Parse after the digit check and cap the length, so "0000…80" cannot overflow into a valid port.
  const port = text.length > 5 ? Infinity : Number(text);
  if (port < 1 || port > 65535) return `port ${text} is out of range 1..65535`;
  return port;
}

function parseIpv4(text: string): number[] | string {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^[0-9]{1,3}$/.test(p))) {
    return `"${text}" is not an IPv4 address (four decimal numbers separated by dots)`;
  }
  const octets = parts.map(Number);
  if (octets.some((o) => o > 255)) return `"${text}" has an IPv4 part above 255`;
  // Leading zeros read as octal in some parsers (inet_aton); refuse rather than guess.
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return `"${text}" has an IPv4 part with a leading zero`;
  return octets;
}

/** Parses an IPv6 address (with an optional dotted IPv4 tail) into its eight 16-bit words. */
function parseIpv6(text: string): number[] | string {
  const bad = `"${text}" is not an IPv6 address`;
  if (text.includes('%')) return `"${text}" has a zone index; Envoy host addresses never carry one`;
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return bad;
  const halves = text.split('::');
  if (halves.length > 2) return `${bad}: "::" may appear only once`;
  const toWords = (part: string, tailAllowed: boolean): number[] | string => {
    if (part === '') return [];
    const groups = part.split(':');
    const words: number[] = [];
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i] ?? '';
      if (g.includes('.')) {
        if (i !== groups.length - 1 || !tailAllowed) return `${bad}: an IPv4 tail must come last`;
        const v4 = parseIpv4(g);
        if (typeof v4 === 'string') return `${bad}: ${v4}`;
        words.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return `${bad}: group "${g}" is not 1 to 4 hex digits`;
        words.push(parseInt(g, 16));
      }
    }
    return words;
  };
  const head = toWords(halves[0] ?? '', halves.length === 1);
  if (typeof head === 'string') return head;
  if (halves.length === 1) return head.length === 8 ? head : `${bad}: expected 8 groups, found ${head.length}`;
  const tail = toWords(halves[1] ?? '', true);
  if (typeof tail === 'string') return tail;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return `${bad}: "::" must stand for at least one group`;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/**
 * Renders eight words the way inet_ntop does, which is what Envoy's `Address::asString()` prints:
 * lower-case hex without leading zeros, the longest run of two or more zero words (the first on a
 * tie) as "::", and an IPv4 tail for IPv4-mapped and IPv4-compatible addresses.
 */
export function formatIpv6(words: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) bestStart = -1;
  const w = (i: number): number => words[i] ?? 0;
  const v4Tail = bestStart === 0 && (bestLen === 6 || (bestLen === 5 && w(5) === 0xffff));
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += '::';
      i += bestLen - 1;
      continue;
    }
    if (v4Tail && i === 6) {
      if (!out.endsWith(':')) out += ':';
      out += `${w(6) >> 8}.${w(6) & 0xff}.${w(7) >> 8}.${w(7) & 0xff}`;
      break;
    }
    if (out !== '' && !out.endsWith(':')) out += ':';
    out += w(i).toString(16);
  }
  return out;
}
