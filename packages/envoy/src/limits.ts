// What Envoy refuses at load that Gateway API's schema lets through, in one place: the read stage
// reports such values as invalid (so one tenant's route cannot break a shared Gateway), and the
// validator checks the output against the same rules.
import { RE2JS } from 're2js';

/**
 * Envoy compiles safe_regex with RE2 and refuses a regex whose RE2 program is larger than its
 * runtime key `re2.max_program_size.error_level`, 100 unless an operator raises it.
 */
export const MAX_REGEX_PROGRAM_SIZE = 100;

/** The largest google.protobuf.Duration: 10,000 years, in seconds. */
export const MAX_DURATION_SECONDS = 315_576_000_000;

/** The sum of a route's weighted_clusters weights is a uint32. */
export const MAX_WEIGHT_SUM = 2 ** 32 - 1;

/** Why Envoy would refuse `regex`, or undefined. RE2's own syntax (no lookaround, no backreferences, at most 1000 repetitions). */
export function regexProblem(regex: string): string | undefined {
  if (regex === '') return 'an empty regular expression matches nothing useful';
  let size: number;
  try {
    size = RE2JS.compile(regex).programSize();
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    return `${JSON.stringify(regex)} is not a valid RE2 regular expression: ${why}`;
  }
  if (size > MAX_REGEX_PROGRAM_SIZE) {
    return `${JSON.stringify(regex)} compiles to an RE2 program of size ${size}, over Envoy's limit of ${MAX_REGEX_PROGRAM_SIZE} (runtime re2.max_program_size.error_level)`;
  }
  return undefined;
}

/** Gateway API's Hostname: lower-case DNS labels, optionally led by a `*.` wildcard label. */
const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why a listener or route hostname cannot be served, or undefined. */
export function hostnameProblem(hostname: string): string | undefined {
  if (hostname.length > 253) return 'must be no more than 253 characters';
  if (!HOSTNAME.test(hostname)) {
    return `${JSON.stringify(hostname)} is not a hostname: lower-case DNS labels, with at most a leading "*." wildcard (no IP address, no port, no partial wildcard)`;
  }
  return undefined;
}

/** The highest port a redirect can name. */
export const MAX_PORT = 65_535;

/** Envoy refuses header changes (adding or removing) to `host` and to pseudo-headers such as `:authority`. */
export function isUnmodifiableHeader(name: string): boolean {
  return name.startsWith(':') || name.toLowerCase() === 'host';
}

/** Why Envoy would refuse a header value, or undefined: NUL, CR and LF end a header. */
export function headerValueProblem(value: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters Envoy refuses
  return /[\u0000\r\n]/.test(value) ? 'a header value must not contain NUL, CR or LF' : undefined;
}

/**
 * Envoy reads `%NAME%` in a header value as a format command (`%DOWNSTREAM_REMOTE_ADDRESS%` would be
 * replaced by the client's address); `%%` is a literal `%`. A value from a route is data, so every
 * `%` is doubled.
 */
export function literalHeaderValue(value: string): string {
  return value.replaceAll('%', '%%');
}

/**
 * A format command in a header value: `%NAME%`, `%NAME(arguments)%` or `%NAME(arguments):length%`.
 * Anything else after a `%` (a lone `%`, `%50`) is refused at load.
 */
const FORMAT_COMMAND = /^%[A-Z][A-Z0-9_]*(?:\([^)%]*\))?(?::\d+)?%/;

/** Why Envoy would refuse `value` as a header format string, or undefined. */
export function headerFormatProblem(value: string): string | undefined {
  for (let i = value.indexOf('%'); i !== -1; i = value.indexOf('%', i)) {
    if (value[i + 1] === '%') {
      i += 2;
      continue;
    }
    const command = FORMAT_COMMAND.exec(value.slice(i, i + 256));
    if (!command) return `${JSON.stringify(value)} has a '%' at position ${i} that starts no format command; a literal '%' is written '%%'`;
    i += command[0].length;
  }
  return undefined;
}
