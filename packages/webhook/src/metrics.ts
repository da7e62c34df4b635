// The webhook's own metrics, on a prom-client registry (@extlb/telemetry), which also carries the
// default process metrics (process_start_time_seconds among them).
import { Counter, Gauge, Histogram, type Registry } from '@extlb/telemetry';

/** Seconds; dense below 10 ms, where an admission answer should land. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

type ReviewLabel = 'endpoint' | 'kind' | 'verdict';

export class WebhookMetrics {
  readonly requests: Counter<ReviewLabel>;
  readonly duration: Histogram<ReviewLabel>;
  readonly httpResponses: Counter<'code'>;
  readonly certReloads: Counter<'result'>;
  readonly inFlight: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'extlb_webhook_requests_total',
      help: 'Admission requests answered, by endpoint, object kind and verdict (allowed, denied, bad_request, error).',
      labelNames: ['endpoint', 'kind', 'verdict'],
      registers,
    });
    this.duration = new Histogram({
      name: 'extlb_webhook_request_duration_seconds',
      help: 'Time from a request arriving to its answer being written, by endpoint, object kind and verdict.',
      labelNames: ['endpoint', 'kind', 'verdict'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.httpResponses = new Counter({
      name: 'extlb_webhook_http_responses_total',
      help: 'HTTP responses by status code, probes, metrics and the answers to malformed or slow requests included.',
      labelNames: ['code'],
      registers,
    });
    this.certReloads = new Counter({
      name: 'extlb_webhook_certificate_reloads_total',
      help: 'Certificate and key reloads from disk, by result.',
      labelNames: ['result'],
      registers,
    });
    this.inFlight = new Gauge({ name: 'extlb_webhook_requests_in_flight', help: 'Requests being handled now.', registers });
  }

  recordReview(endpoint: string, kind: string, verdict: string, seconds: number): void {
    const labels = { endpoint, kind, verdict };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }
}
