/** The object a diagnostic or status is about, as `kubectl` names it. */
export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

export type Severity = 'error' | 'warning' | 'info';

/**
 * One finding of the converter. `error` means an input object is invalid or refers to something
 * missing (the CLI exits 1); `warning` means the output works but differs from what was asked
 * (an unsupported feature, a default Envoy cannot honour); `info` explains a choice.
 */
export interface Diagnostic {
  severity: Severity;
  /** A stable, machine-readable code, e.g. `BackendNotFound` or `UnsupportedFilter`. */
  code: string;
  message: string;
  object?: ObjectRef;
  /** API-server field path inside `object`, e.g. `spec.rules[0].backendRefs[1].name`. */
  path?: string;
}

export class Diagnostics {
  readonly list: Diagnostic[] = [];

  add(severity: Severity, code: string, message: string, object?: ObjectRef, path?: string): void {
    const d: Diagnostic = { severity, code, message };
    if (object) d.object = object;
    if (path) d.path = path;
    this.list.push(d);
  }
  error(code: string, message: string, object?: ObjectRef, path?: string): void {
    this.add('error', code, message, object, path);
  }
  warning(code: string, message: string, object?: ObjectRef, path?: string): void {
    this.add('warning', code, message, object, path);
  }
  info(code: string, message: string, object?: ObjectRef, path?: string): void {
    this.add('info', code, message, object, path);
  }

  /** Sorted by object, then path, then message, so the output is independent of input order. */
  sorted(): Diagnostic[] {
    const key = (d: Diagnostic) => [d.object?.kind ?? '', d.object?.namespace ?? '', d.object?.name ?? '', d.path ?? '', d.code, d.message].join('\u0000');
    const seen = new Set<string>();
    const out: Diagnostic[] = [];
    for (const d of [...this.list].sort((a, b) => compare(key(a), key(b)))) {
      const k = `${d.severity}\u0000${key(d)}`;
      if (seen.has(k)) continue; // the same backend referenced by many routes reports once
      seen.add(k);
      out.push(d);
    }
    return out;
  }
}

/** Code-unit order, independent of the locale (localeCompare is not). */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}
