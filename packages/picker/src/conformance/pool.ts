/**
 * The picker's pool as the kit knows it: the endpoints the caller names, or else those the picker
 * names in answer to plain requests. Most rules need at least one answer naming an endpoint.
 */
import { parseEndpointList } from '../codec.js';
import { describe, requestHeaders, type Answer } from './answers.js';
import type { Probe } from './probe.js';

export interface PoolSample {
  /** Answers to plain requests (no subset hint). */
  samples: Answer[];
  /** The samples answered with request headers. */
  named: Answer[];
  /** The samples answered any other way. */
  refused: Answer[];
  /** Canonical addresses of the pool: as given, or as learned from well-formed answers. */
  members: string[];
  given: boolean;
  /** Set when no plain request named an endpoint: why the rules that need one cannot run. */
  noEndpoints: string | undefined;
}

export async function samplePool(probe: Probe, first: Answer, options: { endpoints?: readonly string[]; samples?: number }): Promise<PoolSample> {
  const samples = [first];
  for (let i = 1; i < (options.samples ?? 12); i++) samples.push(await probe.ask(requestHeaders()));
  const named = samples.filter((a) => a.kind === 'request_headers');
  const refused = samples.filter((a) => a.kind !== 'request_headers');
  const given = options.endpoints !== undefined;
  const members = new Set(given ? parseEndpointList((options.endpoints ?? []).join(',')).endpoints.map((e) => e.address) : []);
  if (!given) {
    for (const a of named) {
      for (const value of [a.metadata?.stringValue, a.header]) {
        if (typeof value === 'string') for (const e of parseEndpointList(value, { strict: true }).endpoints) members.add(e.address);
      }
    }
  }
  const noEndpoints =
    named.length === 0 ? `every plain request was answered with ${describe(refused[0] as Answer)}: the picker has no ready endpoint to test with` : undefined;
  return { samples, named, refused, members: [...members], given, noEndpoints };
}
