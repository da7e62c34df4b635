// Inputs come from YAML or a live cluster and are not trusted to match their schema. A Reader reads
// one field at a time and reports a wrong type at its API-server path instead of throwing; the
// problems it found stay with the object, so its status can say what was wrong.
import type { Diagnostics, ObjectRef } from '../diagnostics.js';
import { type JsonObject, isObject } from '../json.js';
import type { Problem } from './records.js';

/** Gateway API's HeaderName: RFC 7230 token characters. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

/** Gateway API's Hostname: lower-case DNS labels, the first of which may be `*`. */
export const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A value as a message shows it: JSON, or its type when it cannot be written (a cyclic object). */
export function shown(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return `<${typeof v} that cannot be written as JSON>`;
  }
}

export class Reader {
  readonly problems: Problem[] = [];

  constructor(
    readonly diags: Diagnostics,
    readonly ref: ObjectRef,
  ) {}

  invalid(path: string, message: string): void {
    this.problems.push({ path, message });
    this.diags.error('Invalid', message, this.ref, path);
  }

  object(v: unknown, path: string): JsonObject | undefined {
    if (v === undefined || v === null) return undefined;
    if (isObject(v)) return v;
    this.invalid(path, 'must be an object');
    return undefined;
  }

  array(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v;
    this.invalid(path, 'must be a list');
    return [];
  }

  string(v: unknown, path: string, required = false): string | undefined {
    if (v === undefined || v === null) {
      if (required) this.invalid(path, 'Required value');
      return undefined;
    }
    if (typeof v === 'string' && (v !== '' || !required)) return v;
    this.invalid(path, typeof v === 'string' ? 'must not be empty' : 'must be a string');
    return undefined;
  }

  integer(v: unknown, path: string, min: number, max: number, required = false): number | undefined {
    if (v === undefined || v === null) {
      if (required) this.invalid(path, 'Required value');
      return undefined;
    }
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return v;
    this.invalid(path, `must be an integer between ${min} and ${max}`);
    return undefined;
  }

  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[], fallback: T): T | undefined;
  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[]): T | undefined;
  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[], fallback?: T): T | undefined {
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    this.invalid(path, `Unsupported value: ${shown(v)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
    return undefined;
  }

  /**
   * A string map such as labels or a selector's matchLabels. Every key is kept as data, `__proto__`
   * included (Object.fromEntries defines own properties), so a selector can never fail open.
   */
  labels(v: unknown, path: string): Record<string, string> {
    const o = this.object(v, path);
    if (!o) return {};
    const entries: [string, string][] = [];
    for (const [k, val] of Object.entries(o)) {
      if (typeof val === 'string') entries.push([k, val]);
      else this.invalid(`${path}[${k}]`, 'must be a string');
    }
    return Object.fromEntries(entries);
  }
}
