// Fault injection: requests that are delayed, answered with an error Status or a body the client
// must not trust, cut off, or (for watches) told their resourceVersion is gone, fed lines that are
// not events, or held open in silence; plus the server-wide faults a controller must survive
// (every watch dropped mid-stream, history compacted).
import { matchesRequest, type RequestMatch, type RequestRecord } from './request-log.js';
import type { Store } from './store.js';
import type { WatchHub } from './watch.js';

export interface FaultRule {
  /** Which requests; every request when omitted. */
  match?: RequestMatch;
  /** How many matching requests it applies to. Default 1; `Infinity` for all of them. */
  times?: number;
  /** Hold the request this long first (then, without another effect, serve it normally). */
  delayMs?: number;
  /** Answer with a Status of this code instead (e.g. 500, 503 with retryAfterSeconds, 429). */
  status?: { code: number; reason?: string; message?: string; retryAfterSeconds?: number };
  /** Destroy the connection without an answer. */
  reset?: boolean;
  /** For a watch: answer 200 with an ERROR event holding a 410 Expired Status, whatever its resourceVersion. */
  gone?: boolean;
  /**
   * Answer with this instead of serving the request: `code` (default 200) and `body`, sent as it is
   * when a string, else as JSON — a LIST whose `items` holds a `null`, say.
   */
  reply?: { code?: number; body: unknown };
  /**
   * For a watch: these lines go out first, each as it is and ended by a newline (`null`, `[1]`,
   * `{"type":"ADDED","object":null}`), then the watch carries on as usual.
   */
  lines?: string[];
  /**
   * For a watch: answer 200 and then send nothing at all, not an event, a bookmark nor the end at
   * `timeoutSeconds`, until the client goes away or the server stops (a stalled watch cache or a
   * half-open connection as the client sees it).
   */
  silent?: boolean;
}

export interface Fault {
  /** How many requests it has applied to so far. */
  readonly hits: number;
  remove(): void;
}

interface ActiveRule extends FaultRule {
  hits: number;
}

const DEFAULT_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function defaultReason(code: number): string {
  return DEFAULT_REASONS[code] ?? 'Unknown';
}

export class Faults {
  private rules: ActiveRule[] = [];

  constructor(
    private readonly store: Store,
    private readonly hub: WatchHub,
  ) {}

  /** Adds a fault; rules apply in the order they were added, one per request. */
  inject(rule: FaultRule): Fault {
    const active: ActiveRule = { ...rule, hits: 0 };
    this.rules.push(active);
    return {
      get hits() {
        return active.hits;
      },
      remove: () => {
        this.rules = this.rules.filter((r) => r !== active);
      },
    };
  }

  /** The fault for this request, if any; counts it and retires rules that are used up. */
  take(request: RequestRecord): FaultRule | undefined {
    const rule = this.rules.find((r) => matchesRequest(request, r.match ?? {}));
    if (!rule) return undefined;
    rule.hits++;
    if (rule.hits >= (rule.times ?? 1)) this.rules = this.rules.filter((r) => r !== rule);
    return rule;
  }

  clear(): void {
    this.rules = [];
  }

  /** Drops every open watch: abruptly by default (the connection dies mid-stream), or cleanly as at a timeout. */
  dropWatches(options: { graceful?: boolean } = {}): number {
    return this.hub.closeAll(options.graceful === true);
  }

  /** Forgets history up to `resourceVersion` (default: all), so watches and continues from before it get 410. */
  compact(resourceVersion?: string | number): void {
    this.store.compact(resourceVersion === undefined ? undefined : Number(resourceVersion));
  }
}
