// Semantic warnings: accepted by the API server, but surprising on a real proxy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validate } from '../src/index.js';
import { backendPool, inferencePool, loadBalancerPolicy, REMOVE, withField } from './fixtures.js';

const EXT = 'spec.loadBalancer.external';
/** The valid fixture without its explicit messageTimeout, which has a warning of its own. */
const pool = () => withField(backendPool(), `${EXT}.messageTimeout`, REMOVE);
const semantic = (o: unknown) => validate(o).warnings.filter((w) => !w.message.startsWith('unknown field'));

describe('semantic warnings', () => {
  it('a plain valid pool has none', () => assert.deepEqual(semantic(pool()), []));

  it('FailOpen with full-duplex streaming needs Envoy 1.35.1', () => {
    const w = semantic(withField(pool(), `${EXT}.failureMode`, 'FailOpen'));
    assert.deepEqual(
      w.map((x) => x.field),
      [`${EXT}.failureMode`],
    );
    assert.match(w[0]!.message, /^spec\.loadBalancer\.external\.failureMode: FailOpen with requestBodyMode FullDuplexStreamed needs Envoy 1\.35\.1 or newer/);
  });

  it('FailOpen with headers only is fine', () => {
    const o = withField(withField(pool(), `${EXT}.failureMode`, 'FailOpen'), `${EXT}.requestBodyMode`, 'None');
    assert.deepEqual(semantic(o), []);
  });

  for (const source of ['Header', 'MetadataThenHeader']) {
    it(`endpointSource ${source} warns that the header must be stripped`, () => {
      const w = semantic(
        withField(loadBalancerPolicy(), 'spec.loadBalancer', {
          type: 'External',
          external: { refs: [{ name: 'p', port: { number: 1 } }], endpointSource: source, requestBodyMode: 'None' },
        }),
      );
      assert.deepEqual(
        w.map((x) => x.field),
        [`${EXT}.endpointSource`],
      );
      assert.match(w[0]!.message, /trusts the x-gateway-destination-endpoint request header; the converter strips it/);
    });
  }

  it('maxEndpoints > 1 is the feature working, not a warning', () => {
    assert.deepEqual(semantic(withField(pool(), `${EXT}.maxEndpoints`, 3)), []);
  });

  for (const key of ['bad key', 'a'.repeat(64), '/name', 'Example.com/name', 'x/y/z']) {
    it(`a label key no Pod can carry is reported: ${JSON.stringify(key).slice(0, 24)}`, () => {
      const w = semantic(withField(pool(), 'spec.selector.matchLabels', { app: 'x', [key]: 'y' }));
      assert.deepEqual(
        w.map((x) => x.field),
        [`spec.selector.matchLabels[${key}]`],
      );
      assert.match(w[0]!.message, /is not a valid label key, so no Pod can carry it and the selector matches nothing/);
      assert.equal(validate(withField(pool(), 'spec.selector.matchLabels', { [key]: 'y' })).valid, true);
    });
  }

  it('prefixed and plain label keys pass', () => {
    assert.deepEqual(semantic(withField(pool(), 'spec.selector.matchLabels', { 'app.kubernetes.io/name': 'x', app: 'y', 'a_b.c-d': 'z' })), []);
  });

  it('reportServedEndpoint needs Envoy 1.38', () => {
    assert.match(
      semantic(withField(backendPool(), `${EXT}.reportServedEndpoint`, true))
        .map((x) => x.message)
        .join('\n'),
      /reportServedEndpoint: needs Envoy 1\.38 or newer/,
    );
  });

  it('an explicit messageTimeout is ignored while streaming full-duplex, a defaulted one is not reported', () => {
    assert.deepEqual(semantic(pool()), []);
    assert.equal((validate(pool()).object as any).spec.loadBalancer.external.messageTimeout, '200ms');
    assert.deepEqual(
      semantic(withField(pool(), `${EXT}.messageTimeout`, '500ms')).map((x) => x.field),
      [`${EXT}.messageTimeout`],
    );
    assert.deepEqual(semantic(withField(withField(pool(), `${EXT}.messageTimeout`, '500ms'), `${EXT}.requestBodyMode`, 'Buffered')), []);
  });

  it('a cookie hash without ttl never sets the cookie', () => {
    const o = withField(loadBalancerPolicy(), 'spec.loadBalancer', { type: 'RingHash', consistentHash: { type: 'Cookie', cookie: { name: 's' } } });
    assert.deepEqual(
      semantic(o).map((x) => x.field),
      ['spec.loadBalancer.consistentHash.cookie'],
    );
  });

  it('an InferencePool without a picker cannot be routed to; FailOpen needs Envoy 1.35.1', () => {
    assert.deepEqual(
      semantic(withField(inferencePool(), 'spec.endpointPickerRef', REMOVE)).map((x) => x.field),
      ['spec.endpointPickerRef'],
    );
    assert.deepEqual(
      semantic(withField(inferencePool(), 'spec.endpointPickerRef.failureMode', 'FailOpen')).map((x) => x.field),
      ['spec.endpointPickerRef.failureMode'],
    );
  });

  it('warnings never make an object invalid', () => {
    const r = validate(withField(backendPool(), `${EXT}.reportServedEndpoint`, true));
    assert.equal(r.valid, true);
  });
});
