// A fast reader for the YAML manifests are nearly always written in: block mappings and sequences,
// flow collections, plain and single-line quoted scalars, comments. It builds the value of a
// document in one pass over its text, with no syntax tree and no positions. Anything outside that
// subset — anchors, aliases, tags, block scalars, multi-line scalars, `?` keys, `<<` merges, tabs,
// a key written twice, a value kubectl would refuse, or anything malformed — makes it give up, and
// the caller reads the document with the full parser (yaml-documents.ts), which also reports
// problems at their line and column. So it only has to be right about the documents it accepts,
// and on those it gives exactly the full parser's value (test/fast-yaml.test.ts compares the two).
import { resolvePlainScalar, setKey } from './kube-yaml.js';

/** Thrown to give up on a document; never escapes readFast. */
const GIVE_UP: unique symbol = Symbol('give up');

/**
 * Characters the full parser treats specially or that the fast one does not handle: control
 * characters (tab and carriage return among them), DEL, C1 controls (NEL is a YAML 1.1 line
 * break), the line and paragraph separators and the byte order mark.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const UNHANDLED_CHARACTER = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;

const NL = 0x0a;
const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const COMMA = 0x2c;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const BACKSLASH = 0x5c;

/** Indicators a plain scalar may not start with (`-`, `?` and `:` are handled apart). */
function isIndicator(c: number): boolean {
  switch (c) {
    case COMMA:
    case LBRACKET:
    case RBRACKET:
    case LBRACE:
    case RBRACE:
    case HASH:
    case 0x26: // &
    case 0x2a: // *
    case 0x21: // !
    case 0x7c: // |
    case 0x3e: // >
    case SQUOTE:
    case DQUOTE:
    case 0x25: // %
    case 0x40: // @
    case 0x60: // `
      return true;
    default:
      return false;
  }
}

function isFlowIndicator(c: number): boolean {
  return c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE;
}

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

const HEX = /^[0-9a-fA-F]+$/;

/** The full parser refuses an implicit key longer than 1024 characters; leave long scalars to it. */
const MAX_IMPLICIT_KEY = 1000;

/** A scalar token: its text and whether it was quoted (quoted scalars are always strings). */
interface ScalarToken {
  text: string;
  quoted: boolean;
  /** Offset of its first character (the quote of a quoted one). */
  start: number;
}

class FastReader {
  /** Offset of the next character to read. */
  private i: number;
  /** Indentation of the content line the reader stands on, or -1 at the end of the document. */
  private indent = 0;
  /** Offset where the current line starts. */
  private lineStart: number;

  constructor(
    private readonly s: string,
    start: number,
    private readonly end: number,
  ) {
    this.i = start;
    this.lineStart = start;
  }

  private code(at = this.i): number {
    return at < this.end ? this.s.charCodeAt(at) : NL;
  }

  private atLineEnd(at = this.i): boolean {
    return at >= this.end || this.s.charCodeAt(at) === NL;
  }

  /** Whether the character at `at` ends a token: a space, a line break or the end. */
  private isBlank(at: number): boolean {
    return at >= this.end || this.s.charCodeAt(at) === SPACE || this.s.charCodeAt(at) === NL;
  }

  private skipSpaces(): void {
    while (this.i < this.end && this.s.charCodeAt(this.i) === SPACE) this.i++;
  }

  /** Past the rest of the line: only spaces and a comment (after a space) may be left on it. */
  private endLine(): void {
    this.skipSpaces();
    if (this.atLineEnd()) return;
    if (this.s.charCodeAt(this.i) !== HASH || this.s.charCodeAt(this.i - 1) !== SPACE) throw GIVE_UP;
    this.toLineEnd();
  }

  private toLineEnd(): void {
    const nl = this.s.indexOf('\n', this.i);
    this.i = nl < 0 || nl > this.end ? this.end : nl;
  }

  /**
   * From a line end, on to the first character of the next line with content, skipping blank and
   * comment lines; sets `indent` (-1 at the end of the document).
   */
  private nextLine(): void {
    const s = this.s;
    while (this.i < this.end) {
      this.i++; // the line break
      this.lineStart = this.i;
      this.skipSpaces();
      if (this.i >= this.end) break;
      const c = s.charCodeAt(this.i);
      if (c === NL) continue;
      if (c === HASH) {
        this.toLineEnd();
        continue;
      }
      this.indent = this.i - this.lineStart;
      // A document marker ends the document; the splitter cuts documents before them, so one here
      // is `...` or a marker the splitter did not take.
      if (this.indent === 0 && (c === DASH || c === 0x2e) && this.s.startsWith(c === DASH ? '---' : '...', this.i) && this.isBlank(this.i + 3)) throw GIVE_UP;
      return;
    }
    this.indent = -1;
  }

  /** Reads the document: its value and where its content starts (-1 when it has none). */
  read(): { value: unknown; rootOffset: number } {
    const start = this.i;
    if (this.s.startsWith('---', start) && this.isBlank(start + 3)) {
      this.i += 3;
      this.endLine();
    } else this.i--; // nextLine steps over a line break first
    this.nextLine();
    if (this.indent === -1) return { value: null, rootOffset: -1 };
    const rootOffset = this.i;
    const value = this.blockNode(-1);
    if (this.indent !== -1) throw GIVE_UP;
    return { value, rootOffset };
  }

  private isSequenceEntry(): boolean {
    return this.s.charCodeAt(this.i) === DASH && this.isBlank(this.i + 1);
  }

  /** A node that starts on the current content line, more indented than `parent`. */
  private blockNode(parent: number): unknown {
    const indent = this.indent;
    if (this.isSequenceEntry()) return this.sequence(indent);
    const c = this.s.charCodeAt(this.i);
    if (c === LBRACKET || c === LBRACE) {
      const value = this.flowCollection(parent);
      this.endLine();
      this.nextLine();
      return value;
    }
    const token = this.scalarToken(false);
    if (this.s.charCodeAt(this.i) === COLON && this.isBlank(this.i + 1)) return this.mapping(indent, token);
    this.endLine();
    this.nextLine();
    return this.scalarValue(token);
  }

  /** A block mapping whose keys are at column `indent`; `first` is its first key, already read. */
  private mapping(indent: number, first: ScalarToken): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    let token: ScalarToken | undefined = first;
    for (;;) {
      if (!token) {
        if (this.isSequenceEntry()) throw GIVE_UP;
        token = this.scalarToken(false);
        if (this.s.charCodeAt(this.i) !== COLON || !this.isBlank(this.i + 1)) throw GIVE_UP;
      }
      const key = this.keyOf(token);
      if (Object.hasOwn(object, key)) throw GIVE_UP; // the full parser reports it
      this.i++; // the colon
      setKey(object, key, this.mappingValue(indent));
      if (this.indent < indent) return object;
      if (this.indent > indent) throw GIVE_UP;
      token = undefined;
    }
  }

  /** The value after a block mapping key's colon. */
  private mappingValue(indent: number): unknown {
    this.skipSpaces();
    const c = this.code();
    if (c === NL || c === HASH) {
      this.endLine();
      this.nextLine();
      if (this.indent > indent) return this.blockNode(indent);
      if (this.indent === indent && this.isSequenceEntry()) return this.sequence(indent);
      return null;
    }
    if (c === DASH && this.isBlank(this.i + 1)) throw GIVE_UP; // a sequence on the key's line
    const value = this.inlineValue(indent);
    this.endLine();
    this.nextLine();
    return value;
  }

  /** A block sequence whose dashes are at column `indent`. */
  private sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      this.i++; // the dash
      this.skipSpaces();
      const c = this.code();
      if (c === NL || c === HASH) {
        this.endLine();
        this.nextLine();
        items.push(this.indent > indent ? this.blockNode(indent) : null);
      } else {
        if (this.isSequenceEntry()) throw GIVE_UP; // `- - x`
        const column = this.i - this.lineStart;
        if (c === LBRACKET || c === LBRACE) {
          items.push(this.flowCollection(indent));
          this.endLine();
          this.nextLine();
        } else {
          const token = this.scalarToken(false);
          if (this.s.charCodeAt(this.i) === COLON && this.isBlank(this.i + 1)) items.push(this.mapping(column, token));
          else {
            this.endLine();
            this.nextLine();
            items.push(this.scalarValue(token));
          }
        }
      }
      if (this.indent < indent) return items;
      if (this.indent > indent) throw GIVE_UP;
      if (!this.isSequenceEntry()) return items; // the mapping around it goes on
    }
  }

  /** A value on the line of its key: a flow collection or a scalar. */
  private inlineValue(indent: number): unknown {
    const c = this.s.charCodeAt(this.i);
    if (c === LBRACKET || c === LBRACE) return this.flowCollection(indent);
    const token = this.scalarToken(false);
    if (!this.atLineEnd() && this.s.charCodeAt(this.i) === COLON) throw GIVE_UP; // `a: b: c`
    return this.scalarValue(token);
  }

  /** A mapping key (the reader at its colon) as kubectl makes it a JSON string. */
  private keyOf(token: ScalarToken): string {
    if (this.i - token.start > MAX_IMPLICIT_KEY) throw GIVE_UP;
    if (token.quoted) return token.text;
    if (token.text === '<<') throw GIVE_UP; // merges are the full parser's
    const value = resolvePlainScalar(token.text);
    if (value === null || (typeof value === 'number' && !Number.isFinite(value))) throw GIVE_UP;
    return String(value);
  }

  private scalarValue(token: ScalarToken): unknown {
    if (token.quoted) return token.text;
    const value = resolvePlainScalar(token.text);
    if (typeof value === 'number' && !Number.isFinite(value)) throw GIVE_UP; // reported by the full parser
    return value;
  }

  /**
   * A scalar on one line: plain (ending before `: `, ` #`, the line's end, and in flow context a
   * flow indicator or `:` before one) or quoted. Leaves the reader after it, past trailing spaces
   * of a plain scalar only up to the terminator.
   */
  private scalarToken(flow: boolean): ScalarToken {
    const s = this.s;
    const c = this.code();
    const start = this.i;
    if (c === DQUOTE) return { text: this.doubleQuoted(), quoted: true, start };
    if (c === SQUOTE) return { text: this.singleQuoted(), quoted: true, start };
    if (c === NL || isIndicator(c) || c === 0x3f /* ? */ || c === COLON) throw GIVE_UP;
    if (c === DASH && (this.isBlank(this.i + 1) || (flow && isFlowIndicator(this.code(this.i + 1))))) throw GIVE_UP;
    let last = this.i; // end of the last non-space character
    let i = this.i;
    for (; i < this.end; i++) {
      const ch = s.charCodeAt(i);
      if (ch === NL) break;
      if (ch === SPACE) {
        if (i + 1 < this.end && s.charCodeAt(i + 1) === HASH) break;
        continue;
      }
      if (ch === COLON) {
        const next = i + 1 < this.end ? s.charCodeAt(i + 1) : NL;
        if (next === SPACE || next === NL || (flow && isFlowIndicator(next))) break;
      } else if (flow && isFlowIndicator(ch)) break;
      last = i + 1;
    }
    this.i = i;
    return { text: s.slice(start, last), quoted: false, start };
  }

  private singleQuoted(): string {
    const s = this.s;
    let out = '';
    let from = this.i + 1;
    for (;;) {
      const q = s.indexOf("'", from);
      const nl = s.indexOf('\n', from);
      if (q < 0 || q >= this.end || (nl >= 0 && nl < q)) throw GIVE_UP; // multi-line or unclosed
      out += s.slice(from, q);
      if (s.charCodeAt(q + 1) === SQUOTE && q + 1 < this.end) {
        out += "'";
        from = q + 2;
        continue;
      }
      this.i = q + 1;
      return out;
    }
  }

  private doubleQuoted(): string {
    const s = this.s;
    let out = '';
    let from = this.i + 1;
    for (let i = from; ; i++) {
      if (i >= this.end) throw GIVE_UP;
      const c = s.charCodeAt(i);
      if (c === NL) throw GIVE_UP; // multi-line
      if (c === DQUOTE) {
        out += s.slice(from, i);
        this.i = i + 1;
        return out;
      }
      if (c !== BACKSLASH) continue;
      out += s.slice(from, i);
      const next = s[i + 1] ?? '';
      const simple = Object.hasOwn(ESCAPES, next) ? ESCAPES[next] : undefined;
      if (simple !== undefined) {
        out += simple;
        i++;
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const digits = s.slice(i + 2, i + 2 + length);
        if (digits.length !== length || i + 2 + length > this.end || !HEX.test(digits)) throw GIVE_UP;
        const code = Number.parseInt(digits, 16);
        if (code > 0x10ffff) throw GIVE_UP;
        out += String.fromCodePoint(code);
        i += 1 + length;
      } else throw GIVE_UP;
      from = i + 1;
    }
  }

  /** Spaces, line breaks and comments inside a flow collection; lines must be indented past `parent`. */
  private flowSpace(parent: number): void {
    const s = this.s;
    for (;;) {
      this.skipSpaces();
      if (this.i >= this.end) throw GIVE_UP; // unclosed
      const c = s.charCodeAt(this.i);
      if (c === HASH) {
        const before = s.charCodeAt(this.i - 1);
        if (before !== SPACE && before !== NL) throw GIVE_UP;
        this.toLineEnd();
        continue;
      }
      if (c !== NL) return;
      this.i++;
      this.lineStart = this.i;
      this.skipSpaces();
      if (this.atLineEnd() || s.charCodeAt(this.i) === HASH) continue;
      if (this.i - this.lineStart <= parent) throw GIVE_UP;
      if (this.i === this.lineStart && (s.startsWith('---', this.i) || s.startsWith('...', this.i)) && this.isBlank(this.i + 3)) throw GIVE_UP;
    }
  }

  /** `[...]` or `{...}`, which may span lines; leaves the reader after the closing bracket. */
  private flowCollection(parent: number): unknown {
    const s = this.s;
    const open = s.charCodeAt(this.i);
    const close = open === LBRACKET ? RBRACKET : RBRACE;
    this.i++;
    const items: unknown[] | undefined = open === LBRACKET ? [] : undefined;
    const object: Record<string, unknown> | undefined = open === LBRACE ? {} : undefined;
    for (;;) {
      this.flowSpace(parent);
      if (s.charCodeAt(this.i) === close) {
        this.i++;
        return items ?? object;
      }
      if (items) items.push(this.flowNode(parent, false));
      else {
        const token = this.flowKey();
        const key = this.keyOf(token);
        if (Object.hasOwn(object!, key)) throw GIVE_UP;
        this.flowSpace(parent);
        if (s.charCodeAt(this.i) !== COLON) throw GIVE_UP; // a key with no value
        this.i++;
        this.flowSpace(parent);
        const c = s.charCodeAt(this.i);
        setKey(object!, key, c === COMMA || c === RBRACE ? null : this.flowNode(parent, true));
      }
      this.flowSpace(parent);
      const c = s.charCodeAt(this.i);
      if (c === COMMA) this.i++;
      else if (c !== close) throw GIVE_UP;
    }
  }

  /** A key in a flow mapping: a plain or quoted scalar followed by `:` (after a plain one, `: `). */
  private flowKey(): ScalarToken {
    const c = this.s.charCodeAt(this.i);
    if (c === LBRACKET || c === LBRACE) throw GIVE_UP;
    const token = this.scalarToken(true);
    if (!token.quoted && this.s.charCodeAt(this.i) === COLON && !this.isBlank(this.i + 1)) throw GIVE_UP;
    return token;
  }

  /** An entry of a flow sequence or a value of a flow mapping. */
  private flowNode(parent: number, inMapping: boolean): unknown {
    const c = this.s.charCodeAt(this.i);
    if (c === LBRACKET || c === LBRACE) return this.flowCollection(parent);
    const token = this.scalarToken(true);
    const after = this.s.charCodeAt(this.i);
    // `[a: b]` is a mapping in a sequence; a plain scalar cut by the end of its line goes on.
    if (!inMapping && after === COLON) throw GIVE_UP;
    if (!token.quoted && (after === NL || this.i >= this.end)) {
      this.flowSpace(parent);
      const next = this.s.charCodeAt(this.i);
      if (next !== COMMA && next !== RBRACKET && next !== RBRACE) throw GIVE_UP;
    }
    return this.scalarValue(token);
  }
}

export interface FastDocument {
  /** The document's value; null for an empty one. */
  value: unknown;
  /** Offset of the first character of its content (where the full parser places its root). */
  rootOffset: number;
}

/**
 * The value of the document in `text[start, end)` (which may begin with its `---` line), or
 * undefined when the document is outside the subset this reader takes.
 */
export function readFast(text: string, start: number, end: number): FastDocument | undefined {
  try {
    return new FastReader(text, start, end).read();
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  }
}
