/**
 * What the picker reads from a request body: the prompt's prefix as a chain of block hashes, and
 * the `model` it names (the LoRA adapter, on model servers that serve adapters by name). It reads
 * the body as the data plane streams it, one chunk at a time, and stops as soon as it has what it
 * needs: `blocks` full blocks of the prompt (and the model, when asked for), the end of the top-level
 * object, or `maxBytes` — whichever comes first. Nothing of the body is kept but the model name.
 *
 * The prompt is the value of the top-level `prompt` (completions) or `messages` (chat) member,
 * hashed as the bytes the client sent, so two requests whose prompts begin alike share their first
 * block hashes. Block i's hash covers blocks 0..i (each is seeded with the one before), as model
 * servers key their prefix caches: equal hashes at depth i mean equal prefixes up to there.
 */

export interface PromptOptions {
  /** Bytes per block. */
  blockBytes: number;
  /** Blocks read at most. */
  blocks: number;
  /** Read the top-level `model` too. */
  model: boolean;
  /** Bytes of body read at most, whatever was found. */
  maxBytes: number;
}

export interface PromptInfo {
  /** Chained hashes of the prompt's full blocks, first block first. */
  blocks: readonly number[];
  model?: string;
  /** Body bytes read. */
  bytesRead: number;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Longest key and model name kept; longer ones are not the members looked for. */
const MAX_KEY = 16;
const MAX_MODEL = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

type Member = 'model' | 'prompt' | 'other';

/** An incremental reader of one request body; `push` each chunk until `done()`. */
export class PromptReader {
  private readonly blocks: number[] = [];
  private model: string | undefined;
  private bytesRead = 0;
  private finished = false;
  private started = false;
  private depth = 0;
  private inString = false;
  private escape = false;
  /** At depth 1: reading a key (`key`), waiting for its value, or inside a value (`member`). */
  private expectKey = true;
  private key: number[] | undefined;
  private member: Member | undefined;
  private valueStarted = false;
  private modelBytes: number[] | undefined;
  private promptDone = false;
  private hash = FNV_OFFSET;
  private inBlock = 0;

  constructor(private readonly options: PromptOptions) {}

  done(): boolean {
    return this.finished;
  }

  push(chunk: Uint8Array): void {
    const { maxBytes } = this.options;
    for (let i = 0; i < chunk.length && !this.finished; i++) {
      if (this.bytesRead >= maxBytes) {
        this.finished = true;
        break;
      }
      this.bytesRead++;
      this.byte(chunk[i] as number);
    }
    if (this.bytesRead >= maxBytes) this.finished = true;
  }

  result(): PromptInfo {
    const info: PromptInfo = { blocks: this.blocks.slice(), bytesRead: this.bytesRead };
    if (this.model !== undefined) info.model = this.model;
    return info;
  }

  private byte(b: number): void {
    if (!this.started) {
      if (isSpace(b)) return;
      this.started = true;
      // Not a JSON object: there is no prompt to read.
      if (b !== OPEN_BRACE) this.finished = true;
      this.depth = 1;
      return;
    }
    const topValue = this.depth >= 1 && this.member !== undefined && this.valueStarted;
    if (topValue && this.member === 'prompt' && !this.promptDone) this.hashByte(b);
    if (this.inString) {
      if (this.escape) this.escape = false;
      else if (b === BACKSLASH) this.escape = true;
      else if (b === QUOTE) {
        this.inString = false;
        if (this.depth === 1) this.endOfString();
        return;
      }
      if (this.depth === 1) this.stringByte(b);
      return;
    }
    if (b === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) this.key = [];
      else if (this.depth === 1 && this.member !== undefined && !this.valueStarted) this.startValue(true);
      return;
    }
    if (isSpace(b)) return;
    if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (this.depth === 1 && this.member !== undefined && !this.valueStarted) this.startValue(false);
      this.depth++;
      return;
    }
    if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      this.depth--;
      if (this.depth === 0) {
        this.endOfValue();
        this.finished = true;
      }
      return;
    }
    if (this.depth !== 1) return;
    if (b === COLON && this.key !== undefined) {
      this.member = memberOf(this.key);
      this.key = undefined;
      this.expectKey = false;
      this.valueStarted = false;
      return;
    }
    if (b === COMMA) {
      this.endOfValue();
      this.expectKey = true;
      return;
    }
    // A number, true, false or null at depth 1.
    if (this.member !== undefined && !this.valueStarted) this.startValue(false);
  }

  private startValue(isString: boolean): void {
    this.valueStarted = true;
    if (this.member === 'model') this.modelBytes = isString ? [] : undefined;
    if (this.member === 'prompt' && !this.promptDone) {
      // The value's first byte (a quote or bracket) was read before the value was known to start.
      this.hashByte(isString ? QUOTE : OPEN_BRACKET);
    }
  }

  private stringByte(b: number): void {
    if (this.key !== undefined) {
      if (this.key.length <= MAX_KEY) this.key.push(b);
    } else if (this.modelBytes !== undefined && this.member === 'model' && this.valueStarted) {
      if (this.modelBytes.length <= MAX_MODEL) this.modelBytes.push(b);
    }
  }

  private endOfString(): void {
    if (this.key !== undefined) return;
    if (this.member === 'model' && this.modelBytes !== undefined) {
      if (this.modelBytes.length <= MAX_MODEL) this.model = Buffer.from(this.modelBytes).toString('utf8');
      this.modelBytes = undefined;
      this.checkDone();
    }
  }

  private endOfValue(): void {
    if (this.member === 'prompt' && this.valueStarted) {
      this.promptDone = true;
      this.checkDone();
    }
    this.member = undefined;
    this.valueStarted = false;
  }

  private hashByte(b: number): void {
    this.hash = Math.imul(this.hash ^ b, FNV_PRIME) >>> 0;
    if (++this.inBlock < this.options.blockBytes) return;
    this.blocks.push(avalanche(this.hash));
    // The next block is seeded with this one's hash, so each hash stands for the whole prefix.
    this.inBlock = 0;
    if (this.blocks.length >= this.options.blocks) {
      this.promptDone = true;
      this.checkDone();
    }
  }

  private checkDone(): void {
    if (this.promptDone && (!this.options.model || this.model !== undefined)) this.finished = true;
  }
}

function memberOf(key: number[]): Member {
  if (key.length > MAX_KEY) return 'other';
  const name = String.fromCharCode(...key);
  if (name === 'model') return 'model';
  if (name === 'prompt' || name === 'messages') return 'prompt';
  return 'other';
}

/** A final mix, so hashes of prefixes that differ only in their last bytes spread over all 32 bits. */
export function avalanche(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
