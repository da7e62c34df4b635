// The Prometheus text-format reader: what it keeps, what it skips, and where it says a page is wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSelector, matches, parsePage, parseSelector } from '../src/prometheus.js';

test('reads the wanted series with their labels, values and timestamps; skips the rest after the name', () => {
  const page = [
    '# HELP a_total A counter.',
    '# TYPE a_total counter',
    'a_total{x="1"} 3',
    'wanted:gauge{model_name="m",engine="0"} 2.5',
    '  wanted:gauge{model_name="n"}   -1e3   1712345678000  ',
    'wanted:gauge +Inf',
    'wanted:gauge{} NaN',
    'skipped_histogram_bucket{le="0.1",broken="unterminated} 1',
    '',
  ].join('\n');
  const { samples, errors } = parsePage(page, new Set(['wanted:gauge']));
  assert.deepEqual(errors, []);
  assert.deepEqual(
    samples.map((s) => [s.labels, s.value]),
    [
      [{ model_name: 'm', engine: '0' }, 2.5],
      [{ model_name: 'n' }, -1000],
      [{}, Infinity],
      [{}, NaN],
    ],
  );
});

test('label values keep their escapes (\\\\, \\", \\n) and commas', () => {
  const { samples } = parsePage('info{a="x\\\\y",b="say \\"hi\\"",c="l1\\nl2",d="p,q"} 1\n', new Set(['info']));
  assert.deepEqual(samples[0]?.labels, { a: 'x\\y', b: 'say "hi"', c: 'l1\nl2', d: 'p,q' });
});

test('every broken line of a wanted metric is reported with its line number; other lines only need a name', () => {
  const page = ['ok 1', 'w{a="1" 2', 'w{a=1} 2', 'w 2 3 4', 'w two', 'w{a="1"}2', '<html>', 'other{whatever 1', 'w 1 notatime'].join('\n');
  const { samples, errors } = parsePage(page, new Set(['w']));
  assert.deepEqual(samples, []);
  assert.deepEqual(errors, [
    'line 2: expected "," or "}" after label a',
    'line 3: expected a quoted value for label a',
    'line 4: unexpected text after the value of w',
    'line 5: the value of w is not a number: "two"',
    'line 6: expected a space before the value of w',
    'line 7: not a comment and no metric name',
    'line 9: the timestamp of w is not an integer',
  ]);
});

test('errors are bounded, so a large broken page costs a bounded report', () => {
  const page = Array.from({ length: 1000 }, () => '!!!').join('\n');
  assert.equal(parsePage(page, new Set(['w'])).errors.length, 8);
});

test('selectors: a name, or a name with label values that must match', () => {
  const s = parseSelector('nv_trt_llm_request_metrics{request_type="waiting"}');
  assert.deepEqual(s, { name: 'nv_trt_llm_request_metrics', labels: { request_type: 'waiting' } });
  assert.equal(formatSelector(s), 'nv_trt_llm_request_metrics{request_type="waiting"}');
  assert.ok(matches({ name: s.name, labels: { request_type: 'waiting', x: '1' }, value: 1 }, s));
  assert.ok(!matches({ name: s.name, labels: { request_type: 'scheduled' }, value: 1 }, s));
  assert.deepEqual(parseSelector('vllm:num_requests_waiting'), { name: 'vllm:num_requests_waiting', labels: {} });
  assert.throws(() => parseSelector('9lives'), /does not start with a metric name/);
  assert.throws(() => parseSelector('a{b="c"} extra'), /unexpected text after the labels/);
  assert.throws(() => parseSelector('a{b=c}'), /expected a quoted value for label b/);
});
