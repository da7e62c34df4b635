// Writes statuses through the status subresource: only as the leader, only when the merged status
// differs from what the object has, with the object's resourceVersion (a newer object answers 409,
// and the write is tried again on the fresh object).
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

export class StatusWriter {
  /**
   * Each object's last write: the resourceVersion it was written over and the API server's answer.
   * A recompute that follows a write closely may read the object before its informer hears of the
   * write; the answer then stands in for the stale copy, so the same status is not written twice.
   */
  private readonly lastWrite = new Map<string, { over: string; answer: JsonObject }>();

  constructor(
    private readonly api: KubeApi,
    private readonly options: StatusWriterOptions,
  ) {}

  /** Writes each desired status object (`{apiVersion, kind, metadata: {namespace, name}, status}`). */
  async write(desired: JsonObject[]): Promise<WriteReport> {
    const report: WriteReport = { written: 0, unchanged: 0, skipped: 0, failed: [] };
    const queue = [...desired];
    const worker = async () => {
      for (let o = queue.shift(); o !== undefined; o = queue.shift()) await this.writeOne(o, report);
    };
    await Promise.all(Array.from({ length: this.options.concurrency ?? 8 }, worker));
    return report;
  }

  private async writeOne(o: JsonObject, report: WriteReport): Promise<void> {
    const t = targetOf(o);
    const kind = kindOf(o.apiVersion, o.kind);
    if (!t || !kind) {
      report.skipped += 1;
      return;
    }
    const label = `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`;
    let current = this.options.current(t.kind, t.name, t.namespace);
    const previous = this.lastWrite.get(label);
    const rv = (o: JsonObject | undefined) => (o?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (previous && current && rv(current) === previous.over) current = previous.answer;
    for (let attempt = 1; ; attempt++) {
      if (!current) {
        this.lastWrite.delete(label);
        report.skipped += 1;
        return;
      }
      const merged = mergeStatus(t.kind, current.status as JsonObject | undefined, t.status, this.options.controllerName);
      if (sameStatus(current.status, merged)) {
        report.unchanged += 1;
        return;
      }
      if (!this.options.isLeader()) {
        report.skipped += 1;
        return;
      }
      try {
        // The whole object with its resourceVersion: the status subresource takes only its status.
        const answer = await this.api.request<JsonObject>('PUT', objectPath(kind, t.namespace, t.name, 'status'), { body: { ...current, status: merged } });
        const over = rv(current);
        if (answer && over !== undefined) this.lastWrite.set(label, { over, answer });
        report.written += 1;
        return;
      } catch (err) {
        const conflict = err instanceof ApiError && err.status === 409;
        if (!conflict || attempt >= (this.options.attempts ?? 3)) {
          if (err instanceof ApiError && err.status === 404) report.skipped += 1;
          else report.failed.push({ object: label, error: err instanceof Error ? err.message : String(err) });
          return;
        }
        current = await this.api.request<JsonObject>('GET', objectPath(kind, t.namespace, t.name)).catch(() => undefined);
      }
    }
  }
}
