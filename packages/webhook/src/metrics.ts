// Prometheus text exposition format 0.0.4, written by hand: a counter and a histogram are all the
// webhook needs, and a client library would be its largest dependency.

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  if (pairs.length === 0) return '';
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

interface Series<T> {
  labels: Labels;
  value: T;
}

abstract class Metric<T> {
  // Keyed by the label values joined with a separator no label value in use contains.
  protected readonly series = new Map<string, Series<T>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected get(labels: Labels): Series<T> {
    const key = this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const ordered: Labels = {};
      for (const n of this.labelNames) ordered[n] = labels[n] ?? '';
      s = { labels: ordered, value: this.initial() };
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract initial(): T;
  abstract readonly type: string;
  protected abstract lines(s: Series<T>): string[];

  render(): string {
    const out = [`# HELP ${this.name} ${this.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${this.name} ${this.type}`];
    for (const s of this.series.values()) out.push(...this.lines(s));
    return `${out.join('\n')}\n`;
  }
}

export class Counter extends Metric<{ n: number }> {
  readonly type: string = 'counter';
  protected initial() {
    return { n: 0 };
  }
  inc(labels: Labels = {}, by = 1): void {
    this.get(labels).value.n += by;
  }
  value(labels: Labels = {}): number {
    return this.get(labels).value.n;
  }
  protected lines(s: Series<{ n: number }>): string[] {
    return [`${this.name}${formatLabels(s.labels)} ${formatNumber(s.value.n)}`];
  }
}

export class Gauge extends Counter {
  override readonly type = 'gauge';
  set(labels: Labels, value: number): void {
    this.get(labels).value.n = value;
  }
}

interface HistogramState {
  buckets: number[];
  sum: number;
  count: number;
}

export class Histogram extends Metric<HistogramState> {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  protected initial(): HistogramState {
    return { buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
  }
  observe(labels: Labels, value: number): void {
    const s = this.get(labels).value;
    // Stored per bucket, not cumulative, so one observation touches one slot.
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) s.buckets[i] = (s.buckets[i] ?? 0) + 1;
    s.sum += value;
    s.count += 1;
  }
  protected lines(s: Series<HistogramState>): string[] {
    const out: string[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += s.value.buckets[i] ?? 0;
      out.push(`${this.name}_bucket${formatLabels(s.labels, ['le', formatNumber(bound)])} ${cumulative}`);
    });
    out.push(`${this.name}_bucket${formatLabels(s.labels, ['le', '+Inf'])} ${s.value.count}`);
    out.push(`${this.name}_sum${formatLabels(s.labels)} ${formatNumber(s.value.sum)}`);
    out.push(`${this.name}_count${formatLabels(s.labels)} ${s.value.count}`);
    return out;
  }
}

/** Seconds; dense below 10 ms, where an admission answer should land. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The webhook's metrics. */
export class WebhookMetrics {
  readonly requests = new Counter(
    'extlb_webhook_requests_total',
    'Admission requests answered, by endpoint, object kind and verdict (allowed, denied, bad_request, error).',
    ['endpoint', 'kind', 'verdict'],
  );
  readonly duration = new Histogram(
    'extlb_webhook_request_duration_seconds',
    'Time from a request arriving to its answer being written, by endpoint, object kind and verdict.',
    ['endpoint', 'kind', 'verdict'],
    LATENCY_BUCKETS,
  );
  readonly httpResponses = new Counter('extlb_webhook_http_responses_total', 'HTTP responses by status code, probes and metrics included.', ['code']);
  readonly certReloads = new Counter('extlb_webhook_certificate_reloads_total', 'Certificate and key reloads from disk, by result.', ['result']);
  readonly inFlight = new Gauge('extlb_webhook_requests_in_flight', 'Requests being handled now.', []);
  readonly startTime = new Gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.', []);

  constructor() {
    this.startTime.set({}, Math.round(Date.now() / 1000 - process.uptime()));
  }

  recordReview(endpoint: string, kind: string, verdict: string, seconds: number): void {
    const labels = { endpoint, kind, verdict };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  render(): string {
    return [this.requests, this.duration, this.httpResponses, this.certReloads, this.inFlight, this.startTime].map((m) => m.render()).join('');
  }
}
