// New streams wait their turn (issue 21, item 9): in real HTTP/2 frames, streams that send their
// first request and are reset at once are dropped before any response is made for them, while a
// stream opened after them on the same connection is answered.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { test } from 'node:test';
import { SnapshotCache, XdsServer } from '../src/index.js';
import { adsStream, framedRequest, gatewaySnapshot, waitFor } from './helpers.js';

const GW = 'default/gw';
test('streams reset right after their first request are dropped before a response is made for them; the next stream is answered', async (t) => {
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const server = new XdsServer({ cache, limits: { streamBurst: 100 } });
  const { port } = await server.start();
  t.after(() => server.stop({ graceMs: 100 }));
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  t.after(() => session.destroy());
  await new Promise((resolve) => session.once('remoteSettings', resolve));
  const open = (id: string) => {
    const stream = adsStream(session);
    stream.write(framedRequest(id, GW));
    return stream;
  };
  // HEADERS, DATA and RST_STREAM of each, written in one go.
  for (let i = 0; i < 12; i++) open(`reset-${i}`).close(http2.constants.NGHTTP2_CANCEL);
  const last = open('last');
  const answered = new Promise<Buffer>((resolve) => last.once('data', resolve));
  assert.ok((await answered).length > 0, 'the stream after them is answered');
  await waitFor(() => server.stats().streamsResetWaiting + server.stats().streamsOpened === 13);
  const stats = server.stats();
  assert.ok(stats.streamsResetWaiting > 0, 'reset streams were dropped before their turn');
  assert.equal(stats.responses, stats.streamsOpened, 'a response was made only for the streams taken up');
});
