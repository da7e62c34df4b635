// Bench child process: hostile xDS clients for the storm rows of xds.bench.ts (issue 21, items 8
// and 9). `nack`: streams of the Gateway that NACK every response they get (they subscribe to its
// clusters and endpoints, so each endpoint change brings each of them a response to NACK). `churn`:
// connections that open a stream, send its first request and reset it as soon as the server
// answers, over and over, in real HTTP/2 frames. Driven over IPC: {cmd: 'nack' | 'churn', ...},
// then {cmd: 'stop'}; it answers {event: 'ready'} and, on stop, {event: 'stopped', cycles, nacks}.
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { TYPE_URL } from '../src/index.js';

export type StormCommand =
  | { cmd: 'nack'; address: string; group: string; streams: number; perConnection: number; endpoints: string[] }
  | { cmd: 'churn'; address: string; group: string; connections: number; concurrency: number }
  | { cmd: 'stop' };
export type StormEvent = { event: 'ready' } | { event: 'stopped'; cycles: number; nacks: number };

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

function request(r: { node?: { id: string; cluster: string }; typeUrl: string; names?: string[]; nonce?: string; error?: string }): Buffer {
  const w = protobuf.Writer.create();
  if (r.node) w.uint32(0x12).fork().uint32(0x0a).string(r.node.id).uint32(0x12).string(r.node.cluster).ldelim();
  for (const n of r.names ?? []) w.uint32(0x1a).string(n);
  w.uint32(0x22).string(r.typeUrl);
  if (r.nonce) w.uint32(0x2a).string(r.nonce);
  if (r.error) w.uint32(0x32).fork().uint32(0x08).int32(3).uint32(0x12).string(r.error).ldelim();
  return Buffer.from(w.finish());
}

/** type_url and nonce of a DiscoveryResponse. */
function envelope(bytes: Buffer): { typeUrl: string; nonce: string } {
  const r = protobuf.Reader.create(bytes);
  let typeUrl = '';
  let nonce = '';
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 0x22) typeUrl = r.string();
    else if (tag === 0x2a) nonce = r.string();
    else r.skipType(tag & 7);
  }
  return { typeUrl, nonce };
}

let stopping = false;
let cycles = 0;
let nacks = 0;
const closers: (() => void)[] = [];

function nackStorm(c: Extract<StormCommand, { cmd: 'nack' }>): void {
  const channels = Math.ceil(c.streams / c.perConnection);
  for (let ch = 0; ch < channels; ch++) {
    const client = new grpc.Client(c.address, grpc.credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': -1,
    });
    closers.push(() => client.close());
    for (let s = 0; s < c.perConnection && ch * c.perConnection + s < c.streams; s++) {
      const call = client.makeBidiStreamRequest(
        ADS,
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      call.on('error', () => {});
      call.on('data', (bytes: Buffer) => {
        const { typeUrl, nonce } = envelope(bytes);
        nacks++;
        call.write(request({ typeUrl, nonce, error: 'storm: this proxy rejects every update', names: typeUrl === TYPE_URL.endpoint ? c.endpoints : [] }));
      });
      call.write(request({ node: { id: `storm-${ch}-${s}`, cluster: c.group }, typeUrl: TYPE_URL.cluster }));
      call.write(request({ typeUrl: TYPE_URL.endpoint, names: c.endpoints }));
      closers.push(() => call.cancel());
    }
  }
}

function churn(c: Extract<StormCommand, { cmd: 'churn' }>): void {
  const framed = (() => {
    const msg = request({ node: { id: 'churn', cluster: c.group }, typeUrl: TYPE_URL.cluster });
    const head = Buffer.alloc(5);
    head.writeUInt32BE(msg.length, 1);
    return Buffer.concat([head, msg]);
  })();
  const connect = () => {
    if (stopping) return;
    const session = http2.connect(c.address.startsWith('http') ? c.address : `http://${c.address}`);
    session.on('error', () => {});
    // The server may end a session that resets too fast (rapid reset): a new one takes its place.
    session.on('close', () => setTimeout(connect, 10));
    closers.push(() => session.destroy());
    const loop = () => {
      if (stopping || session.destroyed || session.closed) return;
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({ ':method': 'POST', ':path': ADS, 'content-type': 'application/grpc', te: 'trailers' });
      } catch {
        return;
      }
      stream.on('error', () => {});
      stream.on('response', () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.on('close', () => {
        cycles++;
        loop();
      });
      stream.write(framed);
    };
    session.once('connect', () => {
      for (let i = 0; i < c.concurrency; i++) loop();
    });
  };
  for (let i = 0; i < c.connections; i++) connect();
}

process.on('message', (c: StormCommand) => {
  if (c.cmd === 'nack') nackStorm(c);
  else if (c.cmd === 'churn') churn(c);
  else {
    stopping = true;
    for (const close of closers) close();
    process.send?.({ event: 'stopped', cycles, nacks } satisfies StormEvent, () => process.exit(0));
    return;
  }
  process.send?.({ event: 'ready' } satisfies StormEvent);
});
