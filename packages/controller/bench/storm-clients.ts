// Bench child process: hostile xDS clients for the storm rows of xds.bench.ts (issue 21, items 8
// and 9). `nack`: streams of the Gateway that NACK every response they get (they subscribe to its
// clusters and endpoints, so each endpoint change brings each of them a response to NACK); `ack`:
// the same streams ACKing, the baseline beside it. `churn`: connections that open a stream, send
// its first request and reset it as soon as the server answers, over and over, in real HTTP/2
// frames. Driven over IPC: {cmd: 'nack' | 'ack' | 'churn', ...}, then {cmd: 'stop'}; it answers
// {event: 'ready'} (for `nack` and `ack` once every stream has answered its first responses) and,
// on stop, {event: 'stopped', cycles, answers}.
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { TYPE_URL } from '../src/index.js';

export type StormCommand =
  /** `nack`: streams that NACK every response; `ack`: the same streams ACKing (the baseline beside it). */
  | { cmd: 'nack' | 'ack'; address: string; group: string; streams: number; perConnection: number; endpoints: string[] }
  | { cmd: 'churn'; address: string; group: string; connections: number; concurrency: number }
  | { cmd: 'stop' };
export type StormEvent = { event: 'ready' } | { event: 'stopped'; cycles: number; answers: number };

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

function request(r: { node?: { id: string; cluster: string }; typeUrl: string; names?: string[]; nonce?: string; error?: string }): Buffer {
  return Buffer.concat([head(r), namesField(r.names ?? []), tail(r)]);
}

/** node (2) of a DiscoveryRequest. */
function head(r: { node?: { id: string; cluster: string } }): Buffer {
  const w = protobuf.Writer.create();
  if (r.node) w.uint32(0x12).fork().uint32(0x0a).string(r.node.id).uint32(0x12).string(r.node.cluster).ldelim();
  return Buffer.from(w.finish());
}

/** resource_names (3), encoded once per stream: each NACK repeats them. */
function namesField(names: readonly string[]): Buffer {
  const w = protobuf.Writer.create();
  for (const n of names) w.uint32(0x1a).string(n);
  return Buffer.from(w.finish());
}

/** type_url (4), response_nonce (5) and error_detail (6) of a DiscoveryRequest. */
function tail(r: { typeUrl: string; nonce?: string; error?: string }): Buffer {
  const w = protobuf.Writer.create();
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

const NO_NAMES = Buffer.alloc(0);
const NACK_MESSAGE = 'storm: this proxy rejects every update';

let stopping = false;
let cycles = 0;
let answers = 0;
const closers: (() => void)[] = [];

/**
 * Streams that NACK (or, for the baseline, ACK) every response. Ready once every stream has NACKed its first clusters and
 * endpoints: until then a stream is still taking its first snapshot (300 KB on the 2,000-route
 * estate), and a storm measured before that NACKs little (the bench counted 400 NACKs of 8,000).
 * Their connections open Envoy's large HTTP/2 windows (Envoy's default is 256 MiB per stream and
 * connection), so a storm client reads as fast as Envoy would rather than 64 KB per round trip.
 */
function answerStorm(c: Extract<StormCommand, { cmd: 'nack' | 'ack' }>, ready: () => void): void {
  const channels = Math.ceil(c.streams / c.perConnection);
  let pending = c.streams;
  const names = namesField(c.endpoints);
  const error = c.cmd === 'nack' ? NACK_MESSAGE : undefined;
  for (let ch = 0; ch < channels; ch++) {
    const client = new grpc.Client(c.address, grpc.credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': -1,
      'grpc-node.flow_control_window': 64 * 1024 * 1024,
    });
    closers.push(() => client.close());
    for (let s = 0; s < c.perConnection && ch * c.perConnection + s < c.streams; s++) {
      const call = client.makeBidiStreamRequest(
        ADS,
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      const firsts = new Set<string>();
      call.on('error', () => {});
      call.on('data', (bytes: Buffer) => {
        const { typeUrl, nonce } = envelope(bytes);
        answers++;
        // The NACK repeats the subscription (its names encoded once: 8,000 NACKs of 200 names each
        // encoded anew kept the storm process behind the server, so most of its NACKs came stale).
        call.write(Buffer.concat([typeUrl === TYPE_URL.endpoint ? names : NO_NAMES, tail({ typeUrl, nonce, error })]));
        if (firsts.size < 2 && !firsts.has(typeUrl)) {
          firsts.add(typeUrl);
          if (firsts.size === 2 && --pending === 0) ready();
        }
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

const ready = () => process.send?.({ event: 'ready' } satisfies StormEvent);

process.on('message', (c: StormCommand) => {
  if (c.cmd === 'nack' || c.cmd === 'ack') answerStorm(c, ready);
  else if (c.cmd === 'churn') {
    churn(c);
    ready();
  } else {
    stopping = true;
    for (const close of closers) close();
    process.send?.({ event: 'stopped', cycles, answers } satisfies StormEvent, () => process.exit(0));
  }
});
