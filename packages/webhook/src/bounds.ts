// Keeps an answer's size independent of its input. A 570 KB review with 20,000 bad label keys
// used to be answered with 27 MB (every error twice, in the message and in the causes) and logged
// in a 12.5 MB line. The API server itself lists every error of an object it validates
// (errors.NewInvalid makes one cause per field error), but it is not the one paying here: the
// webhook lists the first errors and counts the rest, and bounds warnings as the API server bounds
// its Warning headers (apiserver's warning recorder: 4096 characters in all; past that, each
// warning cut to 256 characters and the ones over the limit dropped).

/** Field errors listed in a denial; the others are counted in a last cause. */
export const MAX_CAUSES = 32;
/** Characters kept of one cause's message: a bad value is quoted in it, and values can be megabytes. */
export const MAX_CAUSE_MESSAGE = 1024;
/** Characters kept of a field path: a map key is part of the path. */
export const MAX_FIELD = 256;
/** The API server's limits on warnings, in characters (runes). */
export const MAX_WARNINGS_TOTAL = 4096;
export const MAX_WARNING = 256;

/** `text`, or its first `max` characters and a count of the rest; never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}... (${text.length - end} more characters)`;
}

/** What stands in for `omitted` errors past the listed `listed`, as a cause on the object itself. */
export function omittedErrorsCause(listed: number, omitted: number): { type: string; message: string; field: string } {
  const rest = `${omitted} more ${omitted === 1 ? 'error is' : 'errors are'} not listed`;
  return { type: 'FieldValueTooMany', message: `Too many: ${listed + omitted}: ${rest}`, field: '' };
}

const runes = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

function truncateRunes(s: string, max: number): string {
  let out = '';
  let n = 0;
  for (const c of s) {
    if (n++ === max) return out;
    out += c;
  }
  return out;
}

/**
 * The warnings the API server would pass on, deduplicated, with a count of any it would drop: all
 * of them while they fit in 4096 characters; past that, each cut to 256 and as many as fit,
 * keeping room for the count so that the API server drops nothing more itself.
 */
export function boundWarnings(warnings: readonly string[]): string[] {
  // Iterated, never spread into an array: a review can carry 150,000 warnings.
  const unique = new Set(warnings);
  // Counted only as far as the limit: past it, how far past does not matter.
  let total = 0;
  for (const w of unique) {
    total += w.length > MAX_WARNINGS_TOTAL ? w.length : runes(w);
    if (total > MAX_WARNINGS_TOTAL) break;
  }
  if (total <= MAX_WARNINGS_TOTAL) return [...unique];
  const kept: string[] = [];
  let written = 0;
  const room = MAX_WARNINGS_TOTAL - 64;
  for (const w of unique) {
    const cut = runes(w) > MAX_WARNING ? truncateRunes(w, MAX_WARNING) : w;
    const length = runes(cut);
    if (written + length > room) break;
    kept.push(cut);
    written += length;
  }
  const omitted = unique.size - kept.length;
  if (omitted > 0) kept.push(`${omitted} more ${omitted === 1 ? 'warning was' : 'warnings were'} not shown`);
  return kept;
}
