// The watch wire protocol through client-node's Watch: events from a resourceVersion, initial
// state, 410 as an ERROR event, bookmarks (requested, periodic, initial-events-end), timeouts.
import assert from 'node:assert/strict';
import { get } from 'node:https';
import { test } from 'node:test';
import { Watch } from '@kubernetes/client-node';
import { INITIAL_EVENTS_END, type KubeApiServer } from '../src/index.js';
import { configMap, serve } from './helpers.js';

const PATH = '/api/v1/namespaces/default/configmaps';

interface Event {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
  };
}

/** A client-node watch whose events can be awaited, and whose end (done) too. */
async function watch(api: KubeApiServer, query: Record<string, string | number | boolean | undefined>) {
  const events: Event[] = [];
  const wakes = new Set<() => void>();
  let ended: ((err: unknown) => void) | undefined;
  const done = new Promise<unknown>((resolve) => {
    ended = resolve;
  });
  const controller = await new Watch(api.kubeConfig()).watch(
    PATH,
    query,
    (type, object) => {
      events.push({ type, object });
      for (const w of wakes) w();
    },
    (err) => ended?.(err),
  );
  const until = async (match: (e: Event) => boolean): Promise<Event> => {
    for (;;) {
      const found = events.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => {
        const wake = () => {
          wakes.delete(wake);
          resolve();
        };
        wakes.add(wake);
      });
    }
  };
  return { events, until, done, abort: () => controller.abort() };
}

test('a watch from a resourceVersion gets the changes after it, ADDED, MODIFIED and DELETED', async (t) => {
  const api = await serve(t, { objects: [configMap('old')] });
  const from = api.resourceVersion;
  api.put(configMap('a', { v: '1' }));
  api.put(configMap('a', { v: '2' }));
  api.remove('v1', 'ConfigMap', 'a', 'default');
  const w = await watch(api, { resourceVersion: from });
  t.after(w.abort);
  await w.until((e) => e.type === 'DELETED');
  assert.deepEqual(
    w.events.map((e) => `${e.type} ${e.object.metadata?.name} ${e.object.metadata?.resourceVersion}`),
    [`ADDED a ${Number(from) + 1}`, `MODIFIED a ${Number(from) + 2}`, `DELETED a ${Number(from) + 3}`],
  );
  assert.equal(w.events[0]?.object.kind, 'ConfigMap', 'watch events carry kind and apiVersion');
});

test('without a resourceVersion, a watch starts with the current objects as ADDED', async (t) => {
  const api = await serve(t, { objects: [configMap('b'), configMap('a')] });
  const w = await watch(api, {});
  t.after(w.abort);
  await api.waitForWatches(1);
  api.put(configMap('c'));
  await w.until((e) => e.object.metadata?.name === 'c');
  assert.deepEqual(
    w.events.map((e) => `${e.type} ${e.object.metadata?.name}`),
    ['ADDED a', 'ADDED b', 'ADDED c'],
  );
});

test('a watch from a compacted resourceVersion gets an ERROR event with 410 Expired, then the stream ends', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const old = api.resourceVersion;
  api.put(configMap('b'));
  api.faults.compact();
  const w = await watch(api, { resourceVersion: old });
  assert.equal(await w.done, null, 'the stream ends cleanly');
  assert.deepEqual(w.events, [
    {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${old} (${api.resourceVersion})`,
        reason: 'Expired',
        code: 410,
      },
    },
  ]);
});

test('bookmarks carry the current resourceVersion, so a watch resumed from one survives compaction', async (t) => {
  const api = await serve(t, { objects: [configMap('mine', {}, { app: 'mine' })] });
  const start = api.resourceVersion;
  const w = await watch(api, { resourceVersion: start, labelSelector: 'app=mine', allowWatchBookmarks: true });
  await api.waitForWatches(1);
  for (let i = 0; i < 5; i++) api.put(configMap(`other-${i}`));
  assert.equal(api.sendBookmarks(), 1);
  const bookmark = await w.until((e) => e.type === 'BOOKMARK');
  assert.deepEqual(bookmark.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: api.resourceVersion } });
  w.abort();

  api.faults.compact();
  const resumed = await watch(api, { resourceVersion: bookmark.object.metadata?.resourceVersion, labelSelector: 'app=mine' });
  t.after(resumed.abort);
  api.put(configMap('mine', { changed: 'yes' }, { app: 'mine' }));
  assert.equal((await resumed.until(() => true)).type, 'MODIFIED');
  const stale = await watch(api, { resourceVersion: start, labelSelector: 'app=mine' });
  assert.equal((await stale.until(() => true)).object.code, 410, 'from the last event it had seen, it would be gone');
});

test('periodic bookmarks go only to watches that ask for them', async (t) => {
  const api = await serve(t, { bookmarkIntervalMs: 20 });
  const asking = await watch(api, { resourceVersion: api.resourceVersion, allowWatchBookmarks: true });
  const silent = await watch(api, { resourceVersion: api.resourceVersion });
  t.after(() => {
    asking.abort();
    silent.abort();
  });
  await asking.until((e) => e.type === 'BOOKMARK');
  assert.deepEqual(silent.events, []);
});

test('sendInitialEvents streams the state, then a bookmark marked initial-events-end', async (t) => {
  const api = await serve(t, { objects: [configMap('a')] });
  const w = await watch(api, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
  t.after(w.abort);
  const end = await w.until((e) => e.type === 'BOOKMARK');
  assert.deepEqual(end.object.metadata, { resourceVersion: api.resourceVersion, annotations: { [INITIAL_EVENTS_END]: 'true' } });
  assert.deepEqual(
    w.events.map((e) => e.type),
    ['ADDED', 'BOOKMARK'],
  );
});

test('timeoutSeconds ends the stream cleanly; an injected gone fault answers 410 whatever the resourceVersion', async (t) => {
  const api = await serve(t);
  const timed = await watch(api, { resourceVersion: api.resourceVersion, timeoutSeconds: 1 });
  assert.equal(await timed.done, null);

  const fault = api.faults.inject({ match: { verb: 'watch' }, gone: true });
  const gone = await watch(api, { resourceVersion: api.resourceVersion });
  assert.equal((await gone.until(() => true)).object.code, 410);
  assert.equal(fault.hits, 1);
  assert.equal(api.requestsMatching({ verb: 'watch' }).at(-1)?.fault, 'gone');
});

test('on the wire: a chunked application/json response of one JSON event per line', async (t) => {
  const api = await serve(t, { objects: [configMap('a'), configMap('b')] });
  const body = await new Promise<{ headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const req = get(`${api.url}${PATH}?watch=1&timeoutSeconds=1`, { ca: api.ca, headers: { authorization: 'Bearer x' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ headers: res.headers, text }));
    });
    req.on('error', reject);
  });
  assert.equal(body.headers['transfer-encoding'], 'chunked');
  assert.equal(body.headers['content-type'], 'application/json');
  const lines = body.text.split('\n');
  assert.equal(lines.pop(), '', 'every event ends with a newline');
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).object.metadata.name),
    ['a', 'b'],
  );
});
