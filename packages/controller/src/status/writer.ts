// Writes statuses through the status subresource: only as the leader, only when the merged status
// differs from what the object has, with the object's resourceVersion (a newer object answers 409,
// and the write is tried again on the fresh object). A write that still fails is the caller's to
// requeue (the controller's work queue retries it with backoff).
import { ApiError, type JsonObject, type KubeApi } from '../cluster/api.js';
import { kindOf, objectPath } from '../cluster/kinds.js';
import { mergeStatus, sameStatus } from './merge.js';

export interface StatusWriterOptions {
  controllerName: string;
  /** Checked before every write: a replica that lost the Lease writes nothing more. */
  isLeader(): boolean;
  /** The cached object a status belongs to. */
  current(kind: string, name: string, namespace?: string): JsonObject | undefined;
  /** How many writes at once. */
  concurrency?: number;
  /** Tries per object on a 409 Conflict. */
  attempts?: number;
  /** Awaited before each write (not before a status found unchanged): the controller's rate limit. */
  beforeWrite?: () => Promise<void>;
}

export interface WriteReport {
  written: number;
  unchanged: number;
  /** Objects that were gone, or whose kind has no status here. */
  skipped: number;
  failed: { object: string; error: string }[];
}

interface Target {
  kind: string;
  namespace?: string;
  name: string;
  status: JsonObject;
}

function targetOf(o: JsonObject): Target | undefined {
  const m = (o.metadata ?? {}) as { namespace?: string; name?: string };
  if (typeof o.kind !== 'string' || typeof m.name !== 'string' || typeof o.status !== 'object' || o.status === null) return undefined;
  return { kind: o.kind, name: m.name, ...(m.namespace ? { namespace: m.namespace } : {}), status: o.status as JsonObject };
}

/** `Gateway ns/name`, as logs say it. */
export function labelOf(o: JsonObject): string {
  const m = (o.metadata ?? {}) as { namespace?: string; name?: string };
  return `${String(o.kind)} ${m.namespace ? `${m.namespace}/` : ''}${String(m.name)}`;
}

const resourceVersion = (o: JsonObject) => String((o.metadata as JsonObject | undefined)?.resourceVersion ?? '');

export class StatusWriter {
  /** Per object, the last status write: the resourceVersion it replaced and the object it made. */
  private readonly written = new Map<string, { from: string; object: JsonObject }>();

  constructor(
    private readonly api: KubeApi,
    private readonly options: StatusWriterOptions,
  ) {}

  /** Writes each desired status object (`{apiVersion, kind, metadata: {namespace, name}, status}`). */
  async write(desired: JsonObject[]): Promise<WriteReport> {
    const report: WriteReport = { written: 0, unchanged: 0, skipped: 0, failed: [] };
    const queue = [...desired];
    const worker = async () => {
      for (let o = queue.shift(); o !== undefined; o = queue.shift()) await this.writeReported(o, report);
    };
    await Promise.all(Array.from({ length: this.options.concurrency ?? 8 }, worker));
    return report;
  }

  private async writeReported(o: JsonObject, report: WriteReport): Promise<void> {
    try {
      report[await this.writeOne(o)] += 1;
    } catch (err) {
      report.failed.push({ object: labelOf(o), error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * Writes one desired status; throws when the write failed (after the retries a 409 Conflict gets),
   * so the caller can requeue it.
   */
  async writeOne(o: JsonObject): Promise<'written' | 'unchanged' | 'skipped'> {
    const t = targetOf(o);
    const kind = kindOf(o.apiVersion, o.kind);
    if (!t || !kind) return 'skipped';
    const label = labelOf(o);
    let current = this.options.current(t.kind, t.name, t.namespace);
    // The cache may not have seen this writer's last write yet: the object that write made is newer.
    const mine = this.written.get(label);
    if (mine && current && resourceVersion(current) === mine.from) current = mine.object;
    for (let attempt = 1; ; attempt++) {
      if (!current) return 'skipped';
      const merged = mergeStatus(t.kind, current.status as JsonObject | undefined, t.status, this.options.controllerName);
      if (sameStatus(current.status, merged)) return 'unchanged';
      if (!this.options.isLeader()) return 'skipped';
      await this.options.beforeWrite?.();
      try {
        // The whole object with its resourceVersion: the status subresource takes only its status.
        const made = await this.api.request<JsonObject>('PUT', objectPath(kind, t.namespace, t.name, 'status'), { body: { ...current, status: merged } });
        if (made && typeof made === 'object') this.written.set(label, { from: resourceVersion(current), object: made });
        return 'written';
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return 'skipped';
        const conflict = err instanceof ApiError && err.status === 409;
        if (!conflict || attempt >= (this.options.attempts ?? 3)) throw err;
        current = await this.api.request<JsonObject>('GET', objectPath(kind, t.namespace, t.name)).catch(() => undefined);
      }
    }
  }
}
