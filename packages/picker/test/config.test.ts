// The picker's configuration file: a valid file gives a complete profile; every mistake is reported
// at once, each at its file:line:col with the field's path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, defaultConfig, parsePickerConfig } from '../src/config.js';
import { DEFAULT_LOAD_AWARE } from '../src/scoring.js';
import { SERVER_METRICS } from '../src/signals.js';

function problems(text: string): string[] {
  try {
    parsePickerConfig(text, 'picker.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  assert.fail('the file loaded');
}

test('a full file: scorers and weights, prefix, shedding, metrics names, port and path', () => {
  const config = parsePickerConfig(
    [
      'profile: load-aware',
      'maxEndpoints: 2',
      'scorers:',
      '  - {type: queue, weight: 2, max: 4}',
      '  - {type: prefix-cache, weight: 5}',
      'prefix: {blockBytes: 128, blocks: 4, maxBytes: 4096}',
      'shedding: {mode: reject, queue: 10, kvCache: 0.9}',
      'metrics:',
      '  server: sglang',
      '  names: {waiting: "nv_trt_llm_request_metrics{request_type=\\"waiting\\"}"}',
      '  port: 9090',
      '  path: /stats',
      '  intervalMs: 100',
      '',
    ].join('\n'),
    'picker.yaml',
  );
  assert.equal(config.profile, 'load-aware');
  assert.equal(config.maxEndpoints, 2);
  assert.deepEqual(config.loadAware.scorers, [
    { type: 'queue', weight: 2, max: 4 },
    { type: 'prefix-cache', weight: 5 },
  ]);
  assert.deepEqual(config.loadAware.prefix, { blockBytes: 128, blocks: 4, maxBytes: 4096 });
  assert.deepEqual(config.loadAware.shedding, { ...DEFAULT_LOAD_AWARE.shedding, mode: 'reject', queue: 10, kvCache: 0.9 });
  assert.deepEqual(config.scrape.names, { ...SERVER_METRICS.sglang, waiting: 'nv_trt_llm_request_metrics{request_type="waiting"}' });
  assert.deepEqual([config.scrape.port, config.scrape.path, config.scrape.intervalMs], [9090, '/stats', 100]);
});

test('an empty mapping is the load-aware defaults; an old strategy is a profile of its own', () => {
  const config = parsePickerConfig('{}\n', 'p.yaml');
  assert.deepEqual([config.profile, config.loadAware], ['load-aware', DEFAULT_LOAD_AWARE]);
  assert.equal(parsePickerConfig('profile: least-request\nmaxEndpoints: 3\n', 'p.yaml').profile, 'least-request');
});

test('every mistake at its line and column, with the field path', () => {
  const text = [
    'profile: load-aware',
    'maxEndpoints: 0',
    'scorers:',
    '  - type: queue',
    '    weight: -1',
    '  - type: qeueu',
    '  - type: kv-cache',
    '    max: 3',
    '  - weight: 2',
    'prefix:',
    '  blockBytes: 8',
    'shedding: {mode: drop, kvCache: 2}',
    'metrics:',
    '  path: metrics',
    '  names: {waiting: "9bad"}',
    '  colour: blue',
    '',
  ].join('\n');
  assert.deepEqual(problems(text), [
    'picker.yaml:2:15: maxEndpoints: expected an integer in 1..64, got 0',
    'picker.yaml:5:13: scorers[0].weight: expected a number in 0..1000, got -1',
    'picker.yaml:6:11: scorers[1].type: expected one of queue, kv-cache, in-flight, lora-affinity, prefix-cache, got "qeueu"',
    'picker.yaml:8:10: scorers[2].max: only the queue and in-flight scorers take max',
    'picker.yaml:9:5: scorers[3].type: a scorer needs a type: one of queue, kv-cache, in-flight, lora-affinity, prefix-cache',
    'picker.yaml:11:15: prefix.blockBytes: expected an integer in 16..65536, got 8',
    'picker.yaml:12:18: shedding.mode: expected one of none, reject, queue, got "drop"',
    'picker.yaml:12:33: shedding.kvCache: expected a number in 0.01..1, got 2',
    'picker.yaml:14:9: metrics.path: a path starts with "/", got "metrics"',
    'picker.yaml:15:20: metrics.names.waiting: not a metric name or selector: "9bad" does not start with a metric name',
    'picker.yaml:16:3: metrics.colour: unknown field "colour"; expected one of server, names, port, path, intervalMs, timeoutMs, jitter, staleAfterMs, concurrency, maxBodyBytes',
  ]);
});

test('YAML syntax errors and duplicate keys are positioned too', () => {
  assert.match(problems('scorers: [\n')[0] ?? '', /^picker\.yaml:\d+:\d+: YAML syntax error: /);
  assert.match(problems('maxEndpoints: 1\nmaxEndpoints: 2\n')[0] ?? '', /^picker\.yaml:2:1: YAML syntax error: Map keys must be unique/);
});

test('settings of the load-aware profile under another profile are refused', () => {
  assert.deepEqual(problems('profile: round-robin\nshedding: {mode: reject}\n'), [
    'picker.yaml:1:10: profile: shedding apply to the load-aware profile only, not to "round-robin"',
  ]);
});

test('cross-field rules: a prefix that could never be read, scrapes slower than staleness, all weights 0', () => {
  assert.deepEqual(
    problems('prefix: {blockBytes: 1024, blocks: 64, maxBytes: 4096}\nmetrics: {intervalMs: 500, staleAfterMs: 400}\nscorers: [{type: queue, weight: 0}]\n'),
    [
      'picker.yaml:1:9: prefix: blocks × blockBytes (65536) is more than maxBytes (4096): the prefix could never be read in full',
      'picker.yaml:2:42: metrics.staleAfterMs: must be longer than intervalMs (500), or every endpoint would be stale between scrapes',
      'picker.yaml:3:10: scorers: every weight is 0: at least one scorer must count',
    ],
  );
});

test("the README's configuration example loads, and is the load-aware defaults it says it is", () => {
  const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  const block = /### The configuration file[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has the example');
  const config = parsePickerConfig(block, 'README.md');
  const defaults = defaultConfig();
  assert.deepEqual(config.loadAware, defaults.loadAware);
  assert.deepEqual(config.scrape, defaults.scrape);
  assert.equal(config.maxEndpoints, 3);
});
