// A real HTTP server standing in for a model server's /metrics: the test sets the page, a delay
// before answering, or a status, and counts the scrapes (and how many overlapped).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class MetricsServer {
  page = '';
  status = 200;
  /** Milliseconds before answering. */
  delayMs = 0;
  scrapes = 0;
  /** The paths asked for, in order (the first 100). */
  readonly paths: string[] = [];
  active = 0;
  maxActive = 0;
  port = 0;
  private server: Server | undefined;

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.scrapes++;
      if (this.paths.length < 100) this.paths.push(req.url ?? '');
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      const answer = (): void => {
        this.active--;
        res.writeHead(this.status, { 'content-type': 'text/plain; version=0.0.4' }).end(this.page);
      };
      if (this.delayMs > 0) setTimeout(answer, this.delayMs);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** A vLLM page with these values. */
  vllm(v: { waiting?: number; running?: number; kv?: number; lora?: { running?: string; waiting?: string; max?: number } }): this {
    const m = 'model_name="m"';
    this.page = [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      `vllm:num_requests_running{${m}} ${v.running ?? 0}`,
      '# TYPE vllm:num_requests_waiting gauge',
      `vllm:num_requests_waiting{${m}} ${v.waiting ?? 0}`,
      '# TYPE vllm:kv_cache_usage_perc gauge',
      `vllm:kv_cache_usage_perc{${m}} ${v.kv ?? 0}`,
      '# TYPE vllm:time_to_first_token_seconds histogram',
      `vllm:time_to_first_token_seconds_bucket{${m},le="0.1"} 3`,
      `vllm:time_to_first_token_seconds_bucket{${m},le="+Inf"} 5`,
      ...(v.lora
        ? [
            '# TYPE vllm:lora_requests_info gauge',
            `vllm:lora_requests_info{max_lora="${v.lora.max ?? 4}",running_lora_adapters="${v.lora.running ?? ''}",waiting_lora_adapters="${v.lora.waiting ?? ''}"} 1.7e9`,
          ]
        : []),
      '',
    ].join('\n');
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms` (a guard against hanging, not a speed limit). */
export async function eventually<T>(check: () => T | undefined, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
