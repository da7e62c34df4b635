// Which Gateway a node belongs to: node.cluster = "<namespace>/<gateway>", and nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayGroup, groupOfNode, type XdsNode } from '../src/index.js';

const node = (cluster: string, metadata = {}): XdsNode => ({ id: 'envoy-1', cluster, userAgent: 'envoy/1.35.0', metadata });

test('node.cluster names the Gateway as <namespace>/<gateway>', () => {
  assert.equal(groupOfNode(node('default/gw')), 'default/gw');
  assert.equal(groupOfNode(node('team-a/public.gateway-1')), 'team-a/public.gateway-1');
  assert.equal(groupOfNode(node('default/gw')), gatewayGroup('default', 'gw'));
  // Metadata never overrides it.
  assert.equal(groupOfNode(node('default/gw', { gateway: 'other/gw' })), 'default/gw');
});

/** A client's string as the message quotes it: whole up to 256 characters, else its start and its length. */
const shown = (s: string) => (s.length > 256 ? `${s.slice(0, 256)}… (${s.length} chars)` : s);

test('a node.cluster that is not <namespace>/<gateway> is refused, saying what to set', () => {
  for (const cluster of [
    '',
    'gw',
    '/gw',
    'default/',
    'default/gw/x',
    'Default/gw',
    'default/GW',
    `${'a'.repeat(64)}/gw`,
    `default/${'a'.repeat(254)}`,
    'default/-gw',
  ]) {
    assert.throws(
      () => groupOfNode(node(cluster)),
      new RegExp(
        `^Error: node "envoy-1" has cluster ${JSON.stringify(shown(cluster)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; set node\\.cluster \\(Envoy's --service-cluster\\) to "<namespace>/<gateway>"`,
      ),
      cluster,
    );
  }
});
