// The lines `extlb validate` and `extlb convert` print about their input, made safe and bounded:
// names and values from a manifest reach the terminal with their control characters escaped, a
// message that many documents share is printed a few times and then counted, and a message that
// quotes a huge value is shortened. Output stays proportional to the distinct problems, not to
// the input.
import type { Writable } from 'node:stream';
import { write } from './io.js';

/** How often the same message (ignoring where and on which object) is printed. */
export const MAX_REPEATS = 5;
/** Longer lines keep their start and end; the middle is replaced by a count. */
export const MAX_LINE_LENGTH = 1000;
/** Bytes gathered before a write, so a stream of small lines costs few writes. */
const FLUSH_AT = 1 << 16;

/**
 * C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional
 * marks and overrides that can make a terminal line read differently from its bytes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this escapes
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every character that could move the cursor or recolour the terminal written as an escape. */
function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`);
  });
}

/** `line` cut to MAX_LINE_LENGTH characters, keeping where it starts and how it ends. */
function clipped(line: string): string {
  if (line.length <= MAX_LINE_LENGTH) return line;
  const head = line.slice(0, MAX_LINE_LENGTH * 0.8);
  const tail = line.slice(line.length - MAX_LINE_LENGTH * 0.1);
  return `${head} …(${line.length - head.length - tail.length} characters left out)… ${tail}`;
}

/** The same message on other list items counts as the same message: `[3]` and `[7]` read `[*]`. */
function messageKey(message: string): string {
  return message.replace(/\[\d+\]/g, '[*]');
}

/** `where: text`, about an input; `message` is what makes two lines the same (text without the object's name). */
export interface DiagnosticLine {
  where: string;
  text: string;
  message: string;
}

/** A line whose text is its message: it names no object. */
export function note(where: string, text: string): DiagnosticLine {
  return { where, text, message: text };
}

/**
 * Writes diagnostic lines to a stream: each made printable and clipped, each message at most
 * MAX_REPEATS times. `end()` adds one line per held-back message with how often it was left out.
 */
export class DiagnosticWriter {
  private buffer = '';
  private readonly seen = new Map<string, number>();

  constructor(private readonly stream: Writable) {}

  async line({ where, text, message }: DiagnosticLine): Promise<void> {
    const key = messageKey(message);
    const count = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, count);
    if (count > MAX_REPEATS) return;
    await this.raw(clipped(printable(where ? `${where}: ${text}` : text)));
  }

  /** A line of extlb's own (a summary), written as it is. */
  async raw(line: string): Promise<void> {
    this.buffer += `${line}\n`;
    if (this.buffer.length >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer === '') return;
    const text = this.buffer;
    this.buffer = '';
    await write(this.stream, text);
  }

  /** Counts of the messages left out, then everything still buffered. */
  async end(): Promise<void> {
    for (const [key, count] of this.seen) {
      if (count > MAX_REPEATS) await this.raw(clipped(printable(`... ${count - MAX_REPEATS} more like "${key}" not shown`)));
    }
    this.seen.clear();
    await this.flush();
  }
}
