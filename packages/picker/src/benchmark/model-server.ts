/**
 * A simulated model server for the picker benchmark: a real HTTP server with an OpenAI-style
 * `POST /v1/completions` and a Prometheus `GET /metrics` in vLLM's, SGLang's or trtllm-serve's
 * names, driven by a cost model of continuous batching rather than a GPU:
 *
 * - a request is admitted when a decode slot is free and the KV cache has room for its uncached
 *   prompt blocks and its output; otherwise it waits (that is the queue the metrics report);
 * - the KV cache is blocks of `blockTokens` tokens keyed by the chained hash of the prefix up to
 *   them, as vLLM's prefix cache is: blocks a request shares with an earlier one are hits and cost
 *   nothing to prefill; blocks no running request holds stay cached until evicted, least recently
 *   used first;
 * - each engine step takes `decodeBaseMs + decodePerSeqMs × running + prefillPerTokenMs × prefill
 *   tokens in the step`, prefill chunked to `prefillTokensPerStep`; a request's first token comes at
 *   the end of the step that finishes its prefill, then one token per step.
 *
 * Tokens are the prompt's space-separated words.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerKind } from '../signals.js';

export interface CostModel {
  /** Sequences decoded at once. */
  maxRunning: number;
  /** KV-cache capacity in blocks. */
  kvBlocks: number;
  blockTokens: number;
  prefillPerTokenMs: number;
  prefillTokensPerStep: number;
  decodeBaseMs: number;
  decodePerSeqMs: number;
}

export const DEFAULT_COST_MODEL: CostModel = {
  maxRunning: 16,
  kvBlocks: 1024,
  blockTokens: 16,
  prefillPerTokenMs: 0.15,
  prefillTokensPerStep: 2048,
  decodeBaseMs: 15,
  decodePerSeqMs: 0.5,
};

interface SimRequest {
  blocks: number[];
  promptTokens: number;
  outputTokens: number;
  prefillLeft: number;
  generated: number;
  outputBlocks: number;
  res: ServerResponse;
  /** Blocks of the prompt pinned in the cache (the first `pinned` of `blocks`). */
  pinned: number;
}

export interface ServerCounters {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
}

/** Chained hashes of each full block of tokens. */
function blockHashes(tokens: string[], blockTokens: number): number[] {
  const out: number[] = [];
  let h = 0x811c9dc5;
  for (let i = 0; i + blockTokens <= tokens.length; i += blockTokens) {
    for (let t = i; t < i + blockTokens; t++) {
      const word = tokens[t] as string;
      for (let c = 0; c < word.length; c++) h = Math.imul(h ^ word.charCodeAt(c), 0x01000193) >>> 0;
      h = Math.imul(h ^ 0x20, 0x01000193) >>> 0;
    }
    out.push(h);
  }
  return out;
}

export class SimulatedModelServer {
  private readonly waiting: SimRequest[] = [];
  private readonly running: SimRequest[] = [];
  /** Cached blocks in least-recently-used order, with how many running requests hold each. */
  private readonly cache = new Map<number, number>();
  private pinnedBlocks = 0;
  private outputBlocks = 0;
  private stepping = false;
  private server: Server | undefined;
  readonly counters: ServerCounters = { requests: 0, promptTokens: 0, cachedTokens: 0 };
  address = '';

  constructor(
    private readonly model: CostModel,
    private readonly kind: ServerKind = 'vllm',
  ) {}

  async listen(host: string, port: number): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    // The pickers take turns, so a connection can sit idle for minutes: closing it then would race
    // the next request on it (ECONNRESET), which a real proxy's pool would not see.
    server.keepAliveTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.address = `${host}:${(server.address() as AddressInfo).port}`;
    return this.address;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'GET' && req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(this.metrics());
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/completions') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { prompt?: unknown; max_tokens?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end('not JSON\n');
        return;
      }
      const tokens = typeof body.prompt === 'string' ? body.prompt.split(' ') : [];
      const outputTokens = typeof body.max_tokens === 'number' && body.max_tokens > 0 ? Math.floor(body.max_tokens) : 16;
      const blocks = blockHashes(tokens, this.model.blockTokens);
      const r: SimRequest = {
        blocks,
        promptTokens: tokens.length,
        outputTokens,
        prefillLeft: 0,
        generated: 0,
        outputBlocks: Math.ceil((tokens.length - blocks.length * this.model.blockTokens + outputTokens) / this.model.blockTokens),
        res,
        pinned: 0,
      };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      this.waiting.push(r);
      this.kick();
    });
  }

  private kick(): void {
    if (this.stepping) return;
    this.stepping = true;
    setImmediate(() => this.step());
  }

  private freeBlocks(): number {
    return this.model.kvBlocks - this.cache.size - this.outputBlocks;
  }

  /** Evicts unheld cached blocks, oldest first, until `need` blocks are free; false if they cannot be. */
  private makeRoom(need: number): boolean {
    if (this.freeBlocks() >= need) return true;
    for (const [block, holders] of this.cache) {
      if (holders > 0) continue;
      this.cache.delete(block);
      if (this.freeBlocks() >= need) return true;
    }
    return false;
  }

  private admit(): void {
    while (this.running.length < this.model.maxRunning && this.waiting.length > 0) {
      const r = this.waiting[0] as SimRequest;
      let hit = 0;
      while (hit < r.blocks.length && this.cache.has(r.blocks[hit] as number)) hit++;
      const need = r.blocks.length - hit + r.outputBlocks;
      // Hold the hits first, so that making room cannot evict them.
      for (let i = 0; i < hit; i++) this.hold(r.blocks[i] as number);
      if (!this.makeRoom(need)) {
        for (let i = 0; i < hit; i++) this.release(r.blocks[i] as number);
        return;
      }
      this.waiting.shift();
      for (let i = hit; i < r.blocks.length; i++) this.hold(r.blocks[i] as number);
      r.pinned = r.blocks.length;
      this.outputBlocks += r.outputBlocks;
      const cached = hit * this.model.blockTokens;
      r.prefillLeft = r.promptTokens - cached;
      this.counters.requests++;
      this.counters.promptTokens += r.promptTokens;
      this.counters.cachedTokens += cached;
      this.running.push(r);
    }
  }

  private hold(block: number): void {
    const holders = this.cache.get(block);
    // Re-inserting moves the block to the most recently used end.
    this.cache.delete(block);
    this.cache.set(block, (holders ?? 0) + 1);
    if ((holders ?? 0) === 0) this.pinnedBlocks++;
  }

  private release(block: number): void {
    const holders = this.cache.get(block);
    if (holders === undefined) return;
    this.cache.set(block, holders - 1);
    if (holders === 1) this.pinnedBlocks--;
  }

  private step(): void {
    this.admit();
    if (this.running.length === 0) {
      this.stepping = false;
      return;
    }
    let budget = this.model.prefillTokensPerStep;
    let prefilled = 0;
    const firstTokens: SimRequest[] = [];
    let decoding = 0;
    for (const r of this.running) {
      if (r.prefillLeft > 0) {
        if (budget === 0) continue;
        const n = Math.min(budget, r.prefillLeft);
        r.prefillLeft -= n;
        budget -= n;
        prefilled += n;
        if (r.prefillLeft === 0) firstTokens.push(r);
      } else decoding++;
    }
    const ms = this.model.decodeBaseMs + this.model.decodePerSeqMs * this.running.length + this.model.prefillPerTokenMs * prefilled;
    setTimeout(() => this.endStep(firstTokens, decoding > 0), ms);
  }

  private endStep(firstTokens: SimRequest[], decoded: boolean): void {
    const done: SimRequest[] = [];
    for (const r of this.running) {
      if (r.prefillLeft > 0) continue;
      if (firstTokens.includes(r)) {
        r.generated = 1;
        r.res.write('data: {"choices":[{"text":"t"}]}\n\n');
      } else if (decoded) r.generated++;
      if (r.generated >= r.outputTokens) done.push(r);
    }
    for (const r of done) {
      this.running.splice(this.running.indexOf(r), 1);
      for (let i = 0; i < r.pinned; i++) this.release(r.blocks[i] as number);
      this.outputBlocks -= r.outputBlocks;
      r.res.end('data: [DONE]\n\n');
    }
    this.step();
  }

  /** The metrics page, as the real server names its series (plus histogram lines the picker must skip). */
  metrics(): string {
    const waiting = this.waiting.length;
    const running = this.running.length;
    const usage = (this.pinnedBlocks + this.outputBlocks) / this.model.kvBlocks;
    const model = 'model_name="sim-llm"';
    const buckets = [0.01, 0.05, 0.1, 0.5, 1, 5, '+Inf'];
    const histogram = (name: string): string =>
      [`# HELP ${name} A histogram the picker does not read.`, `# TYPE ${name} histogram`]
        .concat(
          buckets.map((le, i) => `${name}_bucket{${model},le="${le}"} ${i * 3}`),
          [`${name}_sum{${model}} 1.5`, `${name}_count{${model}} 18`],
        )
        .join('\n');
    switch (this.kind) {
      case 'vllm':
        return `${[
          '# HELP vllm:num_requests_running Number of requests in model execution batches.',
          '# TYPE vllm:num_requests_running gauge',
          `vllm:num_requests_running{${model},engine="0"} ${running}`,
          '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
          '# TYPE vllm:num_requests_waiting gauge',
          `vllm:num_requests_waiting{${model},engine="0"} ${waiting}`,
          '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
          '# TYPE vllm:kv_cache_usage_perc gauge',
          `vllm:kv_cache_usage_perc{${model},engine="0"} ${usage}`,
          '# TYPE vllm:prefix_cache_queries_total counter',
          `vllm:prefix_cache_queries_total{${model},engine="0"} ${this.counters.promptTokens}`,
          '# TYPE vllm:prefix_cache_hits_total counter',
          `vllm:prefix_cache_hits_total{${model},engine="0"} ${this.counters.cachedTokens}`,
          histogram('vllm:time_to_first_token_seconds'),
          histogram('vllm:e2e_request_latency_seconds'),
        ].join('\n')}\n`;
      case 'sglang':
        return `${[
          '# TYPE sglang:num_running_reqs gauge',
          `sglang:num_running_reqs{${model}} ${running}`,
          '# TYPE sglang:num_queue_reqs gauge',
          `sglang:num_queue_reqs{${model}} ${waiting}`,
          '# TYPE sglang:token_usage gauge',
          `sglang:token_usage{${model}} ${usage}`,
          histogram('sglang:time_to_first_token_seconds'),
        ].join('\n')}\n`;
      case 'trtllm':
        return `${[
          '# TYPE trtllm_num_requests_running gauge',
          `trtllm_num_requests_running ${running}`,
          '# TYPE trtllm_num_requests_waiting gauge',
          `trtllm_num_requests_waiting ${waiting}`,
          '# TYPE trtllm_kv_cache_utilization gauge',
          `trtllm_kv_cache_utilization ${usage}`,
          histogram('trtllm_time_to_first_token_seconds'),
        ].join('\n')}\n`;
    }
  }
}
