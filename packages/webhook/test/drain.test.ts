// Graceful stop under real connections: every request in flight when close() begins gets its whole
// answer, however slowly its client reads, and close() resolves only once they have.
import assert from 'node:assert/strict';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { createWebhookServer } from '../src/server.js';
import { ADMISSION_API_VERSION, type AdmissionReview } from '../src/types.js';
import { admissionReview, backendPool, makeCert, tempDir } from './helpers.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Reads HTTP/1.1 responses off a TLS socket one at a time, as they complete. */
class ResponseReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private waiting: (() => void) | undefined;
  private ended = false;

  constructor(readonly socket: TLSSocket) {
    socket.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.size += d.length;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => {});
  }

  private joined(): Buffer {
    const all = Buffer.concat(this.chunks, this.size);
    this.chunks = [all];
    return all;
  }

  /** Resolves once more bytes came or the connection closed. */
  private more(): Promise<void> {
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** The next complete response; rejects when the connection ends before one arrives. */
  async next(): Promise<RawResponse> {
    let head = this.joined().indexOf('\r\n\r\n');
    while (head < 0) {
      if (this.ended) throw new Error(`connection closed after ${this.size} bytes, before a response head`);
      await this.more();
      head = this.joined().indexOf('\r\n\r\n');
    }
    const [statusLine, ...lines] = this.joined().subarray(0, head).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const end = head + 4 + Number(headers['content-length']);
    // Chunks are only counted while the body arrives: joining each time would copy it over and over.
    while (this.size < end) {
      if (this.ended) throw new Error(`connection closed with ${this.size - head - 4} of ${end - head - 4} body bytes`);
      await this.more();
    }
    const all = this.joined();
    this.chunks = [all.subarray(end)];
    this.size = all.length - end;
    return { status: Number(statusLine?.split(' ')[1]), headers, body: all.subarray(head + 4, end) };
  }
}

function post(body: string): string {
  return `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

async function connect(port: number, ca: string): Promise<ResponseReader> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ca });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  return new ResponseReader(socket);
}

describe('drain', { timeout: 60_000 }, () => {
  const tmp = tempDir();
  const certs = makeCert(tmp.dir, 'drain');
  after(() => tmp.remove());

  it('lets a large response flush fully to a client that reads slowly', async () => {
    // A review function of one's own may answer with much more than the webhook's own bounded answers.
    const warnings = Array.from({ length: 16 * 1024 }, (_, i) => `${i} ${'w'.repeat(1000)}`);
    const server = createWebhookServer({
      certFile: certs.certFile,
      keyFile: certs.keyFile,
      host: '127.0.0.1',
      port: 0,
      review: (review) => ({
        review: { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid: review.request!.uid, allowed: true, warnings } },
        kind: undefined,
        verdict: 'allowed',
      }),
    });
    const { port } = await server.listen();
    const client = await connect(port, certs.cert);
    client.socket.write(post(JSON.stringify(admissionReview(backendPool()))));
    // The first bytes prove the answer is being written; then the client stops reading.
    await new Promise((resolve) => client.socket.once('data', resolve));
    client.socket.pause();
    let closed = false;
    const closing = server.close({ graceMs: 20_000 }).then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(closed, false, 'close waits for the answer to be read');
    client.socket.resume();
    const reply = await client.next();
    assert.equal(reply.status, 200);
    assert.equal((JSON.parse(reply.body.toString()) as AdmissionReview).response?.warnings?.length, warnings.length);
    await closing;
  });

  it('answers the requests sent on idle keep-alive connections just before close()', async () => {
    const server = createWebhookServer({ certFile: certs.certFile, keyFile: certs.keyFile, host: '127.0.0.1', port: 0 });
    const { port } = await server.listen();
    const clients = await Promise.all(Array.from({ length: 16 }, () => connect(port, certs.cert)));
    const request = post(JSON.stringify(admissionReview(backendPool())));
    for (const c of clients) c.socket.write(request);
    for (const c of clients) assert.equal((await c.next()).status, 200);
    // Every connection is idle now. A request goes out on each and the drain starts in the same
    // turn: the server has not read them yet, but they are in flight all the same.
    for (const c of clients) c.socket.write(request);
    const closing = server.close({ graceMs: 20_000 });
    const replies = await Promise.allSettled(clients.map((c) => c.next()));
    const answered = replies.filter((r) => r.status === 'fulfilled' && r.value.status === 200).length;
    assert.equal(answered, clients.length, `${clients.length - answered} of ${clients.length} requests in flight were cut off`);
    for (const r of replies) if (r.status === 'fulfilled') assert.equal(r.value.headers.connection, 'close');
    await closing;
  });
});
