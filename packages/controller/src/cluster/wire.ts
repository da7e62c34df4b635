// What the API server's answers must be before anything reads them: a watch line is one event
// (`{"type","object"}`) whose object has metadata, a LIST holds a list of objects. Anything else is a
// MalformedResponse: the watch or list fails, the informer restarts with backoff, and nothing of
// the answer reaches the cache (client-node's ListWatch would throw on it, unhandled).

/** An answer of the API server that is not what it claims to be. */
export class MalformedResponse extends Error {
  override readonly name = 'MalformedResponse';
}

/** The most of an answer a message quotes. */
const MAX_QUOTE = 200;

/** `text` as a message quotes it: at most 200 characters, with its length when cut. */
export function quote(text: string): string {
  return text.length <= MAX_QUOTE ? text : `${text.slice(0, MAX_QUOTE)}… (${text.length} characters)`;
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export interface WatchEvent {
  type: string;
  /** An object with metadata (a name and resourceVersion; a bookmark's has only the latter), or for ERROR a Status. */
  object: JsonObject;
}

/** One line of a watch as an event; a MalformedResponse, quoting the line, when it is not one. */
export function watchEvent(line: string, path: string): WatchEvent {
  const malformed = (what: string) => new MalformedResponse(`watch ${path}: ${what}: ${quote(line)}`);
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    throw malformed('a line that is not JSON');
  }
  if (!isObject(event) || typeof event.type !== 'string') throw malformed('a line that is not a watch event');
  const { type, object } = event;
  if (!EVENT_TYPES.has(type)) throw malformed(`an event of no type the API has`);
  if (!isObject(object)) throw malformed(`a ${type} event whose object is not an object`);
  if (type === 'ERROR') return { type, object };
  const { metadata } = object;
  if (!isObject(metadata)) throw malformed(`a ${type} event whose object has no metadata`);
  if (!nonEmpty(metadata.resourceVersion)) throw malformed(`a ${type} event whose object has no resourceVersion`);
  if (type !== 'BOOKMARK' && !nonEmpty(metadata.name)) throw malformed(`a ${type} event whose object has no name`);
  return { type, object };
}

/** A LIST's items and resourceVersion; a MalformedResponse when it has no list of named objects. */
export function objectList(body: unknown, path: string): { items: JsonObject[]; resourceVersion: string } {
  const malformed = (what: string, value: unknown) => new MalformedResponse(`list ${path}: ${what}: ${quote(JSON.stringify(value) ?? String(value))}`);
  if (!isObject(body)) throw malformed('an answer that is not an object', body);
  const { items, metadata } = body;
  if (!Array.isArray(items)) throw malformed('"items" is not a list', items);
  items.forEach((item: unknown, i) => {
    if (!isObject(item)) throw malformed(`items[${i}] is not an object`, item);
    if (!isObject(item.metadata) || !nonEmpty(item.metadata.name)) throw malformed(`items[${i}] has no metadata.name`, item.metadata);
  });
  if (!isObject(metadata) || !nonEmpty(metadata.resourceVersion)) throw malformed('no metadata.resourceVersion', metadata);
  return { items: items as JsonObject[], resourceVersion: metadata.resourceVersion };
}
