// coordination.k8s.io/v1 Leases are ordinary objects with optimistic concurrency: that is all
// leader election needs. Two replicas race for one Lease; exactly one wins each round.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException, CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { serve } from './helpers.js';

const NAMESPACE = 'extlb-system';

function lease(holder: string, resourceVersion?: string): V1Lease {
  return {
    metadata: { name: 'extlb-controller', namespace: NAMESPACE, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: new Date(), renewTime: new Date(), leaseTransitions: 0 },
  };
}

function codeOf(result: PromiseSettledResult<unknown>): number {
  if (result.status === 'fulfilled') return 200;
  assert.ok(result.reason instanceof ApiException, String(result.reason));
  return result.reason.code;
}

test('two replicas race for one Lease: one creates it, one renews it, a stale holder learns it lost', async (t) => {
  const api = await serve(t, {
    namespaces: ['default', NAMESPACE],
    auth: { tokens: { 'token-a': 'replica-a', 'token-b': 'replica-b' } },
  });
  const a = api.kubeConfig({ token: 'token-a' }).makeApiClient(CoordinationV1Api);
  const b = api.kubeConfig({ token: 'token-b' }).makeApiClient(CoordinationV1Api);

  const created = await Promise.allSettled([
    a.createNamespacedLease({ namespace: NAMESPACE, body: lease('replica-a') }),
    b.createNamespacedLease({ namespace: NAMESPACE, body: lease('replica-b') }),
  ]);
  assert.deepEqual(created.map(codeOf).sort(), [200, 409], 'exactly one create wins');
  const loser = created.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  assert.equal(JSON.parse(loser.reason.body).reason, 'AlreadyExists');

  const current = await a.readNamespacedLease({ name: 'extlb-controller', namespace: NAMESPACE });
  assert.equal(current.spec?.holderIdentity, created[0]?.status === 'fulfilled' ? 'replica-a' : 'replica-b', 'the creator holds it');
  const version = current.metadata?.resourceVersion as string;
  // Both replicas saw the same resourceVersion and both try to take the Lease.
  const raced = await Promise.allSettled([
    a.replaceNamespacedLease({ name: 'extlb-controller', namespace: NAMESPACE, body: lease('replica-a', version) }),
    b.replaceNamespacedLease({ name: 'extlb-controller', namespace: NAMESPACE, body: lease('replica-b', version) }),
  ]);
  assert.deepEqual(raced.map(codeOf).sort(), [200, 409], 'exactly one update wins');
  const winner = raced.findIndex((r) => r.status === 'fulfilled') === 0 ? 'replica-a' : 'replica-b';
  const stored = api.get('coordination.k8s.io/v1', 'Lease', 'extlb-controller', NAMESPACE) as unknown as { spec: { holderIdentity: string } };
  assert.equal(stored.spec.holderIdentity, winner);

  // The leader is killed: it stops renewing. The other replica takes over from the version it last read.
  const [leader, follower] = winner === 'replica-a' ? [a, b] : [b, a];
  const seenByFollower = await follower.readNamespacedLease({ name: 'extlb-controller', namespace: NAMESPACE });
  const followerName = winner === 'replica-a' ? 'replica-b' : 'replica-a';
  await follower.replaceNamespacedLease({
    name: 'extlb-controller',
    namespace: NAMESPACE,
    body: lease(followerName, seenByFollower.metadata?.resourceVersion),
  });
  // The old leader comes back and renews with what it had: 409, so it must step down.
  const renewal = await Promise.allSettled([
    leader.replaceNamespacedLease({ name: 'extlb-controller', namespace: NAMESPACE, body: lease(winner, seenByFollower.metadata?.resourceVersion) }),
  ]);
  assert.deepEqual(renewal.map(codeOf), [409]);

  const writes = api.requestsMatching({ resource: 'leases', verb: ['create', 'update'] }).map((r) => `${r.user} ${r.verb} ${r.code}`);
  assert.equal(writes.filter((w) => w.endsWith(' 200') || w.endsWith(' 201')).length, 3);
});
