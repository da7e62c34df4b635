/**
 * The benchmark's workload: shared prefixes, as in inference-perf's `shared_prefix` data — a number
 * of groups, each with its own system prompt, every request one group's system prompt followed by a
 * question of its own — arriving as a Poisson process at each rate of a sweep.
 */
import { mulberry32 } from '../simulator.js';

export interface WorkloadOptions {
  groups: number;
  /** Words (tokens) of each group's system prompt. */
  systemPromptTokens: number;
  /** Words (tokens) of each request's own question. */
  questionTokens: number;
  /** Tokens each request generates. */
  outputTokens: number;
  seed: number;
}

export const DEFAULT_WORKLOAD: WorkloadOptions = { groups: 16, systemPromptTokens: 1200, questionTokens: 80, outputTokens: 32, seed: 7 };

const VOCABULARY = 5000;

export class SharedPrefixWorkload {
  private readonly random: () => number;
  private readonly systemPrompts: string[];

  constructor(private readonly options: WorkloadOptions) {
    this.random = mulberry32(options.seed);
    this.systemPrompts = Array.from({ length: options.groups }, () => this.words(options.systemPromptTokens));
  }

  private words(n: number): string {
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = `w${Math.floor(this.random() * VOCABULARY)}`;
    return out.join(' ');
  }

  /** The next request's body (an OpenAI completions request) and its group. */
  next(): { body: Buffer; group: number } {
    const group = Math.floor(this.random() * this.options.groups);
    const prompt = `${this.systemPrompts[group]} ${this.words(this.options.questionTokens)}`;
    const body = Buffer.from(JSON.stringify({ model: 'sim-llm', prompt, max_tokens: this.options.outputTokens, stream: true }));
    return { body, group };
  }

  /** Seconds to the next arrival of a Poisson process at `rate` per second. */
  gap(rate: number): number {
    return -Math.log(1 - this.random()) / rate;
  }
}
