// Inputs come from YAML or a live cluster and are not trusted to match their schema. These helpers
// read one field at a time and report a wrong type at its API-server path instead of throwing.
import type { Diagnostics, ObjectRef } from './diagnostics.js';

export type Json = Record<string, unknown>;

/** Gateway API's HeaderName: RFC 7230 token characters. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export class Reader {
  constructor(
    readonly diags: Diagnostics,
    readonly ref: ObjectRef,
  ) {}

  invalid(path: string, message: string): void {
    this.diags.error('Invalid', message, this.ref, path);
  }

  object(v: unknown, path: string): Json | undefined {
    if (v === undefined || v === null) return undefined;
    if (isObject(v)) return v;
    this.invalid(path, `must be an object`);
    return undefined;
  }

  array(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v;
    this.invalid(path, `must be a list`);
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

  boolean(v: unknown, path: string): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    this.invalid(path, `must be a boolean`);
    return undefined;
  }

  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[], fallback: T): T;
  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[]): T | undefined;
  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[], fallback?: T): T | undefined {
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    this.invalid(path, `Unsupported value: ${JSON.stringify(v)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
    return undefined;
  }

  labels(v: unknown, path: string): Record<string, string> {
    const o = this.object(v, path);
    const out: Record<string, string> = {};
    if (!o) return out;
    for (const [k, val] of Object.entries(o)) {
      if (typeof val === 'string') out[k] = val;
      else this.invalid(`${path}[${k}]`, `must be a string`);
    }
    return out;
  }
}
