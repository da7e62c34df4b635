import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram } from '../src/metrics.js';

describe('metrics', () => {
  it('renders counters with escaped label values', () => {
    const c = new Counter('x_total', 'Help with a \\ backslash\nand a newline.', ['a']);
    c.inc({ a: 'quote " slash \\ nl \n' });
    c.inc({ a: 'plain' }, 2);
    assert.equal(
      c.render(),
      '# HELP x_total Help with a \\\\ backslash\\nand a newline.\n# TYPE x_total counter\nx_total{a="quote \\" slash \\\\ nl \\n"} 1\nx_total{a="plain"} 2\n',
    );
  });

  it('renders cumulative histogram buckets, +Inf, sum and count', () => {
    const h = new Histogram('d_seconds', 'Durations.', ['k'], [0.1, 1]);
    for (const v of [0.05, 0.5, 0.5, 3]) h.observe({ k: 'v' }, v);
    assert.equal(
      h.render(),
      [
        '# HELP d_seconds Durations.',
        '# TYPE d_seconds histogram',
        'd_seconds_bucket{k="v",le="0.1"} 1',
        'd_seconds_bucket{k="v",le="1"} 3',
        'd_seconds_bucket{k="v",le="+Inf"} 4',
        'd_seconds_sum{k="v"} 4.05',
        'd_seconds_count{k="v"} 4',
        '',
      ].join('\n'),
    );
  });

  it('keeps series apart by label values, in label-name order', () => {
    const c = new Counter('y_total', 'Y.', ['a', 'b']);
    c.inc({ b: '2', a: '1' });
    c.inc({ a: '1', b: '2' });
    assert.equal(c.value({ a: '1', b: '2' }), 2);
    assert.match(c.render(), /^y_total\{a="1",b="2"\} 2$/m);
  });
});
